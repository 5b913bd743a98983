package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// BenchmarkFinalizer lets a deleted Benchmark hand its targets back in the workload profile: a database left in
// bulkload loses rows silently.
const BenchmarkFinalizer = "zns-mysql.dev/benchmark-finalizer"

// Benchmark condition types.
const (
	ConditionCompleted = "Completed"
	ConditionFailed    = "Failed"
)

// PodLogs reads a container's log; the series of a run travels there because it is too big for a termination
// message. The envtest suite, which has no kubelet, supplies recorded logs.
type PodLogs interface {
	Read(ctx context.Context, namespace, pod, container string) (string, error)
}

// ClientsetPodLogs reads logs through the API server.
type ClientsetPodLogs struct{ Clientset kubernetes.Interface }

// Read implements PodLogs.
func (c ClientsetPodLogs) Read(ctx context.Context, namespace, pod, container string) (string, error) {
	rc, err := c.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Stream(ctx)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	return string(b), err
}

// BenchmarkReconciler drives a Benchmark through the methodology with one Job per target and phase.
type BenchmarkReconciler struct {
	client.Client
	Recorder record.EventRecorder
	Logs     PodLogs
	// Image is the default bench image.
	Image string
	// Now is the clock (tests may move it).
	Now func() time.Time
}

// +kubebuilder:rbac:groups=zns-mysql.dev,resources=benchmarks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=zns-mysql.dev,resources=benchmarks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=zns-mysql.dev,resources=benchmarks/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get

// Reconcile advances one Benchmark by one step.
func (r *BenchmarkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &v1alpha1.Benchmark{}
	if err := r.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalizeBenchmark(ctx, b)
	}
	if !controllerutil.ContainsFinalizer(b, BenchmarkFinalizer) {
		patch := client.MergeFrom(b.DeepCopy())
		controllerutil.AddFinalizer(b, BenchmarkFinalizer)
		return ctrl.Result{}, r.Patch(ctx, b, patch)
	}
	before := b.Status.DeepCopy()
	result, err := r.step(ctx, b)
	b.Status.ObservedGeneration = b.Generation
	if !equalStatus(before, &b.Status) {
		if uerr := r.Status().Update(ctx, b); uerr != nil {
			if apierrors.IsConflict(uerr) {
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, uerr
		}
	}
	return result, err
}

func equalStatus(a, b *v1alpha1.BenchmarkStatus) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// step runs the handler of the current phase.
func (r *BenchmarkReconciler) step(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	switch b.Status.Phase {
	case "", v1alpha1.BenchmarkPending:
		r.start(b)
		return ctrl.Result{Requeue: true}, nil
	case v1alpha1.BenchmarkWaitingForTargets:
		return r.waitForTargets(ctx, b)
	case v1alpha1.BenchmarkPreconditioning:
		return r.precondition(ctx, b)
	case v1alpha1.BenchmarkPreparing, v1alpha1.BenchmarkVerifying:
		return r.prepare(ctx, b)
	case v1alpha1.BenchmarkRunning:
		return r.run(ctx, b)
	default: // Completed, Failed: only make sure no database is left in bulkload.
		return ctrl.Result{}, r.restoreProfiles(ctx, b)
	}
}

func (r *BenchmarkReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *BenchmarkReconciler) setPhase(b *v1alpha1.Benchmark, phase v1alpha1.BenchmarkPhase, progress string) {
	if b.Status.Phase != phase {
		t := metav1.NewTime(r.now())
		b.Status.PhaseSince = &t
	}
	b.Status.Phase = phase
	b.Status.Progress = progress
}

