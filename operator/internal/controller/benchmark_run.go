package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// run runs one iteration on every active target at once: the Jobs share a start time stored in status before
// any of them is created, so a restarted operator reuses it instead of starting a second, unsynchronised run.
// A target that fails during a run does not stop the others' run, but no further iteration starts: a run with
// fewer targets than listed would measure another comparison.
func (r *BenchmarkReconciler) run(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	it := b.Status.Iteration
	if b.Status.StartAt == nil {
		t := metav1.NewTime(r.now().Add(time.Duration(b.Spec.StartDelaySeconds) * time.Second).Truncate(time.Second))
		b.Status.StartAt = &t
		b.Status.Progress = fmt.Sprintf("%s starts at %s", benchplan.RunLabel(b, it), t.UTC().Format(time.RFC3339))
		return requeue, nil // status first, Jobs next
	}
	running := 0
	for _, ts := range active(b) {
		if hasIteration(ts, it) {
			// Its run is over, but it stays held in the workload profile until the last target's run ends.
			if err := r.heldInWorkload(ctx, b, ts); err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		db, err := r.targetDB(ctx, b, ts)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			continue
		}
		if kept, err := r.keepsProfile(ctx, b, ts, db); err != nil {
			return ctrl.Result{}, err
		} else if !kept {
			continue
		}
		sum, done, err := r.runJob(ctx, b, resources.BenchPhaseRun, it, db, b.Status.StartAt.Time)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !done {
			running++
			r.readLive(ctx, b, ts, it)
			continue
		}
		ts.Live = nil
		if !sum.OK {
			r.failTarget(b, ts, event.RunFailed, sum.Reason, fmt.Sprintf("run %d failed: %s", it, sum.Error))
			continue
		}
		drive, pending, err := r.driveOutcome(ctx, b, resources.BenchPhaseRun, it, db, sum.Transactions)
		if err != nil {
			return ctrl.Result{}, err
		}
		if pending {
			running++
			continue
		}
		cm, err := r.keepSeries(ctx, b, it, ts.Name)
		if err != nil { // only a passing failure: a refusal or a missing series is recorded, and the run with it
			return ctrl.Result{}, err
		}
		res := iterationResult(it, sum, cm)
		res.Drive = drive
		res.Threads, _ = b.Spec.RunThreads(it)
		ts.Iterations = append(ts.Iterations, res)
		recordSize(ts, sum)
		r.noteIgnoredErrors(b, ts, it, sum)
	}
	if running > 0 {
		b.Status.Progress = fmt.Sprintf("%s: %d target(s) running", benchplan.RunLabel(b, it), running)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if len(active(b)) == 0 {
		return r.finish(ctx, b, fmt.Sprintf("every target failed in run %d", it))
	}
	event.IterationDone.Emit(b, r.Recorder, it, b.Spec.Runs())
	if len(active(b)) < len(b.Status.Targets) {
		r.summarize(b)
		why := ""
		if it < b.Spec.Runs() {
			why = fmt.Sprintf("stopped after run %d of %d: the Benchmark runs only with all of its targets", it, b.Spec.Runs())
		}
		return r.finish(ctx, b, why)
	}
	if it < b.Spec.Runs() {
		b.Status.Iteration = it + 1
		b.Status.StartAt = nil
		b.Status.Progress = benchplan.RunLabel(b, it+1)
		return requeue, nil
	}
	r.summarize(b)
	return r.finish(ctx, b, "")
}

// noteIgnoredErrors flags a run in which many transaction attempts ended in an error sysbench ignores (lock
// conflicts): its TPS counts only what committed, and the comparison then measures contention as much as storage.
func (r *BenchmarkReconciler) noteIgnoredErrors(b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, it int32, sum benchresult.Summary) {
	share, ok := sum.IgnoredErrorShare()
	if !ok || share <= benchresult.ManyIgnoredErrors {
		return
	}
	note := fmt.Sprintf("run %d: %.1f%% of transaction attempts ended in an error sysbench ignores (%.2f/s against %.2f TPS; lock conflicts such as deadlocks 1213 and lock wait timeouts 1205): TPS counts only the committed ones",
		it, 100*share, sum.ErrorsPerSec, sum.TPS)
	if slices.Contains(ts.Notes, note) {
		return
	}
	ts.Notes = append(ts.Notes, note)
	event.ManyIgnoredErrors.Emit(b, r.Recorder, ts.Name, note)
}

func hasIteration(ts *v1alpha1.TargetStatus, it int32) bool {
	for _, r := range ts.Iterations {
		if r.Iteration == it {
			return true
		}
	}
	return false
}

// recordSize keeps the database size the runner read after a run: the latest is the size after the runs.
func recordSize(ts *v1alpha1.TargetStatus, sum benchresult.Summary) {
	if sum.DataBytes <= 0 {
		return
	}
	if ts.Size == nil {
		ts.Size = &v1alpha1.DataSize{Source: sum.DataBytesSource}
	}
	ts.Size.AfterRunBytes = sum.DataBytes
}

// summarize computes each target's mean, its spread across runs and its ratios to the baseline; with a thread
// sweep, per thread count (status.targets[].sweep), mean, spread and ratios then being those of the last count.
func (r *BenchmarkReconciler) summarize(b *v1alpha1.Benchmark) {
	base := map[int32]runsSummary{}
	sums := make([]map[int32]runsSummary, len(b.Status.Targets))
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		ts.State = v1alpha1.TargetDone
		if note := steadyNote(ts); note != "" && !slices.Contains(ts.Notes, note) {
			ts.Notes = append(ts.Notes, note)
		}
		sums[i] = map[int32]runsSummary{0: summarizeRuns(ts.Iterations)}
		ts.Sweep = nil
		for _, th := range b.Spec.ThreadSweep {
			var its []v1alpha1.IterationResult
			for _, it := range ts.Iterations {
				if it.Threads == th {
					its = append(its, it)
				}
			}
			if len(its) > 0 {
				s := summarizeRuns(its)
				sums[i][th] = s
				ts.Sweep = append(ts.Sweep, v1alpha1.SweepPoint{Threads: th, Mean: s.mean, AcrossRuns: s.spread})
			}
		}
		if n := len(ts.Sweep); n > 0 {
			sums[i][0] = sums[i][ts.Sweep[n-1].Threads]
		}
		ts.Mean, ts.AcrossRuns = sums[i][0].mean.DeepCopy(), sums[i][0].spread.DeepCopy()
		ts.DriveMean = meanDrive(sums[i][0].runs)
		if ts.Name == b.Status.Baseline {
			base = sums[i]
		}
	}
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		if ts.State != v1alpha1.TargetDone {
			continue
		}
		self := ts.Name == b.Status.Baseline
		ts.VsBaseline = ratios(sums[i][0], base[0], self)
		for j := range ts.Sweep {
			th := ts.Sweep[j].Threads
			ts.Sweep[j].VsBaseline = ratios(sums[i][th], base[th], self)
		}
	}
}
