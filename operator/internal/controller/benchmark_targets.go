package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
)

// getDB reads a target's ZNSDatabase; nil when it does not exist.
func (r *BenchmarkReconciler) getDB(ctx context.Context, b *v1alpha1.Benchmark, name string) (*v1alpha1.ZNSDatabase, error) {
	db := &v1alpha1.ZNSDatabase{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, db)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return db, err
}

// targetDB reads the database of a target that is under way. One deleted meanwhile fails its target, and its
// Jobs are stopped: nothing of a Benchmark runs against a database that is gone.
func (r *BenchmarkReconciler) targetDB(ctx context.Context, b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus) (*v1alpha1.ZNSDatabase, error) {
	db, err := r.getDB(ctx, b, ts.Name)
	if err != nil || db != nil {
		return db, err
	}
	r.failTarget(b, ts, event.TargetDeleted, failreason.TargetDeleted, fmt.Sprintf("ZNSDatabase %q was deleted during the benchmark", ts.Name))
	return nil, r.stopJobs(ctx, b, ts.Name)
}

// availableWith reports whether db is Available with its current spec and the given profile: its Available
// condition was set for the database's current generation.
func availableWith(db *v1alpha1.ZNSDatabase, profile v1alpha1.Profile) bool {
	c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionAvailable)
	return db.Spec.Profile == profile && c != nil && c.Status == metav1.ConditionTrue &&
		c.ObservedGeneration == db.Generation && db.Status.ObservedGeneration == db.Generation
}

func (r *BenchmarkReconciler) timedOut(b *v1alpha1.Benchmark) bool {
	return b.Status.PhaseSince != nil &&
		r.now().Sub(b.Status.PhaseSince.Time) > time.Duration(b.Spec.TargetTimeoutSeconds)*time.Second
}

// waiting records what the Benchmark waits for in the TargetsReady condition. A new reason to wait restarts
// the timeout clock (PhaseSince) and is announced by an Event; the same reason only refreshes the message.
func (r *BenchmarkReconciler) waiting(b *v1alpha1.Benchmark, reason, msg string, e event.Event) {
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionTargetsReady); c == nil || c.Reason != reason {
		t := metav1.NewTime(r.now())
		b.Status.PhaseSince = &t
		e.Emit(b, r.Recorder, msg)
	}
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionTargetsReady, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg, ObservedGeneration: b.Generation})
	b.Status.Progress = "waiting: " + reason
}

