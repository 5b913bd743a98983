package controller_test

import (
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// TestBenchmarkAloneThenTogether: spec.measureInterference runs each target alone, one after the other with no
// Job for the idle one, then both together; status compares each target's runs together with its runs alone.
func TestBenchmarkAloneThenTogether(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "node-"+ns)
	b := benchmark(ns, "pair", "tenant1", "inno")
	b.Spec.Baseline = "inno"
	b.Spec.MeasureInterference = true
	create(t, b)
	for _, target := range []string{"tenant1", "inno"} {
		finishBenchJob(t, ns, "pair-prepare-"+target, okSummary("prepare", target), "", false)
		sum := okSummary("verify", target)
		sum.RowsExpected, sum.RowsFound = 2000, 2000
		finishBenchJob(t, ns, "pair-verify-"+target, sum, "", false)
	}
	// tenant1 alone 300 TPS, inno alone 100; together 150 and 80.
	for _, run := range []struct {
		it      int
		label   string
		targets map[string]float64
	}{{1, "tenant1 alone", map[string]float64{"tenant1": 300}}, {2, "inno alone", map[string]float64{"inno": 100}},
		{3, "together", map[string]float64{"tenant1": 150, "inno": 80}}} {
		for target := range run.targets {
			waitObject(t, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("pair-run%d-%s", run.it, target)}, &batchv1.Job{})
		}
		if p := getBench(t, b).Status.Progress; !strings.Contains(p, fmt.Sprintf("run %d/3 (%s)", run.it, run.label)) {
			t.Errorf("progress %q, want run %d/3 (%s)", p, run.it, run.label)
		}
		for _, idle := range []string{"tenant1", "inno"} {
			if _, runs := run.targets[idle]; runs {
				continue
			}
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("pair-run%d-%s", run.it, idle)}, &batchv1.Job{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("run %d (%s): a Job for the idle %s (%v)", run.it, run.label, idle, err)
			}
		}
		for target, tps := range run.targets {
			finishBenchJob(t, ns, fmt.Sprintf("pair-run%d-%s", run.it, target), runSummary(target, run.it, tps, 10, false),
				seriesLog(t, target, run.it, tps), false)
		}
	}
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	z, inno := targetStatus(cur, "tenant1"), targetStatus(cur, "inno")
	if len(z.Iterations) != 2 || !z.Iterations[0].Alone || z.Iterations[1].Alone || z.Iterations[1].Iteration != 3 {
		t.Fatalf("tenant1 runs %+v: want run 1 alone and run 3 together", z.Iterations)
	}
	if z.Mean == nil || z.Mean.TPS != "150.00" || z.VsBaseline == nil || z.VsBaseline.TPS != "1.875" {
		t.Errorf("tenant1 mean %+v vs %+v: want its run together against inno's together", z.Mean, z.VsBaseline)
	}
	for _, c := range []struct {
		ts         v1alpha1.TargetStatus
		alone, tps string
	}{{z, "300.00", "0.500"}, {inno, "100.00", "0.800"}} {
		if a := c.ts.Alone; a == nil || a.Mean == nil || a.Mean.TPS != c.alone || a.Interference == nil || a.Interference.TPS != c.tps {
			t.Errorf("%s alone %+v, want %s TPS alone and %s together/alone", c.ts.Name, a, c.alone, c.tps)
		}
	}

	for _, bad := range []struct {
		name, want string
		set        func(*v1alpha1.BenchmarkSpec)
	}{
		{"one", "needs two targets or more", func(s *v1alpha1.BenchmarkSpec) { s.Targets = s.Targets[:1] }},
		{"sweep", "cannot be combined with spec.threadSweep or spec.workloads", func(s *v1alpha1.BenchmarkSpec) { s.ThreadSweep = []int32{1, 4} }},
		{"many", "(targets + 1) x spec.iterations must be at most 100 runs", func(s *v1alpha1.BenchmarkSpec) { s.Iterations = 34 }},
	} {
		o := benchmark(ns, "bad-"+bad.name, "tenant1", "inno")
		o.Spec.MeasureInterference = true
		bad.set(&o.Spec)
		if err := k8s.Create(ctx, o); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want it refused with %q", bad.name, err, bad.want)
		}
	}
}