func (r *BenchmarkReconciler) start(b *v1alpha1.Benchmark) {
	t := metav1.NewTime(r.now())
	b.Status.StartedAt = &t
	b.Status.Baseline = b.Spec.Baseline
	if b.Status.Baseline == "" {
		b.Status.Baseline = b.Spec.Targets[0].Name
	}
	b.Status.Targets = nil
	for _, tg := range b.Spec.Targets {
		b.Status.Targets = append(b.Status.Targets, v1alpha1.TargetStatus{Name: tg.Name, State: v1alpha1.TargetPending})
	}
	r.setPhase(b, v1alpha1.BenchmarkWaitingForTargets, "waiting for targets")
	event.BenchmarkStarted.Emit(b, r.Recorder, len(b.Spec.Targets), b.Spec.Workload)
}

// failTarget marks one target failed; the others go on.
func (r *BenchmarkReconciler) failTarget(b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, e event.Event, msg string) {
	if ts.State == v1alpha1.TargetFailed {
		return
	}
	ts.State = v1alpha1.TargetFailed
	ts.Message = msg
	e.Emit(b, r.Recorder, fmt.Sprintf("target %s: %s", ts.Name, msg))
}

// active are the targets that have not failed.
func active(b *v1alpha1.Benchmark) []*v1alpha1.TargetStatus {
	var out []*v1alpha1.TargetStatus
	for i := range b.Status.Targets {
		if b.Status.Targets[i].State != v1alpha1.TargetFailed {
			out = append(out, &b.Status.Targets[i])
		}
	}
	return out
}

// finish ends the benchmark: Completed when at least one target has results, Failed otherwise.
func (r *BenchmarkReconciler) finish(ctx context.Context, b *v1alpha1.Benchmark, why string) (ctrl.Result, error) {
	t := metav1.NewTime(r.now())
	b.Status.CompletedAt = &t
	b.Status.StartAt = nil
	done := 0
	var failed []string
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetDone {
			done++
		} else {
			failed = append(failed, ts.Name)
		}
	}
	if done == 0 {
		msg := "no target finished: " + why
		r.setPhase(b, v1alpha1.BenchmarkFailed, "failed")
		meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: ConditionFailed, Status: metav1.ConditionTrue,
			Reason: "NoTargetFinished", Message: msg, ObservedGeneration: b.Generation})
		event.BenchmarkFailed.Emit(b, r.Recorder, msg)
		return ctrl.Result{}, r.restoreProfiles(ctx, b)
	}
	msg := fmt.Sprintf("%d of %d targets finished %d iteration(s)", done, len(b.Status.Targets), b.Spec.Iterations)
	reason := "AllTargetsFinished"
	if len(failed) > 0 {
		msg += "; failed: " + strings.Join(failed, ", ")
		reason = "SomeTargetsFailed"
	}
	r.setPhase(b, v1alpha1.BenchmarkCompleted, fmt.Sprintf("%d/%d targets", done, len(b.Status.Targets)))
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: ConditionCompleted, Status: metav1.ConditionTrue,
		Reason: reason, Message: msg, ObservedGeneration: b.Generation})
	event.BenchmarkCompleted.Emit(b, r.Recorder, msg)
	return ctrl.Result{}, r.restoreProfiles(ctx, b)
}

// getDB reads a target's ZNSDatabase; nil when it does not exist.
func (r *BenchmarkReconciler) getDB(ctx context.Context, b *v1alpha1.Benchmark, name string) (*v1alpha1.ZNSDatabase, error) {
	db := &v1alpha1.ZNSDatabase{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, db)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return db, err
}

// targetDB reads the database of a target that is under way; one deleted meanwhile fails its target.
func (r *BenchmarkReconciler) targetDB(ctx context.Context, b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus) (*v1alpha1.ZNSDatabase, error) {
	db, err := r.getDB(ctx, b, ts.Name)
	if err == nil && db == nil {
		r.failTarget(b, ts, event.TargetNotFound, fmt.Sprintf("ZNSDatabase %q was deleted during the benchmark", ts.Name))
	}
	return db, err
}

// availableWith reports whether db is Available with its current spec and the given profile: its Available
// condition was set for the database's current generation.
func availableWith(db *v1alpha1.ZNSDatabase, profile v1alpha1.Profile) bool {
	c := meta.FindStatusCondition(db.Status.Conditions, ConditionAvailable)
	return db.Spec.Profile == profile && c != nil && c.Status == metav1.ConditionTrue &&
		c.ObservedGeneration == db.Generation && db.Status.ObservedGeneration == db.Generation
}

