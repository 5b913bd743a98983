package steadystate

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestDefaultRule(t *testing.T) {
	r := DefaultRule()
	if r != (Rule{Window: 5, RangePct: 20, ExcursionPct: 10}) {
		t.Errorf("DefaultRule = %+v", r)
	}
	if err := r.Validate(); err != nil {
		t.Errorf("DefaultRule invalid: %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		want []string // fields the error must name; none = valid
	}{
		{Rule{Window: 2, RangePct: 100, ExcursionPct: 0.5}, nil},
		{Rule{Window: 1, RangePct: 20, ExcursionPct: 10}, []string{"Window"}},
		{Rule{Window: 5, RangePct: 0, ExcursionPct: 10}, []string{"RangePct"}},
		{Rule{Window: 5, RangePct: 20, ExcursionPct: -1}, []string{"ExcursionPct"}},
		{Rule{Window: 5, RangePct: 100.5, ExcursionPct: 10}, []string{"RangePct"}},
		{Rule{Window: 5, RangePct: math.NaN(), ExcursionPct: 10}, []string{"RangePct"}},
		{Rule{}, []string{"Window", "RangePct", "ExcursionPct"}},
	} {
		err := tc.rule.Validate()
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%+v: %v", tc.rule, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v accepted", tc.rule)
			continue
		}
		for _, field := range tc.want {
			if !strings.Contains(err.Error(), field) {
				t.Errorf("%+v: error %q does not name %s", tc.rule, err, field)
			}
		}
	}
}

func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ys      []float64
		reached bool
		start   int
		reason  string // a substring of Reason
		avg     float64
		rng     float64
		slope   float64
	}{
		{name: "flat", ys: []float64{9, 1, 50, 50, 50, 50, 50}, reached: true, start: 2,
			reason: "steady from round 2", avg: 50},
		// Bounded noise around 100: range 18%, the line moves 5.6.
		{name: "noisy but bounded", ys: []float64{100, 91, 109, 95, 105}, reached: true, start: 0,
			avg: 100, rng: 18, slope: 1.4},
		// Range 20% exactly is within the limit.
		{name: "range on the limit", ys: []float64{90, 110, 100, 100, 100}, reached: true, avg: 100, rng: 20, slope: 1},
		// +3 per round: range 12% but the line climbs 12 over 100.
		{name: "trending", ys: []float64{94, 97, 100, 103, 106}, reason: "excursion 12.0% of the average, limit 10%",
			avg: 100, rng: 12, slope: 3},
		// One spike: range fails, and the fit tilts with it.
		{name: "spike", ys: []float64{100, 100, 100, 100, 130}, reason: "range 28.3% of the average, limit 20%; excursion 22.6%",
			avg: 106, rng: 30, slope: 6},
		{name: "too short", ys: []float64{1, 1, 1, 1}, start: -1, reason: "fewer than 5 rounds (4)"},
		{name: "empty", ys: nil, start: -1, reason: "fewer than 5 rounds (0)"},
		{name: "zero average", ys: []float64{0, 0, 0, 0, 0}, reason: "the average is 0"},
		{name: "cancelling", ys: []float64{-2, 2, -2, 2, 0}, reason: "the average is 0", rng: 4, slope: 0.4},
		{name: "NaN", ys: []float64{1, 1, math.NaN(), 1, 1}, reason: "round 2 is NaN"},
		{name: "infinite", ys: []float64{1, 1, 1, 1, 1, math.Inf(1)}, start: 1, reason: "round 5 is +Inf"},
		// The spec's figures are positive, but a negative average is judged on its magnitude.
		{name: "negative", ys: []float64{-100, -100, -100, -100, -100}, reached: true, avg: -100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DefaultRule().Evaluate(tc.ys)
			if got.Reached != tc.reached || got.Start != tc.start || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("Evaluate(%v) = %+v, want reached %v start %d reason containing %q", tc.ys, got, tc.reached, tc.start, tc.reason)
			}
			if !near(got.Average, tc.avg) || !near(got.Range, tc.rng) || !near(got.Slope, tc.slope) {
				t.Errorf("Evaluate(%v): average %v range %v slope %v, want %v %v %v", tc.ys, got.Average, got.Range, got.Slope, tc.avg, tc.rng, tc.slope)
			}
			for _, f := range []float64{got.Average, got.Range, got.Slope, got.RangePct, got.ExcursionPct} {
				if math.IsNaN(f) || math.IsInf(f, 0) {
					t.Errorf("Evaluate(%v) has a non-finite figure: %+v", tc.ys, got)
				}
			}
			if got.Reached && (got.RangePct > 20 || got.ExcursionPct > 10) {
				t.Errorf("reached beyond the limits: %+v", got)
			}
		})
	}
}

func TestEvaluatePercentages(t *testing.T) {
	// Average 100, range 18, slope 1.4: excursion 1.4 x 4 = 5.6 (5.6%).
	got := DefaultRule().Evaluate([]float64{100, 91, 109, 95, 105})
	if !near(got.RangePct, 18) || !near(got.ExcursionPct, 5.6) {
		t.Errorf("RangePct %v ExcursionPct %v, want 18 and 5.6", got.RangePct, got.ExcursionPct)
	}
}

func TestEvaluateWindow(t *testing.T) {
	ys := []float64{10, 20, 30, 100, 100, 100}
	// A window of 3 sees the last three rounds only.
	r := Rule{Window: 3, RangePct: 20, ExcursionPct: 10}
	if got := r.Evaluate(ys); !got.Reached || got.Start != 3 {
		t.Errorf("window 3: %+v", got)
	}
	// A window longer than the series.
	r.Window = 7
	if got := r.Evaluate(ys); got.Reached || got.Start != -1 || got.Reason != "fewer than 7 rounds (6)" {
		t.Errorf("window 7: %+v", got)
	}
	// An invalid rule is never reached, and says why.
	if got := (Rule{Window: 1, RangePct: 20, ExcursionPct: 10}).Evaluate(ys); got.Reached || !strings.Contains(got.Reason, "Window") {
		t.Errorf("invalid rule: %+v", got)
	}
}

func TestFirstWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule Rule
		ys   []float64
		want int
	}{
		// Warming up, then flat from round 3.
		{"settles", DefaultRule(), []float64{10, 40, 80, 100, 101, 99, 100, 100, 100}, 3},
		{"flat from the start", DefaultRule(), []float64{5, 5, 5, 5, 5, 5}, 0},
		{"never", DefaultRule(), []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, -1},
		{"too short", DefaultRule(), []float64{5, 5, 5}, -1},
		// Steady early, then a drop: the first window is still the answer.
		{"steady then not", DefaultRule(), []float64{50, 50, 50, 50, 50, 10, 10}, 0},
		{"invalid rule", Rule{Window: 0}, []float64{5, 5, 5}, -1},
		{"window 2", Rule{Window: 2, RangePct: 5, ExcursionPct: 5}, []float64{1, 3, 9, 9.2}, 2},
	} {
		if got := tc.rule.FirstWindow(tc.ys); got != tc.want {
			t.Errorf("%s: FirstWindow = %d, want %d", tc.name, got, tc.want)
		}
	}
}
