package ycsb

// Operation types as go-ycsb names them.
const (
	OpRead            = "READ"
	OpUpdate          = "UPDATE"
	OpInsert          = "INSERT"
	OpScan            = "SCAN"
	OpReadModifyWrite = "READ_MODIFY_WRITE"
)

// Totals are a run's figures over all its operation types.
type Totals struct {
	// Count and OPS of the successful operations, Errors of the failed ones.
	Count  int64
	OPS    float64
	Errors int64
	// AvgMS is the mean latency weighted by each type's count.
	AvgMS float64
	// WorstP95MS and WorstP99MS are the highest p95 and p99 of any type: go-ycsb keeps a histogram per type and
	// prints none over all of them, and the slowest type is what bounds the mix's tail.
	WorstP95MS, WorstP99MS float64
	MaxMS                  float64
	// P95MS, P99MS and P999MS are over all operations, from the TOTAL line (FromTotal); without one, 0.
	P95MS, P99MS, P999MS float64
	FromTotal            bool
}

// Sum is a run's figures over all operation types: from go-ycsb's TOTAL line when it printed one (a histogram
// over every database operation, so its percentiles are true ones), else added up from the types.
func Sum(r *Result) Totals {
	t := sumTypes(r)
	if tot := r.Total; tot != nil {
		t.Count, t.OPS, t.AvgMS, t.MaxMS = tot.Count, tot.OPS, tot.AvgMS, tot.MaxMS
		t.P95MS, t.P99MS, t.P999MS = tot.Percentiles[95], tot.Percentiles[99], tot.Percentiles[99.9]
		t.FromTotal = true
	}
	return t
}

// sumTypes adds up a result's operation types. A READ_MODIFY_WRITE is a read and an update that go-ycsb also counts
// under READ and UPDATE, so it is left out of Count and OPS (it would count those operations twice) but kept in
// the latencies.
func sumTypes(r *Result) Totals {
	var t Totals
	var weighted float64
	var counted int64
	for _, o := range r.Ops {
		t.Errors += o.Errors
		t.WorstP95MS = max(t.WorstP95MS, o.Percentiles[95])
		t.WorstP99MS = max(t.WorstP99MS, o.Percentiles[99])
		t.MaxMS = max(t.MaxMS, o.MaxMS)
		if o.Name == OpReadModifyWrite {
			continue
		}
		t.Count += o.Count
		t.OPS += o.OPS
		weighted += o.AvgMS * float64(o.Count)
		counted += o.Count
	}
	if counted > 0 {
		t.AvgMS = weighted / float64(counted)
	}
	return t
}
