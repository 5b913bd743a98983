package benchresult

import (
	"math"
	"strings"
	"testing"
)

// TestOpsFitTheBudget: a YCSB run with every operation type, each with its errors, and a long error text still
// fits the termination message, with every figure kept.
func TestOpsFitTheBudget(t *testing.T) {
	s := Summary{Phase: PhaseRun, Tool: ToolYCSB, Target: strings.Repeat("t", 46), Workload: "f", Threads: 4096,
		TPS: 123456.7, Transactions: math.MaxInt32, Error: strings.Repeat("x", 5000)}
	for _, op := range []string{"READ", "UPDATE", "INSERT", "SCAN", "READ_MODIFY_WRITE"} {
		s.Ops = append(s.Ops, OpFigures{Op: op, Count: math.MaxInt32, OPS: 123456.7, AvgMS: 12345.678, P50MS: 12345.678,
			P90MS: 12345.678, P95MS: 12345.678, P99MS: 12345.678, P999MS: 12345.678, MaxMS: 12345.678, Errors: math.MaxInt32})
	}
	s.Ops[0].P99MS = math.NaN()
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxBytes {
		t.Fatalf("%d bytes", len(b))
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Ops) != 5 || got.Ops[4].Op != "READ_MODIFY_WRITE" || got.Ops[4].Errors != math.MaxInt32 || got.Ops[1].P999MS != 12345.678 {
		t.Errorf("ops after the round trip: %+v", got.Ops)
	}
	if got.Ops[0].P99MS != 0 || !math.IsNaN(s.Ops[0].P99MS) {
		t.Errorf("NaN: encoded as %v, and the caller's value became %v (it must be left alone)", got.Ops[0].P99MS, s.Ops[0].P99MS)
	}
	if got.Tool != ToolYCSB || got.Error == "" {
		t.Errorf("tool %q, error %q", got.Tool, got.Error)
	}
}
