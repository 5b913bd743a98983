package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// setProfileByHand plays a person who patches a database's own profile.
func setProfileByHand(t *testing.T, ns, name string, p v1alpha1.Profile) {
	t.Helper()
	db := dbGet(t, ns, name)
	patch := client.MergeFrom(db.DeepCopy())
	db.Spec.Profile = p
	if err := k8s.Patch(ctx, db, patch); err != nil {
		t.Fatal(err)
	}
}

// editLeaseByHand plays a person who rewrites the profile a Benchmark's lease names.
func editLeaseByHand(t *testing.T, ns, name string, p v1alpha1.Profile) {
	t.Helper()
	db := dbGet(t, ns, name)
	patch := client.MergeFrom(db.DeepCopy())
	db.Annotations[v1alpha1.AnnotationBenchmarkProfile] = string(p)
	if err := k8s.Patch(ctx, db, patch); err != nil {
		t.Fatal(err)
	}
}

func waitReleased(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, name+" released", func() error {
		a := dbGet(t, ns, name).Annotations
		for _, k := range []string{v1alpha1.AnnotationBenchmark, v1alpha1.AnnotationBenchmarkUID, v1alpha1.AnnotationBenchmarkProfile} {
			if a[k] != "" {
				return fmt.Errorf("%s=%s", k, a[k])
			}
		}
		return nil
	})
}

