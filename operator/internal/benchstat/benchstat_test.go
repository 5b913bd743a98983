package benchstat

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestOf(t *testing.T) {
	// The textbook population example: mean 5, stddev 2.
	s := Of([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if s.N != 8 || !near(s.Mean, 5) || !near(s.RelDevPct, 40) || s.Min != 2 || s.Max != 9 {
		t.Errorf("Of = %+v, want N 8 mean 5 reldev 40%% min 2 max 9", s)
	}
	// Relative deviation does not depend on the unit.
	k := Of([]float64{200, 400, 400, 400, 500, 500, 700, 900})
	if !near(k.RelDevPct, s.RelDevPct) {
		t.Errorf("scaled: %v, want %v", k.RelDevPct, s.RelDevPct)
	}
	for _, tc := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{3}, Spread{N: 1, Mean: 3, Min: 3, Max: 3}},
		{[]float64{7, 7, 7}, Spread{N: 3, Mean: 7, Min: 7, Max: 7}},
		{[]float64{0, 0}, Spread{N: 2}},
		{[]float64{1, math.NaN(), 3, math.Inf(1)}, Spread{N: 2, Mean: 2, RelDevPct: 50, Min: 1, Max: 3}},
	} {
		if got := Of(tc.in); got != tc.want {
			t.Errorf("Of(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func intervals(t *testing.T, file string) []sysbench.Interval {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "sysbench", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sysbench.ParseString(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return res.Intervals
}

func TestFromIntervalsRealRuns(t *testing.T) {
	// 4 threads fighting over 10 rows: the last interval is a stall (tps 0,
	// lat 0.00); it counts in TPS but is no latency.
	ivs := intervals(t, "run-rocksdb-errors.txt")
	r := FromIntervals(ivs)
	if r.Intervals != 7 || r.TPS.N != 7 || r.Latency.N != 6 || r.Percentile != 95 {
		t.Fatalf("counts %+v", r)
	}
	if r.TPS.Min != 0 || r.Latency.Min == 0 {
		t.Errorf("TPS min %v (want the stall's 0), latency min %v (want the stall left out)", r.TPS.Min, r.Latency.Min)
	}
	var tps []float64
	for _, iv := range ivs {
		tps = append(tps, iv.TPS)
	}
	if r.TPS != Of(tps) {
		t.Errorf("TPS spread %+v differs from Of over the interval TPS %+v", r.TPS, Of(tps))
	}
	// The seeds' QoS figure for such a run is poor; a steady run's is not.
	steady := FromIntervals(intervals(t, "run-innodb-ri1.txt"))
	if !(r.TPS.RelDevPct > steady.TPS.RelDevPct && r.Latency.RelDevPct > steady.Latency.RelDevPct) {
		t.Errorf("contended run deviations %v%%/%v%% not above the steady run's %v%%/%v%%",
			r.TPS.RelDevPct, r.Latency.RelDevPct, steady.TPS.RelDevPct, steady.Latency.RelDevPct)
	}

	p99 := FromIntervals(intervals(t, "run-rocksdb-p99.txt"))
	if p99.Percentile != 99 || p99.Latency.N != 4 {
		t.Errorf("p99 run: %+v", p99)
	}
	seed := FromIntervals(intervals(t, "seed003-sysbench-1.1.txt"))
	if seed.Intervals != 12 || seed.TPS.Min != 11740.20 || seed.TPS.Max != 15939.32 || seed.Latency.Max != 9.73 {
		t.Errorf("seed run: %+v", seed)
	}
	if empty := FromIntervals(nil); empty != (Run{}) {
		t.Errorf("no intervals: %+v", empty)
	}
}

func TestFromIntervalsPercentileDisabled(t *testing.T) {
	// --percentile=0 prints "lat (ms,0%): 0.00": no latency figures.
	r := FromIntervals([]sysbench.Interval{{Time: 1, TPS: 10, Percentile: 0}, {Time: 2, TPS: 20, Percentile: 0}})
	if r.Percentile != 0 || r.Latency != (Spread{}) || r.TPS.N != 2 {
		t.Errorf("%+v", r)
	}
}

func TestBytesPerTransaction(t *testing.T) {
	if got, ok := BytesPerTransaction(8192*1000, 1000); !ok || got != 8192 {
		t.Errorf("= %v, %v", got, ok)
	}
	if got, ok := BytesPerTransaction(0, 10); !ok || got != 0 {
		t.Errorf("nothing written: %v, %v", got, ok)
	}
	if _, ok := BytesPerTransaction(4096, 0); ok {
		t.Error("no transactions: ok")
	}
}

func TestMeanCI95(t *testing.T) {
	// Two values 1 apart: mean 1.5, sample sd 0.7071, t(1) = 12.706, half-width 12.706*0.7071/sqrt(2) = 6.353.
	m, h, ok := MeanCI95([]float64{1, 2, math.NaN()})
	if !ok || m != 1.5 || math.Abs(h-6.353) > 1e-9 {
		t.Errorf("two values: mean %v half-width %v ok %v", m, h, ok)
	}
	// Five values: mean 3, sample sd 1.5811, t(4) = 2.776, half-width 1.9630.
	m, h, ok = MeanCI95([]float64{1, 2, 3, 4, 5})
	if !ok || m != 3 || math.Abs(h-2.776*math.Sqrt(2.5)/math.Sqrt(5)) > 1e-12 {
		t.Errorf("five values: mean %v half-width %v ok %v", m, h, ok)
	}
	// Many values use the normal quantile.
	many := make([]float64, 100)
	for i := range many {
		many[i] = float64(i % 2)
	}
	if _, h, _ := MeanCI95(many); math.Abs(h-1.96*math.Sqrt(25.0/99)/10) > 1e-12 {
		t.Errorf("100 values: half-width %v", h)
	}
	if _, _, ok := MeanCI95([]float64{7}); ok {
		t.Error("one value gave an interval")
	}
	if _, _, ok := MeanCI95(nil); ok {
		t.Error("no values gave an interval")
	}
}
