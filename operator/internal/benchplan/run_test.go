package benchplan

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// running is a Benchmark of targets a and b in run 1 of runs, its common start scheduled, both verified.
func running(runs int32) *v1alpha1.Benchmark {
	b := waitingBench("a", "b")
	b.Spec.Iterations, b.Spec.DurationSeconds, b.Spec.StartDelaySeconds = runs, 60, 10
	b.Status.Baseline = "b"
	for i := range b.Status.Targets {
		b.Status.Targets[i].State = v1alpha1.TargetVerified
	}
	b.Status.Iteration = 1
	SetPhase(&b.Status, v1alpha1.BenchmarkRunning, "run 1", t0)
	at := metav1.NewTime(t0.Add(10 * time.Second))
	b.Status.StartAt = &at
	return b
}

func series(n int) benchresult.Series {
	s := benchresult.Series{Schema: 1, Percentile: 95, ReportIntervalSec: 1}
	for i := 1; i <= n; i++ {
		s.Time = append(s.Time, float64(i))
		s.TPS = append(s.TPS, 100)
		s.QPS = append(s.QPS, 2000)
		s.LatencyMS = append(s.LatencyMS, 12)
		s.ErrorsPerSec = append(s.ErrorsPerSec, 0)
		s.ReconnectsPerSec = append(s.ReconnectsPerSec, 0)
	}
	return s
}

func runObs(b *v1alpha1.Benchmark, jobs map[string]Job) RunObserved {
	obs := RunObserved{PhaseObserved: PhaseObserved{Benchmark: b,
		Databases: dbs(leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload), renamed(leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload), "b")),
		Jobs:      map[JobKey]Job{}, Now: t0.Add(2 * time.Minute)},
		Live: map[string]*v1alpha1.LiveFigures{}, Series: map[string]benchresult.Series{}, SeriesMissing: map[string]string{}}
	for target, j := range jobs {
		obs.Jobs[JobKey{Phase: resources.BenchPhaseRun, Iteration: b.Status.Iteration, Target: target}] = j
	}
	return obs
}

func renamed(db *v1alpha1.ZNSDatabase, name string) *v1alpha1.ZNSDatabase {
	db.Name = name
	return db
}

func runSum(tps float64) benchresult.Summary {
	return benchresult.Summary{Phase: "run", OK: true, TPS: tps, QPS: 20 * tps, LatencyAvgMS: 5, LatencyPctMS: 12, Transactions: int64(60 * tps)}
}

