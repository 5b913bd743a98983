package controller_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

func benchCondition(t *testing.T, b *v1alpha1.Benchmark, typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	eventually(t, fmt.Sprintf("%s condition %s=%s/%s", b.Name, typ, status, reason), func() error {
		c := meta.FindStatusCondition(getBench(t, b).Status.Conditions, typ)
		if c == nil {
			return errors.New("no condition yet")
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("have %s/%s: %s", c.Status, c.Reason, c.Message)
		}
		got = *c
		return nil
	})
	return got
}

func dbGet(t *testing.T, ns, name string) *v1alpha1.ZNSDatabase {
	t.Helper()
	db := &v1alpha1.ZNSDatabase{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, db); err != nil {
		t.Fatal(err)
	}
	return db
}

func jobsOf(t *testing.T, ns, bench string) []batchv1.Job {
	t.Helper()
	list := &batchv1.JobList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{resources.LabelBenchmark: bench}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func verifiedRows(target string) *benchresult.Summary {
	sum := okSummary("verify", target)
	sum.RowsExpected, sum.RowsFound = 2000, 2000
	return sum
}

// runThrough finishes a one-target, one-iteration Benchmark that was created with prepare: false.
func runThrough(t *testing.T, ns, bench, target string) {
	t.Helper()
	finishBenchJob(t, ns, bench+"-verify-"+target, verifiedRows(target), "", false)
	finishBenchJob(t, ns, bench+"-run1-"+target, runSummary(target, 1, 100, 10, false), seriesLog(t, target, 1, 100), false)
}

// TestHostile01TwoBenchmarksOneDatabase: a database serves one Benchmark at a time. The second waits in
// WaitingForTargets with a condition naming the holder, changes nothing on the database meanwhile (no profile
// flip, no Job that would drop the first one's tables), and starts once the first is done.
func TestHostile01TwoBenchmarksOneDatabase(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	create(t, volumeDB(ns, "shared", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	waitCondition(t, dbGet(t, ns, "shared"), v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")

	first := benchmark(ns, "first", "shared")
	create(t, first)
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "first-prepare-shared"}, &batchv1.Job{})
	waitProfile(t, ns, "shared", v1alpha1.ProfileBulkLoad)
	if a := dbGet(t, ns, "shared").Annotations; a[v1alpha1.AnnotationBenchmark] != "first" || a[v1alpha1.AnnotationBenchmarkUID] != string(getBench(t, first).UID) {
		t.Errorf("the database does not name its Benchmark: %v", a)
	}

	before := dbGet(t, ns, "shared")
	second := benchmark(ns, "second", "shared")
	create(t, second)
	cond := benchCondition(t, second, v1alpha1.ConditionTargetsReady, metav1.ConditionFalse, "TargetsBusy")
	if !strings.Contains(cond.Message, "ZNSDatabase shared is used by Benchmark first") {
		t.Errorf("TargetsReady message %q should name the holder", cond.Message)
	}
	if msg := waitBenchEvent(t, second, "TargetsBusy"); !strings.Contains(msg, "Benchmark first") {
		t.Errorf("event %q", msg)
	}
	consistently(t, "a waiting Benchmark changes nothing on the database", 2*time.Second, func() error {
		db := dbGet(t, ns, "shared")
		if db.Generation != before.Generation || db.LeaseProfile() != v1alpha1.ProfileBulkLoad ||
			db.Annotations[v1alpha1.AnnotationBenchmarkUID] != before.Annotations[v1alpha1.AnnotationBenchmarkUID] {
			return fmt.Errorf("database generation %d -> %d, lease %v", before.Generation, db.Generation, db.Annotations)
		}
		if db.Annotations[v1alpha1.AnnotationBenchmark] != "first" {
			return fmt.Errorf("holder %q", db.Annotations[v1alpha1.AnnotationBenchmark])
		}
		if jobs := jobsOf(t, ns, "second"); len(jobs) > 0 {
			return fmt.Errorf("the waiting Benchmark created Job %s", jobs[0].Name)
		}
		if p := getBench(t, second).Status.Phase; p != v1alpha1.BenchmarkWaitingForTargets {
			return fmt.Errorf("phase %s", p)
		}
		return nil
	})

	// The first runs to its end undisturbed; then the second takes the database.
	finishBenchJob(t, ns, "first-prepare-shared", okSummary("prepare", "shared"), "", false)
	finishBenchJob(t, ns, "first-verify-shared", verifiedRows("shared"), "", false)
	finishBenchJob(t, ns, "first-run1-shared", runSummary("shared", 1, 100, 10, false), seriesLog(t, "shared", 1, 100), false)
	waitBenchPhase(t, first, v1alpha1.BenchmarkCompleted)
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "second-prepare-shared"}, &batchv1.Job{})
	if a := dbGet(t, ns, "shared").Annotations; a[v1alpha1.AnnotationBenchmark] != "second" {
		t.Errorf("holder after the first finished: %v", a)
	}
	benchCondition(t, second, v1alpha1.ConditionTargetsReady, metav1.ConditionTrue, "Ready")

	t.Run("created together, exactly one runs", func(t *testing.T) {
		create(t, volumeDB(ns, "contested", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
		x, y := benchmark(ns, "race-x", "contested"), benchmark(ns, "race-y", "contested")
		x.Spec.Prepare, y.Spec.Prepare = ptr.To(false), ptr.To(false)
		create(t, x)
		create(t, y)
		var winner, loser *v1alpha1.Benchmark
		eventually(t, "one Benchmark holds the database", func() error {
			switch dbGet(t, ns, "contested").Annotations[v1alpha1.AnnotationBenchmark] {
			case "race-x":
				winner, loser = x, y
			case "race-y":
				winner, loser = y, x
			default:
				return errors.New("no holder yet")
			}
			return nil
		})
		benchCondition(t, loser, v1alpha1.ConditionTargetsReady, metav1.ConditionFalse, "TargetsBusy")
		consistently(t, "the other makes no Job", time.Second, func() error {
			if jobs := jobsOf(t, ns, loser.Name); len(jobs) > 0 {
				return fmt.Errorf("Job %s", jobs[0].Name)
			}
			return nil
		})
		runThrough(t, ns, winner.Name, "contested")
		waitBenchPhase(t, winner, v1alpha1.BenchmarkCompleted)
		runThrough(t, ns, loser.Name, "contested")
		waitBenchPhase(t, loser, v1alpha1.BenchmarkCompleted)
		eventually(t, "the database is free again", func() error {
			if h := dbGet(t, ns, "contested").Annotations[v1alpha1.AnnotationBenchmark]; h != "" {
				return fmt.Errorf("held by %s", h)
			}
			return nil
		})
	})
}

// TestHostile07TargetDeletedMidRun: a target deleted during a run fails with TargetDeleted, its run Job is
// stopped at once, no later iteration starts, and nothing of the Benchmark runs after it ended.
func TestHostile07TargetDeletedMidRun(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	create(t, volumeDB(ns, "keep", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	create(t, volumeDB(ns, "gone", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona))
	b := benchmark(ns, "midrun", "keep", "gone")
	b.Spec.Prepare = ptr.To(false)
	b.Spec.Iterations = 2
	create(t, b)
	for _, target := range []string{"keep", "gone"} {
		finishBenchJob(t, ns, "midrun-verify-"+target, verifiedRows(target), "", false)
	}
	for _, target := range []string{"keep", "gone"} {
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "midrun-run1-" + target}, &batchv1.Job{})
	}
	if err := k8s.Delete(ctx, dbGet(t, ns, "gone")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted target's run Job is stopped", func() error {
		return absent(client.ObjectKey{Namespace: ns, Name: "midrun-run1-gone"}, &batchv1.Job{})
	})
	if msg := waitBenchEvent(t, b, "JobsStopped"); !strings.Contains(msg, "midrun-run1-gone") || !strings.Contains(msg, "target gone failed") {
		t.Errorf("JobsStopped event %q", msg)
	}
	eventually(t, "gone failed with TargetDeleted", func() error { // the status write follows the Event
		if ts := targetStatus(getBench(t, b), "gone"); ts.State != v1alpha1.TargetFailed || ts.Reason != "TargetDeleted" {
			return fmt.Errorf("gone %+v", ts)
		}
		return nil
	})
	finishBenchJob(t, ns, "midrun-run1-keep", runSummary("keep", 1, 100, 10, false), seriesLog(t, "keep", 1, 100), false)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	if c := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionCompleted); c == nil || c.Reason != "SomeTargetsFailed" ||
		!strings.Contains(c.Message, "stopped after run 1 of 2") {
		t.Errorf("Completed condition %+v", c)
	}
	consistently(t, "no second run, nothing left running", time.Second, func() error {
		for _, j := range jobsOf(t, ns, "midrun") {
			if strings.Contains(j.Name, "run2") {
				return fmt.Errorf("Job %s started with fewer targets", j.Name)
			}
			if !jobDone(&j) {
				return fmt.Errorf("Job %s still running after the Benchmark ended", j.Name)
			}
		}
		return nil
	})
}

