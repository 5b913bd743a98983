package controller_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// TestBenchmarkMethodology follows one benchmark through the whole methodology: bulkload profile, prepare,
// workload profile, verify, two synchronised runs (with an operator restart in the middle of the first),
// results, means and ratios against the baseline.
func TestBenchmarkMethodology(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	zonedDB, _ := availableDBs(t, ns, "bench-node-1")
	b := benchmark(ns, "cmp", "tenant1", "inno")
	b.Spec.Baseline = "inno"
	b.Spec.Iterations = 2
	create(t, b)

	// Prepare runs only once the database is Available in the bulkload profile.
	for _, target := range []string{"tenant1", "inno"} {
		job := &batchv1.Job{}
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "cmp-prepare-" + target}, job)
		if p := profileOf(t, ns, target); p != v1alpha1.ProfileBulkLoad {
			t.Errorf("%s: prepare Job exists while the database is in profile %s", target, p)
		}
		cmd := strings.Join(job.Spec.Template.Spec.Containers[0].Command, " ")
		if !strings.HasPrefix(cmd, "znsbench prepare --target "+target) || !strings.Contains(cmd, "--tables 2 --table-size 1000") ||
			!strings.HasSuffix(cmd, "--create-database --drop-existing") {
			t.Errorf("prepare command %q", cmd)
		}
		env := job.Spec.Template.Spec.Containers[0].Env
		if len(env) != 1 || env[0].ValueFrom == nil || env[0].ValueFrom.SecretKeyRef.Name != target+"-root" {
			t.Errorf("the password must come from the target's Secret: %+v", env)
		}
		ownerIsBenchmark(t, job, getBench(t, b))
	}
	if got := getBench(t, b).Status.Phase; got != v1alpha1.BenchmarkPreparing {
		t.Errorf("phase %s, want Preparing", got)
	}
	for _, target := range []string{"tenant1", "inno"} {
		finishBenchJob(t, ns, "cmp-prepare-"+target, okSummary("prepare", target), "", false)
	}
	// Back to workload before the rows are counted.
	for _, target := range []string{"tenant1", "inno"} {
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "cmp-verify-" + target}, &batchv1.Job{})
		if p := profileOf(t, ns, target); p != v1alpha1.ProfileWorkload {
			t.Errorf("%s: verify Job exists while the database is in profile %s", target, p)
		}
		sum := okSummary("verify", target)
		sum.RowsExpected, sum.RowsFound = 2000, 2000
		finishBenchJob(t, ns, "cmp-verify-"+target, sum, "", false)
	}

	// Run 1: both Jobs carry the same start time, the one in status; the zoned target samples its device on
	// its node.
	run1 := map[string]*batchv1.Job{}
	for _, target := range []string{"tenant1", "inno"} {
		job := &batchv1.Job{}
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "cmp-run1-" + target}, job)
		run1[target] = job
	}
	waitBenchPhase(t, b, v1alpha1.BenchmarkRunning)
	for target, job := range run1 {
		if got := jobArg(job, "--start-file"); got == "" {
			t.Errorf("%s: no --start-file: the runner cannot be given the common start", target)
		}
	}
	eventually(t, "RunnersReady False while no runner is at the barrier", func() error {
		c := meta.FindStatusCondition(getBench(t, b).Status.Conditions, v1alpha1.ConditionRunnersReady)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRunnersStarting {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	startAt := startRun(t, b, "cmp-run1-tenant1", "cmp-run1-inno")
	waitBenchEvent(t, b, "RunnersReady")
	if jobArg(run1["tenant1"], "--device") != "nullb0" || jobArg(run1["inno"], "--device") != "" {
		t.Errorf("--device: zoned %q, conventional %q", jobArg(run1["tenant1"], "--device"), jobArg(run1["inno"], "--device"))
	}
	assertPinnedTo(t, run1["tenant1"].Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, "bench-node-1")

	// An operator restart in the middle of the run creates no second Job and keeps the start time.
	restartManager(t)
	consistently(t, "no duplicate run Job after a restart", 2*time.Second, func() error {
		jobs := &batchv1.JobList{}
		if err := k8s.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{resources.LabelBenchPhase: "run"}); err != nil {
			return err
		}
		if len(jobs.Items) != 2 {
			return fmt.Errorf("%d run Jobs", len(jobs.Items))
		}
		if got := getBench(t, b).Status.StartAt.UTC().Format(time.RFC3339); got != startAt {
			return fmt.Errorf("start time moved from %s to %s", startAt, got)
		}
		return nil
	})

	finishBenchJob(t, ns, "cmp-run1-tenant1", runSummary("tenant1", 1, 300, 5, true), seriesLog(t, "tenant1", 1, 300), false)
	finishBenchJob(t, ns, "cmp-run1-inno", runSummary("inno", 1, 100, 15, false), seriesLog(t, "inno", 1, 100), false)
	waitBenchEvent(t, b, "IterationDone")
	for _, target := range []string{"tenant1", "inno"} {
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "cmp-run2-" + target}, &batchv1.Job{})
	}
	if got := startRun(t, b, "cmp-run2-tenant1", "cmp-run2-inno"); got <= startAt {
		t.Errorf("run 2 starts at %q, not after run 1 (%s)", got, startAt)
	}
	finishBenchJob(t, ns, "cmp-run2-tenant1", runSummary("tenant1", 2, 500, 3, true), seriesLog(t, "tenant1", 2, 500), false)
	finishBenchJob(t, ns, "cmp-run2-inno", runSummary("inno", 2, 100, 15, false), seriesLog(t, "inno", 2, 100), false)

	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	if c := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionCompleted); c == nil || c.Reason != "AllTargetsFinished" {
		t.Errorf("Completed condition %+v", c)
	}
	z, in := targetStatus(done, "tenant1"), targetStatus(done, "inno")
	if z.State != v1alpha1.TargetDone || len(z.Iterations) != 2 || z.Rows != 2000 || z.Engine != "rocksdb" || z.Storage != "zoned" {
		t.Fatalf("tenant1 status %+v", z)
	}
	first := z.Iterations[0]
	want := v1alpha1.RunFigures{TPS: "300.00", QPS: "1200.00", LatencyAvgMs: "2.50", LatencyPctMs: "5.00", LatencyMaxMs: "15.00",
		ErrorsPerSec: "0.50", ReconnectsPerSec: "0.00", TPSRelDevPct: "3.50", LatencyRelDevPct: "7.25",
		DeviceWrittenBytes: "12288000", BytesPerTransaction: "4096.00"}
	if first.RunFigures != want || first.Transactions != 3000 {
		t.Errorf("tenant1 run 1 = %+v\nwant %+v", first.RunFigures, want)
	}
	if z.Mean.TPS != "400.00" || z.Mean.LatencyPctMs != "4.00" {
		t.Errorf("tenant1 mean %+v, want TPS 400.00 and p95 4.00", z.Mean)
	}
	if in.Mean.DeviceWrittenBytes != "" {
		t.Errorf("a target without device figures must not get a mean of them: %+v", in.Mean)
	}
	if z.VsBaseline == nil || z.VsBaseline.TPS != "4.000" || z.VsBaseline.LatencyPct != "0.267" {
		t.Errorf("tenant1 vs baseline %+v, want TPS 4.000 and p95 0.267", z.VsBaseline)
	}
	if in.VsBaseline == nil || in.VsBaseline.TPS != "1.000" {
		t.Errorf("baseline vs itself %+v", in.VsBaseline)
	}
	// 4x the baseline's mean, but over two runs that differ by 200 TPS: Welch's t is 3 on one degree of
	// freedom (the baseline's runs do not vary), p = 1 - 2/pi*atan(3) = 0.2048, so no significant difference.
	if v := z.VsBaseline; v.TPSVerdict != v1alpha1.VerdictNoSignificantDifference || v.TPSPValue != "0.20" || v.BestTPS != "5.000" {
		t.Errorf("tenant1 verdict %q p %q best-to-best %q, want NoSignificantDifference, 0.20 and 5.000", v.TPSVerdict, v.TPSPValue, v.BestTPS)
	}
	// The zoned target's geometry is copied from its database's status.device; the volume target has none.
	dev := get(t, zonedDB).Status.Device
	if g := z.Zones; g == nil || dev == nil || g.Count != dev.Zones || g.Count == 0 || g.Size == nil || g.Size.Cmp(*dev.ZoneSize) != 0 ||
		g.MaxOpen != dev.MaxOpenZones || g.Device != "bench-node-1/nullb0" || in.Zones != nil {
		t.Errorf("zone geometry: tenant1 %+v (device %+v), inno %+v", g, dev, in.Zones)
	}
	// Its null_blk device is a drive of its own; the InnoDB volume, with no local device under it here, has none known.
	if z.Drive != "bench-node-1/nullb0" || len(z.SharesDriveWith) != 0 || in.Drive != "" {
		t.Errorf("drives: tenant1 %q shared with %v, inno %q", z.Drive, z.SharesDriveWith, in.Drive)
	}
	if s := z.AcrossRuns; s == nil || s.Runs != 2 || s.BestIteration != 2 || s.BestTPS != "500.00" || s.TPSCI95 == "" {
		t.Errorf("tenant1 across runs %+v", s)
	}
	cm := &corev1.ConfigMap{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: first.SeriesConfigMap}, cm)
	if csv := cm.Data["series.csv"]; !strings.HasPrefix(csv, benchresult.CSVHeader+"\n1,299,1200,5,0,0\n") {
		t.Errorf("series.csv:\n%s", csv)
	}
	if _, err := benchresult.ParseSeriesLine(benchresult.SeriesPrefix + cm.Data["series.json"]); err != nil {
		t.Errorf("series.json does not parse: %v", err)
	}
	for _, target := range []string{"tenant1", "inno"} {
		if p := profileOf(t, ns, target); p != v1alpha1.ProfileWorkload {
			t.Errorf("%s left in profile %s", target, p)
		}
	}
	waitBenchEvent(t, b, "Completed")
}