// TestRunStartsWhenEveryRunnerIsReady: the Jobs come first, without a start; the start is set, and stored
// before any runner is given it, once every runner waits at the barrier (its pod Ready); then each runner not
// given it yet is.
func TestRunStartsWhenEveryRunnerIsReady(t *testing.T) {
	b := running(1)
	b.Status.StartAt = nil
	p := Run(runObs(b, nil))
	expect(t, p, v1alpha1.BenchmarkRunning, "CreateJob a run/1,CreateJob b run/1", "")
	for _, a := range p.Actions {
		if !a.StartAt.IsZero() {
			t.Errorf("%s carries a start before the runners are ready", a)
		}
	}
	c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionRunnersReady)
	if p.Status.StartAt != nil || p.RequeueAfter != StepRetry || p.Status.Progress != "run 1/1: 0 of 2 runner(s) ready" ||
		c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRunnersStarting || !strings.Contains(c.Message, "runner(s) of a, b") {
		t.Fatalf("start %v, requeue %v, progress %q, condition %+v", p.Status.StartAt, p.RequeueAfter, p.Status.Progress, c)
	}

	created := t0.Add(time.Minute)
	p = Run(runObs(b, map[string]Job{"a": {Exists: true, Created: created, Ready: true}, "b": {Exists: true, Created: created}}))
	c = meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionRunnersReady)
	expect(t, p, v1alpha1.BenchmarkRunning, "", "")
	if p.Status.StartAt != nil || p.Status.Progress != "run 1/1: 1 of 2 runner(s) ready" || c == nil || !strings.Contains(c.Message, "since "+created.Format(time.RFC3339)+" for the runner(s) of b ") {
		t.Fatalf("start %v, progress %q, condition %+v", p.Status.StartAt, p.Status.Progress, c)
	}

	ready := map[string]Job{"a": {Exists: true, Created: created, Ready: true}, "b": {Exists: true, Created: created, Ready: true}}
	p = Run(runObs(b, ready))
	want := t0.Add(2*time.Minute + 10*time.Second)
	c = meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionRunnersReady)
	expect(t, p, v1alpha1.BenchmarkRunning, "", "RunnersReady")
	if p.Status.StartAt == nil || !p.Status.StartAt.Time.Equal(want) || !p.Requeue ||
		p.Status.Progress != "run 1/1 starts at "+want.Format(time.RFC3339) || c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("start %v, requeue %v, progress %q, condition %+v", p.Status.StartAt, p.Requeue, p.Status.Progress, c)
	}

	b.Status = p.Status
	given := map[string]Job{"a": {Exists: true, Ready: true, StartGiven: true}, "b": {Exists: true, Ready: true}}
	p = Run(runObs(b, given))
	expect(t, p, v1alpha1.BenchmarkRunning, "GiveStart b run/1", "")
	if !p.Actions[0].StartAt.Equal(want) || p.RequeueAfter != StepRetry || p.Status.Progress != "run 1/1: 2 target(s) running" {
		t.Errorf("%s with start %v, requeue %v, progress %q", p.Actions[0], p.Actions[0].StartAt, p.RequeueAfter, p.Status.Progress)
	}

	// A Job gone once the start is set can no longer take part: its target fails, the other runs on.
	p = Run(runObs(b, map[string]Job{"a": {Exists: true, Ready: true, StartGiven: true}}))
	expect(t, p, v1alpha1.BenchmarkRunning, "", "RunFailed")
	if tb := p.Status.Targets[1]; tb.State != v1alpha1.TargetFailed || tb.Reason != "PodLost" {
		t.Errorf("b %+v", tb)
	}
}

// TestRunFailsRunnersNeverReady: past targetTimeoutSeconds, the targets whose runner is not ready fail
// (RunnerNotReady) and their Jobs are stopped; the others are then started without them.
func TestRunFailsRunnersNeverReady(t *testing.T) {
	b := running(1)
	b.Status.StartAt = nil
	created := t0.Add(2*time.Minute - 601*time.Second) // targetTimeoutSeconds 600 ago, and a second
	jobs := map[string]Job{"a": {Exists: true, Created: created, Ready: true}, "b": {Exists: true, Created: created}}
	p := Run(runObs(b, jobs))
	expect(t, p, v1alpha1.BenchmarkRunning, "StopJobs b", "RunFailed")
	if tb := p.Status.Targets[1]; tb.State != v1alpha1.TargetFailed || tb.Reason != "RunnerNotReady" || !strings.Contains(tb.Message, "within targetTimeoutSeconds (10m0s)") {
		t.Fatalf("b %+v", tb)
	}
	if p.Status.StartAt != nil || !p.Requeue {
		t.Fatalf("start %v, requeue %v", p.Status.StartAt, p.Requeue)
	}
	b.Status = p.Status
	p = Run(runObs(b, jobs))
	if p.Status.StartAt == nil || !strings.HasPrefix(p.Status.Progress, "run 1/1 starts at ") {
		t.Errorf("a alone: start %v, progress %q", p.Status.StartAt, p.Status.Progress)
	}
	// a second earlier, nobody fails
	jobs["b"] = Job{Exists: true, Created: created.Add(2 * time.Second)}
	b.Status = running(1).Status
	b.Status.StartAt = nil
	if p := Run(runObs(b, jobs)); len(p.Actions) != 0 || p.Status.Targets[1].State == v1alpha1.TargetFailed {
		t.Errorf("before the timeout: actions %v, b %+v", p.Actions, p.Status.Targets[1])
	}
}

