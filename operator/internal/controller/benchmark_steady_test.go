package controller_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func noPrepare(b *v1alpha1.Benchmark) {
	f := false
	b.Spec.Prepare = &f
}

// verifyAll finishes the verify Jobs of the targets with the expected row count.
func verifyAll(t *testing.T, ns, bench string, targets ...string) {
	t.Helper()
	for _, target := range targets {
		sum := okSummary("verify", target)
		sum.RowsExpected, sum.RowsFound = 2000, 2000
		finishBenchJob(t, ns, bench+"-verify-"+target, sum, "", false)
	}
}

// The write-only phase runs on the conventional target only, round after round until its TPS settles by the
// SNIA rule, then the runs start; the zoned target is recorded as not needing it.
func TestBenchmarkSteadyState(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-ss")
	b := benchmark(ns, "steady", "tenant1", "inno")
	b.Spec.Baseline = "inno"
	noPrepare(b)
	b.Spec.SteadyState = &v1alpha1.SteadyStateSpec{RoundSeconds: 4, MaxRounds: 6, Window: 3}
	create(t, b)
	verifyAll(t, ns, "steady", "tenant1", "inno")

	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "steady-steady1-inno"}, job)
	cmd := job.Spec.Template.Spec.Containers[0].Command
	if cmd[1] != "run" || jobArg(job, "--workload") != "oltp_write_only" || jobArg(job, "--time") != "4" || jobArg(job, "--threads") != "8" ||
		slices.Contains(cmd, "--start-at") || slices.Contains(cmd, "--start-file") {
		t.Errorf("round command %q: want a run of oltp_write_only for 4 s at 8 threads, with no common start", strings.Join(cmd, " "))
	}
	if p := getBench(t, b).Status.Phase; p != v1alpha1.BenchmarkSteadyState {
		t.Errorf("phase %s, want SteadyState", p)
	}
	// TPS 100, then 150, 152, 151: the window of rounds 2-4 holds, not before.
	for round, tps := range []float64{100, 150, 152, 151} {
		name := fmt.Sprintf("steady-steady%d-inno", round+1)
		finishBenchJob(t, ns, name, runSummary("inno", round+1, tps, 10, false), "", false)
	}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "steady-run1-inno"}, &batchv1.Job{})
	cur := getBench(t, b)
	in, z := targetStatus(cur, "inno").SteadyState, targetStatus(cur, "tenant1").SteadyState
	if in == nil || !in.Required || !in.Reached || in.WindowStart != 2 || len(in.Rounds) != 4 || in.Rounds[3].TPS != "151.00" {
		t.Fatalf("inno steady state %+v", in)
	}
	if z == nil || z.Required || z.Skipped == "" || len(z.Rounds) != 0 {
		t.Fatalf("tenant1 steady state %+v: a zoned target runs no rounds", z)
	}
	if err := absent(client.ObjectKey{Namespace: ns, Name: "steady-steady5-inno"}, &batchv1.Job{}); err != nil {
		t.Error(err)
	}
	if err := absent(client.ObjectKey{Namespace: ns, Name: "steady-steady1-tenant1"}, &batchv1.Job{}); err != nil {
		t.Error(err)
	}
	waitBenchEvent(t, b, "SteadyStateReached")
	finishBenchJob(t, ns, "steady-run1-tenant1", runSummary("tenant1", 1, 300, 5, true), seriesLog(t, "tenant1", 1, 300), false)
	finishBenchJob(t, ns, "steady-run1-inno", runSummary("inno", 1, 150, 10, false), seriesLog(t, "inno", 1, 150), false)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	for _, n := range targetStatus(done, "inno").Notes {
		if strings.Contains(n, "steady state") {
			t.Errorf("a settled baseline is marked: %q", n)
		}
	}
	if strings.Contains(done.Status.Result, "steady state") {
		t.Errorf("result %q", done.Status.Result)
	}
}