func ownerIsBenchmark(t *testing.T, obj client.Object, b *v1alpha1.Benchmark) {
	t.Helper()
	refs := obj.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != b.UID || refs[0].Kind != "Benchmark" {
		t.Errorf("%s owner references %+v", obj.GetName(), refs)
	}
}

func TestBenchmarkMissingTarget(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	b := benchmark(ns, "ghost", "nowhere")
	b.Spec.TargetTimeoutSeconds = 2
	create(t, b)
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
	if ts := targetStatus(cur, "nowhere"); ts.State != v1alpha1.TargetFailed || ts.Reason != "TargetNotFound" || !strings.Contains(ts.Message, `"nowhere" not found`) {
		t.Errorf("target status %+v", ts)
	}
	if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed); c == nil || c.Reason != "TargetsMissing" {
		t.Errorf("Failed condition %+v", c)
	}
	if msg := waitBenchEvent(t, b, "TargetNotFound"); !strings.Contains(msg, "nowhere") {
		t.Errorf("event %q", msg)
	}
	waitBenchEvent(t, b, "Failed")
}

// TestBenchmarkOneTargetFails: sysbench failing on one target marks that target failed with sysbench's last
// lines and reports the other.
func TestBenchmarkOneTargetFails(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-2")
	b := benchmark(ns, "half", "tenant1", "inno")
	b.Spec.Prepare = ptr.To(false)
	create(t, b)
	for _, target := range []string{"tenant1", "inno"} {
		sum := okSummary("verify", target)
		sum.RowsExpected, sum.RowsFound = 2000, 2000
		finishBenchJob(t, ns, "half-verify-"+target, sum, "", false)
	}
	if p := profileOf(t, ns, "tenant1"); p != v1alpha1.ProfileWorkload {
		t.Errorf("prepare: false must not touch the profile, got %s", p)
	}
	failed := &benchresult.Summary{Phase: "run", Target: "tenant1", Iteration: 1, OK: false,
		Error: "sysbench exited 1: FATAL: mysql_stmt_execute() returned error 2013 (Lost connection to server during query)"}
	finishBenchJob(t, ns, "half-run1-tenant1", failed, "", true)
	finishBenchJob(t, ns, "half-run1-inno", runSummary("inno", 1, 100, 15, false), seriesLog(t, "inno", 1, 100), false)
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	z := targetStatus(cur, "tenant1")
	if z.State != v1alpha1.TargetFailed || !strings.Contains(z.Message, "Lost connection") {
		t.Errorf("tenant1 %+v", z)
	}
	if in := targetStatus(cur, "inno"); in.State != v1alpha1.TargetDone || in.Mean == nil || in.Mean.TPS != "100.00" {
		t.Errorf("inno %+v", in)
	}
	if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionCompleted); c == nil || c.Reason != "SomeTargetsFailed" || !strings.Contains(c.Message, "tenant1") {
		t.Errorf("Completed condition %+v", c)
	}
	if msg := waitBenchEvent(t, b, "RunFailed"); !strings.Contains(msg, "FATAL") {
		t.Errorf("RunFailed event %q", msg)
	}
}

