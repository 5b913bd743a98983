package controller_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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
	reconciles := func() uint64 { return reconcileCount(t, "benchmark") }
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

// TestNoAppliesWhenChildrenUnchanged: a database reconciled again and again with nothing to change sends no
// apply for its children (applymemo), and a child someone changed by hand is still put back.
func TestNoAppliesWhenChildrenUnchanged(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	db := volumeDB(ns, "quiet", v1alpha1.EngineRocksDB, v1alpha1.FlavorMariaDB)
	create(t, db)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
	time.Sleep(time.Second) // the last applies' own watch events reach the cache
	// Each reconcile reads the database's Secret past the cache first: the namespace's count of those reads
	// tells that this database was reconciled, whatever else the manager does meanwhile.
	before := managerRequests.SnapshotIn(ns)
	for i := range 5 {
		// an annotation on the database: an event that reconciles it and changes none of its children
		cur := get(t, db)
		touch := client.MergeFrom(cur.DeepCopy())
		metav1.SetMetaDataAnnotation(&cur.ObjectMeta, "test.zns-mysql.dev/touch", strconv.Itoa(i))
		if err := k8s.Patch(ctx, cur, touch); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a reconcile of the touched database", func() error {
			if n := managerRequests.SnapshotIn(ns)["get secrets"] - before["get secrets"]; n <= i {
				return fmt.Errorf("%d reconciles, want %d", n, i+1)
			}
			return nil
		})
	}
	time.Sleep(time.Second) // the last reconcile's applies, if it made any
	after := managerRequests.SnapshotIn(ns)
	for k := range before {
		after[k] -= before[k]
	}
	for _, res := range []string{"configmaps", "services", "statefulsets", "serviceaccounts", "persistentvolumeclaims"} {
		if n := after["patch "+res]; n != 0 {
			t.Errorf("%d applies of unchanged %s in %d reconciles:\n%s", n, res, after["get secrets"], scale.Format(after))
		}
	}

	// Someone edits the generated my.cnf: the cache shows a new version, so the operator applies its own again.
	cms := &corev1.ConfigMapList{}
	if err := k8s.List(ctx, cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cms.Items, func(c corev1.ConfigMap) bool { return strings.HasPrefix(c.Name, db.ConfigMapPrefix()) })
	if i < 0 {
		t.Fatalf("no ConfigMap %s* in %s", db.ConfigMapPrefix(), ns)
	}
	cm := &cms.Items[i]
	orig := maps.Clone(cm.Data)
	for k := range cm.Data {
		cm.Data[k] = "# edited by hand\n"
	}
	if err := k8s.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, "my.cnf put back", func() error {
		cur := &corev1.ConfigMap{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cm), cur); err != nil {
			return err
		}
		if !maps.Equal(cur.Data, orig) {
			return fmt.Errorf("ConfigMap data %v, want the operator's", cur.Data)
		}
		return nil
	})
}

// reconcileCount is how many reconciles the named controller has finished, from controller-runtime's histogram.
func reconcileCount(t *testing.T, controller string) uint64 {
	t.Helper()
	h, err := scale.GatherHistogram(crmetrics.Registry, "controller_runtime_reconcile_time_seconds", map[string]string{"controller": controller})
	if err != nil {
		t.Fatal(err)
	}
	return h.Count
}
