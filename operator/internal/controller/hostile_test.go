package controller_test

// The ten hostile or careless inputs of issue 13, one test each, against the real API server with the manager
// running. Each is named after its point: TestHostile01... to TestHostile10...

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// refusedAt checks that the API server refuses obj as Invalid with a message containing every one of want.
func refusedAt(t *testing.T, obj client.Object, want ...string) {
	t.Helper()
	err := k8s.Create(ctx, obj)
	if err == nil {
		t.Errorf("%T %q was admitted; want a refusal mentioning %q", obj, obj.GetName(), want)
		_ = k8s.Delete(ctx, obj)
		return
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("%T %q: got %v, want an Invalid error", obj, obj.GetName(), err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%T %q: error %q does not mention %q", obj, obj.GetName(), err, w)
		}
	}
}

func nameOf(prefix string, n int) string { return prefix + strings.Repeat("x", n-len(prefix)) }

// TestHostile03NamesThatMakeInvalidChildren: names whose children Kubernetes would refuse are refused at
// admission, with limits computed from the longest suffix (v1alpha1.Max*); names at the limits make children
// the API server accepts; and what only the cluster can tell gets a condition and a Warning Event.
func TestHostile03NamesThatMakeInvalidChildren(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	maxDB := v1alpha1.MaxDatabaseNameLength

	t.Run("ZNSDatabase names", func(t *testing.T) {
		refusedAt(t, volumeDB(ns, nameOf("d", maxDB+1), v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona),
			fmt.Sprintf("metadata.name must be at most %d characters", maxDB))
		refusedAt(t, zonedDB(ns, nameOf("z", 63), "hostile03-node", "nullb0"), "metadata.name must be at most 46 characters")
		refusedAt(t, volumeDB(ns, "1st-db", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona), "must start with a letter")
		refusedAt(t, volumeDB(ns, "db.example", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona), "no '.'")

		// At the limit, every child is accepted by the API server, which validates their names for real.
		vol := volumeDB(ns, nameOf("v", maxDB), v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
		create(t, vol)
		waitObject(t, client.ObjectKey{Namespace: ns, Name: vol.StatefulSetName()}, &appsv1.StatefulSet{})
		waitObject(t, client.ObjectKey{Namespace: ns, Name: vol.ServiceName()}, &corev1.Service{})
		waitCondition(t, vol, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
		zoned := zonedDB(ns, nameOf("z", maxDB), "h03-"+ns, "nullb0")
		create(t, zoned)
		waitObject(t, client.ObjectKey{Namespace: ns, Name: zoned.PreflightJobName()}, &batchv1.Job{})
	})

	t.Run("nodeName that is not a label value", func(t *testing.T) {
		refusedAt(t, zonedDB(ns, "badnode1", "Node_A", "nullb0"), "spec.storage.zonedDevice.nodeName")
		refusedAt(t, zonedDB(ns, "badnode2", strings.Repeat("n", 64), "nullb0"), "spec.storage.zonedDevice.nodeName")
	})

	t.Run("Benchmark names", func(t *testing.T) {
		long := benchmark(ns, nameOf("b", 63), nameOf("t", 40))
		refusedAt(t, long, fmt.Sprintf("metadata.name and each target name must add up to at most %d characters", v1alpha1.MaxBenchmarkAndTargetLength))
		refusedAt(t, benchmark(ns, "b123", nameOf("v", maxDB)), "must add up to at most 49 characters") // 4 + 46 = 50
		refusedAt(t, benchmark(ns, "b.dot", "t"), "no '.'")
		refusedAt(t, benchmark(ns, "ok", "Upper"), "spec.targets[0].name")

		// At the limit: a 3-character Benchmark over a 46-character target makes a 63-character Job name, which
		// the API server accepts.
		b := benchmark(ns, "b63", nameOf("v", maxDB))
		b.Spec.Precondition = &v1alpha1.PreconditionSpec{}
		create(t, b)
		job := &batchv1.Job{}
		name := "b63-precondition-" + nameOf("v", maxDB)
		if len(name) != v1alpha1.MaxLabelLength {
			t.Fatalf("the test's Job name has %d characters", len(name))
		}
		waitObject(t, client.ObjectKey{Namespace: ns, Name: name}, job)
	})

	t.Run("a child only the cluster can refuse", func(t *testing.T) {
		db := volumeDB(ns, "overcommit", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
		db.Spec.Resources = corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")},
		}
		create(t, db)
		cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "ChildRejected")
		if !strings.Contains(cond.Message, "StatefulSet") || !strings.Contains(cond.Message, "must be less than or equal to memory limit") {
			t.Errorf("condition message %q should quote the API server", cond.Message)
		}
		if msg := waitEvent(t, db, "ChildRejected"); !strings.Contains(msg, "overcommit-mysql") {
			t.Errorf("event %q", msg)
		}
	})
}

// TestHostile04ReportIntervalLongerThanDuration: a run must have at least two report intervals, and a run
// reported with fewer carries no deviation figures (absent, not a perfect 0.00).
func TestHostile04ReportIntervalLongerThanDuration(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	b := benchmark(ns, "interval", "a")
	b.Spec.DurationSeconds, b.Spec.ReportIntervalSeconds = 60, 120
	refusedAt(t, b, "spec.reportIntervalSeconds must be at most half of spec.durationSeconds")
	b = benchmark(ns, "interval", "a")
	b.Spec.DurationSeconds, b.Spec.ReportIntervalSeconds = 60, 31
	refusedAt(t, b, "at least two")
	b = benchmark(ns, "interval", "a")
	b.Spec.DurationSeconds, b.Spec.ReportIntervalSeconds = 60, 30
	create(t, b)

	// sysbench silences its reporter before the summary, so even an admitted spec can yield one interval.
	autoReady(t, ns)
	create(t, volumeDB(ns, "short", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	one := benchmark(ns, "one-interval", "short")
	one.Spec.Prepare = ptr.To(false)
	create(t, one)
	sum := okSummary("verify", "short")
	sum.RowsExpected, sum.RowsFound = 2000, 2000
	finishBenchJob(t, ns, "one-interval-verify-short", sum, "", false)
	run := runSummary("short", 1, 100, 10, false)
	run.Intervals, run.TPSRelDevPct, run.LatencyRelDevPct = 1, 0, 0
	finishBenchJob(t, ns, "one-interval-run1-short", run, "", false)
	ts := targetStatus(waitBenchPhase(t, one, v1alpha1.BenchmarkCompleted), "short")
	if len(ts.Iterations) != 1 || ts.Iterations[0].TPS != "100.00" {
		t.Fatalf("short %+v", ts)
	}
	if f := ts.Iterations[0].RunFigures; f.TPSRelDevPct != "" || f.LatencyRelDevPct != "" || ts.Mean.TPSRelDevPct != "" || ts.Mean.LatencyRelDevPct != "" {
		t.Errorf("deviations from one interval must be absent, not 0.00: run %+v, mean %+v", f, ts.Mean)
	}
}

// TestHostile05AbsurdSizes: durations, row counts and memory limits beyond sane are refused at admission with
// the field and the limit named; the row-count product cannot overflow.
func TestHostile05AbsurdSizes(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	tenYears := benchmark(ns, "decade", "a")
	tenYears.Spec.DurationSeconds = 10 * 365 * 24 * 3600
	refusedAt(t, tenYears, "spec.durationSeconds", "86400")
	rows := benchmark(ns, "rows", "a")
	rows.Spec.Tables, rows.Spec.TableSize = 1000, 1<<63-1
	refusedAt(t, rows, "spec.tableSize", "10000000000")
	product := benchmark(ns, "product", "a")
	product.Spec.Tables, product.Spec.TableSize = 1000, 100_000_000
	refusedAt(t, product, "spec.tables x spec.tableSize must be at most 10000000000 rows")
	timeout := benchmark(ns, "timeout", "a")
	timeout.Spec.TargetTimeoutSeconds = 1 << 30
	refusedAt(t, timeout, "spec.targetTimeoutSeconds")

	// CEL's quantity functions cost too much for a CRD rule over an unbounded string, so admission refuses what
	// cheap string tests can tell is too big; the config generator refuses the rest, before any my.cnf exists.
	for i, mem := range []string{"8Ei", "1Pi", "3E", "100000000000000000" /* sent as 1e17 */} {
		db := volumeDB(ns, fmt.Sprintf("mem-huge%d", i), v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
		db.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}
		refusedAt(t, db, "spec.resources.limits.memory must be at most 16Ti")
	}
	for mem, want := range map[string]string{"17Ti": "above the maximum of 16T", "100Mi": "below the minimum of 512M"} {
		db := volumeDB(ns, "mem-"+strings.ToLower(mem), v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
		db.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}
		create(t, db)
		cond := waitCondition(t, db, v1alpha1.ConditionConfigReady, metav1.ConditionFalse, "InvalidConfig")
		if !strings.Contains(cond.Message, want) {
			t.Errorf("%s: condition %q should say %q", mem, cond.Message, want)
		}
		waitEvent(t, db, "InvalidConfig")
		consistently(t, mem+": no my.cnf", 500*time.Millisecond, func() error {
			if name := get(t, db).Status.ConfigMapName; name != "" {
				return fmt.Errorf("ConfigMap %s", name)
			}
			return nil
		})
	}
	fine := volumeDB(ns, "mem-ok", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	fine.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Ti")}
	create(t, fine)
	waitCondition(t, fine, v1alpha1.ConditionConfigReady, metav1.ConditionTrue, "Generated")
}

// TestHostile06ConfigOverrides: options that run SQL or name files are refused with the rule's reason, and a
// cache bigger than the memory limit never reaches my.cnf.
func TestHostile06ConfigOverrides(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	for name, tc := range map[string]struct {
		config map[string]string
		want   string
	}{
		"initfile":  {map[string]string{"init_file": "/var/lib/mysql/evil.sql"}, "it runs SQL"},
		"plugindir": {map[string]string{"plugin-dir": "/tmp"}, "loads code"},
		"nogrants":  {map[string]string{"skip-grant-tables": ""}, "turns off authentication"},
		"bigcache":  {map[string]string{"rocksdb_block_cache_size": "100G"}, "more than the 3.6G that the memory limit of 4G leaves"},
	} {
		db := volumeDB(ns, name, v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
		db.Spec.Config = tc.config
		db.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}
		create(t, db)
		cond := waitCondition(t, db, v1alpha1.ConditionConfigReady, metav1.ConditionFalse, "InvalidConfig")
		if !strings.Contains(cond.Message, tc.want) {
			t.Errorf("%s: message %q should say %q", name, cond.Message, tc.want)
		}
		if msg := waitEvent(t, db, "InvalidConfig"); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: event %q", name, msg)
		}
	}
	consistently(t, "no my.cnf and no StatefulSet from a refused override", time.Second, func() error {
		cms := &corev1.ConfigMapList{}
		if err := k8s.List(ctx, cms, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, cm := range cms.Items {
			if strings.Contains(cm.Data["my.cnf"], "init_file") || strings.Contains(cm.Data["my.cnf"], "100G") {
				return fmt.Errorf("ConfigMap %s carries the override:\n%s", cm.Name, cm.Data["my.cnf"])
			}
		}
		sts := &appsv1.StatefulSetList{}
		if err := k8s.List(ctx, sts, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(sts.Items) > 0 {
			return fmt.Errorf("%d StatefulSets", len(sts.Items))
		}
		return nil
	})
}
