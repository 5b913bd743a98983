// Package steadystate decides whether a series of per-round figures (IOPS of
// preconditioning rounds, TPS of benchmark rounds, a model's write
// amplification) has settled, by the rule of SNIA's Solid State Storage
// Performance Test Specification: over a window of the last rounds, the range
// of the figure and the excursion of its least-squares line must both be small
// against the window's average. It is pure.
package steadystate

import (
	"errors"
	"fmt"
	"math"
)

// Rule is the steady-state criterion. The limits are in percent of the
// window's average.
type Rule struct {
	// Window is the number of consecutive rounds judged together.
	Window int
	// RangePct bounds max-min over the window.
	RangePct float64
	// ExcursionPct bounds how far the fitted line moves across the window:
	// |slope| x (Window-1), the line's value at the last round minus at the
	// first.
	ExcursionPct float64
}

// DefaultRule is the specification's: 5 rounds, range within 20% and
// excursion within 10% of the average.
func DefaultRule() Rule { return Rule{Window: 5, RangePct: 20, ExcursionPct: 10} }

// Validate refuses a rule that cannot be judged: a window of one round has no
// range or slope, and a limit outside (0, 100] is either never met or no limit.
func (r Rule) Validate() error {
	var errs []error
	if r.Window < 2 {
		errs = append(errs, fmt.Errorf("steadystate: Window is %d, want at least 2", r.Window))
	}
	if !validPct(r.RangePct) {
		errs = append(errs, fmt.Errorf("steadystate: RangePct is %v, want more than 0 and at most 100", r.RangePct))
	}
	if !validPct(r.ExcursionPct) {
		errs = append(errs, fmt.Errorf("steadystate: ExcursionPct is %v, want more than 0 and at most 100", r.ExcursionPct))
	}
	return errors.Join(errs...)
}

// validPct is written so that NaN fails it.
func validPct(p float64) bool { return p > 0 && p <= 100 }

// Result is the judgement of one window.
type Result struct {
	Reached bool
	// Start is the index of the window's first round in the series; -1 when
	// the series is shorter than the window.
	Start int
	// Average, Range and Slope (per round) are in the unit of the figure.
	Average, Range, Slope float64
	// RangePct and ExcursionPct are Range and |Slope| x (Window-1) in percent
	// of |Average|.
	RangePct, ExcursionPct float64
	// Reason says why the window is or is not steady, with the figures.
	Reason string
}

// Evaluate judges the last Window rounds of ys (oldest first). An invalid
// rule is never reached; its Reason is the validation error.
func (r Rule) Evaluate(ys []float64) Result {
	if err := r.Validate(); err != nil {
		return Result{Start: -1, Reason: err.Error()}
	}
	if len(ys) < r.Window {
		return Result{Start: -1, Reason: fmt.Sprintf("fewer than %d rounds (%d)", r.Window, len(ys))}
	}
	return r.judge(ys, len(ys)-r.Window)
}

// FirstWindow returns the start of the first window of ys in which the rule
// holds (the specification's "steady state window"), or -1 if none does.
func (r Rule) FirstWindow(ys []float64) int {
	if r.Validate() != nil {
		return -1
	}
	for start := 0; start+r.Window <= len(ys); start++ {
		if r.judge(ys, start).Reached {
			return start
		}
	}
	return -1
}

// judge evaluates ys[start : start+Window] for a valid rule.
func (r Rule) judge(ys []float64, start int) Result {
	w := ys[start : start+r.Window]
	res := Result{Start: start}
	for i, y := range w {
		// A NaN would make every comparison false and so pass both limits.
		if math.IsNaN(y) || math.IsInf(y, 0) {
			res.Reason = fmt.Sprintf("round %d is %v, not a number to judge", start+i, y)
			return res
		}
	}
	lo, hi, sum := w[0], w[0], 0.0
	for _, y := range w {
		lo, hi, sum = math.Min(lo, y), math.Max(hi, y), sum+y
	}
	res.Average = sum / float64(len(w))
	res.Range = hi - lo
	res.Slope = slope(w, res.Average)
	if res.Average == 0 {
		// Percentages of a zero average have no meaning; a series of zeros
		// (a stalled device) is not a steady state worth reporting either.
		res.Reason = "the average is 0: no percentage to judge"
		return res
	}
	avg := math.Abs(res.Average)
	res.RangePct = res.Range * 100 / avg
	res.ExcursionPct = math.Abs(res.Slope) * float64(len(w)-1) * 100 / avg
	var failed []string
	if res.RangePct > r.RangePct {
		failed = append(failed, fmt.Sprintf("range %.1f%% of the average, limit %g%%", res.RangePct, r.RangePct))
	}
	if res.ExcursionPct > r.ExcursionPct {
		failed = append(failed, fmt.Sprintf("excursion %.1f%% of the average, limit %g%%", res.ExcursionPct, r.ExcursionPct))
	}
	if len(failed) > 0 {
		res.Reason = failed[0]
		if len(failed) == 2 {
			res.Reason += "; " + failed[1]
		}
		return res
	}
	res.Reached = true
	res.Reason = fmt.Sprintf("steady from round %d: range %.1f%% (limit %g%%), excursion %.1f%% (limit %g%%) of the average",
		start, res.RangePct, r.RangePct, res.ExcursionPct, r.ExcursionPct)
	return res
}

// slope is the least-squares slope of w against the round number 0, 1, ...
func slope(w []float64, mean float64) float64 {
	n := float64(len(w))
	xMean := (n - 1) / 2
	var sxy, sxx float64
	for i, y := range w {
		dx := float64(i) - xMean
		sxy += dx * (y - mean)
		sxx += dx * dx
	}
	return sxy / sxx // sxx > 0: a valid rule's window has at least two rounds
}
