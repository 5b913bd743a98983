package benchplan

import (
	"math"
	"strconv"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/significance"
)

// Decimal formats a figure for status: fixed two decimals reads well in kubectl and compares as a number.
func Decimal(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// positive formats a figure that is absent when zero (a runner without --histogram reports none).
func positive(v float64) string {
	if v <= 0 {
		return ""
	}
	return Decimal(v)
}

// seconds formats a duration in seconds as sysbench prints it (four decimals); empty when unknown.
func seconds(v float64) string {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// ratio formats a/b with three decimals; empty when b is zero or either is unknown.
func ratio(a, b float64, known bool) string {
	if !known || b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return ""
	}
	return strconv.FormatFloat(a/b, 'f', 3, 64)
}

// IterationResult turns a runner summary into the status figures of one run.
func IterationResult(iteration int32, s benchresult.Summary, seriesConfigMap string) v1alpha1.IterationResult {
	r := v1alpha1.IterationResult{
		Iteration:       iteration,
		Transactions:    s.Transactions,
		SeriesConfigMap: seriesConfigMap,
		DataBytes:       s.DataBytes,
		StartTime:       s.StartTime,
		EndTime:         s.EndTime,
		DurationSec:     seconds(s.DurationSec),
		RunFigures: v1alpha1.RunFigures{
			TPS:              Decimal(s.TPS),
			QPS:              Decimal(s.QPS),
			LatencyAvgMs:     Decimal(s.LatencyAvgMS),
			LatencyPctMs:     Decimal(s.LatencyPctMS),
			LatencyMaxMs:     Decimal(s.LatencyMaxMS),
			LatencyP50Ms:     positive(s.LatencyP50MS),
			LatencyP95Ms:     positive(s.LatencyP95MS),
			LatencyP99Ms:     positive(s.LatencyP99MS),
			LatencyP999Ms:    positive(s.LatencyP999MS),
			ErrorsPerSec:     Decimal(s.ErrorsPerSec),
			ReconnectsPerSec: Decimal(s.ReconnectsPerSec),
			TPSRelDevPct:     Decimal(s.TPSRelDevPct),
			LatencyRelDevPct: Decimal(s.LatencyRelDevPct),
		},
	}
	r.Operations = ycsbOperations(s)
	// A deviation across fewer than two intervals is no figure at all, not a perfect 0.00.
	if s.Intervals < 2 {
		r.TPSRelDevPct, r.LatencyRelDevPct = "", ""
	}
	if s.Device != "" {
		r.DeviceWrittenBytes = strconv.FormatInt(s.DeviceWrittenBytes, 10)
		if s.Transactions > 0 {
			r.BytesPerTransaction = Decimal(s.BytesPerTransaction)
		}
	}
	return r
}

// figure reads a status figure back; ok is false when it is empty.
func figure(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// meanFigures averages each figure over the iterations that have it. Device figures are averaged only when
// every iteration has them, so that a mean never silently covers part of the runs.
func meanFigures(its []v1alpha1.IterationResult) *v1alpha1.RunFigures {
	if len(its) == 0 {
		return nil
	}
	get := []func(*v1alpha1.RunFigures) *string{
		func(f *v1alpha1.RunFigures) *string { return &f.TPS },
		func(f *v1alpha1.RunFigures) *string { return &f.QPS },
		func(f *v1alpha1.RunFigures) *string { return &f.LatencyAvgMs },
		func(f *v1alpha1.RunFigures) *string { return &f.LatencyPctMs },
		func(f *v1alpha1.RunFigures) *string { return &f.LatencyMaxMs },
		func(f *v1alpha1.RunFigures) *string { return &f.LatencyP50Ms },
		func(f *v1alpha1.RunFigures) *string { return &f.LatencyP95Ms },
		func(f *v1alpha1.RunFigures) *string { return &f.LatencyP99Ms },
		func(f *v1alpha1.RunFigures) *string { return &f.LatencyP999Ms },
		func(f *v1alpha1.RunFigures) *string { return &f.ErrorsPerSec },
		func(f *v1alpha1.RunFigures) *string { return &f.ReconnectsPerSec },
		func(f *v1alpha1.RunFigures) *string { return &f.TPSRelDevPct },
		func(f *v1alpha1.RunFigures) *string { return &f.LatencyRelDevPct },
		func(f *v1alpha1.RunFigures) *string { return &f.DeviceWrittenBytes },
		func(f *v1alpha1.RunFigures) *string { return &f.BytesPerTransaction },
	}
	out := &v1alpha1.RunFigures{}
	for _, g := range get {
		sum, n := 0.0, 0
		for i := range its {
			if v, ok := figure(*g(&its[i].RunFigures)); ok {
				sum += v
				n++
			}
		}
		if n == len(its) {
			*g(out) = Decimal(sum / float64(n))
		}
	}
	return out
}

// runsSummary is what a target's runs (at one thread count) come to: their mean, their spread and the runs.
type runsSummary struct {
	mean   *v1alpha1.RunFigures
	spread *v1alpha1.RunSpread
	runs   []v1alpha1.IterationResult
}

func summarizeRuns(its []v1alpha1.IterationResult) runsSummary {
	return runsSummary{mean: meanFigures(its), spread: runSpread(its), runs: its}
}

// values reads one figure of every run that has it.
func values(its []v1alpha1.IterationResult, get func(*v1alpha1.RunFigures) string) []float64 {
	var out []float64
	for i := range its {
		if v, ok := figure(get(&its[i].RunFigures)); ok {
			out = append(out, v)
		}
	}
	return out
}

func tpsOf(f *v1alpha1.RunFigures) string        { return f.TPS }
func latencyPctOf(f *v1alpha1.RunFigures) string { return f.LatencyPctMs }

// runSpread is the best run and the confidence intervals of the mean across its.
func runSpread(its []v1alpha1.IterationResult) *v1alpha1.RunSpread {
	if len(its) == 0 {
		return nil
	}
	out := &v1alpha1.RunSpread{Runs: int32(len(its))}
	best := math.Inf(-1)
	for i := range its {
		if v, ok := figure(its[i].TPS); ok && v > best {
			best, out.BestIteration = v, its[i].Iteration
		}
	}
	tps := significance.Summarize(values(its, tpsOf))
	lat := significance.Summarize(values(its, latencyPctOf))
	if tps.N > 0 {
		out.BestTPS = Decimal(tps.Max)
	}
	if lat.N > 0 {
		out.BestLatencyPctMs = Decimal(lat.Min)
	}
	if tps.HasCI() {
		out.TPSCI95 = Decimal(tps.CI95)
		if tps.Mean != 0 {
			out.TPSRunRelDevPct = Decimal(tps.SD / tps.Mean * 100)
		}
	}
	if lat.HasCI() {
		out.LatencyPctCI95Ms = Decimal(lat.CI95)
	}
	return out
}

// ratios compares a target's runs with the baseline's: the means, best-to-best, and whether the TPS and
// latency differences are larger than the runs' noise (not for the baseline itself: comparing runs with
// themselves tests nothing).
func ratios(target, baseline runsSummary, self bool) *v1alpha1.Ratios {
	t, b := target.mean, baseline.mean
	if t == nil || b == nil {
		return nil
	}
	pair := func(a, b string) string {
		x, okx := figure(a)
		y, oky := figure(b)
		return ratio(x, y, okx && oky)
	}
	r := &v1alpha1.Ratios{
		TPS:                 pair(t.TPS, b.TPS),
		LatencyPct:          pair(t.LatencyPctMs, b.LatencyPctMs),
		LatencyAvg:          pair(t.LatencyAvgMs, b.LatencyAvgMs),
		BytesPerTransaction: pair(t.BytesPerTransaction, b.BytesPerTransaction),
	}
	if ts, bs := target.spread, baseline.spread; ts != nil && bs != nil {
		r.BestTPS = pair(ts.BestTPS, bs.BestTPS)
		r.BestLatencyPct = pair(ts.BestLatencyPctMs, bs.BestLatencyPctMs)
	}
	if self {
		return r
	}
	tps := significance.Compare(values(target.runs, tpsOf), values(baseline.runs, tpsOf), significance.HigherIsBetter)
	lat := significance.Compare(values(target.runs, latencyPctOf), values(baseline.runs, latencyPctOf), significance.LowerIsBetter)
	r.TPSVerdict, r.TPSPValue = v1alpha1.Verdict(tps.Verdict), significance.FormatP(tps.P)
	r.LatencyPctVerdict, r.LatencyPctPValue = v1alpha1.Verdict(lat.Verdict), significance.FormatP(lat.P)
	return r
}