// TestBenchmarkLeaseCarriesTheProfile: a held database runs the profile of the Benchmark's lease, not its own.
// Its owner may change spec.profile meanwhile: the running Benchmark is not disturbed (no restart, no failure),
// and the database takes its own profile when the lease ends. A lease rewritten by hand to another profile in
// the middle of a run fails that target with ProfileChanged and a Warning Event naming the profile, and its run
// Job is stopped; so does one rewritten after its own run ended while another's goes on (it is held until the
// last run ends). The remaining target finishes the iteration and no later one starts. The same holds when the
// lease is rewritten while the operator is down, whether the run finished meanwhile (its figures are not
// recorded as if nothing happened) or the Benchmark was deleted; and a Benchmark that vanished without handing
// its database back (its finalizer removed by hand) leaves a lease that the database's own reconciler ends.
func TestBenchmarkLeaseCarriesTheProfile(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	targets := []string{"owned", "early", "other"}
	create(t, volumeDB(ns, "owned", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
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

	// The owner's change waits for the lease to end.
	cm := dbGet(t, ns, "owned").Status.ConfigMapName
	setProfileByHand(t, ns, "owned", v1alpha1.ProfileBulkLoad)
	consistently(t, "the owner's profile does not reach a held database", 2*time.Second, func() error {
		db := dbGet(t, ns, "owned")
		if db.Status.ObservedGeneration != db.Generation {
			return nil // not reconciled yet: nothing to judge
		}
		if db.Status.Profile != v1alpha1.ProfileWorkload || db.Status.ConfigMapName != cm {
			return fmt.Errorf("profile %s, ConfigMap %s (was %s)", db.Status.Profile, db.Status.ConfigMapName, cm)
		}
		if ts := targetStatus(getBench(t, b), "owned"); ts.State == v1alpha1.TargetFailed {
			return fmt.Errorf("owned failed: %s", ts.Message)
		}
		return absentReason(t, b, "ProfileChanged")
	})
	if c := meta.FindStatusCondition(dbGet(t, ns, "owned").Status.Conditions, v1alpha1.ConditionConfigReady); c == nil ||
		!strings.Contains(c.Message, "Benchmark held's lease; spec.profile bulkload applies when it ends") {
		t.Errorf("ConfigReady %+v should say whose profile applies", c)
	}

	finishBenchJob(t, ns, "held-run1-early", runSummary("early", 1, 100, 10, false), seriesLog(t, "early", 1, 100), false)
	eventually(t, "early's run 1 is recorded", func() error {
		if ts := targetStatus(getBench(t, b), "early"); len(ts.Iterations) != 1 {
			return fmt.Errorf("early %+v", ts)
		}
		return nil
	})
	editLeaseByHand(t, ns, "early", v1alpha1.ProfileBulkLoad)
	if msg := waitBenchEvent(t, b, "ProfileChanged"); !strings.Contains(msg, "early") || !strings.Contains(msg, "bulkload") {
		t.Errorf("ProfileChanged event %q should name the target and the profile found", msg)
	}
	eventually(t, "early fails although its run is over", func() error {
		if ts := targetStatus(getBench(t, b), "early"); ts.State != v1alpha1.TargetFailed || ts.Reason != "ProfileChanged" ||
			!strings.Contains(ts.Message, "bulkload") {
			return fmt.Errorf("early %+v", ts)
		}
		return nil
	})
	// Held until the Benchmark ends: the lease is handed back then, not rewritten behind the running Benchmark's back.
	if p := dbGet(t, ns, "early").LeaseProfile(); p != v1alpha1.ProfileBulkLoad {
		t.Errorf("early's lease set back to %s while the Benchmark still runs", p)
	}
	waitProfile(t, ns, "early", v1alpha1.ProfileBulkLoad)

	editLeaseByHand(t, ns, "other", v1alpha1.ProfileBulkLoad)
	eventually(t, "the rewritten target's run Job is stopped", func() error {
		return absent(client.ObjectKey{Namespace: ns, Name: "held-run1-other"}, &batchv1.Job{})
	})
	eventually(t, "other failed with ProfileChanged", func() error {
		if ts := targetStatus(getBench(t, b), "other"); ts.State != v1alpha1.TargetFailed || ts.Reason != "ProfileChanged" {
			return fmt.Errorf("other %+v", ts)
		}
		return nil
	})

	finishBenchJob(t, ns, "held-run1-owned", runSummary("owned", 1, 100, 10, false), seriesLog(t, "owned", 1, 100), false)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	if c := meta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionCompleted); c == nil || c.Reason != "SomeTargetsFailed" ||
		!strings.Contains(c.Message, "stopped after run 1 of 2") {
		t.Errorf("Completed condition %+v", c)
	}
	if ts := targetStatus(done, "owned"); ts.State != v1alpha1.TargetDone || len(ts.Iterations) != 1 {
		t.Errorf("owned %+v", ts)
	}
	for _, target := range targets {
		waitReleased(t, ns, target)
	}
	// Each returns to its own profile: the owner's bulkload now applies.
	waitProfile(t, ns, "owned", v1alpha1.ProfileBulkLoad)
	waitProfile(t, ns, "early", v1alpha1.ProfileWorkload)
	waitProfile(t, ns, "other", v1alpha1.ProfileWorkload)
	for _, j := range jobsOf(t, ns, "held") {
		if strings.Contains(j.Name, "run2") {
			t.Errorf("Job %s started with fewer targets", j.Name)
		}
	}
	for _, target := range targets {
		if p := dbGet(t, ns, target).Spec.Profile; target != "owned" && p != v1alpha1.ProfileWorkload {
			t.Errorf("%s: the Benchmark wrote spec.profile %s", target, p)
		}
	}

	t.Run("rewritten during the write-only rounds", func(t *testing.T) {
		create(t, volumeDB(ns, "aging", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
		b := benchmark(ns, "rounds", "aging")
		b.Spec.Prepare = ptr.To(false)
		b.Spec.SteadyState = &v1alpha1.SteadyStateSpec{RoundSeconds: 4, MaxRounds: 5, Window: 3}
		create(t, b)
		finishBenchJob(t, ns, "rounds-verify-aging", verifiedRows("aging"), "", false)
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "rounds-steady1-aging"}, &batchv1.Job{})
		editLeaseByHand(t, ns, "aging", v1alpha1.ProfileBulkLoad)
		cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
		if ts := targetStatus(cur, "aging"); ts.Reason != "ProfileChanged" {
			t.Errorf("aging %+v", ts)
		}
		if err := absent(client.ObjectKey{Namespace: ns, Name: "rounds-steady1-aging"}, &batchv1.Job{}); err != nil {
			t.Errorf("the round is not stopped: %v", err)
		}
		waitReleased(t, ns, "aging")
		waitProfile(t, ns, "aging", v1alpha1.ProfileWorkload)
	})

	t.Run("rewritten while the operator is down", func(t *testing.T) {
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
		editLeaseByHand(t, ns, "solo", v1alpha1.ProfileBulkLoad)
		finishBenchJob(t, ns, "offline-run1-solo", runSummary("solo", 1, 100, 10, false), seriesLog(t, "solo", 1, 100), false)
		restartManager(t)
		restarted = true

		cur := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
		if ts := targetStatus(cur, "solo"); ts.State != v1alpha1.TargetFailed || ts.Reason != "ProfileChanged" || len(ts.Iterations) != 0 {
			t.Errorf("solo %+v: a run that ended in another profile than workload must not count", ts)
		}
		waitBenchEvent(t, b, "ProfileChanged")
		waitReleased(t, ns, "solo")
		waitProfile(t, ns, "solo", v1alpha1.ProfileWorkload)
	})

	t.Run("rewritten and the Benchmark deleted while the operator is down", func(t *testing.T) {
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
		editLeaseByHand(t, ns, "orphan", v1alpha1.ProfileBulkLoad)
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
		waitReleased(t, ns, "orphan")
		waitProfile(t, ns, "orphan", v1alpha1.ProfileWorkload)
	})

	t.Run("the Benchmark vanished without handing it back", func(t *testing.T) {
		create(t, volumeDB(ns, "stray", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
		b := benchmark(ns, "vanished", "stray")
		create(t, b)
		waitObject(t, client.ObjectKey{Namespace: ns, Name: "vanished-prepare-stray"}, &batchv1.Job{})
		waitProfile(t, ns, "stray", v1alpha1.ProfileBulkLoad)
		stopManager()
		restarted := false
		defer func() {
			if !restarted {
				restartManager(t)
			}
		}()
		cur := getBench(t, b)
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Finalizers = nil
		if err := k8s.Patch(ctx, cur, patch); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Delete(ctx, cur); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the Benchmark is gone", func() error { return absent(client.ObjectKeyFromObject(b), &v1alpha1.Benchmark{}) })
		// Its lease is still on the database, in bulkload: only the database's reconciler can end it now.
		if db := dbGet(t, ns, "stray"); db.LeaseProfile() != v1alpha1.ProfileBulkLoad {
			t.Fatalf("lease %v", db.Annotations)
		}
		restartManager(t)
		restarted = true

		waitReleased(t, ns, "stray")
		waitProfile(t, ns, "stray", v1alpha1.ProfileWorkload)
		if msg := waitEvent(t, dbGet(t, ns, "stray"), "LeaseEnded"); !strings.Contains(msg, "Benchmark vanished") ||
			!strings.Contains(msg, "its own profile (workload)") {
			t.Errorf("LeaseEnded event %q", msg)
		}
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