func (r *BenchmarkReconciler) timedOut(b *v1alpha1.Benchmark) bool {
	return b.Status.PhaseSince != nil &&
		r.now().Sub(b.Status.PhaseSince.Time) > time.Duration(b.Spec.TargetTimeoutSeconds)*time.Second
}

// waitForTargets waits until every target exists and is Available in the workload profile.
func (r *BenchmarkReconciler) waitForTargets(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	waiting := 0
	for _, ts := range active(b) {
		db, err := r.getDB(ctx, b, ts.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			r.failTarget(b, ts, event.TargetNotFound, fmt.Sprintf("ZNSDatabase %q not found in namespace %q", ts.Name, b.Namespace))
			continue
		}
		ts.Engine, ts.Storage = string(db.Spec.Engine), db.Status.Storage
		if availableWith(db, v1alpha1.ProfileWorkload) {
			continue
		}
		if r.timedOut(b) {
			r.failTarget(b, ts, event.TargetUnavailable, fmt.Sprintf("not Available in the workload profile after %ds: %s",
				b.Spec.TargetTimeoutSeconds, availableMessage(db)))
			continue
		}
		waiting++
	}
	if len(active(b)) == 0 {
		return r.finish(ctx, b, "no target is usable")
	}
	if waiting > 0 {
		b.Status.Progress = fmt.Sprintf("waiting for %d target(s)", waiting)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if b.Spec.Precondition != nil {
		r.setPhase(b, v1alpha1.BenchmarkPreconditioning, "precondition")
	} else {
		r.setPhase(b, v1alpha1.BenchmarkPreparing, "prepare")
	}
	return ctrl.Result{Requeue: true}, nil
}

// precondition runs fio on the volume of every conventional target, all at once; zoned targets need none.
func (r *BenchmarkReconciler) precondition(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	running := 0
	for _, ts := range active(b) {
		if ts.Preconditioned {
			continue
		}
		db, err := r.targetDB(ctx, b, ts)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			continue
		}
		if db.Spec.Storage.Volume == nil {
			ts.Preconditioned = true
			continue
		}
		sum, done, err := r.runJob(ctx, b, resources.BenchPhasePrecondition, 0, db, time.Time{})
		if err != nil {
			return ctrl.Result{}, err
		}
		if !done {
			running++
			continue
		}
		if !sum.OK {
			r.failTarget(b, ts, event.PreconditionFailed, "precondition failed: "+sum.Error)
			continue
		}
		ts.Preconditioned, ts.PreconditionWrittenBytes = true, sum.DeviceWrittenBytes
	}
	if len(active(b)) == 0 {
		return r.finish(ctx, b, "every target failed while preconditioning")
	}
	if running > 0 {
		b.Status.Progress = fmt.Sprintf("precondition: %d target(s) left", running)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	r.setPhase(b, v1alpha1.BenchmarkPreparing, "prepare")
	return ctrl.Result{Requeue: true}, nil
}

func availableMessage(db *v1alpha1.ZNSDatabase) string {
	if c := meta.FindStatusCondition(db.Status.Conditions, ConditionAvailable); c != nil {
		return fmt.Sprintf("%s (%s)", c.Reason, c.Message)
	}
	return "no Available condition yet"
}

// setProfile switches a target database's profile (the ZNSDatabase reconciler then rolls its pod).
func (r *BenchmarkReconciler) setProfile(ctx context.Context, db *v1alpha1.ZNSDatabase, p v1alpha1.Profile) error {
	if db.Spec.Profile == p {
		return nil
	}
	patch := client.MergeFrom(db.DeepCopy())
	db.Spec.Profile = p
	return r.Patch(ctx, db, patch)
}

// prepare walks each target through: bulkload profile, prepare Job, workload profile, verify Job. Targets move
// independently; the phase ends when every active target is Verified.
func (r *BenchmarkReconciler) prepare(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	doPrepare := b.Spec.Prepare == nil || *b.Spec.Prepare
	for _, ts := range active(b) {
		if ts.State == v1alpha1.TargetVerified {
			continue
		}
		db, err := r.targetDB(ctx, b, ts)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			continue
		}
		if err := r.prepareTarget(ctx, b, ts, db, doPrepare); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(active(b)) == 0 {
		return r.finish(ctx, b, "every target failed while preparing")
	}
	remaining := 0
	verifying := true
	for _, ts := range active(b) {
		if ts.State != v1alpha1.TargetVerified {
			remaining++
		}
		if ts.State == v1alpha1.TargetPending {
			verifying = false
		}
	}
	if remaining == 0 {
		b.Status.Iteration = 1
		r.setPhase(b, v1alpha1.BenchmarkRunning, fmt.Sprintf("run 1/%d", b.Spec.Iterations))
		return ctrl.Result{Requeue: true}, nil
	}
	if verifying {
		r.setPhase(b, v1alpha1.BenchmarkVerifying, fmt.Sprintf("verify: %d target(s) left", remaining))
	} else {
		b.Status.Progress = fmt.Sprintf("prepare: %d target(s) left", remaining)
	}
	return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
}

func (r *BenchmarkReconciler) prepareTarget(ctx context.Context, b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase, doPrepare bool) error {
	if ts.State == v1alpha1.TargetPending && !doPrepare {
		ts.State = v1alpha1.TargetPrepared
	}
	switch ts.State {
	case v1alpha1.TargetPending:
		// Decide from what exists, not only from status flags: a status update lost to a conflict must not
		// leave a database in bulkload with nobody owing the switch back.
		sum, done, exists, err := r.jobResult(ctx, b, resources.BenchPhasePrepare, 0, db)
		if err != nil {
			return err
		}
		if exists || db.Spec.Profile == v1alpha1.ProfileBulkLoad {
			ts.ProfileSwitched = true
		}
		if done {
			if !sum.OK {
				r.failTarget(b, ts, event.PrepareFailed, "prepare failed: "+sum.Error)
			} else {
				ts.State = v1alpha1.TargetPrepared
			}
			return r.setProfileBack(ctx, b, ts, db)
		}
		if exists {
			return nil
		}
		if db.Spec.Profile != v1alpha1.ProfileBulkLoad {
			if err := r.setProfile(ctx, db, v1alpha1.ProfileBulkLoad); err != nil {
				return err
			}
			ts.ProfileSwitched = true
			event.ProfileSwitched.Emit(b, r.Recorder, ts.Name, v1alpha1.ProfileBulkLoad, "to load the tables")
			return nil
		}
		if !availableWith(db, v1alpha1.ProfileBulkLoad) {
			if r.timedOut(b) {
				r.failTarget(b, ts, event.TargetUnavailable, "not Available in the bulkload profile: "+availableMessage(db))
				return r.setProfileBack(ctx, b, ts, db)
			}
			return nil
		}
		_, _, err = r.runJob(ctx, b, resources.BenchPhasePrepare, 0, db, time.Time{})
		return err
	case v1alpha1.TargetPrepared:
		if ts.ProfileSwitched || db.Spec.Profile != v1alpha1.ProfileWorkload {
			ts.ProfileSwitched = true
			return r.setProfileBack(ctx, b, ts, db)
		}
		if !availableWith(db, v1alpha1.ProfileWorkload) {
			if r.timedOut(b) {
				r.failTarget(b, ts, event.TargetUnavailable, "not Available in the workload profile after prepare: "+availableMessage(db))
			}
			return nil
		}
		sum, done, err := r.runJob(ctx, b, resources.BenchPhaseVerify, 0, db, time.Time{})
		if err != nil || !done {
			return err
		}
		ts.Rows = sum.RowsFound
		want := int64(b.Spec.Tables) * b.Spec.TableSize
		if !sum.OK || sum.RowsFound != want {
			msg := fmt.Sprintf("found %d rows, expected %d tables x %d rows = %d", sum.RowsFound, b.Spec.Tables, b.Spec.TableSize, want)
			if sum.Error != "" {
				msg += ": " + sum.Error
			}
			r.failTarget(b, ts, event.RowCountMismatch, msg)
			return nil
		}
		ts.State = v1alpha1.TargetVerified
	}
	return nil
}

// setProfileBack returns a target to the workload profile; the switch is owed until it is done.
func (r *BenchmarkReconciler) setProfileBack(ctx context.Context, b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase) error {
	if !ts.ProfileSwitched {
		return nil
	}
	if err := r.setProfile(ctx, db, v1alpha1.ProfileWorkload); err != nil {
		return err
	}
	ts.ProfileSwitched = false
	event.ProfileSwitched.Emit(b, r.Recorder, ts.Name, v1alpha1.ProfileWorkload, "bulk load off, binary log on")
	return nil
}

// restoreProfiles hands every database the benchmark switched back in the workload profile.
func (r *BenchmarkReconciler) restoreProfiles(ctx context.Context, b *v1alpha1.Benchmark) error {
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		if !ts.ProfileSwitched {
			continue
		}
		db, err := r.getDB(ctx, b, ts.Name)
		if err != nil {
			return err
		}
		if db == nil {
			ts.ProfileSwitched = false
			continue
		}
		if err := r.setProfileBack(ctx, b, ts, db); err != nil {
			return err
		}
	}
	return nil
}

