package significance

import (
	"math"
	"testing"
)

func close(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The reference values are Student's t two-sided tail probabilities computed independently, by Simpson's rule
// over the t density (200,000 intervals, in Python), and the textbook 97.5% quantiles.
func TestTwoSidedP(t *testing.T) {
	for _, tc := range []struct{ t, df, want float64 }{
		{2.0, 10, 0.073388035},
		{2.0, 3.5, 0.126138523},
		{1.0, 2.7, 0.398324347},
		{0, 5, 1},
		{-2.0, 10, 0.073388035},
	} {
		if got := TwoSidedP(tc.t, tc.df); !close(got, tc.want, 1e-8) {
			t.Errorf("TwoSidedP(%v, %v) = %.10f, want %.10f", tc.t, tc.df, got, tc.want)
		}
	}
	if p := TwoSidedP(math.Inf(1), 3); p != 0 {
		t.Errorf("an infinite t: p %v, want 0", p)
	}
	if p := TwoSidedP(1, 0); !math.IsNaN(p) {
		t.Errorf("no degrees of freedom: p %v, want NaN", p)
	}
}

func TestTwoSidedCritical(t *testing.T) {
	for _, tc := range []struct{ df, want float64 }{
		{1, 12.7062047}, {2, 4.3026527}, {4, 2.7764451}, {10, 2.2281389}, {30, 2.0422725}, {1e7, 1.9599640},
	} {
		if got := TwoSidedCritical(tc.df, Alpha); !close(got, tc.want, 1e-6) {
			t.Errorf("t(0.975, %v) = %.7f, want %.7f", tc.df, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	// sample variance 32/7; CI half-width t(0.975, 7) 2.3646243 x sd / sqrt(8)
	sd := math.Sqrt(32.0 / 7)
	if s.N != 8 || s.Mean != 5 || !close(s.SD, sd, 1e-12) || s.Min != 2 || s.Max != 9 ||
		!close(s.CI95, 2.3646243*sd/math.Sqrt(8), 1e-6) || !s.HasCI() {
		t.Errorf("Summarize = %+v", s)
	}
	one := Summarize([]float64{3, math.NaN()})
	if one.N != 1 || one.Mean != 3 || one.SD != 0 || one.CI95 != 0 || one.HasCI() {
		t.Errorf("one run: %+v, want no spread and no interval", one)
	}
	if z := Summarize(nil); z != (Summary{}) {
		t.Errorf("no runs: %+v", z)
	}
}

func TestCompare(t *testing.T) {
	fast := []float64{101.2, 98.7, 103.1, 99.5}
	slow := []float64{95.1, 96.8, 94.0, 97.3, 95.5}
	c := Compare(fast, slow, HigherIsBetter)
	// Welch by hand (Python's statistics module): t 4.2763903, df 5.1076931, p 0.0075229 by Simpson's rule.
	if c.Verdict != Better || !close(c.T, 4.2763903, 1e-6) || !close(c.DF, 5.1076931, 1e-6) || !close(c.P, 0.0075229, 1e-6) {
		t.Errorf("Compare = %+v, want Better, t 4.276, df 5.108, p 0.0075", c)
	}
	if c := Compare(fast, slow, LowerIsBetter); c.Verdict != Worse {
		t.Errorf("higher latency is worse: %+v", c)
	}
	if c := Compare(slow, fast, HigherIsBetter); c.Verdict != Worse || c.T > 0 {
		t.Errorf("swapped: %+v", c)
	}
	// 8% apart, but the runs themselves swing by more: the noise covers the difference.
	noisy := Compare([]float64{100, 80, 120}, []float64{92, 110, 74}, HigherIsBetter)
	if noisy.Verdict != NoSignificantDifference || noisy.P < 0.5 {
		t.Errorf("noisy runs: %+v, want no significant difference", noisy)
	}
	if got := Compare([]float64{100}, slow, HigherIsBetter); got.Verdict != TooFewRuns || !math.IsNaN(got.P) {
		t.Errorf("one run: %+v, want TooFewRuns", got)
	}
	if got := Compare(fast, []float64{1, math.NaN()}, HigherIsBetter); got.Verdict != TooFewRuns {
		t.Errorf("one baseline run with the figure: %+v, want TooFewRuns", got)
	}
	if got := Compare([]float64{5, 5}, []float64{5, 5, 5}, HigherIsBetter); got.Verdict != NoSignificantDifference || got.P != 1 {
		t.Errorf("identical constant runs: %+v", got)
	}
	if got := Compare([]float64{6, 6}, []float64{5, 5}, HigherIsBetter); got.Verdict != Better || got.P != 0 || !math.IsInf(got.T, 1) {
		t.Errorf("constant runs that differ: %+v", got)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		c    Comparison
		want string
	}{
		{Comparison{Verdict: Better, P: 0.0031}, "better (p=0.003)"},
		{Comparison{Verdict: Worse, P: 0.0004}, "worse (p<0.001)"},
		{Comparison{Verdict: NoSignificantDifference, P: 0.4123}, "no significant difference (p=0.41)"},
		{Comparison{Verdict: TooFewRuns, P: math.NaN()}, "too few runs"},
	} {
		if got := tc.c.Describe(); got != tc.want {
			t.Errorf("Describe(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
