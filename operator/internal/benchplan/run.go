package benchplan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// RunObserved is what the reconciler read for a Benchmark in phase Running: the databases of its active
// targets, the run Jobs of the current iteration (with the drive sidecar's outcome of those that finished
// well), and of each run the live figures or the interval series.
type RunObserved struct {
	PhaseObserved
	// Live is the last report interval of each run still under way, where it could be read.
	Live map[string]*v1alpha1.LiveFigures
	// Series is each finished run's interval series from the runner's log; SeriesMissing says why a run has
	// none. A run in neither has no series to keep (the operator reads no logs).
	Series        map[string]benchresult.Series
	SeriesMissing map[string]string
}

// Run decides the Running phase: one iteration on every active target at once. The run Jobs are created first;
// each runner waits at the start barrier, and its pod turns Ready when it does. Once every runner is ready, the
// common start is set spec.startDelaySeconds ahead and stored in status before any runner is given it (GiveStart),
// so that a restarted operator hands out the same start instead of a second, unsynchronised one. A target that
// fails during a run does not stop the others' run, but no further iteration starts: a run with fewer targets
// than listed would measure another comparison.
func Run(obs RunObserved) Plan {
	b := obs.Benchmark
	p := Plan{Status: *b.Status.DeepCopy()}
	st := &p.Status
	it := st.Iteration
	var waiting runnersWaiting
	running := 0
	alone := b.Spec.RunAlone(it)
	for _, ts := range Active(st) {
		if alone != "" && ts.Name != alone {
			// idle while another target runs alone, held in the workload profile for the runs to come
			if db := obs.Databases[ts.Name]; db != nil {
				p.keepsProfile(ts, db)
			}
			continue
		}
		if HasIteration(ts, it) {
			// Its run is over, but it stays held in the workload profile until the last target's run ends; a
			// database deleted meanwhile is left to the step that needs it.
			if db := obs.Databases[ts.Name]; db != nil {
				p.keepsProfile(ts, db)
			}
			continue
		}
		db := p.targetDB(obs.PhaseObserved, ts)
		if db == nil || !p.keepsProfile(ts, db) {
			continue
		}
		job := obs.job(resources.BenchPhaseRun, it, ts.Name)
		switch {
		case !job.Exists && st.StartAt == nil:
			p.act(Action{Kind: CreateJob, Target: ts.Name, Phase: resources.BenchPhaseRun, Iteration: it})
			running++
			waiting.add(ts.Name, obs.Now)
			continue
		case !job.Exists:
			// its runner can no longer be given the start the others have
			p.failTarget(ts, event.RunFailed, failreason.PodLost, fmt.Sprintf("run %d: its Job disappeared after the common start was set", it))
			continue
		case !job.Done && st.StartAt == nil:
			running++
			if !job.Ready {
				waiting.add(ts.Name, job.Created)
			}
			continue
		case !job.Done:
			running++
			if !job.StartGiven {
				p.act(Action{Kind: GiveStart, Target: ts.Name, Phase: resources.BenchPhaseRun, Iteration: it, StartAt: st.StartAt.Time})
			}
			if live := obs.Live[ts.Name]; live != nil {
				if old := ts.Live; old == nil || old.Iteration != live.Iteration || old.Seconds != live.Seconds {
					ts.Live = live
				}
			}
			continue
		}
		ts.Live = nil
		sum := job.Summary
		if !sum.OK {
			p.failTarget(ts, event.RunFailed, sum.Reason, fmt.Sprintf("run %d failed: %s", it, sum.Error))
			continue
		}
		if job.DrivePending {
			running++
			continue
		}
		p.Events = append(p.Events, job.DriveEvents...)
		res := IterationResult(it, sum, p.keepSeries(obs, b, ts.Name, it))
		res.Drive = job.Drive
		res.Threads, _ = b.Spec.RunThreads(it)
		res.Workload = b.Spec.RunWorkload(it)
		res.Alone = alone != ""
		ts.Iterations = append(ts.Iterations, res)
		RecordClient(ts, b.Spec.ClientPlacement(), job.ClientNode, job.DatabaseNode)
		RecordSize(ts, sum)
		p.noteIgnoredErrors(ts, it, sum)
	}
	if running > 0 && st.StartAt == nil {
		p.awaitRunners(b, obs.Now, running, waiting)
		return p
	}
	if running > 0 {
		st.Progress = fmt.Sprintf("%s: %d target(s) running", RunLabel(b, it), running)
		p.RequeueAfter = StepRetry
		return p
	}
	if len(Active(st)) == 0 {
		p.finish(b, obs.Now, fmt.Sprintf("every target failed in run %d", it))
		return p
	}
	p.emit(event.IterationDone, it, b.Spec.Runs())
	if len(Active(st)) < len(st.Targets) {
		Summarize(&b.Spec, st)
		why := ""
		if it < b.Spec.Runs() {
			why = fmt.Sprintf("stopped after run %d of %d: the Benchmark runs only with all of its targets", it, b.Spec.Runs())
		}
		p.finish(b, obs.Now, why)
		return p
	}
	if it < b.Spec.Runs() {
		st.Iteration = it + 1
		st.StartAt = nil
		st.Progress = RunLabel(b, it+1)
		p.Requeue = true
		return p
	}
	Summarize(&b.Spec, st)
	p.finish(b, obs.Now, "")
	return p
}