func jobDone(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestHostile08FailureReasons: a failed target carries a reason from the fixed set and the cause, from the
// runner's summary or from what only the operator sees (the Job's deadline, the API server refusing the Job);
// a run with many ignored errors keeps its results with a note and a Warning Event.
func TestHostile08FailureReasons(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	for _, name := range []string{"lost", "slow", "busy", "crash"} {
		create(t, volumeDB(ns, name, v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	}
	start := func(name, target string) *v1alpha1.Benchmark {
		b := benchmark(ns, name, target)
		b.Spec.Prepare = ptr.To(false)
		create(t, b)
		finishBenchJob(t, ns, name+"-verify-"+target, verifiedRows(target), "", false)
		return b
	}

	lost := start("b-lost", "lost")
	finishBenchJob(t, ns, "b-lost-run1-lost", &benchresult.Summary{Phase: "run", Target: "lost", Iteration: 1, Reason: "ConnectionLost",
		Error: "mysql_stmt_execute() returned error 2013 (Lost connection to server during query) for query 'COMMIT'\nsysbench run failed: exit status 1"}, "", true)
	cur := waitBenchPhase(t, lost, v1alpha1.BenchmarkFailed)
	if ts := targetStatus(cur, "lost"); ts.Reason != "ConnectionLost" || !strings.Contains(ts.Message, "run 1 failed: mysql_stmt_execute() returned error 2013") {
		t.Errorf("lost %+v", ts)
	}
	if msg := waitBenchEvent(t, lost, "RunFailed"); !strings.Contains(msg, "ConnectionLost") {
		t.Errorf("RunFailed event %q", msg)
	}

	crash := start("b-crash", "crash")
	finishBenchJob(t, ns, "b-crash-run1-crash", &benchresult.Summary{Phase: "run", Target: "crash", Iteration: 1, Reason: "Crashed",
		Error: "sysbench was killed by signal 11 (segmentation fault)\nsysbench run failed: signal: segmentation fault"}, "", true)
	if ts := targetStatus(waitBenchPhase(t, crash, v1alpha1.BenchmarkFailed), "crash"); ts.Reason != "Crashed" || !strings.Contains(ts.Message, "signal 11") {
		t.Errorf("crash %+v", ts)
	}

	slow := start("b-slow", "slow")
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "b-slow-run1-slow"}, job)
	setJobDone(t, job, true, "DeadlineExceeded", "Job was active longer than specified deadline")
	if ts := targetStatus(waitBenchPhase(t, slow, v1alpha1.BenchmarkFailed), "slow"); ts.Reason != "TimedOut" || !strings.Contains(ts.Message, "DeadlineExceeded") {
		t.Errorf("slow %+v", ts)
	}

	busy := start("b-busy", "busy")
	sum := runSummary("busy", 1, 192.35, 19.65, false)
	sum.ErrorsPerSec = 17.9
	finishBenchJob(t, ns, "b-busy-run1-busy", sum, seriesLog(t, "busy", 1, 192.35), false)
	ts := targetStatus(waitBenchPhase(t, busy, v1alpha1.BenchmarkCompleted), "busy")
	// the second note: a volume that ran no write-only phase is not in steady state
	if ts.State != v1alpha1.TargetDone || len(ts.Notes) != 2 || !strings.Contains(ts.Notes[0], "8.5% of transaction attempts ended in an error sysbench ignores (17.90/s") ||
		!strings.HasPrefix(ts.Notes[1], "not in steady state") {
		t.Errorf("busy %+v", ts)
	}
	if msg := waitBenchEvent(t, busy, "ManyIgnoredErrors"); !strings.Contains(msg, "8.5%") {
		t.Errorf("ManyIgnoredErrors event %q", msg)
	}

	t.Run("a Job the API server refuses", func(t *testing.T) {
		create(t, volumeDB(ns, "refused", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
		b := benchmark(ns, "b-refused", "refused")
		b.Spec.Prepare = ptr.To(false)
		b.Spec.Resources = corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		}
		create(t, b)
		cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
		if ts := targetStatus(cur, "refused"); ts.Reason != "JobRejected" || !strings.Contains(ts.Message, "must be less than or equal to cpu limit") {
			t.Errorf("refused %+v", ts)
		}
		if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed); c == nil || c.Reason != "TargetFailed" || !strings.Contains(c.Message, "JobRejected") {
			t.Errorf("Failed condition %+v", c)
		}
		if msg := waitBenchEvent(t, b, "JobRejected"); !strings.Contains(msg, "must be less than or equal to cpu limit") {
			t.Errorf("event %q", msg)
		}
	})
}

// TestHostile10MissingTargets: a Benchmark never runs with fewer targets than it lists. It waits for missing
// ones (condition naming them, holding nothing meanwhile), starts when they appear, and fails after
// targetTimeoutSeconds when they do not (TestBenchmarkMissingTarget). The samples are a set that works together.
func TestHostile10MissingTargets(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	create(t, volumeDB(ns, "here", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	waitCondition(t, dbGet(t, ns, "here"), v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
	b := benchmark(ns, "pair", "here", "later")
	create(t, b)
	cond := benchCondition(t, b, v1alpha1.ConditionTargetsReady, metav1.ConditionFalse, "TargetsMissing")
	if !strings.Contains(cond.Message, "waiting for ZNSDatabase later in namespace "+ns) || !strings.Contains(cond.Message, "fails if they do not exist within 600s") {
		t.Errorf("message %q", cond.Message)
	}
	if msg := waitBenchEvent(t, b, "TargetsMissing"); !strings.Contains(msg, "later") {
		t.Errorf("event %q", msg)
	}
	consistently(t, "nothing runs and nothing is held while a target is missing", time.Second, func() error {
		if jobs := jobsOf(t, ns, "pair"); len(jobs) > 0 {
			return fmt.Errorf("Job %s", jobs[0].Name)
		}
		here := dbGet(t, ns, "here")
		if h := here.Annotations[v1alpha1.AnnotationBenchmark]; h != "" || here.Status.Profile != v1alpha1.ProfileWorkload {
			return fmt.Errorf("here held by %q in profile %s", h, here.Status.Profile)
		}
		return nil
	})
	create(t, volumeDB(ns, "later", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona))
	for _, target := range []string{"here", "later"} {
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "pair-prepare-" + target}, &batchv1.Job{})
	}

	t.Run("the samples work together", func(t *testing.T) {
		ns := newNamespace(t)
		autoReady(t, ns)
		_, file, _, _ := runtime.Caller(0)
		dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "samples")
		raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var kust struct {
			Resources []string `json:"resources"`
		}
		if err := yaml.Unmarshal(raw, &kust); err != nil {
			t.Fatal(err)
		}
		var bench *v1alpha1.Benchmark
		dbs := map[string]*v1alpha1.ZNSDatabase{}
		for _, f := range kust.Resources {
			raw, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(raw), "kind: Benchmark") {
				bench = &v1alpha1.Benchmark{}
				if err := yaml.UnmarshalStrict(raw, bench); err != nil {
					t.Fatal(err)
				}
				continue
			}
			db := &v1alpha1.ZNSDatabase{}
			if err := yaml.UnmarshalStrict(raw, db); err != nil {
				t.Fatal(err)
			}
			db.Namespace = ns
			create(t, db)
			dbs[db.Name] = db
			// The zoned samples name fixed devices: leave them free for a later run of this test.
			t.Cleanup(func() {
				_ = k8s.Delete(ctx, db)
				eventually(t, db.Name+" gone", func() error {
					if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), &v1alpha1.ZNSDatabase{}); !apierrors.IsNotFound(err) {
						return fmt.Errorf("still there: %v", err)
					}
					return nil
				})
				if src := db.Spec.Storage.ZonedDevice; src != nil {
					// Play the PV protection controller, which envtest lacks: the operator deleted the volume.
					pv := &corev1.PersistentVolume{}
					if err := k8s.Get(ctx, client.ObjectKey{Name: v1alpha1.DevicePVName(src.NodeName, src.DeviceName)}, pv); err == nil {
						pv.Finalizers = nil
						_ = k8s.Update(ctx, pv)
					}
				}
			})
		}
		if bench == nil {
			t.Fatal("no Benchmark among the samples")
		}
		for _, tg := range bench.Spec.Targets {
			if dbs[tg.Name] == nil {
				t.Errorf("the sample Benchmark names %q, which no sample creates", tg.Name)
			}
		}
		report, _ := preflightReport(t, "nullb0")
		for _, db := range dbs {
			if db.IsZoned() {
				finishPreflight(t, db, report, true)
				passFormat(t, db)
			}
		}
		for _, db := range dbs {
			waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
		}
		bench.Namespace = ns
		create(t, bench)
		t.Cleanup(func() { _ = k8s.Delete(ctx, bench) })
		for _, tg := range bench.Spec.Targets {
			waitObject(t, client.ObjectKey{Namespace: ns, Name: bench.Name + "-prepare-" + tg.Name}, &batchv1.Job{})
		}
		benchCondition(t, bench, v1alpha1.ConditionTargetsReady, metav1.ConditionTrue, "Ready")
	})
}