// TestRunFollowsLiveFigures: a new interval is kept; the same one read again changes nothing (one status write
// per interval at most).
func TestRunFollowsLiveFigures(t *testing.T) {
	b := running(1)
	live := &v1alpha1.LiveFigures{Iteration: 1, Seconds: "30", TPS: "100.00", ReadAt: metav1.NewTime(t0)}
	obs := runObs(b, map[string]Job{"a": {Exists: true, StartGiven: true}, "b": {Exists: true, StartGiven: true}})
	obs.Live["a"] = live
	p := Run(obs)
	if p.Status.Targets[0].Live != live || len(p.Actions) != 0 {
		t.Fatalf("live %+v, actions %v", p.Status.Targets[0].Live, p.Actions)
	}
	b.Status = p.Status
	again := *live
	again.ReadAt = metav1.NewTime(t0.Add(time.Second))
	obs.Live["a"] = &again
	if p := Run(obs); !p.Status.Targets[0].Live.ReadAt.Equal(&live.ReadAt) {
		t.Errorf("the same interval rewrote live: %+v", p.Status.Targets[0].Live)
	}
}

// TestRunRecordsAndFinishes walks the end of an iteration: results recorded with their series, drive figures
// and notes; the next iteration or the end; every way a target fails.
func TestRunRecordsAndFinishes(t *testing.T) {
	locks := runSum(100)
	locks.ErrorsPerSec = 5 // 4.8% of attempts
	for _, tc := range []struct {
		name    string
		runs    int32
		jobs    map[string]Job
		series  map[string]benchresult.Series
		missing map[string]string
		phase   v1alpha1.BenchmarkPhase
		actions string
		events  string
		check   func(t *testing.T, p Plan)
	}{
		{name: "a drive report still to come: wait", runs: 1,
			jobs:  map[string]Job{"a": {Exists: true, Done: true, Summary: runSum(100), DrivePending: true}, "b": done(runSum(90))},
			phase: v1alpha1.BenchmarkRunning, events: "",
			check: func(t *testing.T, p Plan) {
				if len(p.Status.Targets[0].Iterations) != 0 || len(p.Status.Targets[1].Iterations) != 1 {
					t.Errorf("a recorded before its drive figures, or b not recorded")
				}
			}},
		{name: "the last run: recorded, summarized, Completed", runs: 1,
			jobs:   map[string]Job{"a": {Exists: true, Done: true, Summary: runSum(100), Drive: &v1alpha1.DriveFigures{Device: "nvme1n1"}}, "b": done(runSum(80))},
			series: map[string]benchresult.Series{"a": series(60), "b": series(60)},
			phase:  v1alpha1.BenchmarkCompleted, actions: "KeepSeries a run/1,KeepSeries b run/1,Settle", events: "IterationDone,Completed",
			check: func(t *testing.T, p Plan) {
				a := p.Status.Targets[0]
				if a.State != v1alpha1.TargetDone || len(a.Iterations) != 1 || a.Iterations[0].SeriesConfigMap != "cmp-series1-a" ||
					a.Iterations[0].Drive == nil || a.Mean == nil || a.VsBaseline == nil || a.VsBaseline.TPS != "1.250" {
					t.Errorf("a %+v", a)
				}
				if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionSeriesKept); c == nil || c.Status != metav1.ConditionTrue {
					t.Errorf("SeriesKept %+v", c)
				}
				if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionCompleted); c == nil || c.Reason != v1alpha1.ReasonAllTargetsFinished {
					t.Errorf("Completed %+v", c)
				}
			}},
		{name: "not the last run: on to the next, from a new common start", runs: 2,
			jobs:  map[string]Job{"a": done(runSum(100)), "b": done(runSum(80))},
			phase: v1alpha1.BenchmarkRunning, events: "IterationDone",
			check: func(t *testing.T, p Plan) {
				if p.Status.Iteration != 2 || p.Status.StartAt != nil || !p.Requeue {
					t.Errorf("iteration %d, startAt %v", p.Status.Iteration, p.Status.StartAt)
				}
			}},
		{name: "a run longer than a ConfigMap holds: its series downsampled, and said so", runs: 1,
			jobs:   map[string]Job{"a": done(runSum(100)), "b": done(runSum(80))},
			series: map[string]benchresult.Series{"a": series(benchresult.MaxRawIntervals + 1)},
			phase:  v1alpha1.BenchmarkCompleted, actions: "KeepSeries a run/1,Settle", events: "SeriesDownsampled,IterationDone,Completed",
			check: func(t *testing.T, p Plan) {
				if s := p.Actions[0].Series; s == nil || !s.Downsampled || s.SourceIntervals != benchresult.MaxRawIntervals+1 {
					t.Errorf("kept series %+v", s)
				}
			}},
		{name: "no series in the log: the run counts, the series is missing", runs: 1,
			jobs:    map[string]Job{"a": done(runSum(100)), "b": done(runSum(80))},
			missing: map[string]string{"a": "the runner's log has no series line"},
			phase:   v1alpha1.BenchmarkCompleted, actions: "Settle", events: "SeriesMissing,IterationDone,Completed",
			check: func(t *testing.T, p Plan) {
				if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionSeriesKept); c == nil || c.Status != metav1.ConditionFalse ||
					!strings.Contains(c.Message, "target a run 1") {
					t.Errorf("SeriesKept %+v", c)
				}
				if it := p.Status.Targets[0].Iterations; len(it) != 1 || it[0].SeriesConfigMap != "" {
					t.Errorf("iterations %+v", it)
				}
			}},
		{name: "one target's run failed: the other's counts, no further run", runs: 2,
			jobs:  map[string]Job{"a": done(benchresult.Summary{Reason: "ConnectionLost", Error: "gone"}), "b": done(runSum(80))},
			phase: v1alpha1.BenchmarkCompleted, actions: "Settle", events: "RunFailed,IterationDone,Completed",
			check: func(t *testing.T, p Plan) {
				c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionCompleted)
				if c == nil || c.Reason != v1alpha1.ReasonSomeTargetsFailed || !strings.Contains(c.Message, "stopped after run 1 of 2") {
					t.Errorf("Completed %+v", c)
				}
				if a := p.Status.Targets[0]; a.State != v1alpha1.TargetFailed || a.Message != "run 1 failed: gone" {
					t.Errorf("a %+v", a)
				}
			}},
		{name: "every run failed: Failed, nothing finished", runs: 1,
			jobs:  map[string]Job{"a": done(benchresult.Summary{Reason: "Crashed"}), "b": done(benchresult.Summary{Reason: "Crashed"})},
			phase: v1alpha1.BenchmarkFailed, actions: "Settle", events: "RunFailed,RunFailed,Failed",
			check: func(t *testing.T, p Plan) {
				if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionFailed); c == nil || c.Reason != v1alpha1.ReasonNoTargetFinished {
					t.Errorf("Failed %+v", c)
				}
			}},
		{name: "many lock conflicts: the run counts, with a note", runs: 1,
			jobs:  map[string]Job{"a": done(locks), "b": done(runSum(80))},
			phase: v1alpha1.BenchmarkCompleted, actions: "Settle", events: "ManyIgnoredErrors,IterationDone,Completed",
			check: func(t *testing.T, p Plan) {
				if n := p.Status.Targets[0].Notes; len(n) != 1 || !strings.Contains(n[0], "4.8% of transaction attempts") {
					t.Errorf("notes %v", n)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := running(tc.runs)
			obs := runObs(b, tc.jobs)
			for k, v := range tc.series {
				obs.Series[k] = v
			}
			for k, v := range tc.missing {
				obs.SeriesMissing[k] = v
			}
			before := b.DeepCopy()
			p := Run(obs)
			expect(t, p, tc.phase, tc.actions, tc.events)
			if tc.check != nil {
				tc.check(t, p)
			}
			if !equality.Semantic.DeepEqual(b, before) {
				t.Error("the observed Benchmark was changed")
			}
		})
	}
}

