package benchresult

import "math"

// ToolYCSB marks a Summary of a go-ycsb phase (Summary.Tool); empty is sysbench.
const ToolYCSB = "ycsb"

// OpFigures is one YCSB operation type's figures in a run's Summary. The JSON names are short because five
// operation types must fit in the termination message's budget (MaxBytes) beside everything else.
type OpFigures struct {
	// Op is go-ycsb's name: READ, UPDATE, INSERT, SCAN, READ_MODIFY_WRITE.
	Op string `json:"op"`
	// Count of successful operations and their rate per second.
	Count int64   `json:"n,omitempty"`
	OPS   float64 `json:"ops,omitempty"`
	// Latencies of successful operations, milliseconds.
	AvgMS  float64 `json:"avg,omitempty"`
	P50MS  float64 `json:"p50,omitempty"`
	P90MS  float64 `json:"p90,omitempty"`
	P95MS  float64 `json:"p95,omitempty"`
	P99MS  float64 `json:"p99,omitempty"`
	P999MS float64 `json:"p999,omitempty"`
	MaxMS  float64 `json:"max,omitempty"`
	// Errors is how many operations of this type failed (go-ycsb's <OP>_ERROR line).
	Errors int64 `json:"err,omitempty"`
}

func (o *OpFigures) sanitize() {
	for _, f := range []*float64{&o.OPS, &o.AvgMS, &o.P50MS, &o.P90MS, &o.P95MS, &o.P99MS, &o.P999MS, &o.MaxMS} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
}
