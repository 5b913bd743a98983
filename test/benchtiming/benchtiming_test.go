package benchtiming

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func mt(s float64) metav1.Time { return metav1.NewTime(at(s)) }

func rfc(s float64) string { return at(s).Format(time.RFC3339Nano) }

// A two-target Benchmark with two runs: applied at 0, first reconcile at 0.5, waiting until 2, preparing until
// 40, verifying until 50, running from 50; the runners start at 53 and 53.5, sysbench's clocks at 54 and 54.2
// (run 1 ends at 64 and 64.2 after 10 s), run 2 from 70 (clocks) to 80.5, Completed at 82.
func sample() *v1alpha1.Benchmark {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cmp", CreationTimestamp: mt(0)}}
	started := mt(0.5)
	b.Status.StartedAt = &started
	b.Status.Phase = v1alpha1.BenchmarkCompleted
	for _, h := range []struct {
		p v1alpha1.BenchmarkPhase
		s float64
	}{{v1alpha1.BenchmarkWaitingForTargets, 0.5}, {v1alpha1.BenchmarkPreparing, 2}, {v1alpha1.BenchmarkVerifying, 40},
		{v1alpha1.BenchmarkRunning, 50}, {v1alpha1.BenchmarkCompleted, 82}} {
		b.Status.PhaseHistory = append(b.Status.PhaseHistory, v1alpha1.PhaseTransition{Phase: h.p, Time: metav1.NewMicroTime(at(h.s))})
	}
	b.Status.Targets = []v1alpha1.TargetStatus{
		{Name: "a", Iterations: []v1alpha1.IterationResult{
			{Iteration: 1, StartTime: rfc(53), EndTime: rfc(64), DurationSec: "10.0000"},
			{Iteration: 2, StartTime: rfc(69), EndTime: rfc(80), DurationSec: "10.0000"}}},
		{Name: "b", Iterations: []v1alpha1.IterationResult{
			{Iteration: 1, StartTime: rfc(53.5), EndTime: rfc(64.2), DurationSec: "10.0000"},
			{Iteration: 2, StartTime: rfc(69.5), EndTime: rfc(80.5), DurationSec: "10.5000"}}},
	}
	return b
}