// TestRunHoldsFinishedTargetsInWorkload: a target whose run is over stays held until the last run ends; its
// lease rewritten meanwhile fails it, and the other's run goes on.
func TestRunHoldsFinishedTargetsInWorkload(t *testing.T) {
	b := running(1)
	b.Status.Targets[0].Iterations = []v1alpha1.IterationResult{IterationResult(1, runSum(100), "")}
	obs := runObs(b, map[string]Job{"b": {Exists: true, StartGiven: true}})
	obs.Databases["a"].Annotations[v1alpha1.AnnotationBenchmarkProfile] = string(v1alpha1.ProfileBulkLoad)
	p := Run(obs)
	if a := p.Status.Targets[0]; a.State != v1alpha1.TargetFailed || a.Reason != "ProfileChanged" {
		t.Errorf("a %+v", a)
	}
	if got := join(p.Actions); got != "StopJobs a" || p.Status.Phase != v1alpha1.BenchmarkRunning {
		t.Errorf("actions %s, phase %s", got, p.Status.Phase)
	}
}

// TestSteadyState walks the write-only rounds of one conventional target.
func TestSteadyState(t *testing.T) {
	rule := &v1alpha1.SteadyStateSpec{MaxRounds: 4, Window: 2, MaxRangePercent: 20, MaxSlopeExcursionPercent: 10}
	round := func(tps float64) Job { return done(benchresult.Summary{OK: true, TPS: tps}) }
	for _, tc := range []struct {
		name    string
		zoned   bool
		rounds  map[int32]Job
		phase   v1alpha1.BenchmarkPhase
		actions string
		events  string
		check   func(t *testing.T, ss *v1alpha1.SteadyStateStatus)
	}{
		{name: "the first round", phase: v1alpha1.BenchmarkSteadyState, actions: "CreateJob a steady/1"},
		{name: "a round done: recorded, the next one created", rounds: map[int32]Job{1: round(500)},
			phase: v1alpha1.BenchmarkSteadyState, actions: "CreateJob a steady/2",
			check: func(t *testing.T, ss *v1alpha1.SteadyStateStatus) {
				if len(ss.Rounds) != 1 || ss.Rounds[0].TPS != "500.00" || ss.Reached {
					t.Errorf("%+v", ss)
				}
			}},
		{name: "settled: on to the runs", rounds: map[int32]Job{1: round(500), 2: round(300), 3: round(310)},
			phase: v1alpha1.BenchmarkRunning, events: "SteadyStateReached",
			check: func(t *testing.T, ss *v1alpha1.SteadyStateStatus) {
				if !ss.Reached || ss.WindowStart != 2 || len(ss.Rounds) != 3 {
					t.Errorf("%+v", ss)
				}
			}},
		{name: "never settled: on to the runs, marked", rounds: map[int32]Job{1: round(500), 2: round(300), 3: round(500), 4: round(300)},
			phase: v1alpha1.BenchmarkRunning, events: "SteadyStateNotReached",
			check: func(t *testing.T, ss *v1alpha1.SteadyStateStatus) {
				if ss.Reached || len(ss.Rounds) != 4 {
					t.Errorf("%+v", ss)
				}
			}},
		{name: "a round failed: the Benchmark fails", rounds: map[int32]Job{1: done(benchresult.Summary{Reason: "Crashed", Error: "oom"})},
			phase: v1alpha1.BenchmarkFailed, actions: "Settle", events: "SteadyStateFailed,Failed"},
		{name: "a zoned target needs none", zoned: true, phase: v1alpha1.BenchmarkRunning,
			check: func(t *testing.T, ss *v1alpha1.SteadyStateStatus) {
				if ss.Required || ss.Skipped != NotRequired {
					t.Errorf("%+v", ss)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := inPhase(v1alpha1.BenchmarkSteadyState, v1alpha1.TargetVerified)
			b.Spec.SteadyState = rule
			db := leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload)
			if tc.zoned {
				db.Spec.Storage = v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n", DeviceName: "nullb0"}}
			}
			obs := PhaseObserved{Benchmark: b, Databases: dbs(db), Jobs: map[JobKey]Job{}, Now: t0.Add(time.Hour)}
			for r, j := range tc.rounds {
				obs.Jobs[JobKey{Phase: resources.BenchPhaseSteady, Iteration: r, Target: "a"}] = j
			}
			p := SteadyState(obs)
			expect(t, p, tc.phase, tc.actions, tc.events)
			if tc.check != nil {
				tc.check(t, p.Status.Targets[0].SteadyState)
			}
		})
	}
}