// run runs one iteration on every active target at once: the Jobs share a start time stored in status before
// any of them is created, so a restarted operator reuses it instead of starting a second, unsynchronised run.
func (r *BenchmarkReconciler) run(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	it := b.Status.Iteration
	if b.Status.StartAt == nil {
		t := metav1.NewTime(r.now().Add(time.Duration(b.Spec.StartDelaySeconds) * time.Second).Truncate(time.Second))
		b.Status.StartAt = &t
		b.Status.Progress = fmt.Sprintf("run %d/%d starts at %s", it, b.Spec.Iterations, t.UTC().Format(time.RFC3339))
		return ctrl.Result{Requeue: true}, nil // status first, Jobs next
	}
	running := 0
	for _, ts := range active(b) {
		if hasIteration(ts, it) {
			continue
		}
		db, err := r.targetDB(ctx, b, ts)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			continue
		}
		sum, done, err := r.runJob(ctx, b, resources.BenchPhaseRun, it, db, b.Status.StartAt.Time)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !done {
			running++
			continue
		}
		if !sum.OK {
			r.failTarget(b, ts, event.RunFailed, fmt.Sprintf("run %d failed: %s", it, sum.Error))
			continue
		}
		cm, err := r.keepSeries(ctx, b, it, ts.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		ts.Iterations = append(ts.Iterations, iterationResult(it, sum, cm))
	}
	if running > 0 {
		b.Status.Progress = fmt.Sprintf("run %d/%d: %d target(s) running", it, b.Spec.Iterations, running)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if len(active(b)) == 0 {
		return r.finish(ctx, b, fmt.Sprintf("every target failed in run %d", it))
	}
	event.IterationDone.Emit(b, r.Recorder, it, b.Spec.Iterations)
	if it < b.Spec.Iterations {
		b.Status.Iteration = it + 1
		b.Status.StartAt = nil
		b.Status.Progress = fmt.Sprintf("run %d/%d", it+1, b.Spec.Iterations)
		return ctrl.Result{Requeue: true}, nil
	}
	r.summarize(b)
	return r.finish(ctx, b, "")
}

func hasIteration(ts *v1alpha1.TargetStatus, it int32) bool {
	for _, r := range ts.Iterations {
		if r.Iteration == it {
			return true
		}
	}
	return false
}

// summarize computes each target's mean and its ratios to the baseline.
func (r *BenchmarkReconciler) summarize(b *v1alpha1.Benchmark) {
	var base *v1alpha1.RunFigures
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		ts.State = v1alpha1.TargetDone
		ts.Mean = meanFigures(ts.Iterations)
		if ts.Name == b.Status.Baseline {
			base = ts.Mean
		}
	}
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		if ts.State == v1alpha1.TargetDone {
			ts.VsBaseline = ratios(ts.Mean, base)
		}
	}
}