// waitForTargets holds the Benchmark until it can run with all of its targets: each exists (a missing one is
// waited for up to targetTimeoutSeconds, then the Benchmark fails), none is used by another Benchmark (waited
// for without a limit), all are taken for this one, and each is Available in the workload profile. Until the
// targets are taken, nothing is written to any database. Then it fails at once if a target's server would
// refuse some of its connections (tooFewConnections), before any Job.
func (r *BenchmarkReconciler) waitForTargets(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	var dbs []*v1alpha1.ZNSDatabase
	var missing []string
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		db, err := r.getDB(ctx, b, ts.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			missing = append(missing, ts.Name)
			continue
		}
		ts.Engine, ts.Storage, ts.Filesystem = string(db.Spec.Engine), db.Status.Storage, db.FormattedFilesystem()
		if db.UsesZenFS() {
			ts.Filesystem = string(v1alpha1.FilesystemZenFS)
		}
		ts.Zones = zoneGeometry(db)
		dbs = append(dbs, db)
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("waiting for ZNSDatabase %s in namespace %s: the Benchmark runs only with all %d of its targets, and fails if they do not exist within %ds",
			strings.Join(missing, ", "), b.Namespace, len(b.Spec.Targets), b.Spec.TargetTimeoutSeconds)
		r.waiting(b, v1alpha1.ReasonTargetsMissing, msg, event.TargetsMissing)
		// A target deleted after the others were taken: a waiting Benchmark holds nothing.
		if err := r.releaseAll(ctx, b); err != nil {
			return ctrl.Result{}, err
		}
		if !r.timedOut(b) {
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		}
		for _, name := range missing {
			r.failTarget(b, targetStatus(b, name), event.TargetNotFound, failreason.TargetNotFound,
				fmt.Sprintf("ZNSDatabase %q not found in namespace %q after %ds", name, b.Namespace, b.Spec.TargetTimeoutSeconds))
		}
		return r.abort(ctx, b, v1alpha1.ReasonTargetsMissing, fmt.Sprintf("ZNSDatabase %s did not appear in namespace %s within %ds",
			strings.Join(missing, ", "), b.Namespace, b.Spec.TargetTimeoutSeconds))
	}

	var busy []string
	for _, db := range dbs {
		holder, err := r.heldByOther(ctx, b, db)
		if err != nil {
			return ctrl.Result{}, err
		}
		if holder != "" {
			busy = append(busy, fmt.Sprintf("ZNSDatabase %s is used by Benchmark %s", db.Name, holder))
		}
	}
	if len(busy) > 0 {
		msg := strings.Join(busy, "; ") + ": a database serves one Benchmark at a time; this one starts when all of its targets are free"
		r.waiting(b, v1alpha1.ReasonTargetsBusy, msg, event.TargetsBusy)
		// The holder's release wakes this Benchmark (it changes the database); the requeue covers a holder that
		// vanished without releasing.
		return ctrl.Result{RequeueAfter: 15 * time.Second}, nil
	}
	if ok, err := r.acquire(ctx, b, dbs); err != nil {
		return ctrl.Result{}, err
	} else if !ok { // another Benchmark took one first: look again, it will show as busy
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}

	var unavailable []string
	for _, db := range dbs {
		if !availableWith(db, v1alpha1.ProfileWorkload) {
			unavailable = append(unavailable, fmt.Sprintf("%s: %s", db.Name, availableMessage(db)))
		}
	}
	if len(unavailable) > 0 {
		msg := fmt.Sprintf("waiting for ZNSDatabase %s to be Available in the workload profile (at most %ds)",
			strings.Join(unavailable, "; "), b.Spec.TargetTimeoutSeconds)
		r.waiting(b, v1alpha1.ReasonTargetsUnavailable, msg, event.TargetUnavailable)
		if !r.timedOut(b) {
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		}
		for _, db := range dbs {
			if !availableWith(db, v1alpha1.ProfileWorkload) {
				r.failTarget(b, targetStatus(b, db.Name), event.TargetUnavailable, failreason.TargetUnavailable,
					fmt.Sprintf("not Available in the workload profile after %ds: %s", b.Spec.TargetTimeoutSeconds, availableMessage(db)))
			}
		}
		return r.abort(ctx, b, v1alpha1.ReasonTargetsUnavailable, "targets not Available in time: "+strings.Join(unavailable, "; "))
	}

	if refused, err := r.tooFewConnections(ctx, b, dbs); err != nil {
		return ctrl.Result{}, err
	} else if refused != "" {
		return r.abort(ctx, b, failreason.TooFewConnections, refused)
	}

	msg := fmt.Sprintf("all %d targets exist, are Available and are held by this Benchmark", len(dbs))
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionTargetsReady); c == nil || c.Status != metav1.ConditionTrue {
		event.TargetsReady.Emit(b, r.Recorder, msg)
	}
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionTargetsReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonTargetsReady, Message: msg, ObservedGeneration: b.Generation})
	if b.Spec.Precondition != nil {
		r.setPhase(b, v1alpha1.BenchmarkPreconditioning, "precondition")
	} else {
		r.setPhase(b, v1alpha1.BenchmarkPreparing, "prepare")
	}
	return requeue, nil
}

func targetStatus(b *v1alpha1.Benchmark, name string) *v1alpha1.TargetStatus {
	for i := range b.Status.Targets {
		if b.Status.Targets[i].Name == name {
			return &b.Status.Targets[i]
		}
	}
	return nil
}

func availableMessage(db *v1alpha1.ZNSDatabase) string {
	if c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionAvailable); c != nil {
		return fmt.Sprintf("%s (%s)", c.Reason, c.Message)
	}
	return "no Available condition yet"
}

// zoneGeometry is the zone geometry of a zoned database's device from its status (nil for a conventional one, or
// before its preflight read the device).
func zoneGeometry(db *v1alpha1.ZNSDatabase) *v1alpha1.ZoneGeometry {
	d := db.Status.Device
	if !db.IsZoned() || d == nil || d.Zones == 0 {
		return nil
	}
	g := &v1alpha1.ZoneGeometry{Device: strings.TrimPrefix(d.Path, "/dev/"), Count: d.Zones, MaxOpen: d.MaxOpenZones,
		MaxActive: d.MaxActiveZones}
	if d.Node != "" {
		g.Device = d.Node + "/" + g.Device
	}
	if d.ZoneSize != nil {
		q := d.ZoneSize.DeepCopy()
		g.Size = &q
	}
	if d.ZoneCapacity != nil {
		q := d.ZoneCapacity.DeepCopy()
		g.Capacity = &q
	}
	return g
}
