package controller_test

import (
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

// TestBenchmarkWorkloads: spec.workloads runs each workload in turn on every target together, each repeated
// iterations times, over the same data (one prepare, one verify); status holds each workload's mean, spread and
// ratios, and the target's own figures are the first workload's. Admission refuses what would not measure.
func TestBenchmarkWorkloads(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "node-"+ns)
	b := benchmark(ns, "mix", "tenant1", "inno")
	b.Spec.Baseline = "inno"
	b.Spec.Workloads = []string{"oltp_read_only", "oltp_update_index"}
	b.Spec.Iterations = 2
	create(t, b)
	for _, target := range []string{"tenant1", "inno"} {
		job := &batchv1.Job{}
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "mix-prepare-" + target}, job)
		if got := jobArg(job, "--workload"); got != "oltp_read_only" {
			t.Errorf("prepare of %s: --workload %s, want the first workload's script (every oltp_ script prepares the same tables)", target, got)
		}
		finishBenchJob(t, ns, "mix-prepare-"+target, okSummary("prepare", target), "", false)
		sum := okSummary("verify", target)
		sum.RowsExpected, sum.RowsFound = 2000, 2000
		finishBenchJob(t, ns, "mix-verify-"+target, sum, "", false)
	}
	if w := getBench(t, b).Status.Workload; w != "oltp_read_only,oltp_update_index" {
		t.Errorf("status.workload %q", w)
	}
	// tenant1 doubles inno on reads and is 1.5 times it on writes.
	tps := map[string][]float64{"tenant1": {200, 220, 150, 150}, "inno": {100, 110, 100, 100}}
	for run := range 4 {
		it := int32(run + 1)
		workload := b.Spec.Workloads[run/2]
		for _, target := range []string{"tenant1", "inno"} {
			job := &batchv1.Job{}
			waitObject(t, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("mix-run%d-%s", it, target)}, job)
			if got := jobArg(job, "--workload"); got != workload {
				t.Errorf("run %d of %s: --workload %s, want %s", it, target, got, workload)
			}
		}
		if p := getBench(t, b).Status.Progress; !strings.Contains(p, fmt.Sprintf("run %d/4 (%s)", it, workload)) {
			t.Errorf("progress %q", p)
		}
		for _, target := range []string{"tenant1", "inno"} {
			sum := runSummary(target, int(it), tps[target][run], 10, false)
			sum.Workload = workload
			finishBenchJob(t, ns, fmt.Sprintf("mix-run%d-%s", it, target), sum, seriesLog(t, target, int(it), tps[target][run]), false)
		}
	}
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	onePreparePerTarget(t, ns, 2)
	z := targetStatus(cur, "tenant1")
	if len(z.Iterations) != 4 || len(z.Workloads) != 2 {
		t.Fatalf("tenant1: %d runs, %d workloads", len(z.Iterations), len(z.Workloads))
	}
	for i, want := range []struct{ workload, tps, vs string }{{"oltp_read_only", "210.00", "2.000"}, {"oltp_update_index", "150.00", "1.500"}} {
		w := z.Workloads[i]
		if w.Workload != want.workload || w.Mean == nil || w.Mean.TPS != want.tps || w.VsBaseline == nil || w.VsBaseline.TPS != want.vs ||
			w.AcrossRuns == nil || w.AcrossRuns.Runs != 2 || z.Iterations[2*i].Workload != want.workload {
			t.Errorf("workload %d: %+v (mean %+v, vs %+v); want %+v", i, w, w.Mean, w.VsBaseline, want)
		}
	}
	if z.Mean == nil || z.Mean.TPS != "210.00" || z.VsBaseline == nil || z.VsBaseline.TPS != "2.000" {
		t.Errorf("tenant1 mean %+v vs %+v: want the first workload's", z.Mean, z.VsBaseline)
	}
	if r := cur.Status.Result; !strings.HasPrefix(r, "oltp_read_only (1st of 2 workloads): tenant1 2.00x") || r != report.ResultLine(cur) {
		t.Errorf("result %q", r)
	}

	// An empty list is dropped by the typed client (omitempty): sent as written, it is refused.
	empty := benchmark(ns, "empty", "tenant1")
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(empty)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Benchmark"))
	if err := unstructured.SetNestedSlice(u.Object, []any{}, "spec", "workloads"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, u); err == nil || !strings.Contains(err.Error(), "spec.workloads") {
		t.Errorf("an empty workloads list: %v, want it refused", err)
	}
	for _, bad := range []struct {
		name, want string
		set        func(*v1alpha1.BenchmarkSpec)
	}{
		{"twice", "must not repeat a workload", func(s *v1alpha1.BenchmarkSpec) { s.Workloads = []string{"oltp_read_only", "oltp_read_only"} }},
		{"cleanup", "Unsupported value: \"cleanup\"", func(s *v1alpha1.BenchmarkSpec) { s.Workloads = []string{"oltp_read_only", "cleanup"} }},
		{"insert-first", "oltp_insert adds rows", func(s *v1alpha1.BenchmarkSpec) { s.Workloads = []string{"oltp_insert", "oltp_read_only"} }},
		{"with-sweep", "cannot be combined", func(s *v1alpha1.BenchmarkSpec) {
			s.Workloads, s.ThreadSweep = []string{"oltp_read_only", "oltp_write_only"}, []int32{1, 4}
		}},
		{"too-many-runs", "at most 100 runs", func(s *v1alpha1.BenchmarkSpec) {
			s.Workloads, s.Iterations = []string{"oltp_read_only", "oltp_write_only", "oltp_point_select"}, 34
		}},
	} {
		o := benchmark(ns, bad.name, "tenant1")
		bad.set(&o.Spec)
		if err := k8s.Create(ctx, o); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want it refused with %q", bad.name, err, bad.want)
		}
	}
}
