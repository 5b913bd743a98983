// Package benchstat computes the per-run figures of the seed methodology
// from sysbench's interval reports: the relative deviation of TPS and of the
// percentile latency across intervals (the seeds' QoS figure), their ranges,
// and bytes written to the device per transaction. It is pure.
package benchstat

import (
	"math"

	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
)

// Spread describes one quantity across report intervals.
type Spread struct {
	// N is the number of intervals the figures are computed over.
	N    int
	Mean float64
	// RelDevPct is the population standard deviation over the mean, in
	// percent; 0 when N < 2 or the mean is 0 (no spread to speak of, and
	// dividing by a zero mean has no meaning).
	RelDevPct float64
	Min, Max  float64
}

// Of returns the spread of xs. Non-finite values are skipped: they cannot
// come from sysbench's two-decimal output and would poison every figure.
func Of(xs []float64) Spread {
	var s Spread
	var sum float64
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		if s.N == 0 || x < s.Min {
			s.Min = x
		}
		if s.N == 0 || x > s.Max {
			s.Max = x
		}
		s.N++
		sum += x
	}
	if s.N == 0 {
		return s
	}
	s.Mean = sum / float64(s.N)
	if s.N < 2 || s.Mean == 0 {
		return s
	}
	var ss float64
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		d := x - s.Mean
		ss += d * d
	}
	s.RelDevPct = math.Sqrt(ss/float64(s.N)) / math.Abs(s.Mean) * 100
	return s
}

// Run is the interval statistics of one sysbench run.
type Run struct {
	// Intervals is the number of interval lines.
	Intervals int
	TPS       Spread
	// Latency is over the intervals in which at least one transaction
	// completed: sysbench prints a percentile of 0.00 for an interval with
	// no completed event (a stall), which is not a latency. The stall still
	// counts in TPS, as a zero.
	Latency Spread
	// Percentile is the latency label of the intervals (95 for "lat
	// (ms,95%)"); 0 if there were none or sysbench ran with --percentile=0,
	// in which case Latency is left empty.
	Percentile float64
}

// FromIntervals computes Run over every interval sysbench printed. The first
// interval is kept: the seeds' deviation figures are over whole runs, and
// dropping a warm-up would hide exactly the instability they compare. No
// partial interval needs excluding: sysbench silences the reporter before the
// final summary, so the tail after the last full interval (e.g. 4-5 s with
// --time=5 --report-interval=2) is never printed, and neither 1.0.20 nor 1.1
// prints a shorter last interval.
func FromIntervals(ivs []sysbench.Interval) Run {
	r := Run{Intervals: len(ivs)}
	tps := make([]float64, 0, len(ivs))
	lat := make([]float64, 0, len(ivs))
	for _, iv := range ivs {
		tps = append(tps, iv.TPS)
		if iv.Percentile > 0 {
			r.Percentile = iv.Percentile
			if iv.TPS > 0 || iv.LatencyMS > 0 {
				lat = append(lat, iv.LatencyMS)
			}
		}
	}
	r.TPS = Of(tps)
	if r.Percentile > 0 {
		r.Latency = Of(lat)
	}
	return r
}

// BytesPerTransaction divides the device's written bytes by the run's
// transactions; ok is false when there were no transactions.
func BytesPerTransaction(writtenBytes, transactions int64) (perTx float64, ok bool) {
	if transactions <= 0 || writtenBytes < 0 {
		return 0, false
	}
	return float64(writtenBytes) / float64(transactions), true
}

// tQuantile975 is Student's t distribution's 97.5% quantile for 1..30 degrees of freedom.
var tQuantile975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// MeanCI95 is the mean of a sample and the half-width of its two-sided 95% confidence interval (Student's t with
// the sample standard deviation: the sample is small, and its spread is estimated from itself). ok is false for
// fewer than two finite values, which give no interval.
func MeanCI95(xs []float64) (mean, halfWidth float64, ok bool) {
	var finite []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			finite = append(finite, x)
		}
	}
	n := len(finite)
	if n == 0 {
		return 0, 0, false
	}
	for _, x := range finite {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return mean, 0, false
	}
	var ss float64
	for _, x := range finite {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := 1.960
	if df := n - 1; df <= len(tQuantile975) {
		t = tQuantile975[df-1]
	}
	return mean, t * sd / math.Sqrt(float64(n)), true
}
