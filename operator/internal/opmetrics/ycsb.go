package opmetrics

import (
	"github.com/prometheus/client_golang/prometheus"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// A YCSB Benchmark's figures per operation type (status.targets[].ycsb.operations: means over the finished runs),
// labelled by operation (READ, UPDATE, INSERT, SCAN, READ_MODIFY_WRITE). The Benchmark-wide families above carry
// its figures over all operations.
var (
	descYCSBOps = newDesc(Namespace+"_benchmark_result_ycsb_operations_per_second",
		"A YCSB Benchmark's mean successful operations per second of each operation type over the finished runs.",
		append(targetLabels, "operation"), nil)
	descYCSBLatency = newDesc(Namespace+"_benchmark_result_ycsb_latency_milliseconds",
		"A YCSB Benchmark's mean latency of each operation type over the finished runs: avg, max, p50, p90, p95, p99, p99.9.",
		append(targetLabels, "operation", "quantile"), nil)
	descYCSBErrors = newDesc(Namespace+"_benchmark_result_ycsb_errors",
		"A YCSB Benchmark's failed operations of each operation type, mean per run.", append(targetLabels, "operation"), nil)
	ycsbDescs = []*prometheus.Desc{descYCSBOps, descYCSBLatency, descYCSBErrors}
)

// collectYCSB exports a target's per-operation figures; nothing for a target without them.
func collectYCSB(ch chan<- prometheus.Metric, t *v1alpha1.TargetStatus, tl []string) {
	if t.YCSB == nil {
		return
	}
	for _, o := range t.YCSB.Operations {
		ol := append(append([]string(nil), tl...), o.Operation)
		emit(ch, descYCSBOps, o.OpsPerSec, ol...)
		ch <- gauge(descYCSBErrors, float64(o.Errors), ol...)
		for q, v := range map[string]string{"avg": o.LatencyAvgMs, "max": o.LatencyMaxMs, "p50": o.LatencyP50Ms, "p90": o.LatencyP90Ms,
			"p95": o.LatencyP95Ms, "p99": o.LatencyP99Ms, "p99.9": o.LatencyP999Ms} {
			emit(ch, descYCSBLatency, v, append(ol, q)...)
		}
	}
}