// keepSeries has a finished run's interval series kept in its ConfigMap, downsampled when it is longer than a
// ConfigMap holds (benchresult.Fit), and returns the ConfigMap's name. A run without a series is recorded as
// such (a Warning Event and the SeriesKept condition) and keeps its figures: they come from the runner's summary.
func (p *Plan) keepSeries(obs RunObserved, b *v1alpha1.Benchmark, target string, it int32) string {
	if why, missing := obs.SeriesMissing[target]; missing {
		SeriesMissing(&p.Status, b.Generation, target, it, why)
		p.emit(event.SeriesMissing, target, it, why)
		return ""
	}
	series, ok := obs.Series[target]
	if !ok {
		return ""
	}
	kept := benchresult.Fit(series)
	name := resources.SeriesConfigMapName(b, it, target)
	p.act(Action{Kind: KeepSeries, Target: target, Phase: resources.BenchPhaseRun, Iteration: it, Series: &kept})
	if kept.Downsampled {
		p.emit(event.SeriesDownsampled, target, it, fmt.Sprintf(
			"%d intervals kept as %d buckets of %d (mean, minimum and maximum of each) in ConfigMap %s: a ConfigMap holds at most %d bytes",
			kept.SourceIntervals, kept.Len(), kept.BucketIntervals, name, benchresult.ConfigMapLimitBytes))
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionSeriesKept); c == nil || c.Status == metav1.ConditionTrue {
		meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionSeriesKept, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonSeriesKept, Message: "every finished run's interval series is in the ConfigMap its iteration names (seriesConfigMap)",
			ObservedGeneration: b.Generation})
	}
	return name
}

// SeriesMissing records in the SeriesKept condition a run whose series was not kept, naming the latest such
// run (it stays False: a later run's series does not make up for this one's).
func SeriesMissing(st *v1alpha1.BenchmarkStatus, generation int64, target string, it int32, why string) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionSeriesKept, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonSeriesMissing, Message: fmt.Sprintf("no interval series for target %s run %d: %s; the run's figures are recorded", target, it, why),
		ObservedGeneration: generation})
}

func (p *Plan) noteIgnoredErrors(ts *v1alpha1.TargetStatus, it int32, sum benchresult.Summary) {
	if e, ok := NoteIgnoredErrors(ts, it, sum); ok {
		p.Events = append(p.Events, e)
	}
}

// NoteIgnoredErrors flags a run in which many transaction attempts ended in an error sysbench ignores (lock
// conflicts): its TPS counts only what committed, and the comparison then measures contention as much as
// storage. It returns the Event that says so, once per note.
func NoteIgnoredErrors(ts *v1alpha1.TargetStatus, it int32, sum benchresult.Summary) (Emit, bool) {
	share, ok := sum.IgnoredErrorShare()
	if !ok || share <= benchresult.ManyIgnoredErrors {
		return Emit{}, false
	}
	note := fmt.Sprintf("run %d: %.1f%% of transaction attempts ended in an error sysbench ignores (%.2f/s against %.2f TPS; lock conflicts such as deadlocks 1213 and lock wait timeouts 1205): TPS counts only the committed ones",
		it, 100*share, sum.ErrorsPerSec, sum.TPS)
	if slices.Contains(ts.Notes, note) {
		return Emit{}, false
	}
	ts.Notes = append(ts.Notes, note)
	return Emit{Event: event.ManyIgnoredErrors, Args: []any{ts.Name, note}}, true
}

// HasIteration tells whether the target recorded run it.
func HasIteration(ts *v1alpha1.TargetStatus, it int32) bool {
	for _, r := range ts.Iterations {
		if r.Iteration == it {
			return true
		}
	}
	return false
}

// finish ends the Benchmark: Completed when at least one target has results, Failed otherwise; the reconciler
// then settles it.
func (p *Plan) finish(b *v1alpha1.Benchmark, now time.Time, why string) {
	st := &p.Status
	t := metav1.NewTime(now)
	st.CompletedAt = &t
	st.StartAt = nil
	done := 0
	var failed []string
	for _, ts := range st.Targets {
		if ts.State == v1alpha1.TargetDone {
			done++
		} else {
			failed = append(failed, ts.Name)
		}
	}
	if done == 0 {
		p.abort(b, now, v1alpha1.ReasonNoTargetFinished, "no target finished: "+why)
		return
	}
	msg := fmt.Sprintf("%d of %d targets finished %d iteration(s)", done, len(st.Targets), st.Iteration)
	reason := v1alpha1.ReasonAllTargetsFinished
	if len(failed) > 0 {
		msg += "; failed: " + strings.Join(failed, ", ")
		reason = v1alpha1.ReasonSomeTargetsFailed
	}
	if why != "" {
		msg += "; " + why
	}
	SetPhase(st, v1alpha1.BenchmarkCompleted, fmt.Sprintf("%d/%d targets", done, len(st.Targets)), now)
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionCompleted, Status: metav1.ConditionTrue,
		Reason: reason, Message: msg, ObservedGeneration: b.Generation})
	p.emit(event.BenchmarkCompleted, msg)
	p.act(Action{Kind: Settle})
	p.Requeue, p.RequeueAfter = false, 0
}
