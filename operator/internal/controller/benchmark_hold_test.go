package controller_test

import (
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// setProfileByHand plays a person who patches a database's profile.
func setProfileByHand(t *testing.T, ns, name string, p v1alpha1.Profile) {
	t.Helper()
	db := dbGet(t, ns, name)
	patch := client.MergeFrom(db.DeepCopy())
	db.Spec.Profile = p
	if err := k8s.Patch(ctx, db, patch); err != nil {
		t.Fatal(err)
	}
}

func waitReleased(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, name+" released", func() error {
		if h := dbGet(t, ns, name).Annotations[v1alpha1.AnnotationBenchmark]; h != "" {
			return fmt.Errorf("held by %s", h)
		}
		return nil
	})
}

// TestBenchmarkProfileChangedDuringRunIsNotIgnored: a held target switched to bulkload in the middle of a run
// fails with ProfileChanged and a Warning Event naming the profile, and its run Job is stopped; so does one
// switched after its own run ended while another's goes on (it is held until the last run ends). The remaining
// target finishes the iteration, no later one starts, and both databases are handed back in the workload
// profile. The same holds when the switch happens while the operator is down, whether the run finished
// meanwhile (its figures are not recorded as if nothing happened) or the Benchmark was deleted.
func TestBenchmarkProfileChangedDuringRunIsNotIgnored(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	targets := []string{"flipped", "early", "other"}
	create(t, volumeDB(ns, "flipped", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	create(t, volumeDB(ns, "early", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	create(t, volumeDB(ns, "other", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona))
	b := benchmark(ns, "held", targets...)
	b.Spec.Prepare = ptr.To(false)
	b.Spec.Iterations = 2
	create(t, b)
	for _, target := range targets {
		finishBenchJob(t, ns, "held-verify-"+target, verifiedRows(target), "", false)
	}
	for _, target := range targets {
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "held-run1-" + target}, &batchv1.Job{})
	}

	setProfileByHand(t, ns, "flipped", v1alpha1.ProfileBulkLoad)
	if msg := waitBenchEvent(t, b, "ProfileChanged"); !strings.Contains(msg, "flipped") || !strings.Contains(msg, "bulkload") {
		t.Errorf("ProfileChanged event %q should name the target and the profile found", msg)
	}
	eventually(t, "the switched target's run Job is stopped", func() error {
		return absent(client.ObjectKey{Namespace: ns, Name: "held-run1-flipped"}, &batchv1.Job{})
	})
	// The Event and the Job's deletion come before the status write that records the failure.
	eventually(t, "flipped failed with ProfileChanged", func() error {
		if ts := targetStatus(getBench(t, b), "flipped"); ts.State != v1alpha1.TargetFailed || ts.Reason != "ProfileChanged" ||
			!strings.Contains(ts.Message, "bulkload") {
			return fmt.Errorf("flipped %+v", ts)
		}
		return nil
	})
	// Held until the Benchmark ends: the profile is restored then, not behind the running Benchmark's back.
	if p := profileOf(t, ns, "flipped"); p != v1alpha1.ProfileBulkLoad {
		t.Errorf("profile %s while the Benchmark still runs", p)
	}

	finishBenchJob(t, ns, "held-run1-early", runSummary("early", 1, 100, 10, false), seriesLog(t, "early", 1, 100), false)
	eventually(t, "early's run 1 is recorded", func() error {
		if ts := targetStatus(getBench(t, b), "early"); len(ts.Iterations) != 1 {
			return fmt.Errorf("early %+v", ts)
		}
		return nil
	})
	setProfileByHand(t, ns, "early", v1alpha1.ProfileBulkLoad)
	eventually(t, "early fails although its run is over", func() error {
		if ts := targetStatus(getBench(t, b), "early"); ts.State != v1alpha1.TargetFailed || ts.Reason != "ProfileChanged" {
			return fmt.Errorf("early %+v", ts)
		}
		return nil
	})

	finishBenchJob(t, ns, "held-run1-other", runSummary("other", 1, 100, 10, false), seriesLog(t, "other", 1, 100), false)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	if c := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionCompleted); c == nil || c.Reason != "SomeTargetsFailed" ||
		!strings.Contains(c.Message, "stopped after run 1 of 2") {
		t.Errorf("Completed condition %+v", c)
	}
	if ts := targetStatus(done, "other"); ts.State != v1alpha1.TargetDone || len(ts.Iterations) != 1 {
		t.Errorf("other %+v", ts)
	}
	for _, target := range []string{"flipped", "early"} {
		waitProfile(t, ns, target, v1alpha1.ProfileWorkload)
		waitReleased(t, ns, target)
	}
	for _, j := range jobsOf(t, ns, "held") {
		if strings.Contains(j.Name, "run2") {
			t.Errorf("Job %s started with fewer targets", j.Name)
		}
	}

	t.Run("switched during the write-only rounds", func(t *testing.T) {
		create(t, volumeDB(ns, "aging", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
		b := benchmark(ns, "rounds", "aging")
		b.Spec.Prepare = ptr.To(false)
		b.Spec.SteadyState = &v1alpha1.SteadyStateSpec{RoundSeconds: 4, MaxRounds: 5, Window: 3}
		create(t, b)
		finishBenchJob(t, ns, "rounds-verify-aging", verifiedRows("aging"), "", false)
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "rounds-steady1-aging"}, &batchv1.Job{})
		setProfileByHand(t, ns, "aging", v1alpha1.ProfileBulkLoad)
		cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
		if ts := targetStatus(cur, "aging"); ts.Reason != "ProfileChanged" {
			t.Errorf("aging %+v", ts)
		}
		if err := absent(client.ObjectKey{Namespace: ns, Name: "rounds-steady1-aging"}, &batchv1.Job{}); err != nil {
			t.Errorf("the round is not stopped: %v", err)
		}
		waitProfile(t, ns, "aging", v1alpha1.ProfileWorkload)
		waitReleased(t, ns, "aging")
	})

	t.Run("switched while the operator is down", func(t *testing.T) {
		create(t, volumeDB(ns, "solo", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
		b := benchmark(ns, "offline", "solo")
		b.Spec.Prepare = ptr.To(false)
		create(t, b)
		finishBenchJob(t, ns, "offline-verify-solo", verifiedRows("solo"), "", false)
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "offline-run1-solo"}, &batchv1.Job{})
		stopManager()
		restarted := false
		defer func() {
			if !restarted {
				restartManager(t)
			}
		}()
		setProfileByHand(t, ns, "solo", v1alpha1.ProfileBulkLoad)
		finishBenchJob(t, ns, "offline-run1-solo", runSummary("solo", 1, 100, 10, false), seriesLog(t, "solo", 1, 100), false)
		restartManager(t)
		restarted = true

		cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
		if ts := targetStatus(cur, "solo"); ts.State != v1alpha1.TargetFailed || ts.Reason != "ProfileChanged" || len(ts.Iterations) != 0 {
			t.Errorf("solo %+v: a run that ended in another profile than workload must not count", ts)
		}
		waitBenchEvent(t, b, "ProfileChanged")
		waitProfile(t, ns, "solo", v1alpha1.ProfileWorkload)
		waitReleased(t, ns, "solo")
	})

	t.Run("switched and the Benchmark deleted while the operator is down", func(t *testing.T) {
		create(t, volumeDB(ns, "orphan", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
		b := benchmark(ns, "deleted", "orphan")
		b.Spec.Prepare = ptr.To(false)
		create(t, b)
		finishBenchJob(t, ns, "deleted-verify-orphan", verifiedRows("orphan"), "", false)
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "deleted-run1-orphan"}, &batchv1.Job{})
		stopManager()
		restarted := false
		defer func() {
			if !restarted {
				restartManager(t)
			}
		}()
		setProfileByHand(t, ns, "orphan", v1alpha1.ProfileBulkLoad)
		if err := k8s.Delete(ctx, getBench(t, b)); err != nil {
			t.Fatal(err)
		}
		restartManager(t)
		restarted = true

		// Gone, not only being deleted: its finalizer is what hands the database back.
		eventually(t, "the Benchmark is gone", func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), &v1alpha1.Benchmark{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
		if p := profileOf(t, ns, "orphan"); p != v1alpha1.ProfileWorkload {
			t.Errorf("orphan left in profile %s by the deleted Benchmark that held it", p)
		}
		waitReleased(t, ns, "orphan")
	})
}

// TestBenchmarkThreadsBeyondMaxConnectionsAreRefused: a Benchmark that would open more connections than a
// target's server accepts (its max_connections, generated from memory or set in spec.config) fails before any
// Job, with both numbers, what they come from and what to change; one that fits runs.
func TestBenchmarkThreadsBeyondMaxConnectionsAreRefused(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	// No memory limit: the generated max_connections is MySQL's default 151.
	create(t, volumeDB(ns, "small", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	tuned := volumeDB(ns, "tuned", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona)
	tuned.Spec.Config = map[string]string{"max-connections": "40"}
	create(t, tuned)

	for _, tc := range []struct {
		name, target string
		set          func(*v1alpha1.BenchmarkSpec)
		want         string
	}{
		{"wide", "small", func(s *v1alpha1.BenchmarkSpec) { s.Threads = 4096 },
			"target small allows 151 connections (max_connections), the Benchmark opens up to 4097 (threads 4096 + 1 for the runner): raise spec.config max_connections on small or lower threads"},
		{"sweep", "tuned", func(s *v1alpha1.BenchmarkSpec) { s.ThreadSweep = []int32{8, 64} },
			"target tuned allows 40 connections (max_connections), the Benchmark opens up to 65 (threadSweep 64 + 1 for the runner)"},
		{"loader", "tuned", func(s *v1alpha1.BenchmarkSpec) { s.PrepareThreads = 100 },
			"the Benchmark opens up to 101 (prepareThreads 100 + 1 for the runner)"},
	} {
		b := benchmark(ns, tc.name, tc.target)
		tc.set(&b.Spec)
		create(t, b)
		cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
		ts := targetStatus(cur, tc.target)
		if ts.State != v1alpha1.TargetFailed || ts.Reason != "TooFewConnections" || !strings.Contains(ts.Message, tc.want) {
			t.Errorf("%s: target %+v\nwant reason TooFewConnections and %q", tc.name, ts, tc.want)
		}
		if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed); c == nil || c.Reason != "TooFewConnections" ||
			!strings.Contains(c.Message, tc.want) {
			t.Errorf("%s: Failed condition %+v", tc.name, c)
		}
		if msg := waitBenchEvent(t, b, "TooFewConnections"); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: event %q", tc.name, msg)
		}
		if jobs := jobsOf(t, ns, tc.name); len(jobs) > 0 {
			t.Errorf("%s: Job %s created although the Benchmark was refused", tc.name, jobs[0].Name)
		}
		if p := profileOf(t, ns, tc.target); p != v1alpha1.ProfileWorkload {
			t.Errorf("%s: a refused Benchmark switched %s to %s", tc.name, tc.target, p)
		}
		waitReleased(t, ns, tc.target)
	}

	fits := benchmark(ns, "fits", "tuned")
	fits.Spec.Prepare = ptr.To(false)
	fits.Spec.Threads = 39
	create(t, fits)
	runThrough(t, ns, "fits", "tuned")
	if ts := targetStatus(waitBenchPhase(t, fits, v1alpha1.BenchmarkCompleted), "tuned"); ts.State != v1alpha1.TargetDone {
		t.Errorf("tuned %+v", ts)
	}
}
