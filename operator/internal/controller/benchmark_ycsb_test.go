package controller_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
)

func ycsbBenchmark(ns, name string, targets ...string) *v1alpha1.Benchmark {
	b := benchmark(ns, name, targets...)
	b.Spec.Tool = v1alpha1.ToolYCSB
	b.Spec.YCSB = &v1alpha1.YCSBSpec{Workload: "a", RecordCount: intstr.FromString("60%"), FieldCount: 1, FieldLength: 4096,
		RequestDistribution: "uniform", LoadThreads: 4, TargetOpsPerSecond: 5000}
	return b
}

// ycsbRunSummary is what the runner reports of a workload A run: reads and updates, the TOTAL over both.
func ycsbRunSummary(target string, it int, readOps, updateOps, updateP99 float64) *benchresult.Summary {
	s := runSummary(target, it, readOps+updateOps, updateP99, false)
	s.Tool, s.Workload = benchresult.ToolYCSB, "a"
	s.Ops = []benchresult.OpFigures{
		{Op: "READ", Count: int64(readOps * 10), OPS: readOps, AvgMS: 0.25, P50MS: 0.2, P90MS: 0.4, P95MS: 0.5, P99MS: 1, P999MS: 6, MaxMS: 9},
		{Op: "UPDATE", Count: int64(updateOps * 10), OPS: updateOps, AvgMS: 2, P50MS: 1.5, P90MS: 3, P95MS: 4, P99MS: updateP99, P999MS: 40, MaxMS: 46, Errors: 2},
	}
	return s
}

