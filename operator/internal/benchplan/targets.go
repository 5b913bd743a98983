package benchplan

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
)

// How long a Benchmark waiting for its targets sleeps before looking again when no change wakes it.
const (
	// MissingRetry: a target that does not exist yet; its creation wakes the Benchmark too.
	MissingRetry = 5 * time.Second
	// BusyRetry: the holder's release wakes the Benchmark (it changes the database); this covers a holder
	// that vanished without releasing.
	BusyRetry = 15 * time.Second
	// UnavailableRetry: a target that is not Available in the workload profile yet.
	UnavailableRetry = 5 * time.Second
)

// TargetsObserved is what the reconciler read for a Benchmark in phase WaitingForTargets.
type TargetsObserved struct {
	Benchmark *v1alpha1.Benchmark
	// Databases are the targets' ZNSDatabases by name; a target missing from the map does not exist.
	Databases map[string]*v1alpha1.ZNSDatabase
	// HeldByOther names, per target, the live Benchmark other than this one that holds it.
	HeldByOther map[string]string
	// MaxConnections is each target's max_connections as its current my.cnf sets it, where that could be read.
	MaxConnections map[string]int64
	// Devices is the device under each target, where it is known: a zoned or raw device from the database's
	// status, a volume's local device from its PersistentVolume.
	Devices map[string]deviceid.ID
	Now     time.Time
}

// Targets decides the WaitingForTargets phase. The Benchmark waits until it can run with all of its targets:
// each exists (a missing one is waited for up to targetTimeoutSeconds, then the Benchmark fails), none is used
// by another Benchmark (waited for without a limit), all are held by this one (Acquire), and each is Available
// in the workload profile (up to targetTimeoutSeconds). Until all are held, nothing is written to any database.
// Then it fails at once if a target's server would refuse some of its connections, before any Job; otherwise
// it moves on to the precondition, or to the prepare.
func Targets(obs TargetsObserved) Plan {
	b := obs.Benchmark
	p := Plan{Status: *b.Status.DeepCopy()}
	st := &p.Status

	var dbs []*v1alpha1.ZNSDatabase
	var missing []string
	for i := range st.Targets {
		ts := &st.Targets[i]
		db := obs.Databases[ts.Name]
		if db == nil {
			missing = append(missing, ts.Name)
			continue
		}
		ts.Engine, ts.Storage, ts.Filesystem = string(db.Spec.Engine), db.Status.Storage, db.FormattedFilesystem()
		ts.Zones = ZoneGeometry(db)
		ts.Drive = obs.Devices[ts.Name].Drive()
		dbs = append(dbs, db)
	}
	markSharedDrives(st)

	if len(missing) > 0 {
		p.waiting(b, obs.Now, v1alpha1.ReasonTargetsMissing, event.TargetsMissing, fmt.Sprintf(
			"waiting for ZNSDatabase %s in namespace %s: the Benchmark runs only with all %d of its targets, and fails if they do not exist within %ds",
			strings.Join(missing, ", "), b.Namespace, len(b.Spec.Targets), b.Spec.TargetTimeoutSeconds))
		// A target deleted after the others were taken: a waiting Benchmark holds nothing.
		p.act(Action{Kind: ReleaseAll})
		if !TimedOut(b, st, obs.Now) {
			p.RequeueAfter = MissingRetry
			return p
		}
		for _, name := range missing {
			p.failTarget(TargetStatus(st, name), event.TargetNotFound, failreason.TargetNotFound,
				fmt.Sprintf("ZNSDatabase %q not found in namespace %q after %ds", name, b.Namespace, b.Spec.TargetTimeoutSeconds))
		}
		p.abort(b, obs.Now, v1alpha1.ReasonTargetsMissing, fmt.Sprintf("ZNSDatabase %s did not appear in namespace %s within %ds",
			strings.Join(missing, ", "), b.Namespace, b.Spec.TargetTimeoutSeconds))
		return p
	}

	var busy []string
	for _, db := range dbs {
		if holder := obs.HeldByOther[db.Name]; holder != "" {
			busy = append(busy, fmt.Sprintf("ZNSDatabase %s is used by Benchmark %s", db.Name, holder))
		}
	}
	if len(busy) > 0 {
		p.waiting(b, obs.Now, v1alpha1.ReasonTargetsBusy, event.TargetsBusy,
			strings.Join(busy, "; ")+": a database serves one Benchmark at a time; this one starts when all of its targets are free")
		p.RequeueAfter = BusyRetry
		return p
	}
	for _, db := range dbs {
		if db.Annotations[v1alpha1.AnnotationBenchmarkUID] != string(b.UID) {
			p.act(Action{Kind: Acquire})
			p.Requeue = true
			return p
		}
	}

	var unavailable []string
	for _, db := range dbs {
		if !AvailableWith(db, v1alpha1.ProfileWorkload) {
			unavailable = append(unavailable, fmt.Sprintf("%s: %s", db.Name, AvailableMessage(db)))
		}
	}
	if len(unavailable) > 0 {
		p.waiting(b, obs.Now, v1alpha1.ReasonTargetsUnavailable, event.TargetUnavailable, fmt.Sprintf(
			"waiting for ZNSDatabase %s to be Available in the workload profile (at most %ds)",
			strings.Join(unavailable, "; "), b.Spec.TargetTimeoutSeconds))
		if !TimedOut(b, st, obs.Now) {
			p.RequeueAfter = UnavailableRetry
			return p
		}
		for _, db := range dbs {
			if !AvailableWith(db, v1alpha1.ProfileWorkload) {
				p.failTarget(TargetStatus(st, db.Name), event.TargetUnavailable, failreason.TargetUnavailable,
					fmt.Sprintf("not Available in the workload profile after %ds: %s", b.Spec.TargetTimeoutSeconds, AvailableMessage(db)))
			}
		}
		p.abort(b, obs.Now, v1alpha1.ReasonTargetsUnavailable, "targets not Available in time: "+strings.Join(unavailable, "; "))
		return p
	}

	var refused []string
	for _, db := range dbs {
		allowed, known := obs.MaxConnections[db.Name]
		need := ConnectionsNeeded(b, db)
		if !known || need.Total() <= allowed {
			continue
		}
		msg := fmt.Sprintf("target %s allows %d connections (max_connections), the Benchmark opens up to %d (%s %d + %d for the runner): raise spec.config max_connections on %s or lower %s",
			db.Name, allowed, need.Total(), need.Field, need.Threads, RunnerConnections, db.Name, need.Field)
		p.failTarget(TargetStatus(st, db.Name), event.TooFewConnections, failreason.TooFewConnections, msg)
		refused = append(refused, msg)
	}
	if len(refused) > 0 {
		p.abort(b, obs.Now, failreason.TooFewConnections, strings.Join(refused, "; "))
		return p
	}

	msg := fmt.Sprintf("all %d targets exist, are Available and are held by this Benchmark", len(dbs))
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionTargetsReady); c == nil || c.Status != metav1.ConditionTrue {
		p.emit(event.TargetsReady, msg)
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionTargetsReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonTargetsReady, Message: msg, ObservedGeneration: b.Generation})
	if b.Spec.Precondition != nil {
		SetPhase(st, v1alpha1.BenchmarkPreconditioning, "precondition", obs.Now)
	} else {
		SetPhase(st, v1alpha1.BenchmarkPreparing, "prepare", obs.Now)
	}
	p.Requeue = true
	return p
}