// TestBenchmarkPodLost: a run whose pod vanished (evicted, node lost) fails its target with the Job's reason.
func TestBenchmarkPodLost(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	db := volumeDB(ns, "solo", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	create(t, db)
	b := benchmark(ns, "lost", "solo")
	b.Spec.Prepare = ptr.To(false)
	create(t, b)
	sum := okSummary("verify", "solo")
	sum.RowsExpected, sum.RowsFound = 2000, 2000
	finishBenchJob(t, ns, "lost-verify-solo", sum, "", false)
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "lost-run1-solo"}, job)
	setJobDone(t, job, true, "DeadlineExceeded", "Job was active longer than specified deadline")
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
	if ts := targetStatus(cur, "solo"); !strings.Contains(ts.Message, "evicted") || !strings.Contains(ts.Message, "DeadlineExceeded") {
		t.Errorf("target message %q", ts.Message)
	}
}

// TestBenchmarkRowCountMismatch: fewer rows than tables x table size after prepare (what a bulk load left on
// does) fails the target loudly, and the database is back in the workload profile.
func TestBenchmarkRowCountMismatch(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	db := volumeDB(ns, "lossy", v1alpha1.EngineRocksDB, v1alpha1.FlavorMariaDB)
	create(t, db)
	b := benchmark(ns, "rows", "lossy")
	create(t, b)
	finishBenchJob(t, ns, "rows-prepare-lossy", okSummary("prepare", "lossy"), "", false)
	sum := &benchresult.Summary{Phase: "verify", Target: "lossy", OK: false, RowsExpected: 2000, RowsFound: 1763,
		Error: "found 1763 rows in sbtest1..sbtest2, expected 2000"}
	finishBenchJob(t, ns, "rows-verify-lossy", sum, "", true)
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
	if ts := targetStatus(cur, "lossy"); ts.Rows != 1763 || !strings.Contains(ts.Message, "found 1763 rows, expected 2 tables x 1000 rows = 2000") {
		t.Errorf("target %+v", ts)
	}
	if msg := waitBenchEvent(t, b, "RowCountMismatch"); !strings.Contains(msg, "1763") {
		t.Errorf("event %q", msg)
	}
	waitProfile(t, ns, "lossy", v1alpha1.ProfileWorkload)
	consistently(t, "no run after a failed verification", time.Second, func() error {
		return absent(client.ObjectKey{Namespace: ns, Name: "rows-run1-lossy"}, &batchv1.Job{})
	})
}

