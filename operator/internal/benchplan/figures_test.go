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
