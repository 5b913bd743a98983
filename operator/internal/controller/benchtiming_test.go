package controller_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/test/benchtiming"
)

// readyAt plays the StatefulSet controller once: the database's pod is ready on the current generation.
func readyAt(t *testing.T, db *v1alpha1.ZNSDatabase) {
	t.Helper()
	eventually(t, "StatefulSet ready", func() error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.StatefulSetName()}, sts); err != nil {
			return err
		}
		rev := fmt.Sprintf("r%d", sts.Generation)
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: 1,
			CurrentReplicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1, CurrentRevision: rev, UpdateRevision: rev}
		return k8s.Status().Update(ctx, sts)
	})
}

// restartIn waits for the database to go unavailable in profile p (the Benchmark switched it), keeps it down
// for d, then lets its pod be ready: a restart of known length.
func restartIn(t *testing.T, db *v1alpha1.ZNSDatabase, p v1alpha1.Profile, d time.Duration) {
	t.Helper()
	waitProfile(t, db.Namespace, db.Name, p)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "Starting")
	time.Sleep(d)
	readyAt(t, db)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
}

func lastPhaseStart(t *testing.T, b *v1alpha1.Benchmark) time.Time {
	h := getBench(t, b).Status.PhaseHistory
	if len(h) == 0 {
		t.Fatal("no phaseHistory")
	}
	return h[len(h)-1].Time.Time
}

// TestOrchestrationTiming drives a Benchmark through every phase, with database restarts of known length and
// runner work with known times, and checks the per-phase timeline benchtiming computes from what the cluster
// keeps (the e2e suite logs the same figures from a real cluster).
func TestOrchestrationTiming(t *testing.T) {
	requireEnv(t)
	if benchtiming.LabelBenchmark != resources.LabelBenchmark || benchtiming.RunnerContainer != resources.RunnerContainer {
		t.Fatalf("benchtiming reads label %q and container %q; the operator sets %q and %q", benchtiming.LabelBenchmark,
			benchtiming.RunnerContainer, resources.LabelBenchmark, resources.RunnerContainer)
	}
	ns := newNamespace(t)
	db := volumeDB(ns, "solo", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona)
	create(t, db)
	readyAt(t, db)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
	rec := benchtiming.RecordAvailability(ctx, k8s, ns, []string{"solo"}, 20*time.Millisecond)

	b := benchmark(ns, "timed", "solo")
	b.Spec.StartDelaySeconds = 1
	applied := time.Now()
	create(t, b)

	const down = 400 * time.Millisecond
	restartIn(t, db, v1alpha1.ProfileBulkLoad, down) // Preparing: to bulkload
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "timed-prepare-solo"}, &batchv1.Job{})
	prep := okSummary("prepare", "solo")
	prepFrom := time.Now()
	time.Sleep(300 * time.Millisecond)
	prep.StartTime, prep.EndTime = prepFrom.UTC().Format(time.RFC3339Nano), time.Now().UTC().Format(time.RFC3339Nano)
	finishBenchJob(t, ns, "timed-prepare-solo", prep, "", false)
	restartIn(t, db, v1alpha1.ProfileWorkload, down) // back to workload before verify
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "timed-verify-solo"}, &batchv1.Job{})
	verify := okSummary("verify", "solo")
	verify.RowsExpected, verify.RowsFound = 2000, 2000
	verify.StartTime, verify.EndTime = time.Now().UTC().Format(time.RFC3339Nano), time.Now().Add(time.Millisecond).UTC().Format(time.RFC3339Nano)
	finishBenchJob(t, ns, "timed-verify-solo", verify, "", false)

	// The run: the runner starts after the Running phase began, sysbench's clock 200 ms later, 1 s of run.
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "timed-run1-solo"}, &batchv1.Job{})
	runFrom := lastPhaseStart(t, b).Add(50 * time.Millisecond)
	if now := time.Now(); runFrom.Before(now) {
		runFrom = now
	}
	time.Sleep(time.Until(runFrom.Add(1200 * time.Millisecond)))
	run := runSummary("solo", 1, 100, 5, false)
	runTo := time.Now()
	run.StartTime, run.EndTime, run.DurationSec = runFrom.UTC().Format(time.RFC3339Nano), runTo.UTC().Format(time.RFC3339Nano), runTo.Sub(runFrom).Seconds()-0.2
	finishBenchJob(t, ns, "timed-run1-solo", run, seriesLog(t, "solo", 1, 100), false)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	restarts := rec.Stop()

	got, err := benchtiming.Collect(ctx, k8s, done)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Work) != 2 {
		t.Errorf("runner work %+v, want prepare and verify", got.Work)
	}
	// finishBenchJob says the run pod's container started when the run ended (to the second, as the kubelet
	// reports it): read back, but left out of the timeline, whose split at the pods' start the pure tests cover.
	if got.RunPodsUp.IsZero() || got.RunPodsUp.Before(runTo.Truncate(time.Second)) {
		t.Errorf("run pods up at %v, the run ended %v", got.RunPodsUp, runTo)
	}
	rep, err := benchtiming.Compute(benchtiming.Input{Benchmark: done, Applied: applied, Work: got.Work, Unavailable: restarts})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("timeline:\n%s", rep)

	names := []string{"queued (apply to first reconcile)", "WaitingForTargets", "Preparing", "Verifying",
		"Running: Jobs to runner start", "Running: runner start to first second (sysbench connects)"}
	if len(rep.ToFirstSecond) != len(names) {
		t.Fatalf("phases %+v", rep.ToFirstSecond)
	}
	var sum time.Duration
	byName := map[string]benchtiming.Phase{}
	for i, p := range rep.ToFirstSecond {
		if p.Name != names[i] {
			t.Errorf("phase %d is %q, want %q", i, p.Name, names[i])
		}
		if p.Work+p.Restarts+p.Wait+p.Overhead != p.Wall || p.Overhead < 0 {
			t.Errorf("%s: work %v + restarts %v + overhead %v != wall %v", p.Name, p.Work, p.Restarts, p.Overhead, p.Wall)
		}
		sum += p.Wall
		byName[p.Name] = p
	}
	if sum != rep.FirstSecond.Sub(applied) {
		t.Errorf("phases add up to %v, apply to first second is %v", sum, rep.FirstSecond.Sub(applied))
	}
	// The runner work lies inside the phases it belongs to; each restart we held down shows in its phase (the
	// second one spans the end of Preparing and the start of Verifying).
	if p := byName["Preparing"]; p.Work < 300*time.Millisecond || p.Restarts < down {
		t.Errorf("Preparing: work %v (prepare ran 300ms), restarts %v (the database was held down %v)", p.Work, p.Restarts, down)
	}
	if total := byName["Preparing"].Restarts + byName["Verifying"].Restarts; total < 2*down {
		t.Errorf("restarts %v in Preparing and Verifying, the database was held down twice %v", total, down)
	}
	if first := rep.FirstSecond.Sub(runFrom); first < 150*time.Millisecond || first > 250*time.Millisecond {
		t.Errorf("first second %v after the runner started, the summary says 200ms", first)
	}
	if !rep.LastSecond.Equal(runTo) {
		t.Errorf("last second ends %v, the run ended %v", rep.LastSecond, runTo)
	}
	after := rep.AfterLastSecond[0]
	if after.Wall <= 0 || after.To.Before(rep.LastSecond) || !after.To.Equal(rep.Completed) {
		t.Errorf("last second to Completed: %+v", after)
	}
}
