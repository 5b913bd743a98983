package ftl

import "math"

// LambertW0 is the principal branch of the Lambert W function: the w >= -1
// with w e^w = x, for x >= -1/e. It returns NaN below -1/e, except that an x
// within a few ulps of -1/e (what -(1+r)e^-(1+r) rounds to for tiny r) is
// taken as -1/e itself.
func LambertW0(x float64) float64 {
	const branch = -1 / math.E
	switch {
	case math.IsNaN(x) || x < branch*(1+4e-16):
		return math.NaN()
	case x <= branch:
		return -1
	case x == 0:
		return 0
	case math.IsInf(x, 1):
		return x
	}
	// Starting points close enough for Halley's cubic convergence: the
	// series about the branch point (in p = sqrt(2(e x + 1))) near -1/e,
	// the Taylor series near 0, a logarithm for large x.
	var w float64
	switch {
	case x < -0.25:
		p := math.Sqrt(2 * (math.E*x + 1))
		w = -1 + p - p*p/3 + 11.0/72*p*p*p
	case x < 3:
		w = x - x*x + 1.5*x*x*x
	default:
		l := math.Log(x)
		w = l - math.Log(l)
	}
	for range 64 {
		ew := math.Exp(w)
		f := w*ew - x
		wp1 := w + 1
		if wp1 == 0 {
			break // at the branch point, where the derivative vanishes
		}
		step := f / (ew*wp1 - (w+2)*f/(2*wp1))
		w -= step
		if math.Abs(step) <= 1e-15*math.Max(1, math.Abs(w)) {
			break
		}
	}
	return w
}

// GreedyUniformWA is the write amplification of uniform random page writes
// under greedy garbage collection with over-provisioning r (spare / user),
// from Xiang and Kurkoski, "An Improved Analytical Expression for Write
// Amplification in NAND Flash" (arXiv 1110.4245):
//
//	A = (1+r) / (1 + r + W0(-(1+r) e^-(1+r)))
//
// r = 0.3 gives 2.36 (their simulation: 2.35). It is +Inf at r = 0 (no spare:
// every GC victim is full) and NaN for negative or non-finite r.
func GreedyUniformWA(r float64) float64 {
	if !(r >= 0) || math.IsInf(r, 0) {
		return math.NaN()
	}
	if r == 0 {
		return math.Inf(1)
	}
	a := 1 + r
	if r < 1e-4 {
		// Near the branch point e x + 1 (about r^2/2) drowns in rounding.
		// There W0(-(1+r)e^-(1+r)) + 1 = r - 2r^2/3 + 4r^3/9 + O(r^4), from
		// ln(1-u) + u = ln(1+r) - r with u = W0 + 1; the neglected term is
		// below 1e-12 of the result.
		return a / (2*r - 2*r*r/3 + 4*r*r*r/9)
	}
	return a / (a + LambertW0(-a*math.Exp(-a)))
}
