package benchplan

import (
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

func TestYCSBOperationsOfRuns(t *testing.T) {
	run := func(readOps float64, updP99 float64, rmw bool) v1alpha1.IterationResult {
		s := benchresult.Summary{Tool: benchresult.ToolYCSB, Ops: []benchresult.OpFigures{
			{Op: "READ", Count: 100, OPS: readOps, AvgMS: 0.5, P99MS: 1},
			{Op: "UPDATE", Count: 101, OPS: readOps, P99MS: updP99, Errors: 3},
		}}
		if rmw {
			s.Ops = append(s.Ops, benchresult.OpFigures{Op: "READ_MODIFY_WRITE", Count: 7, OPS: 1, P99MS: 4})
		}
		return IterationResult(1, s, "")
	}
	one := run(900, 10, false)
	if len(one.Operations) != 2 || one.Operations[1].LatencyP99Ms != "10.000" || one.Operations[1].Errors != 3 ||
		one.Operations[0].OpsPerSec != "900.00" || one.Operations[0].LatencyP50Ms != "" {
		t.Errorf("one run: %+v (a figure the runner did not give must stay empty)", one.Operations)
	}
	m := meanOperations([]v1alpha1.IterationResult{one, run(700, 20, true)})
	if len(m) != 3 || m[0].Operation != "READ" || m[1].Operation != "READ_MODIFY_WRITE" || m[2].Operation != "UPDATE" {
		t.Fatalf("mean: %+v", m)
	}
	if m[0].OpsPerSec != "800.00" || m[2].LatencyP99Ms != "15.000" || m[2].Count != 101 || m[2].Errors != 3 || m[0].LatencyAvgMs != "0.500" {
		t.Errorf("mean figures: %+v", m)
	}
	// READ_MODIFY_WRITE is in one run only: its mean is that run's.
	if m[1].Count != 7 || m[1].LatencyP99Ms != "4.000" {
		t.Errorf("a type of one run: %+v", m[1])
	}
	if meanOperations(nil) != nil || ycsbOperations(benchresult.Summary{}) != nil {
		t.Error("a sysbench run has operations")
	}
}