// runJob creates the Job of one phase for one target if it does not exist, and reads its result once it
// finished. A Job that failed without leaving a summary (pod evicted, killed, deadline) yields a summary with
// the reason the Job controller recorded.
func (r *BenchmarkReconciler) runJob(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase, startAt time.Time) (benchresult.Summary, bool, error) {
	sum, done, exists, err := r.jobResult(ctx, b, phase, it, db)
	if err != nil || exists {
		return sum, done, err
	}
	image := b.Spec.Image
	if image == "" {
		image = r.Image
	}
	err = r.Apply(ctx, resources.BenchJob(b, resources.BenchJobInput{Phase: phase, Iteration: it, DB: db, Image: image, StartAt: startAt}),
		client.FieldOwner(FieldManager), client.ForceOwnership)
	return benchresult.Summary{}, false, err
}

// jobResult reads the Job of one phase for one target without creating it.
func (r *BenchmarkReconciler) jobResult(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase) (benchresult.Summary, bool, bool, error) {
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: resources.BenchJobName(b, phase, it, db.Name)}, job)
	if apierrors.IsNotFound(err) {
		return benchresult.Summary{}, false, false, nil
	}
	if err != nil {
		return benchresult.Summary{}, false, false, err
	}
	finished, failed, _ := jobFinished(job)
	if !finished {
		return benchresult.Summary{}, false, true, nil
	}
	sum, found, err := r.jobSummary(ctx, b, job)
	if err != nil {
		return sum, false, true, err
	}
	if !found {
		sum = benchresult.Summary{Phase: phase, OK: !failed}
		if failed {
			sum.Error = "its pod ended without a result (evicted, killed or past its deadline): " + jobFailureReason(job)
		}
	} else if failed && sum.OK {
		sum.OK = false
		sum.Error = "the Job failed after the runner reported success: " + jobFailureReason(job)
	}
	return sum, true, true, nil
}