// TestBenchmarkYCSB: spec.tool ycsb loads each target on the bulk-load profile (one thread for MyRocks), with a
// record count that is 60% of what its ZNSDatabase reports usable, verifies the records, runs from a common start,
// and keeps each operation type's figures per run and their mean; the password is in the Jobs' environment only.
func TestBenchmarkYCSB(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	zoned, inno := availableDBs(t, ns, "node-"+ns)
	b := ycsbBenchmark(ns, "ycsb", "tenant1", "inno")
	b.Spec.Baseline = "inno"
	create(t, b)

	// What each target's 60% is, from its status as the test reads it: ZenFS's free + used + reclaimable for the
	// zoned one, the volume's 20Gi for the other; a record is 4096 bytes and a 24-byte key.
	zoned, inno = get(t, zoned), get(t, inno)
	zfs := zoned.Status.Filesystem.ZenFS
	usable := map[string]int64{
		"tenant1": zfs.Free.Value() + zfs.Used.Value() + zfs.Reclaimable.Value(),
		"inno":    inno.Spec.Storage.Volume.Size.Value(),
	}
	records := map[string]int64{}
	for tg, u := range usable {
		records[tg] = u * 60 / 100 / (4096 + 24)
	}
	secretPW := func(db *v1alpha1.ZNSDatabase) string {
		s := &corev1.Secret{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db.RootSecretName()}, s); err != nil {
			t.Fatal(err)
		}
		return string(s.Data[v1alpha1.RootPasswordKey])
	}
	passwords := map[string]string{"tenant1": secretPW(zoned), "inno": secretPW(inno)}
	checkJob := func(job *batchv1.Job, target, sub string) {
		t.Helper()
		c := job.Spec.Template.Spec.Containers[0]
		if len(c.Command) < 2 || c.Command[1] != sub {
			t.Errorf("%s: command %q, want znsbench %s", job.Name, c.Command, sub)
		}
		if got := jobArg(job, "--record-count"); got != strconv.FormatInt(records[target], 10) {
			t.Errorf("%s: --record-count %s, want 60%% of %d usable bytes = %d", job.Name, got, usable[target], records[target])
		}
		for flag, want := range map[string]string{"--workload": "a", "--field-count": "1", "--field-length": "4096",
			"--distribution": "uniform", "--mysql-db": "ycsb"} {
			if got := jobArg(job, flag); got != want {
				t.Errorf("%s: %s %q, want %q", job.Name, flag, got, want)
			}
		}
		if pw := passwords[target]; pw == "" || strings.Contains(strings.Join(c.Command, " "), pw) {
			t.Errorf("%s: the password is on the command line (or unknown): %q", job.Name, c.Command)
		}
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "MYSQL_PASSWORD" })
		if i < 0 || c.Env[i].Value != "" || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.SecretKeyRef == nil ||
			c.Env[i].ValueFrom.SecretKeyRef.Name != map[string]string{"tenant1": zoned.RootSecretName(), "inno": inno.RootSecretName()}[target] {
			t.Errorf("%s: MYSQL_PASSWORD not from the database's Secret: %+v", job.Name, c.Env)
		}
	}

	for _, target := range []string{"tenant1", "inno"} {
		job := &batchv1.Job{}
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "ycsb-prepare-" + target}, job)
		checkJob(job, target, "ycsb-load")
		want := map[string]string{"tenant1": "1", "inno": "4"}[target]
		if got := jobArg(job, "--threads"); got != want {
			t.Errorf("load of %s: --threads %s, want %s (MyRocks' bulk load takes one session)", target, got, want)
		}
		if p := profileOf(t, ns, target); p != v1alpha1.ProfileBulkLoad {
			t.Errorf("%s loads in the %s profile", target, p)
		}
	}
	cur := getBench(t, b)
	for _, target := range []string{"tenant1", "inno"} {
		ts := targetStatus(cur, target)
		if ts.YCSB == nil || ts.YCSB.RecordCount != records[target] || ts.YCSB.UsableBytes != usable[target] {
			t.Errorf("%s: status ycsb %+v, want %d records of %d usable bytes", target, ts.YCSB, records[target], usable[target])
		}
	}
	if from := targetStatus(cur, "tenant1").YCSB.UsableFrom; from != "status.filesystem.zenfs" {
		t.Errorf("tenant1's usable capacity read from %q", from)
	}
	for _, target := range []string{"tenant1", "inno"} {
		sum := okSummary("prepare", target)
		sum.Tool = benchresult.ToolYCSB
		sum.Ops = []benchresult.OpFigures{{Op: "INSERT", Count: records[target], OPS: 5000}}
		finishBenchJob(t, ns, "ycsb-prepare-"+target, sum, "", false)
	}
	for _, target := range []string{"tenant1", "inno"} {
		job := &batchv1.Job{}
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "ycsb-verify-" + target}, job)
		checkJob(job, target, "ycsb-verify")
		sum := okSummary("verify", target)
		sum.Tool, sum.RowsExpected, sum.RowsFound = benchresult.ToolYCSB, records[target], records[target]
		finishBenchJob(t, ns, "ycsb-verify-"+target, sum, "", false)
	}
	for _, target := range []string{"tenant1", "inno"} {
		job := &batchv1.Job{}
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "ycsb-run1-" + target}, job)
		checkJob(job, target, "ycsb-run")
		for flag, want := range map[string]string{"--threads": "8", "--time": "10", "--target-ops": "5000", "--iteration": "1"} {
			if got := jobArg(job, flag); got != want {
				t.Errorf("run of %s: %s %q, want %q", target, flag, got, want)
			}
		}
		if jobArg(job, "--start-file") == "" {
			t.Errorf("run of %s: no --start-file: no common start", target)
		}
		if p := profileOf(t, ns, target); p != v1alpha1.ProfileWorkload {
			t.Errorf("%s runs in the %s profile", target, p)
		}
	}
	startRun(t, b, "ycsb-run1-tenant1", "ycsb-run1-inno")
	finishBenchJob(t, ns, "ycsb-run1-tenant1", ycsbRunSummary("tenant1", 1, 900, 880, 10.5), "", false)
	finishBenchJob(t, ns, "ycsb-run1-inno", ycsbRunSummary("inno", 1, 1100, 1090, 7.9), "", false)
	cur = waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionSeriesKept); c != nil && c.Status == metav1.ConditionFalse {
		t.Errorf("a YCSB run is marked as missing its series: %+v", c)
	}
	if cur.Status.Workload != "ycsb-a" || cur.Status.Targets[0].Iterations[0].Workload != "ycsb-a" {
		t.Errorf("workload column %q, run workload %q; want ycsb-a", cur.Status.Workload, cur.Status.Targets[0].Iterations[0].Workload)
	}

	z := targetStatus(cur, "tenant1")
	if len(z.Iterations) != 1 || len(z.Iterations[0].Operations) != 2 {
		t.Fatalf("tenant1 runs %+v", z.Iterations)
	}
	read, upd := z.Iterations[0].Operations[0], z.Iterations[0].Operations[1]
	if read.Operation != "READ" || read.Count != 9000 || read.OpsPerSec != "900.00" || read.LatencyP99Ms != "1.000" ||
		upd.Operation != "UPDATE" || upd.Errors != 2 || upd.LatencyP99Ms != "10.500" || upd.LatencyP999Ms != "40.000" || upd.LatencyP90Ms != "3.000" {
		t.Errorf("tenant1 run 1 operations: %+v", z.Iterations[0].Operations)
	}
	if z.YCSB == nil || len(z.YCSB.Operations) != 2 || z.YCSB.Operations[1].LatencyP99Ms != "10.500" || z.YCSB.RecordCount != records["tenant1"] {
		t.Errorf("tenant1 ycsb status %+v", z.YCSB)
	}
	// The run's TPS is every operation's rate, compared with the baseline like sysbench's.
	if z.Mean == nil || z.Mean.TPS != "1780.00" || z.VsBaseline == nil || z.VsBaseline.TPS != fmt.Sprintf("%.3f", 1780.0/2190.0) {
		t.Errorf("tenant1 mean %+v, vs %+v", z.Mean, z.VsBaseline)
	}
}