// TestBenchmarkDeletedDuringPrepare: deleting a Benchmark while its target is in the bulkload profile puts the
// target back in the workload profile.
func TestBenchmarkDeletedDuringPrepare(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	db := volumeDB(ns, "victim", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	create(t, db)
	b := benchmark(ns, "gone", "victim")
	create(t, b)
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "gone-prepare-victim"}, &batchv1.Job{})
	waitProfile(t, ns, "victim", v1alpha1.ProfileBulkLoad)
	if err := k8s.Delete(ctx, getBench(t, b)); err != nil {
		t.Fatal(err)
	}
	waitProfile(t, ns, "victim", v1alpha1.ProfileWorkload)
	eventually(t, "benchmark gone", func() error { return absent(client.ObjectKeyFromObject(b), &v1alpha1.Benchmark{}) })
}

func TestBenchmarkValidation(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	noTargets := benchmark(ns, "empty")
	badBaseline := benchmark(ns, "base", "a", "b")
	badBaseline.Spec.Baseline = "c"
	badPct := benchmark(ns, "pct", "a")
	badPct.Spec.Percentile = 100
	badWorkload := benchmark(ns, "wl", "a")
	badWorkload.Spec.Workload = "tpcc"
	for _, tc := range []struct {
		b    *v1alpha1.Benchmark
		want string
	}{
		{noTargets, "spec.targets"},
		{badBaseline, "baseline must name one of the targets"},
		{badPct, "spec.percentile"},
		{badWorkload, "spec.workload"},
	} {
		if err := k8s.Create(ctx, tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error mentioning %q", tc.b.Name, err, tc.want)
		}
	}
	ok := benchmark(ns, "fine", "a")
	create(t, ok)
	cur := getBench(t, ok)
	if cur.Spec.Percentile != 95 || cur.Spec.StartDelaySeconds != 20 || cur.Spec.Prepare == nil || !*cur.Spec.Prepare {
		t.Errorf("defaults not applied: %+v", cur.Spec)
	}
}