// waiting records what the Benchmark waits for in the TargetsReady condition. A new reason to wait restarts
// the timeout clock (PhaseSince) and is announced by an Event; the same reason only refreshes the message.
func (p *Plan) waiting(b *v1alpha1.Benchmark, now time.Time, reason string, e event.Event, msg string) {
	st := &p.Status
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionTargetsReady); c == nil || c.Reason != reason {
		t := metav1.NewTime(now)
		st.PhaseSince = &t
		p.emit(e, msg)
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionTargetsReady, Status: metav1.ConditionFalse,
		Reason: reason, Message: msg, ObservedGeneration: b.Generation})
	st.Progress = "waiting: " + reason
}

func (p *Plan) failTarget(ts *v1alpha1.TargetStatus, e event.Event, reason, msg string) {
	if ev, ok := FailTarget(ts, e, reason, msg); ok {
		p.Events = append(p.Events, ev)
	}
}

// abort ends the Benchmark as Failed and has the reconciler settle it.
func (p *Plan) abort(b *v1alpha1.Benchmark, now time.Time, reason, msg string) {
	p.Events = append(p.Events, Abort(&p.Status, b.Generation, reason, msg, now))
	p.act(Action{Kind: Settle})
	p.Requeue, p.RequeueAfter = false, 0
}

// markSharedDrives names, on each target, the other targets on its drive.
func markSharedDrives(st *v1alpha1.BenchmarkStatus) {
	for i := range st.Targets {
		ts := &st.Targets[i]
		ts.SharesDriveWith = nil
		if ts.Drive == "" {
			continue
		}
		for _, other := range st.Targets {
			if other.Name != ts.Name && other.Drive == ts.Drive {
				ts.SharesDriveWith = append(ts.SharesDriveWith, other.Name)
			}
		}
	}
}
