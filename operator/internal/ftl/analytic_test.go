package ftl

import (
	"math"
	"testing"
)

func TestLambertW0(t *testing.T) {
	// Reference values from mpmath.lambertw at 30 digits.
	for _, tc := range []struct{ x, want float64 }{
		{-1 / math.E, -1},
		{0, 0},
		{-0.2, -0.259171101819073745},
		{-0.35, -0.716638816456073851},
		{-0.36787944117144, -0.999999887654546575},
		{1, 0.567143290409783873},
		{math.E, 1},
	} {
		got := LambertW0(tc.x)
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("W0(%v) = %.18g, want %.18g", tc.x, got, tc.want)
		}
		// The defining equation, w e^w = x.
		if r := got*math.Exp(got) - tc.x; math.Abs(r) > 1e-9 {
			t.Errorf("W0(%v) = %v: w e^w - x = %g", tc.x, got, r)
		}
	}
	// Over the whole interval the residual stays tiny and w stays on the
	// principal branch.
	for x := -1 / math.E; x < 0; x += 0.001 {
		w := LambertW0(x)
		if w < -1 || w > 0 || math.Abs(w*math.Exp(w)-x) > 1e-12 {
			t.Errorf("W0(%v) = %v, residual %g", x, w, w*math.Exp(w)-x)
		}
	}
	for _, x := range []float64{-0.37, -1, math.NaN(), math.Inf(-1)} {
		if w := LambertW0(x); !math.IsNaN(w) {
			t.Errorf("W0(%v) = %v, want NaN outside the domain", x, w)
		}
	}
}

func TestGreedyUniformWA(t *testing.T) {
	// Reference values from the same expression in mpmath at 30 digits; the
	// paper quotes 2.36 for r = 0.3.
	for _, tc := range []struct{ r, want float64 }{
		{0.07, 7.81715968123646823},
		{0.1, 5.67749091334839614},
		{0.2, 3.18777596514725197},
		{0.28, 2.48136098704653343},
		{0.3, 2.36423413797273648},
		{0.5, 1.71582021485871949},
		{1.0, 1.25500097491597527},
	} {
		if got := GreedyUniformWA(tc.r); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("GreedyUniformWA(%v) = %.15g, want %.15g", tc.r, got, tc.want)
		}
	}
	// Small r tends to (1+r)/(2r), and stays finite and decreasing.
	prev := math.Inf(1)
	for _, r := range []float64{1e-12, 1e-9, 1e-6, 1e-3, 0.01, 0.05} {
		a := GreedyUniformWA(r)
		if math.IsNaN(a) || math.IsInf(a, 0) || a >= prev {
			t.Errorf("GreedyUniformWA(%v) = %v after %v", r, a, prev)
		}
		if r <= 1e-6 && math.Abs(a/((1+r)/(2*r))-1) > 1e-3 {
			t.Errorf("GreedyUniformWA(%v) = %v, want about (1+r)/(2r) = %v", r, a, (1+r)/(2*r))
		}
		prev = a
	}
	if a := GreedyUniformWA(0); !math.IsInf(a, 1) {
		t.Errorf("GreedyUniformWA(0) = %v, want +Inf", a)
	}
	for _, r := range []float64{-0.1, math.NaN(), math.Inf(1)} {
		if a := GreedyUniformWA(r); !math.IsNaN(a) {
			t.Errorf("GreedyUniformWA(%v) = %v, want NaN", r, a)
		}
	}
}