func jobFailureReason(job *batchv1.Job) string {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			if c.Message != "" {
				return fmt.Sprintf("%s: %s", c.Reason, c.Message)
			}
			if c.Reason != "" {
				return c.Reason
			}
		}
	}
	return "no reason recorded"
}

// jobSummary reads the runner's summary from the newest pod of a Job: its termination message, or the summary
// line of its log when the message is missing.
func (r *BenchmarkReconciler) jobSummary(ctx context.Context, b *v1alpha1.Benchmark, job *batchv1.Job) (benchresult.Summary, bool, error) {
	pod, term, err := r.jobPod(ctx, b, job)
	if err != nil || pod == nil {
		return benchresult.Summary{}, false, err
	}
	if term != nil && strings.TrimSpace(term.Message) != "" {
		if s, err := benchresult.Decode([]byte(strings.TrimSpace(term.Message))); err == nil {
			return s, true, nil
		}
	}
	if r.Logs != nil {
		if text, err := r.Logs.Read(ctx, pod.Namespace, pod.Name, resources.RunnerContainer); err == nil {
			if s, ok, _ := benchresult.FindSummary(text); ok {
				return s, true, nil
			}
		}
	}
	if term != nil && term.ExitCode != 0 {
		return benchresult.Summary{OK: false, Error: fmt.Sprintf("the runner exited %d (%s): %s", term.ExitCode, term.Reason, lastLines(term.Message, 5))}, true, nil
	}
	return benchresult.Summary{}, false, nil
}

