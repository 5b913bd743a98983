// Package significance tells a difference between two stacks from run-to-run noise. A Benchmark repeats
// each run (spec.iterations); this package summarises one figure across those runs (mean, sample standard
// deviation, the 95% confidence interval of the mean, the best run) and compares a target's runs with the
// baseline's by Welch's two-sided t-test, which assumes neither equal variances nor equal run counts. On the
// project's 2-core machines two identical runs differed by 8%: a ratio is only worth printing as a
// difference when the test says the runs' noise does not cover it. It is pure.
package significance

import (
	"fmt"
	"math"
)

// Alpha is the test's level: a difference is significant when p < Alpha.
const Alpha = 0.05

// MinRuns is the fewest runs per side the test needs: one run has no spread to compare against.
const MinRuns = 2

// AdvisedRuns is the fewest runs per side at which the test can tell differences of the size that matter
// here: with two runs a side its critical t is 4.3 (Welch's degrees of freedom are at most 2), so only a
// difference of several standard deviations shows.
const AdvisedRuns = 3

// Summary is one figure across a target's runs.
type Summary struct {
	N    int
	Mean float64
	// SD is the sample standard deviation (n-1 in the denominator); 0 for fewer than two runs.
	SD float64
	// CI95 is the half-width of the 95% confidence interval of the mean (Student's t with n-1 degrees of
	// freedom); 0 for fewer than two runs, where it is unknown rather than zero (see HasCI).
	CI95     float64
	Min, Max float64
}

// HasCI reports whether the summary has a confidence interval (two runs or more).
func (s Summary) HasCI() bool { return s.N >= MinRuns }

// Summarize describes xs, skipping non-finite values (a figure a run did not produce).
func Summarize(xs []float64) Summary {
	var s Summary
	var vals []float64
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		vals = append(vals, x)
		if len(vals) == 1 || x < s.Min {
			s.Min = x
		}
		if len(vals) == 1 || x > s.Max {
			s.Max = x
		}
		s.Mean += x
	}
	s.N = len(vals)
	if s.N == 0 {
		return s
	}
	s.Mean /= float64(s.N)
	if s.N < 2 {
		return s
	}
	var ss float64
	for _, x := range vals {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	s.SD = math.Sqrt(ss / float64(s.N-1))
	s.CI95 = TwoSidedCritical(float64(s.N-1), Alpha) * s.SD / math.Sqrt(float64(s.N))
	return s
}

// Verdict is what the test says of a target against the baseline for one figure.
type Verdict string

const (
	// Better and Worse: the difference is larger than the runs' noise (p < Alpha), in the figure's good or
	// bad direction.
	Better Verdict = "Better"
	Worse  Verdict = "Worse"
	// NoSignificantDifference: the runs' noise covers the difference (p >= Alpha).
	NoSignificantDifference Verdict = "NoSignificantDifference"
	// TooFewRuns: a side has fewer than MinRuns runs with the figure; nothing can be said.
	TooFewRuns Verdict = "TooFewRuns"
)

// Direction says which way a figure is better.
type Direction int

const (
	HigherIsBetter Direction = iota // TPS
	LowerIsBetter                   // latency, bytes per transaction
)

// Comparison is the test of one figure of a target against the baseline.
type Comparison struct {
	Verdict Verdict
	// P is the two-sided p-value (NaN with TooFewRuns).
	P float64
	// T and DF are Welch's statistic and degrees of freedom (NaN with TooFewRuns; T is ±Inf when neither
	// side varies and the means differ).
	T, DF float64
}

// Compare tests target's runs against baseline's with Welch's two-sided t-test at level Alpha.
func Compare(target, baseline []float64, dir Direction) Comparison {
	a, b := Summarize(target), Summarize(baseline)
	if a.N < MinRuns || b.N < MinRuns {
		return Comparison{Verdict: TooFewRuns, P: math.NaN(), T: math.NaN(), DF: math.NaN()}
	}
	va, vb := a.SD*a.SD/float64(a.N), b.SD*b.SD/float64(b.N)
	diff := a.Mean - b.Mean
	c := Comparison{}
	switch {
	case va+vb == 0 && diff == 0:
		c.T, c.DF, c.P = 0, float64(a.N+b.N-2), 1
	case va+vb == 0:
		// Neither side varies (figures rounded to two decimals can do that over a few runs): any difference
		// is exact.
		c.T, c.DF, c.P = math.Inf(sign(diff)), float64(a.N+b.N-2), 0
	default:
		c.T = diff / math.Sqrt(va+vb)
		c.DF = (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
		c.P = TwoSidedP(c.T, c.DF)
	}
	switch {
	case c.P >= Alpha:
		c.Verdict = NoSignificantDifference
	case (diff > 0) == (dir == HigherIsBetter):
		c.Verdict = Better
	default:
		c.Verdict = Worse
	}
	return c
}

func sign(x float64) int {
	if x < 0 {
		return -1
	}
	return 1
}

// Describe says the comparison in words for a report: "better (p=0.003)", "no significant difference
// (p=0.41)", "too few runs".
func (c Comparison) Describe() string {
	switch c.Verdict {
	case TooFewRuns:
		return "too few runs"
	case NoSignificantDifference:
		return "no significant difference (" + PText(c.P) + ")"
	case Better:
		return "better (" + PText(c.P) + ")"
	case Worse:
		return "worse (" + PText(c.P) + ")"
	}
	return string(c.Verdict)
}

// FormatP prints a p-value with the precision that means something: three decimals below 0.01, two above,
// and "0.000" for anything below 0.001 (PText says "<0.001" then).
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return ""
	case p < 0.01:
		return fmt.Sprintf("%.3f", p)
	}
	return fmt.Sprintf("%.2f", p)
}

// PText is "p=0.41", "p=0.003" or "p<0.001".
func PText(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + FormatP(p)
}

// TwoSidedP is P(|T| >= |t|) for Student's t with df degrees of freedom (df > 0, not necessarily whole, as
// Welch's are): the regularized incomplete beta function I_x(df/2, 1/2) at x = df/(df+t²).
func TwoSidedP(t, df float64) float64 {
	if math.IsInf(t, 0) {
		return 0
	}
	if math.IsNaN(t) || math.IsNaN(df) || df <= 0 {
		return math.NaN()
	}
	return regIncBeta(df/2, 0.5, df/(df+t*t))
}

// TwoSidedCritical is the t at which TwoSidedP(t, df) = alpha (2.776 for df 4 at 5%), found by bisection:
// TwoSidedP falls as t grows.
func TwoSidedCritical(df, alpha float64) float64 {
	lo, hi := 0.0, 1.0
	for TwoSidedP(hi, df) > alpha {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if TwoSidedP(mid, df) > alpha {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), evaluated by its continued fraction,
// which converges fast for x < (a+1)/(a+b+2); the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) covers the rest.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction evaluates the continued fraction of the incomplete beta function by the modified Lentz
// method: terms d_{2m+1} = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) and d_{2m} = m(b-m)x / ((a+2m-1)(a+2m)).
func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	clamp := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/clamp(1-(a+b)*x/(a+1))
	f := d
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		even := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 / clamp(1+even*d)
		c = clamp(1 + even/c)
		f *= d * c
		odd := -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 / clamp(1+odd*d)
		c = clamp(1 + odd/c)
		delta := d * c
		f *= delta
		if math.Abs(delta-1) < eps {
			break
		}
	}
	return f
}