// TestBenchmarkYCSBRecordsMissing: a verify that finds fewer records than the load was to insert fails the target
// with RowCountMismatch, naming both counts.
func TestBenchmarkYCSBRecordsMissing(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "node-"+ns)
	b := ycsbBenchmark(ns, "short", "inno")
	b.Spec.YCSB.RecordCount = intstr.FromInt32(5000)
	create(t, b)
	sum := okSummary("prepare", "inno")
	sum.Tool = benchresult.ToolYCSB
	finishBenchJob(t, ns, "short-prepare-inno", sum, "", false)
	ver := okSummary("verify", "inno")
	ver.Tool, ver.RowsExpected, ver.RowsFound = benchresult.ToolYCSB, 5000, 4990
	finishBenchJob(t, ns, "short-verify-inno", ver, "", false)
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
	ts := targetStatus(cur, "inno")
	if ts.Reason != failreason.RowCountMismatch || !strings.Contains(ts.Message, "found 4990 rows, expected 5000 YCSB records") {
		t.Errorf("reason %s, message %q", ts.Reason, ts.Message)
	}
}

// TestBenchmarkYCSBRefused: what go-ycsb or the engine cannot do is refused when the Benchmark is created.
func TestBenchmarkYCSBRefused(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.Benchmark)
		want string
	}{
		{"unknown workload", func(b *v1alpha1.Benchmark) { b.Spec.YCSB.Workload = "g" }, `spec.ycsb.workload: Unsupported value: "g"`},
		{"unknown distribution", func(b *v1alpha1.Benchmark) { b.Spec.YCSB.RequestDistribution = "hotspot" }, `spec.ycsb.requestDistribution: Unsupported value: "hotspot"`},
		{"record of 0 bytes", func(b *v1alpha1.Benchmark) { b.Spec.YCSB.FieldLength = -1 }, "spec.ycsb.fieldLength"},
		{"row above the engine's limit", func(b *v1alpha1.Benchmark) { b.Spec.YCSB.FieldCount, b.Spec.YCSB.FieldLength = 10, 1632 }, "above what MySQL and MariaDB accept in a row"},
		{"one field above the limit", func(b *v1alpha1.Benchmark) { b.Spec.YCSB.FieldLength = 16319 }, "spec.ycsb.fieldLength"},
		{"share above 100%", func(b *v1alpha1.Benchmark) { b.Spec.YCSB.RecordCount = intstr.FromString("150%") }, "whole percent of the target's usable capacity from 1% to 100%"},
		{"share of 0%", func(b *v1alpha1.Benchmark) { b.Spec.YCSB.RecordCount = intstr.FromString("0%") }, "from 1% to 100%"},
		{"no records", func(b *v1alpha1.Benchmark) { b.Spec.YCSB.RecordCount = intstr.FromInt32(0) }, "at least 1"},
		{"ycsb without its block", func(b *v1alpha1.Benchmark) { b.Spec.YCSB = nil }, "spec.tool ycsb needs spec.ycsb"},
		{"ycsb block for sysbench", func(b *v1alpha1.Benchmark) { b.Spec.Tool = v1alpha1.ToolSysbench }, "spec.ycsb goes with spec.tool ycsb"},
		{"sysbench's workloads", func(b *v1alpha1.Benchmark) { b.Spec.Workloads = []string{"oltp_read_write"} }, "spec.workloads, spec.steadyState"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ycsbBenchmark(ns, "bad", "a")
			tc.edit(b)
			err := k8s.Create(ctx, b)
			if err == nil {
				_ = k8s.Delete(ctx, b)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	ok := ycsbBenchmark(ns, "study", "a")
	ok.Spec.YCSB.FieldCount, ok.Spec.YCSB.FieldLength = 10, 1631
	if err := k8s.Create(ctx, ok); err != nil {
		t.Errorf("10 x 1631 (the largest 10-field record) refused: %v", err)
	}
}

// TestBenchmarkYCSBThreadSweep: a YCSB thread sweep keeps each operation type's figures at each thread count,
// the tail latency of reads and updates against the throughput as the load rises.
func TestBenchmarkYCSBThreadSweep(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "node-"+ns)
	b := ycsbBenchmark(ns, "ysweep", "inno")
	b.Spec.YCSB.RecordCount = intstr.FromInt32(1000)
	b.Spec.ThreadSweep = []int32{2, 8}
	create(t, b)
	sum := okSummary("prepare", "inno")
	sum.Tool = benchresult.ToolYCSB
	finishBenchJob(t, ns, "ysweep-prepare-inno", sum, "", false)
	ver := okSummary("verify", "inno")
	ver.Tool, ver.RowsExpected, ver.RowsFound = benchresult.ToolYCSB, 1000, 1000
	finishBenchJob(t, ns, "ysweep-verify-inno", ver, "", false)
	// Updates' p99 climbs with the threads while their rate levels off.
	for run, th := range b.Spec.ThreadSweep {
		job := &batchv1.Job{}
		name := fmt.Sprintf("ysweep-run%d-inno", run+1)
		waitObject(t, client.ObjectKey{Namespace: ns, Name: name}, job)
		if got := jobArg(job, "--threads"); got != fmt.Sprint(th) {
			t.Errorf("%s: --threads %s, want %d", name, got, th)
		}
		s := ycsbRunSummary("inno", run+1, []float64{500, 800}[run], []float64{500, 800}[run], []float64{4, 25}[run])
		s.Threads = int(th)
		finishBenchJob(t, ns, name, s, "", false)
	}
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	ts := targetStatus(cur, "inno")
	if len(ts.Sweep) != 2 {
		t.Fatalf("sweep %+v", ts.Sweep)
	}
	for i, want := range []struct {
		threads    int32
		ops, upP99 string
	}{{2, "500.00", "4.000"}, {8, "800.00", "25.000"}} {
		p := ts.Sweep[i]
		if p.Threads != want.threads || len(p.Operations) != 2 || p.Operations[1].Operation != "UPDATE" ||
			p.Operations[1].OpsPerSec != want.ops || p.Operations[1].LatencyP99Ms != want.upP99 {
			t.Errorf("sweep point %d: %+v, want %+v", i, p, want)
		}
	}
	// The target's own operations are those of the last count, as its mean is.
	if ts.YCSB == nil || len(ts.YCSB.Operations) != 2 || ts.YCSB.Operations[1].LatencyP99Ms != "25.000" {
		t.Errorf("target operations %+v", ts.YCSB)
	}
}