func (r *BenchmarkReconciler) jobPod(ctx context.Context, b *v1alpha1.Benchmark, job *batchv1.Job) (*corev1.Pod, *corev1.ContainerStateTerminated, error) {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(b.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		return nil, nil, err
	}
	var newest *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp) {
			newest = p
		}
	}
	if newest == nil {
		return nil, nil, nil
	}
	for _, cs := range newest.Status.ContainerStatuses {
		if cs.Name == resources.RunnerContainer && cs.State.Terminated != nil {
			return newest, cs.State.Terminated, nil
		}
	}
	return newest, nil, nil
}

// keepSeries copies a run's interval series from the runner's log into a ConfigMap; "" when the log has none
// (for example when the pod's log is gone).
func (r *BenchmarkReconciler) keepSeries(ctx context.Context, b *v1alpha1.Benchmark, it int32, target string) (string, error) {
	if r.Logs == nil {
		return "", nil
	}
	job := &batchv1.Job{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: resources.BenchJobName(b, resources.BenchPhaseRun, it, target)}, job); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	pod, _, err := r.jobPod(ctx, b, job)
	if err != nil || pod == nil {
		return "", err
	}
	text, err := r.Logs.Read(ctx, pod.Namespace, pod.Name, resources.RunnerContainer)
	if err != nil {
		event.SeriesMissing.Emit(b, r.Recorder, target, it, err.Error())
		return "", nil
	}
	series, ok, err := benchresult.FindSeries(text)
	if err != nil || !ok {
		reason := "the runner's log has no series line"
		if err != nil {
			reason = err.Error()
		}
		event.SeriesMissing.Emit(b, r.Recorder, target, it, reason)
		return "", nil
	}
	raw, err := json.Marshal(series)
	if err != nil {
		return "", err
	}
	name := resources.SeriesConfigMapName(b, it, target)
	err = r.Apply(ctx, resources.SeriesConfigMap(b, it, target, string(raw), seriesCSV(series, resources.CSVHeader)),
		client.FieldOwner(FieldManager), client.ForceOwnership)
	return name, err
}

// finalizeBenchmark restores the profiles it switched before the Benchmark goes (its Jobs and ConfigMaps go
// with it through owner references).
func (r *BenchmarkReconciler) finalizeBenchmark(ctx context.Context, b *v1alpha1.Benchmark) error {
	if !controllerutil.ContainsFinalizer(b, BenchmarkFinalizer) {
		return nil
	}
	if err := r.restoreProfiles(ctx, b); err != nil {
		return err
	}
	patch := client.MergeFrom(b.DeepCopy())
	controllerutil.RemoveFinalizer(b, BenchmarkFinalizer)
	return r.Patch(ctx, b, patch)
}

// SetupWithManager registers the reconciler. A Benchmark is woken by its Jobs, by its runner pods and by the
// ZNSDatabases it targets.
func (r *BenchmarkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Benchmark{}).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToBenchmark)).
		Watches(&v1alpha1.ZNSDatabase{}, handler.EnqueueRequestsFromMapFunc(r.databaseToBenchmarks)).
		Named("benchmark").
		Complete(r)
}

func podToBenchmark(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[resources.LabelBenchmark]
	if name == "" || obj.GetLabels()[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByValue {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

func (r *BenchmarkReconciler) databaseToBenchmarks(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &v1alpha1.BenchmarkList{}
	if err := r.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, b := range list.Items {
		for _, t := range b.Spec.Targets {
			if t.Name == obj.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)})
				break
			}
		}
	}
	return out
}

// SetupBenchmark builds the Benchmark reconciler from the manager and registers it.
func SetupBenchmark(mgr ctrl.Manager, image string, logs PodLogs) error {
	if logs == nil {
		cs, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		logs = ClientsetPodLogs{Clientset: cs}
	}
	r := &BenchmarkReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorderFor("zns-mysql-operator"), //nolint:staticcheck // core/v1 Events are what kubectl describe shows
		Logs:     logs,
		Image:    image,
	}
	return r.SetupWithManager(mgr)
}