// TestBenchmarkPrecondition: conventional targets get their volume preconditioned by fio beside the database
// before anything is loaded; zoned targets are left alone.
func TestBenchmarkPrecondition(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-3")
	b := benchmark(ns, "aged", "tenant1", "inno")
	b.Spec.Precondition = &v1alpha1.PreconditionSpec{}
	create(t, b)
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "aged-precondition-inno"}, job)
	if got := strings.Join(job.Spec.Template.Spec.Containers[0].Command, " "); got != "znsbench precondition --target inno --dir /data --passes 2 --fill-percent 90" {
		t.Errorf("precondition command %q", got)
	}
	pod := job.Spec.Template.Spec
	if !claimsDevice(pod.Volumes, "data-inno-mysql-0") {
		t.Errorf("precondition volumes %+v, want the datadir claim", pod.Volumes)
	}
	if a := pod.Affinity; a == nil || a.PodAffinity == nil || a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != corev1.LabelHostname {
		t.Errorf("the precondition pod must run beside the database's pod (ReadWriteOnce): %+v", a)
	}
	if len(pod.Containers[0].Env) != 0 {
		t.Errorf("precondition needs no password: %+v", pod.Containers[0].Env)
	}
	consistently(t, "no prepare before preconditioning ends, none for the zoned target", time.Second, func() error {
		return errors.Join(
			absent(client.ObjectKey{Namespace: ns, Name: "aged-precondition-tenant1"}, &batchv1.Job{}),
			absent(client.ObjectKey{Namespace: ns, Name: "aged-prepare-inno"}, &batchv1.Job{}))
	})
	if p := getBench(t, b).Status.Phase; p != v1alpha1.BenchmarkPreconditioning {
		t.Errorf("phase %s", p)
	}
	sum := okSummary("precondition", "inno")
	sum.DeviceWrittenBytes = 2 << 30
	finishBenchJob(t, ns, "aged-precondition-inno", sum, "", false)
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "aged-prepare-inno"}, &batchv1.Job{})
	cur := getBench(t, b)
	if ts := targetStatus(cur, "inno"); !ts.Preconditioned || ts.PreconditionWrittenBytes != 2<<30 {
		t.Errorf("inno %+v", ts)
	}
	if ts := targetStatus(cur, "tenant1"); !ts.Preconditioned || ts.PreconditionWrittenBytes != 0 {
		t.Errorf("tenant1 %+v: a zoned target needs no preconditioning", ts)
	}
}