// expect checks a plan's phase, its actions and its Events' reasons (each list comma-separated, in order).
func expect(t *testing.T, p Plan, phase v1alpha1.BenchmarkPhase, actions, events string) {
	t.Helper()
	if p.Status.Phase != phase {
		t.Errorf("phase %s, want %s", p.Status.Phase, phase)
	}
	if got := join(p.Actions); got != actions {
		t.Errorf("actions %q, want %q", got, actions)
	}
	if got := strings.Join(reasons(p), ","); got != events {
		t.Errorf("events %q, want %q", got, events)
	}
}

// TestRunAloneThenTogether walks spec.measureInterference with two targets and one iteration: a runs alone while
// b is held idle, then b alone, then both together from one start; the summary compares each target's run
// together with its run alone.
func TestRunAloneThenTogether(t *testing.T) {
	b := running(1)
	b.Spec.MeasureInterference = true
	if b.Spec.Runs() != 3 {
		t.Fatalf("runs %d, want 3: a alone, b alone, together", b.Spec.Runs())
	}
	// run 1: a alone
	b.Status.StartAt = nil
	p := Run(runObs(b, nil))
	if got := join(p.Actions); got != "CreateJob a run/1" || p.Status.Progress != "run 1/3 (a alone): 0 of 1 runner(s) ready" {
		t.Fatalf("run 1: actions %s, progress %q", got, p.Status.Progress)
	}
	p = Run(runObs(b, map[string]Job{"a": done(runSum(200))}))
	if p.Status.Iteration != 2 || p.Status.Progress != "run 2/3 (b alone)" || len(p.Status.Targets[1].Iterations) != 0 {
		t.Fatalf("after run 1: iteration %d, progress %q, b %+v", p.Status.Iteration, p.Status.Progress, p.Status.Targets[1].Iterations)
	}
	if r := p.Status.Targets[0].Iterations; len(r) != 1 || !r[0].Alone {
		t.Fatalf("a's run alone recorded as %+v", r)
	}
	// run 2: b alone; a, whose run alone is over, gets no Job
	b.Status = p.Status
	p = Run(runObs(b, nil))
	if got := join(p.Actions); got != "CreateJob b run/2" {
		t.Fatalf("run 2: actions %s", got)
	}
	p = Run(runObs(b, map[string]Job{"b": done(runSum(100))}))
	if p.Status.Progress != "run 3/3 (together)" {
		t.Fatalf("after run 2: progress %q", p.Status.Progress)
	}
	// run 3: together, each at half its pace alone for a, 80% for b
	b.Status = p.Status
	p = Run(runObs(b, nil))
	if got := join(p.Actions); got != "CreateJob a run/3,CreateJob b run/3" {
		t.Fatalf("run 3: actions %s", got)
	}
	p = Run(runObs(b, map[string]Job{"a": done(runSum(100)), "b": done(runSum(80))}))
	expect(t, p, v1alpha1.BenchmarkCompleted, "Settle", "IterationDone,Completed")
	a, base := p.Status.Targets[0], p.Status.Targets[1]
	if a.Mean == nil || a.Mean.TPS != "100.00" || a.VsBaseline == nil || a.VsBaseline.TPS != "1.250" {
		t.Errorf("a together: mean %+v vs %+v; want its run together against b's together", a.Mean, a.VsBaseline)
	}
	for _, c := range []struct {
		ts         v1alpha1.TargetStatus
		alone, tps string
	}{{a, "200.00", "0.500"}, {base, "100.00", "0.800"}} {
		al := c.ts.Alone
		if al == nil || al.Mean == nil || al.Mean.TPS != c.alone || al.Interference == nil || al.Interference.TPS != c.tps ||
			al.Interference.TPSVerdict != v1alpha1.VerdictTooFewRuns {
			t.Errorf("%s alone: %+v; want alone %s TPS, together/alone %s, too few runs to judge", c.ts.Name, al, c.alone, c.tps)
		}
	}
}
