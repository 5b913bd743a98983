package controller_test

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/scale"
)

// TestNoWritesWhenNothingChanges: once databases are Available and Benchmarks wait (for a prepare Job that does
// not finish, for a target that does not exist), the operator keeps polling but writes nothing to the API
// server: no status, no child, no Event. make bench-scale measures the same at 500 databases.
func TestNoWritesWhenNothingChanges(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	for _, name := range []string{"a", "b"} {
		create(t, volumeDB(ns, name, v1alpha1.EngineRocksDB, v1alpha1.FlavorMariaDB))
	}
	busy := benchmark(ns, "busy", "a", "b")
	busy.Spec.TargetTimeoutSeconds = 3600
	create(t, busy)
	ghost := benchmark(ns, "ghost", "missing")
	ghost.Spec.TargetTimeoutSeconds = 3600
	create(t, ghost)

	eventually(t, "converged", func() error {
		for _, name := range []string{"a", "b"} {
			db := get(t, &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
			if !meta.IsStatusConditionTrue(db.Status.Conditions, v1alpha1.ConditionAvailable) || db.Status.ObservedGeneration != db.Generation {
				return fmt.Errorf("%s not Available on generation %d", name, db.Generation)
			}
		}
		for _, target := range []string{"a", "b"} {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "busy-prepare-" + target}, &batchv1.Job{}); err != nil {
				return err
			}
		}
		if p := getBench(t, busy).Status.Phase; p != v1alpha1.BenchmarkPreparing {
			return fmt.Errorf("busy in phase %s", p)
		}
		g := getBench(t, ghost)
		if c := meta.FindStatusCondition(g.Status.Conditions, v1alpha1.ConditionTargetsReady); c == nil || c.Reason != v1alpha1.ReasonTargetsMissing {
			return fmt.Errorf("ghost: %+v", g.Status.Conditions)
		}
		return nil
	})
	time.Sleep(time.Second) // the last writes' own watch events
	before := managerRequests.SnapshotIn(ns)
	reconciles := func() uint64 {
		h, err := scale.GatherHistogram(crmetrics.Registry, "controller_runtime_reconcile_time_seconds", map[string]string{"controller": "benchmark"})
		if err != nil {
			t.Fatal(err)
		}
		return h.Count
	}
	polls := reconciles()
	time.Sleep(6 * time.Second) // longer than the Benchmarks' 5 s poll
	after := managerRequests.SnapshotIn(ns)
	for k := range before {
		after[k] -= before[k]
	}
	if n := scale.Writes(after); n != 0 {
		t.Errorf("%d writes while nothing changed:\n%s", n, scale.Format(after))
	}
	if reconciles() <= polls {
		t.Error("no Benchmark reconcile in the window: the test proves nothing")
	}
}
