package benchplan

import (
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func runs(tps ...string) []v1alpha1.IterationResult {
	var out []v1alpha1.IterationResult
	for i, v := range tps {
		out = append(out, v1alpha1.IterationResult{Iteration: int32(i + 1),
			RunFigures: v1alpha1.RunFigures{TPS: v, LatencyPctMs: v}})
	}
	return out
}

// The significance package's arithmetic is tested there; this checks what reaches the status.
func TestSummarizeKeepsBestRunsAndVerdicts(t *testing.T) {
	b := &v1alpha1.Benchmark{Spec: v1alpha1.BenchmarkSpec{Iterations: 4}}
	b.Status.Baseline = "innodb"
	b.Status.Targets = []v1alpha1.TargetStatus{
		{Name: "myrocks", Iterations: runs("101.20", "98.70", "103.10", "99.50")},
		{Name: "innodb", Iterations: runs("95.10", "96.80", "94.00", "97.30", "95.50")},
		{Name: "noisy", Iterations: runs("100.00", "80.00", "120.00")},
		{Name: "once", Iterations: runs("120.00")},
	}
	Summarize(&b.Spec, &b.Status)
	my, base, noisy, once := b.Status.Targets[0], b.Status.Targets[1], b.Status.Targets[2], b.Status.Targets[3]

	if s := my.AcrossRuns; s == nil || s.Runs != 4 || s.BestIteration != 3 || s.BestTPS != "103.10" || s.BestLatencyPctMs != "98.70" ||
		s.TPSCI95 == "" || s.TPSRunRelDevPct == "" {
		t.Fatalf("myrocks across runs: %+v", s)
	}
	v := my.VsBaseline
	// Welch: t 4.276, df 5.108, p 0.0075 (checked by hand in the significance tests); TPS and, with the same
	// figures, a latency that is higher, hence worse.
	if v == nil || v.TPSVerdict != v1alpha1.VerdictBetter || v.TPSPValue != "0.008" || v.LatencyPctVerdict != v1alpha1.VerdictWorse ||
		v.BestTPS != ratio(103.10, 97.30, true) || v.BestLatencyPct != ratio(98.70, 94.00, true) {
		t.Errorf("myrocks vs innodb: %+v", v)
	}
	if v := noisy.VsBaseline; v == nil || v.TPSVerdict != v1alpha1.VerdictNoSignificantDifference || v.TPS == "" {
		t.Errorf("noisy vs innodb: %+v, want no significant difference (with the ratio kept)", v)
	}
	if v := once.VsBaseline; v == nil || v.TPSVerdict != v1alpha1.VerdictTooFewRuns || v.TPSPValue != "" || v.TPS != ratio(120, 95.74, true) {
		t.Errorf("one run vs innodb: %+v, want TooFewRuns and no p-value", v)
	}
	if s := once.AcrossRuns; s == nil || s.TPSCI95 != "" || s.BestTPS != "120.00" {
		t.Errorf("one run: %+v, want a best and no interval", s)
	}
	if v := base.VsBaseline; v == nil || v.TPSVerdict != "" || v.TPSPValue != "" || v.TPS != "1.000" || v.BestTPS != "1.000" {
		t.Errorf("the baseline against itself: %+v, want ratios of 1 and no test", v)
	}
}

// TestSummarizeWorkloads: with spec.workloads each workload's runs are summarized apart and compared with the
// baseline's runs of the same workload; the target's own figures are the first workload's.
func TestSummarizeWorkloads(t *testing.T) {
	spec := v1alpha1.BenchmarkSpec{Workloads: []string{"oltp_read_only", "oltp_update_index"}, Iterations: 2}
	of := func(tps ...string) []v1alpha1.IterationResult {
		its := runs(tps...)
		for i := range its {
			its[i].Workload = spec.RunWorkload(its[i].Iteration)
		}
		return its
	}
	st := v1alpha1.BenchmarkStatus{Baseline: "innodb", Targets: []v1alpha1.TargetStatus{
		{Name: "myrocks", Iterations: of("200.00", "220.00", "90.00", "110.00")},
		{Name: "innodb", Iterations: of("100.00", "100.00", "50.00", "50.00")},
	}}
	Summarize(&spec, &st)
	my := st.Targets[0]
	if len(my.Workloads) != 2 || my.Workloads[0].Workload != "oltp_read_only" || my.Workloads[1].Workload != "oltp_update_index" {
		t.Fatalf("myrocks workloads %+v", my.Workloads)
	}
	for i, want := range []struct{ mean, vs, best string }{{"210.00", "2.100", "220.00"}, {"100.00", "2.000", "110.00"}} {
		w := my.Workloads[i]
		if w.Mean == nil || w.Mean.TPS != want.mean || w.VsBaseline == nil || w.VsBaseline.TPS != want.vs ||
			w.AcrossRuns == nil || w.AcrossRuns.Runs != 2 || w.AcrossRuns.BestTPS != want.best {
			t.Errorf("%s: mean %+v, vs %+v, across %+v; want %+v", w.Workload, w.Mean, w.VsBaseline, w.AcrossRuns, want)
		}
	}
	if my.Mean == nil || my.Mean.TPS != "210.00" || my.VsBaseline == nil || my.VsBaseline.TPS != "2.100" || my.AcrossRuns.Runs != 2 {
		t.Errorf("myrocks own figures %+v vs %+v: want the first workload's", my.Mean, my.VsBaseline)
	}
	if len(st.Targets[1].Workloads) != 2 || st.Targets[1].Workloads[1].VsBaseline.TPS != "1.000" {
		t.Errorf("innodb workloads %+v", st.Targets[1].Workloads)
	}
}

// TestRunPoints: runs walk the workloads (or the thread counts) in order, each repeated iterations times.
func TestRunPoints(t *testing.T) {
	s := v1alpha1.BenchmarkSpec{Workload: "oltp_update_index", Workloads: []string{"oltp_read_only", "oltp_write_only", "oltp_insert"},
		Threads: 16, Iterations: 2}
	if s.Runs() != 6 || s.WorkloadLabel() != "oltp_read_only,oltp_write_only,oltp_insert" {
		t.Errorf("runs %d, label %q", s.Runs(), s.WorkloadLabel())
	}
	for run, want := range map[int32]struct {
		workload string
		rep      int32
	}{1: {"oltp_read_only", 1}, 2: {"oltp_read_only", 2}, 3: {"oltp_write_only", 1}, 6: {"oltp_insert", 2}} {
		th, rep := s.RunThreads(run)
		if w := s.RunWorkload(run); w != want.workload || rep != want.rep || th != 16 {
			t.Errorf("run %d: %s repetition %d at %d threads, want %+v at 16", run, w, rep, th, want)
		}
	}
	one := v1alpha1.BenchmarkSpec{Workload: "oltp_read_write", Threads: 8, Iterations: 3}
	if th, rep := one.RunThreads(3); one.Runs() != 3 || one.RunWorkload(3) != "oltp_read_write" || th != 8 || rep != 3 ||
		one.WorkloadLabel() != "oltp_read_write" {
		t.Errorf("one workload: runs %d, run 3 %s %d threads repetition %d", one.Runs(), one.RunWorkload(3), th, rep)
	}
	sweep := v1alpha1.BenchmarkSpec{Workload: "oltp_read_write", ThreadSweep: []int32{1, 4}, Iterations: 2}
	if th, rep := sweep.RunThreads(3); sweep.Runs() != 4 || th != 4 || rep != 1 || sweep.RunWorkload(4) != "oltp_read_write" {
		t.Errorf("sweep: runs %d, run 3 at %d threads repetition %d", sweep.Runs(), th, rep)
	}
}
