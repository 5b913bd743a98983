package benchplan

import (
	"math"
	"sort"
	"strconv"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/ycsb"
)

// IsYCSB says whether the Benchmark runs go-ycsb.
func IsYCSB(b *v1alpha1.Benchmark) bool {
	return b.Spec.Tool == v1alpha1.ToolYCSB && b.Spec.YCSB != nil
}

// resolveYCSB fixes a target's record count before its load: the number given, or the share of the usable capacity
// its ZNSDatabase reports now. It is kept in status so that the load, the verify and the runs use one count even
// when the device's figures move. false when the target failed because no count can be made.
func (p *Plan) resolveYCSB(b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase) bool {
	if !IsYCSB(b) || ts.YCSB != nil && ts.YCSB.RecordCount > 0 {
		return true
	}
	st, err := resources.YCSBRecords(b.Spec.YCSB, db)
	if err != nil {
		p.failTarget(ts, event.PrepareFailed, failreason.Other, "YCSB load not started: "+err.Error())
		return false
	}
	ts.YCSB = st
	return true
}

// expectedRows is what the verify must find: the YCSB records resolved for the target, or sysbench's tables x
// tableSize (admission bounds that product to 10^10).
func expectedRows(b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus) (int64, string) {
	if IsYCSB(b) {
		var n int64
		if ts.YCSB != nil {
			n = ts.YCSB.RecordCount
		}
		return n, strconv.FormatInt(n, 10) + " YCSB records"
	}
	want := int64(b.Spec.Tables) * b.Spec.TableSize
	return want, strconv.Itoa(int(b.Spec.Tables)) + " tables x " + strconv.FormatInt(b.Spec.TableSize, 10) + " rows = " + strconv.FormatInt(want, 10)
}

// ycsbOperations are a YCSB run's figures per operation type, for its iteration result.
func ycsbOperations(s benchresult.Summary) []v1alpha1.YCSBOperation {
	var out []v1alpha1.YCSBOperation
	for _, o := range s.Ops {
		out = append(out, v1alpha1.YCSBOperation{Operation: o.Op, Count: o.Count, OpsPerSec: Decimal(o.OPS),
			LatencyAvgMs: millis(o.AvgMS), LatencyP50Ms: millis(o.P50MS), LatencyP90Ms: millis(o.P90MS),
			LatencyP95Ms: millis(o.P95MS), LatencyP99Ms: millis(o.P99MS), LatencyP999Ms: millis(o.P999MS),
			LatencyMaxMs: millis(o.MaxMS), Errors: o.Errors})
	}
	return out
}

// meanOperations averages each operation type's figures over the runs that have that type; counts are the mean
// rounded down. A figure missing from one of those runs is left out, as meanFigures does.
func meanOperations(its []v1alpha1.IterationResult) []v1alpha1.YCSBOperation {
	byOp := map[string][]v1alpha1.YCSBOperation{}
	for _, it := range its {
		for _, o := range it.Operations {
			byOp[o.Operation] = append(byOp[o.Operation], o)
		}
	}
	var out []v1alpha1.YCSBOperation
	for name, runs := range byOp {
		m := v1alpha1.YCSBOperation{Operation: name}
		var count, errs int64
		for _, r := range runs {
			count += r.Count
			errs += r.Errors
		}
		m.Count, m.Errors = count/int64(len(runs)), errs/int64(len(runs))
		for i, g := range []func(*v1alpha1.YCSBOperation) *string{
			func(o *v1alpha1.YCSBOperation) *string { return &o.OpsPerSec },
			func(o *v1alpha1.YCSBOperation) *string { return &o.LatencyAvgMs },
			func(o *v1alpha1.YCSBOperation) *string { return &o.LatencyP50Ms },
			func(o *v1alpha1.YCSBOperation) *string { return &o.LatencyP90Ms },
			func(o *v1alpha1.YCSBOperation) *string { return &o.LatencyP95Ms },
			func(o *v1alpha1.YCSBOperation) *string { return &o.LatencyP99Ms },
			func(o *v1alpha1.YCSBOperation) *string { return &o.LatencyP999Ms },
			func(o *v1alpha1.YCSBOperation) *string { return &o.LatencyMaxMs },
		} {
			sum, n := 0.0, 0
			for i := range runs {
				if v, ok := figure(*g(&runs[i])); ok {
					sum += v
					n++
				}
			}
			switch {
			case n < len(runs):
			case i == 0:
				*g(&m) = Decimal(sum / float64(n))
			default:
				*g(&m) = millis(sum / float64(n))
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Operation < out[j].Operation })
	return out
}

// millis formats a YCSB latency: three decimals, the microsecond go-ycsb measures in (sub-millisecond reads are
// common, and two decimals would round them by up to 5%); absent when zero.
func millis(v float64) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// ycsbLoadThreads are the go-ycsb threads of db's load (one on MyRocks: ycsb.LoadThreads); 0 for sysbench.
func ycsbLoadThreads(b *v1alpha1.Benchmark, db *v1alpha1.ZNSDatabase) int {
	if !IsYCSB(b) {
		return 0
	}
	return ycsb.LoadThreads(string(db.Spec.Engine), int(b.Spec.YCSB.LoadThreads))
}
