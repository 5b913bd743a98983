package controller_test

import (
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

// TestBenchmarkThreadSweep: spec.threadSweep runs every target together at each thread count in turn, over the
// same data (one prepare, one verify), and status holds the mean and the ratios at each count.
func TestBenchmarkThreadSweep(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "node-"+ns) // a node per run: -count=N reuses no device
	b := benchmark(ns, "sweep", "tenant1", "inno")
	b.Spec.Baseline = "inno"
	b.Spec.ThreadSweep = []int32{1, 4, 16}
	create(t, b)
	// The runner reads the database's size with the row check and after every run.
	size := map[string]int64{"tenant1": 3 << 20, "inno": 8 << 20}
	source := map[string]string{"tenant1": "rocksdb-sst", "inno": "innodb-tablespace"}
	for _, target := range []string{"tenant1", "inno"} {
		finishBenchJob(t, ns, "sweep-prepare-"+target, okSummary("prepare", target), "", false)
		sum := okSummary("verify", target)
		sum.RowsExpected, sum.RowsFound = 2000, 2000
		sum.DataBytes, sum.DataBytesSource = size[target], source[target]
		finishBenchJob(t, ns, "sweep-verify-"+target, sum, "", false)
	}
	// tenant1 gains on inno as the load rises: TPS ratio 1.0, 1.5, 2.0 at 1, 4, 16 threads.
	tps := map[string][]float64{"tenant1": {100, 300, 400}, "inno": {100, 200, 200}}
	lat := map[string][]float64{"tenant1": {2, 4, 8}, "inno": {2, 8, 32}}
	for run, threads := range b.Spec.ThreadSweep {
		it := run + 1
		for _, target := range []string{"tenant1", "inno"} {
			job := &batchv1.Job{}
			waitObject(t, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("sweep-run%d-%s", it, target)}, job)
			if got := jobArg(job, "--threads"); got != fmt.Sprint(threads) {
				t.Errorf("run %d of %s: --threads %s, want %d", it, target, got, threads)
			}
		}
		if p := getBench(t, b).Status.Progress; !strings.Contains(p, fmt.Sprintf("run %d/3 (%d threads)", it, threads)) {
			t.Errorf("progress %q", p)
		}
		for _, target := range []string{"tenant1", "inno"} {
			sum := runSummary(target, it, tps[target][run], lat[target][run], false)
			sum.Threads = int(threads)
			sum.DataBytes, sum.DataBytesSource = size[target]+int64(it)<<10, source[target]
			finishBenchJob(t, ns, fmt.Sprintf("sweep-run%d-%s", it, target), sum, seriesLog(t, target, it, tps[target][run]), false)
		}
	}
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	// The same data throughout: one prepare and one verify per target, no more.
	onePreparePerTarget(t, ns, 2)
	z := targetStatus(cur, "tenant1")
	if len(z.Iterations) != 3 || len(z.Sweep) != 3 {
		t.Fatalf("tenant1: %d runs, %d sweep points", len(z.Iterations), len(z.Sweep))
	}
	for i, want := range []struct {
		threads        int32
		tps, tpsVs, vs string
	}{{1, "100.00", "1.000", "1.000"}, {4, "300.00", "1.500", "0.500"}, {16, "400.00", "2.000", "0.250"}} {
		p := z.Sweep[i]
		if z.Iterations[i].Threads != want.threads || p.Threads != want.threads || p.Mean == nil || p.Mean.TPS != want.tps ||
			p.VsBaseline == nil || p.VsBaseline.TPS != want.tpsVs || p.VsBaseline.LatencyPct != want.vs {
			t.Errorf("point %d: run threads %d, %+v (mean %+v, vs %+v); want %+v", i, z.Iterations[i].Threads, p, p.Mean, p.VsBaseline, want)
		}
	}
	for target, ts := range map[string]v1alpha1.TargetStatus{"tenant1": z, "inno": targetStatus(cur, "inno")} {
		want := v1alpha1.DataSize{Source: source[target], AfterPrepareBytes: size[target], AfterRunBytes: size[target] + 3<<10}
		if ts.Size == nil || *ts.Size != want || ts.Iterations[1].DataBytes != size[target]+2<<10 {
			t.Errorf("%s: size %+v, want %+v; run 2 %d bytes", target, ts.Size, want, ts.Iterations[1].DataBytes)
		}
	}
	// mean and ratios are those of the last count; so is the one-line result.
	if z.Mean == nil || z.Mean.TPS != "400.00" || z.VsBaseline == nil || z.VsBaseline.TPS != "2.000" {
		t.Errorf("tenant1 mean %+v vs %+v", z.Mean, z.VsBaseline)
	}
	if want := "at 16 threads: tenant1 2.00x, p95 0.25x vs inno (baseline not in steady state)"; cur.Status.Result != want || report.ResultLine(cur) != want {
		t.Errorf("result %q, want %q", cur.Status.Result, want)
	}

	bad := benchmark(ns, "twice", "a")
	bad.Spec.ThreadSweep = []int32{4, 4}
	if err := k8s.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "must not repeat a thread count") {
		t.Errorf("a repeated thread count: %v", err)
	}
	bad = benchmark(ns, "zero", "a")
	bad.Spec.ThreadSweep = []int32{0}
	bad.Spec.Prepare = ptr.To(false)
	if err := k8s.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "threadSweep") {
		t.Errorf("0 threads: %v", err)
	}
}