// A conventional target that does not settle within its rounds goes on to the runs, and its results say so,
// as do those of a baseline that ran no write-only phase at all.
func TestBenchmarkNotInSteadyState(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-ns")

	b := benchmark(ns, "restless", "inno")
	noPrepare(b)
	b.Spec.SteadyState = &v1alpha1.SteadyStateSpec{RoundSeconds: 4, MaxRounds: 3, Window: 2}
	create(t, b)
	verifyAll(t, ns, "restless", "inno")
	for round, tps := range []float64{100, 200, 100} {
		finishBenchJob(t, ns, fmt.Sprintf("restless-steady%d-inno", round+1), runSummary("inno", round+1, tps, 10, false), "", false)
	}
	msg := waitBenchEvent(t, b, "SteadyStateNotReached")
	if !strings.Contains(msg, "not steady after 3 round(s)") {
		t.Errorf("event %q", msg)
	}
	finishBenchJob(t, ns, "restless-run1-inno", runSummary("inno", 1, 150, 10, false), seriesLog(t, "inno", 1, 150), false)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	if ts := targetStatus(done, "inno"); !hasNote(ts.Notes, "not in steady state: 3 write-only round(s) did not settle") {
		t.Errorf("notes %q", ts.Notes)
	}
	if !strings.Contains(done.Status.Result, "not in steady state") {
		t.Errorf("result %q does not mark the baseline", done.Status.Result)
	}

	plain := benchmark(ns, "plain", "tenant1", "inno")
	plain.Spec.Baseline = "inno"
	noPrepare(plain)
	create(t, plain)
	verifyAll(t, ns, "plain", "tenant1", "inno")
	finishBenchJob(t, ns, "plain-run1-tenant1", runSummary("tenant1", 1, 300, 5, true), seriesLog(t, "tenant1", 1, 300), false)
	finishBenchJob(t, ns, "plain-run1-inno", runSummary("inno", 1, 150, 10, false), seriesLog(t, "inno", 1, 150), false)
	done = waitBenchPhase(t, plain, v1alpha1.BenchmarkCompleted)
	if !hasNote(targetStatus(done, "inno").Notes, "not in steady state: no write-only phase ran") {
		t.Errorf("inno notes %q", targetStatus(done, "inno").Notes)
	}
	if hasNote(targetStatus(done, "tenant1").Notes, "steady state") {
		t.Errorf("a zoned target is marked: %q", targetStatus(done, "tenant1").Notes)
	}
	if !strings.HasSuffix(done.Status.Result, "vs inno (baseline not in steady state)") {
		t.Errorf("result %q", done.Status.Result)
	}
}

func hasNote(notes []string, prefix string) bool {
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, prefix) })
}

// A failed round fails the Benchmark before any run: a comparison with a target missing is another comparison.
func TestBenchmarkSteadyStateRoundFails(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-sf")
	b := benchmark(ns, "shaky", "tenant1", "inno")
	noPrepare(b)
	b.Spec.SteadyState = &v1alpha1.SteadyStateSpec{RoundSeconds: 4, MaxRounds: 5, Window: 3}
	create(t, b)
	verifyAll(t, ns, "shaky", "tenant1", "inno")
	sum := runSummary("inno", 1, 0, 0, false)
	sum.OK, sum.Reason, sum.Error = false, "ConnectionLost", "lost connection to MySQL server during query"
	finishBenchJob(t, ns, "shaky-steady1-inno", sum, "", true)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
	if ts := targetStatus(done, "inno"); ts.Reason != "ConnectionLost" || !strings.Contains(ts.Message, "write-only round 1 failed") {
		t.Errorf("inno %+v", ts)
	}
	if err := absent(client.ObjectKey{Namespace: ns, Name: "shaky-run1-tenant1"}, &batchv1.Job{}); err != nil {
		t.Error(err)
	}
	waitBenchEvent(t, b, "SteadyStateFailed")
}

// Admission refuses a window the rounds can never fill.
func TestSteadyStateValidation(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	for _, tc := range []struct {
		spec v1alpha1.SteadyStateSpec
		msg  string
	}{
		{v1alpha1.SteadyStateSpec{MaxRounds: 3, Window: 5}, "window must be at most steadyState.maxRounds"},
		{v1alpha1.SteadyStateSpec{MaxRounds: 0, Window: 1}, "window"},
		{v1alpha1.SteadyStateSpec{RoundSeconds: 2}, "roundSeconds"},
		{v1alpha1.SteadyStateSpec{Workload: "oltp_read_only"}, "workload"},
	} {
		b := benchmark(ns, "bad", "a")
		spec := tc.spec
		b.Spec.SteadyState = &spec
		err := k8s.Create(ctx, b)
		if err == nil {
			_ = k8s.Delete(ctx, b)
			t.Errorf("%+v admitted", tc.spec)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: %v, want it to mention %q", tc.spec, err, tc.msg)
		}
	}
	// The defaults make a valid phase: 20 rounds of 60 s, judged over 5.
	b := benchmark(ns, "defaults", "a")
	b.Spec.SteadyState = &v1alpha1.SteadyStateSpec{}
	create(t, b)
	got := getBench(t, b).Spec.SteadyState
	if got.Workload != "oltp_write_only" || got.RoundSeconds != 60 || got.MaxRounds != 20 || got.Window != 5 ||
		got.MaxRangePercent != 20 || got.MaxSlopeExcursionPercent != 10 {
		t.Errorf("defaults %+v", got)
	}
	// maxRounds: 0 written out (a Go client omits it) is refused, not taken for the default.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "Benchmark",
		"metadata": map[string]any{"namespace": ns, "name": "zero"},
		"spec":     map[string]any{"targets": []any{map[string]any{"name": "a"}}, "steadyState": map[string]any{"maxRounds": int64(0)}},
	}}
	if err := k8s.Create(ctx, u); err == nil || !strings.Contains(err.Error(), "maxRounds") {
		t.Errorf("maxRounds 0: %v", err)
	}
}
