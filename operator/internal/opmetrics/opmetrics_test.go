package opmetrics

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func TestPhaseDurations(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	at := func(s float64) v1alpha1.PhaseTransition {
		return v1alpha1.PhaseTransition{Time: metav1.NewMicroTime(t0.Add(time.Duration(s * float64(time.Second))))}
	}
	h := []v1alpha1.PhaseTransition{at(0), at(2.5), at(3), at(40), at(41)}
	for i, p := range []v1alpha1.BenchmarkPhase{v1alpha1.BenchmarkPending, v1alpha1.BenchmarkWaitingForTargets,
		v1alpha1.BenchmarkPreparing, v1alpha1.BenchmarkWaitingForTargets, v1alpha1.BenchmarkRunning} {
		h[i].Phase = p
	}
	now := t0.Add(100 * time.Second)
	got := PhaseDurations(h, v1alpha1.BenchmarkRunning, now)
	want := map[v1alpha1.BenchmarkPhase]time.Duration{
		v1alpha1.BenchmarkPending:           2500 * time.Millisecond,
		v1alpha1.BenchmarkWaitingForTargets: 1500 * time.Millisecond, // entered twice: 0.5 s + 1 s
		v1alpha1.BenchmarkPreparing:         37 * time.Second,
		v1alpha1.BenchmarkRunning:           59 * time.Second, // under way: up to now
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for p, d := range want {
		if got[p] != d {
			t.Errorf("%s: %v, want %v", p, got[p], d)
		}
	}
	// Once it ended, the last phase is where it stays: listed at 0, and the clock no longer moves anything.
	h = append(h, at(70))
	h[len(h)-1].Phase = v1alpha1.BenchmarkCompleted
	got = PhaseDurations(h, v1alpha1.BenchmarkCompleted, now.Add(time.Hour))
	if got[v1alpha1.BenchmarkRunning] != 29*time.Second || got[v1alpha1.BenchmarkCompleted] != 0 {
		t.Errorf("ended: %v", got)
	}
	if _, ok := got[v1alpha1.BenchmarkCompleted]; !ok {
		t.Error("the terminal phase is not listed")
	}
}

// readBenchmark loads a Benchmark recorded from real runs (operator/internal/report/testdata/README.md says how).
func readBenchmark(t *testing.T, name string) *v1alpha1.Benchmark {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "report", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.Benchmark{}
	if err := yaml.Unmarshal(raw, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func gather(t *testing.T, objs ...*v1alpha1.Benchmark) map[string]*dto.MetricFamily {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(s)
	for _, o := range objs {
		b.WithObjects(o)
	}
	reg := prometheus.NewRegistry()
	if err := Register(reg, b.Build()); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// TestRecordedBenchmarks: the series of Benchmarks recorded from real runs say what their status says.
func TestRecordedBenchmarks(t *testing.T) {
	pair, failed := readBenchmark(t, "pair.yaml"), readBenchmark(t, "failed.yaml")
	fams := gather(t, pair, failed)
	target := func(name string) map[string]string {
		return map[string]string{"namespace": pair.Namespace, "benchmark": pair.Name, "target": name}
	}
	// The expected values are read from the recorded status, so that a new capture needs no edit here.
	status := func(name string) v1alpha1.TargetStatus {
		for _, ts := range pair.Status.Targets {
			if ts.Name == name {
				return ts
			}
		}
		t.Fatalf("no target %s in pair.yaml", name)
		return v1alpha1.TargetStatus{}
	}
	fig := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("figure %q: %v", s, err)
		}
		return v
	}
	my, in := status("myrocks"), status("innodb")
	checks := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"zns_mysql_benchmark_result_tps", target("myrocks"), fig(my.Mean.TPS)},
		{"zns_mysql_benchmark_result_tps", target("innodb"), fig(in.Mean.TPS)},
		{"zns_mysql_benchmark_result_ratio_to_baseline", merge(target("myrocks"), "figure", "tps"), fig(my.VsBaseline.TPS)},
		{"zns_mysql_benchmark_result_p_value", merge(target("myrocks"), "figure", "tps"), fig(my.VsBaseline.TPSPValue)},
		{"zns_mysql_benchmark_result_ci95_half_width", merge(target("innodb"), "figure", "latency"), fig(in.AcrossRuns.LatencyPctCI95Ms)},
		{"zns_mysql_benchmark_result_latency_milliseconds", merge(target("myrocks"), "quantile", "p95"), fig(my.Mean.LatencyP95Ms)},
		{"zns_mysql_benchmark_result_latency_milliseconds", merge(target("myrocks"), "quantile", "p99.9"), fig(my.Mean.LatencyP999Ms)},
		{"zns_mysql_benchmark_phase", map[string]string{"benchmark": pair.Name, "phase": "Completed"}, 1},
		{"zns_mysql_benchmark_phase", map[string]string{"benchmark": pair.Name, "phase": "Running"}, 0},
		{"zns_mysql_benchmark_target_failed", map[string]string{"benchmark": failed.Name, "target": "ghost", "reason": "ConnectionFailed"}, 1},
	}
	for _, c := range checks {
		got, ok := Lookup(fams, c.family, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	if got, _ := Lookup(fams, "zns_mysql_benchmark_result_tps", target("myrocks")); got == 0 {
		t.Fatal("no result")
	}
	m, _ := Lookup(fams, "zns_mysql_benchmark_result_tps", map[string]string{"benchmark": pair.Name, "target": "myrocks", "stack": "rocksdb/volume"})
	if m != fig(my.Mean.TPS) {
		t.Errorf("the stack label of myrocks is not rocksdb/volume")
	}
	// The spec's percentile (95) is the histogram's p95: one series, not two.
	n := 0
	for _, mm := range fams["zns_mysql_benchmark_result_latency_milliseconds"].GetMetric() {
		labels := map[string]string{}
		for _, l := range mm.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["benchmark"] == pair.Name && labels["target"] == "myrocks" {
			n++
		}
	}
	if n != 6 { // avg, max, p50, p95, p99, p99.9
		t.Errorf("%d latency series for myrocks, want 6", n)
	}
	if fams["zns_mysql_benchmark_live_tps"] != nil {
		t.Error("live series for Benchmarks that are not running")
	}
}

func merge(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

// TestRegisterTwice: a restarted manager in the same process registers again and the new reader is used.
func TestRegisterTwice(t *testing.T) {
	pair := readBenchmark(t, "pair.yaml")
	s := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(s)
	reg := prometheus.NewRegistry()
	if err := Register(reg, fake.NewClientBuilder().WithScheme(s).Build()); err != nil {
		t.Fatal(err)
	}
	if err := Register(reg, fake.NewClientBuilder().WithScheme(s).WithObjects(pair).Build()); err != nil {
		t.Fatalf("second registration: %v", err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range fams {
		found = found || f.GetName() == "zns_mysql_benchmark_result_tps"
	}
	if !found {
		t.Error("the second reader is not the one collected")
	}
}
