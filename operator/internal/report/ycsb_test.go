package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// ycsbBench is a completed YCSB thread sweep of two targets, as the operator records it: per run, per thread
// count and per target, each operation type's figures.
func ycsbBench() *v1alpha1.Benchmark {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "study"},
		Spec: v1alpha1.BenchmarkSpec{Tool: v1alpha1.ToolYCSB, Threads: 16, ThreadSweep: []int32{4, 16}, Iterations: 1, DurationSeconds: 60,
			Targets: []v1alpha1.BenchmarkTarget{{Name: "zns"}, {Name: "xfs"}},
			YCSB: &v1alpha1.YCSBSpec{Workload: "a", RecordCount: intstr.FromString("60%"), FieldCount: 1, FieldLength: 4096,
				RequestDistribution: "uniform", TargetOpsPerSecond: 8000}},
		Status: v1alpha1.BenchmarkStatus{Phase: v1alpha1.BenchmarkCompleted, Baseline: "xfs", Iteration: 2}}
	op := func(name, ops, p99 string, errs int64) v1alpha1.YCSBOperation {
		return v1alpha1.YCSBOperation{Operation: name, Count: 1000, OpsPerSec: ops, LatencyAvgMs: "0.500", LatencyP50Ms: "0.400",
			LatencyP90Ms: "0.900", LatencyP95Ms: "1.200", LatencyP99Ms: p99, LatencyP999Ms: "9.000", LatencyMaxMs: "20.000", Errors: errs}
	}
	for _, tc := range []struct {
		name     string
		p99At4   string
		p99At16  string
		readOps  string
		records  int64
		failures int64
	}{{"zns", "2.000", "3.000", "900.00", 5000000, 0}, {"xfs", "4.000", "12.000", "700.00", 4000000, 3}} {
		ts := v1alpha1.TargetStatus{Name: tc.name, State: v1alpha1.TargetDone,
			Mean: &v1alpha1.RunFigures{TPS: "1800.00"}}
		for i, th := range b.Spec.ThreadSweep {
			p99 := []string{tc.p99At4, tc.p99At16}[i]
			ops := []v1alpha1.YCSBOperation{op("READ", tc.readOps, "1.000", 0), op("UPDATE", tc.readOps, p99, tc.failures)}
			ts.Iterations = append(ts.Iterations, v1alpha1.IterationResult{Iteration: int32(i + 1), Threads: th, Operations: ops})
			ts.Sweep = append(ts.Sweep, v1alpha1.SweepPoint{Threads: th, Mean: &v1alpha1.RunFigures{TPS: "1800.00"}, Operations: ops})
		}
		ts.YCSB = &v1alpha1.YCSBTargetStatus{RecordCount: tc.records, Operations: ts.Sweep[1].Operations}
		b.Status.Targets = append(b.Status.Targets, ts)
	}
	return b
}

func TestYCSBTable(t *testing.T) {
	var buf bytes.Buffer
	if err := Table(&buf, ycsbBench()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"benchmark lab/study: YCSB workload a, 60% records of 1 x 4096 bytes, uniform, 4,16 threads at 8000 ops/s, 2 x 60 s; Completed",
		"YCSB operations (means over the runs",
		"YCSB operations by thread count (tail latency against throughput):",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	// Each target's update row, with its own records, rate, p99 and errors; each sweep point's.
	for _, want := range [][]string{
		{"zns", "5000000", "UPDATE", "900.00", "0.500", "0.400", "1.200", "3.000", "9.000", "20.000", "0"},
		{"xfs", "4000000", "UPDATE", "700.00", "0.500", "0.400", "1.200", "12.000", "9.000", "20.000", "3"},
		{"xfs", "4", "UPDATE", "700.00", "1.200", "4.000", "9.000"},
		{"zns", "16", "READ", "900.00", "1.200", "1.000", "9.000"},
	} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			found = found || strings.Join(strings.Fields(line), " ") == strings.Join(want, " ")
		}
		if !found {
			t.Errorf("no row %q in:\n%s", want, out)
		}
	}
}

func TestYCSBExports(t *testing.T) {
	d, err := Collect(ycsbBench(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := OperationsCSV(&buf, d); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// 2 targets x 2 runs x 2 types, then 2 targets x 2 thread counts x 2 types of means.
	if len(rows) != 1+8+8 || rows[0][4] != "operation" || rows[0][11] != "latency_p99_ms" {
		t.Fatalf("%d rows, header %q", len(rows), rows[0])
	}
	want := "study,xfs,16,mean,UPDATE,1000,700.00,0.500,0.400,0.900,1.200,12.000,9.000,20.000,3"
	if got := strings.Join(rows[len(rows)-1], ","); got != want {
		t.Errorf("last row %q, want %q", got, want)
	}
	buf.Reset()
	if err := JSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var e Export
	if err := json.Unmarshal(buf.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if e.Tool != "ycsb" || e.YCSB == nil || e.YCSB.RecordCount.String() != "60%" || len(e.Runs) != 4 || len(e.Runs[0].Operations) != 2 ||
		e.Targets[1].YCSB == nil || e.Targets[1].YCSB.Operations[1].LatencyP99Ms != "12.000" || len(e.Targets[0].Sweep[0].Operations) != 2 {
		t.Errorf("JSON export: %s", buf.String())
	}
}
