package controller_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// dayLog is the runner's log of a run of n intervals at 1 s: a steady 300 TPS with one stall and one latency
// spike, each a single interval.
func dayLog(t *testing.T, target string, n int) string {
	t.Helper()
	s := benchresult.Series{Target: target, Iteration: 1, Percentile: 95, ReportIntervalSec: 1}
	for i := 1; i <= n; i++ {
		tps, lat := 300.25, 5.47
		switch i {
		case n / 3:
			tps = 0
		case 2 * n / 3:
			lat = 4321.09
		}
		s.Time = append(s.Time, float64(i))
		s.TPS = append(s.TPS, tps)
		s.QPS = append(s.QPS, 4*tps)
		s.LatencyMS = append(s.LatencyMS, lat)
		s.ErrorsPerSec = append(s.ErrorsPerSec, 0.02)
		s.ReconnectsPerSec = append(s.ReconnectsPerSec, 0)
	}
	line, err := s.Line()
	if err != nil {
		t.Fatal(err)
	}
	return "[ 1s ] thds: 8 tps: 300.25 ...\n" + line
}

func dataBytes(cm *corev1.ConfigMap) int {
	n := 0
	for k, v := range cm.Data {
		n += len(k) + len(v)
	}
	return n
}

// TestBenchmarkDayLongSeriesIsKept: the longest run the API admits (a day at 1 s intervals, 86400 of them)
// keeps its series, downsampled into a ConfigMap under the API server's limit that says so and keeps the stall
// and the spike, while the run's figures are the runner's summary of the whole run.
func TestBenchmarkDayLongSeriesIsKept(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	create(t, volumeDB(ns, "long", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	b := benchmark(ns, "day", "long")
	b.Spec.Prepare = ptr.To(false)
	b.Spec.DurationSeconds, b.Spec.ReportIntervalSeconds = 86400, 1
	create(t, b)
	finishBenchJob(t, ns, "day-verify-long", verifiedRows("long"), "", false)
	const n = 86400
	sum := runSummary("long", 1, 300.25, 5.47, false)
	sum.DurationSec, sum.Transactions, sum.Intervals = n, 300*n, n
	finishBenchJob(t, ns, "day-run1-long", sum, dayLog(t, "long", n), false)

	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	ts := targetStatus(done, "long")
	if ts.State != v1alpha1.TargetDone || len(ts.Iterations) != 1 {
		t.Fatalf("long %+v", ts)
	}
	it := ts.Iterations[0]
	if it.TPS != "300.25" || it.LatencyPctMs != "5.47" || it.Transactions != 300*n || it.SeriesConfigMap == "" {
		t.Errorf("run 1 %+v: the figures are the runner's summary, the series is kept", it)
	}
	cm := &corev1.ConfigMap{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: it.SeriesConfigMap}, cm)
	if size := dataBytes(cm); size >= benchresult.ConfigMapLimitBytes {
		t.Errorf("ConfigMap data %d bytes, limit %d", size, benchresult.ConfigMapLimitBytes)
	}
	var kept benchresult.Series
	if err := json.Unmarshal([]byte(cm.Data["series.json"]), &kept); err != nil {
		t.Fatal(err)
	}
	if !kept.Downsampled || kept.SourceIntervals != n || kept.Len() > benchresult.MaxBuckets || kept.Len() != len(kept.TPSMin) {
		t.Errorf("series.json: downsampled %v from %d intervals into %d", kept.Downsampled, kept.SourceIntervals, kept.Len())
	}
	low, high := 1e9, 0.0
	for i := range kept.Time {
		low, high = min(low, kept.TPSMin[i]), max(high, kept.LatencyMaxMS[i])
	}
	if low != 0 || high != 4321.09 {
		t.Errorf("lowest TPS %g and highest latency %g kept, want the stall (0) and the spike (4321.09)", low, high)
	}
	if csv := cm.Data["series.csv"]; !strings.HasPrefix(csv, benchresult.CSVHeader+",tps_min,") || strings.Count(csv, "\n") != kept.Len()+1 {
		t.Errorf("series.csv starts %q", csv[:min(len(csv), 200)])
	}
	benchCondition(t, b, "SeriesKept", metav1.ConditionTrue, "Kept")
	if msg := waitBenchEvent(t, b, "SeriesDownsampled"); !strings.Contains(msg, "86400 intervals") {
		t.Errorf("SeriesDownsampled event %q", msg)
	}
}

// TestBenchmarkSeriesRefusedIsRecorded: when the API server refuses the series ConfigMap (here a quota allows
// no more ConfigMaps in the namespace), the run is still recorded with its figures, the Benchmark completes,
// and the loss is a SeriesKept=False condition and a SeriesMissing Warning Event that say why.
func TestBenchmarkSeriesRefusedIsRecorded(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	autoReady(t, ns)
	create(t, volumeDB(ns, "quota", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona))
	b := benchmark(ns, "refused", "quota")
	b.Spec.Prepare = ptr.To(false)
	create(t, b)
	finishBenchJob(t, ns, "refused-verify-quota", verifiedRows("quota"), "", false)

	// The database's own ConfigMap exists by now; the quota refuses any new one. No quota controller runs here,
	// so the test writes the usage it would have written.
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-configmaps"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("0")}}}
	create(t, rq)
	rq.Status = corev1.ResourceQuotaStatus{Hard: rq.Spec.Hard, Used: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("0")}}
	if err := k8s.Status().Update(ctx, rq); err != nil {
		t.Fatal(err)
	}
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}}
	eventually(t, "the quota refuses ConfigMaps", func() error {
		err := k8s.Create(ctx, probe)
		if err == nil {
			_ = k8s.Delete(ctx, probe)
			return errors.New("ConfigMap created")
		}
		return nil
	})

	finishBenchJob(t, ns, "refused-run1-quota", runSummary("quota", 1, 100, 10, false), seriesLog(t, "quota", 1, 100), false)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	ts := targetStatus(done, "quota")
	if ts.State != v1alpha1.TargetDone || len(ts.Iterations) != 1 || ts.Iterations[0].TPS != "100.00" || ts.Iterations[0].SeriesConfigMap != "" {
		t.Errorf("quota %+v: the run is recorded without a series", ts)
	}
	c := benchCondition(t, b, "SeriesKept", metav1.ConditionFalse, "SeriesMissing")
	if !strings.Contains(c.Message, "target quota run 1") || !strings.Contains(c.Message, "exceeded quota") {
		t.Errorf("SeriesKept message %q should name the run and the API server's reason", c.Message)
	}
	if msg := waitBenchEvent(t, b, "SeriesMissing"); !strings.Contains(msg, "exceeded quota") {
		t.Errorf("SeriesMissing event %q", msg)
	}
}