func TestCompute(t *testing.T) {
	in := Input{Benchmark: sample(),
		// prepare a 5..15, prepare b 6..20 (union 5..20: 15 s), verify a 41..43.
		Work: []Interval{{From: at(5), To: at(15)}, {From: at(6), To: at(20)}, {From: at(41), To: at(43)}},
		// a restarts 3..6 (1 s beyond the work, which starts at 5) and 20..30, b 42..45 (2 s beyond the verify).
		Unavailable: []Interval{{From: at(3), To: at(6)}, {From: at(20), To: at(30)}, {From: at(42), To: at(45)}},
		RunPodsUp:   at(51), // the runners then wait for the common start until 53
	}
	r, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if !r.FirstSecond.Equal(at(54)) || !r.LastSecond.Equal(at(80.5)) || !r.Completed.Equal(at(82)) {
		t.Errorf("first %v last %v completed %v", r.FirstSecond, r.LastSecond, r.Completed)
	}
	type want struct {
		name                           string
		wall, work, restarts, overhead float64
	}
	wants := []want{
		{"queued (apply to first reconcile)", 0.5, 0, 0, 0.5},
		{"WaitingForTargets", 1.5, 0, 0, 1.5},
		{"Preparing", 38, 15, 12, 11},
		{"Verifying", 10, 2, 2, 6},
		{"Running: Jobs to runner pods up", 1, 0, 0, 1},
		{"Running: pods up, waiting for the common start", 2, 0, 0, 0},
		{"Running: runner start to first second (sysbench connects)", 1, 0, 0, 1},
	}
	if len(r.ToFirstSecond) != len(wants) {
		t.Fatalf("phases %+v", r.ToFirstSecond)
	}
	var sum time.Duration
	for i, w := range wants {
		p := r.ToFirstSecond[i]
		sum += p.Wall
		if p.Name != w.name || p.Wall.Seconds() != w.wall || p.Work.Seconds() != w.work || p.Restarts.Seconds() != w.restarts ||
			p.Overhead.Seconds() != w.overhead || p.Work+p.Restarts+p.Wait+p.Overhead != p.Wall {
			t.Errorf("phase %d: %+v, want %+v", i, p, w)
		}
	}
	if sum != r.FirstSecond.Sub(r.Applied) || Overhead(r.ToFirstSecond) != 21*time.Second {
		t.Errorf("phases add up to %v of %v; overhead %v", sum, r.FirstSecond.Sub(r.Applied), Overhead(r.ToFirstSecond))
	}
	// Run 1 ends at 64.2 (b), run 2's clocks start at 70 (both: 80-10, 80.5-10.5).
	if len(r.BetweenRuns) != 1 || r.BetweenRuns[0].Wall != 5800*time.Millisecond {
		t.Errorf("between runs %+v", r.BetweenRuns)
	}
	if len(r.AfterLastSecond) != 1 || r.AfterLastSecond[0].Wall != 1500*time.Millisecond || r.AfterLastSecond[0].Overhead != 1500*time.Millisecond {
		t.Errorf("after the last second %+v", r.AfterLastSecond)
	}
	// Without the pods' start the whole stretch to the runner start counts as overhead.
	in.RunPodsUp = time.Time{}
	r2, _ := Compute(in)
	if p := r2.ToFirstSecond[4]; p.Name != "Running: Jobs to runner start" || p.Overhead != 3*time.Second || len(r2.ToFirstSecond) != 6 {
		t.Errorf("without the pods' start: %+v", r2.ToFirstSecond)
	}
	if s := r.String(); !strings.Contains(s, "apply to first second") || !strings.Contains(s, "Preparing") {
		t.Errorf("table:\n%s", s)
	}
}

func TestComputeRefusesWhatItCannotTell(t *testing.T) {
	notStarted := sample()
	notStarted.Status.StartedAt = nil
	noRuns := sample()
	for i := range noRuns.Status.Targets {
		for j := range noRuns.Status.Targets[i].Iterations {
			noRuns.Status.Targets[i].Iterations[j].DurationSec = "" // written by an operator before phaseHistory
		}
	}
	notDone := sample()
	notDone.Status.PhaseHistory = notDone.Status.PhaseHistory[:4]
	badTime := sample()
	badTime.Status.Targets[0].Iterations[0].EndTime = "yesterday"
	for name, b := range map[string]*v1alpha1.Benchmark{"not started": notStarted, "no runs": noRuns, "not completed": notDone, "bad time": badTime, "nil": nil} {
		if _, err := Compute(Input{Benchmark: b}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestRecorderIntervals(t *testing.T) {
	r := &Recorder{open: map[string]time.Time{}}
	r.observe("a", at(1), true)
	r.observe("a", at(2), false)
	r.observe("a", at(3), false)
	r.observe("b", at(3), false)
	r.observe("a", at(4), true)
	if len(r.closed) != 1 || !r.closed[0].From.Equal(at(2)) || !r.closed[0].To.Equal(at(4)) || len(r.open) != 1 {
		t.Errorf("closed %+v open %+v", r.closed, r.open)
	}
}

func TestCovered(t *testing.T) {
	ivs := []Interval{{From: at(5), To: at(7)}, {From: at(1), To: at(3)}, {From: at(2), To: at(4)}, {From: at(6), To: at(6.5)}}
	if got := covered(ivs); got != 5*time.Second {
		t.Errorf("covered %v, want 5s (1..4 and 5..7)", got)
	}
	if got := covered(clip(ivs, at(2.5), at(5.5))); got != 2*time.Second {
		t.Errorf("clipped %v, want 2s (2.5..4 and 5..5.5)", got)
	}
	if covered(nil) != 0 {
		t.Error("nothing covers something")
	}
}
