package opmetrics

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// TestYCSBOperations: a YCSB Benchmark's per-operation means are series labelled by operation; a sysbench
// Benchmark has none.
func TestYCSBOperations(t *testing.T) {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "ycsb"},
		Spec: v1alpha1.BenchmarkSpec{Tool: v1alpha1.ToolYCSB},
		Status: v1alpha1.BenchmarkStatus{Phase: v1alpha1.BenchmarkCompleted, Targets: []v1alpha1.TargetStatus{{
			Name: "zns", Engine: "rocksdb", Storage: "zonedDevice", State: v1alpha1.TargetDone,
			YCSB: &v1alpha1.YCSBTargetStatus{RecordCount: 10, Operations: []v1alpha1.YCSBOperation{
				{Operation: "READ", OpsPerSec: "900.50", LatencyP99Ms: "1.250", LatencyP999Ms: "6.000"},
				{Operation: "UPDATE", OpsPerSec: "880.00", LatencyP99Ms: "10.500", Errors: 2},
			}}}}}}
	fams := gather(t, b, readBenchmark(t, "pair.yaml"))
	l := func(op string, kv ...string) map[string]string {
		m := map[string]string{"benchmark": "ycsb", "target": "zns", "operation": op}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"zns_mysql_benchmark_result_ycsb_operations_per_second", l("READ"), 900.5},
		{"zns_mysql_benchmark_result_ycsb_latency_milliseconds", l("UPDATE", "quantile", "p99"), 10.5},
		{"zns_mysql_benchmark_result_ycsb_latency_milliseconds", l("READ", "quantile", "p99.9"), 6},
		{"zns_mysql_benchmark_result_ycsb_errors", l("UPDATE"), 2},
	} {
		if got, ok := Lookup(fams, c.family, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	if _, ok := Lookup(fams, "zns_mysql_benchmark_result_ycsb_latency_milliseconds", l("UPDATE", "quantile", "p99.9")); ok {
		t.Error("a figure the status lacks became a series")
	}
	for _, m := range fams["zns_mysql_benchmark_result_ycsb_operations_per_second"].GetMetric() {
		for _, lb := range m.GetLabel() {
			if lb.GetName() == "benchmark" && lb.GetValue() != "ycsb" {
				t.Errorf("a sysbench Benchmark has YCSB series: %v", m)
			}
		}
	}
}
