package benchresult

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// series makes n intervals at 1 s whose figures are f(i) for interval i (0-based).
func series(n int, f func(i int) float64) Series {
	s := Series{Schema: SchemaVersion, Target: "t", Iteration: 1, Percentile: 95, ReportIntervalSec: 1}
	for i := 0; i < n; i++ {
		v := f(i)
		s.Time = append(s.Time, float64(i+1))
		s.TPS = append(s.TPS, v)
		s.QPS = append(s.QPS, 4*v)
		s.LatencyMS = append(s.LatencyMS, v/100)
		s.ErrorsPerSec = append(s.ErrorsPerSec, 0)
		s.ReconnectsPerSec = append(s.ReconnectsPerSec, 0)
	}
	return s
}

// keptBytes is what a series takes in its ConfigMap's data, keys included, as the controller writes it.
func keptBytes(t *testing.T, s Series) int {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return len("series.json") + len(raw) + len("series.csv") + len(s.CSV())
}

func TestDownsample(t *testing.T) {
	approx := cmpopts.EquateApprox(0, 1e-12)
	for _, tc := range []struct {
		name    string
		in      Series
		buckets int
		want    Series
	}{
		{name: "short enough: unchanged", in: series(4, func(i int) float64 { return float64(i) }), buckets: 4,
			want: series(4, func(i int) float64 { return float64(i) })},
		{name: "no buckets asked: unchanged", in: series(3, func(int) float64 { return 1 }), buckets: 0,
			want: series(3, func(int) float64 { return 1 })},
		{name: "pairs, the last bucket shorter", in: series(5, func(i int) float64 { return []float64{10, 20, 30, 50, 7}[i] }), buckets: 3,
			want: Series{Schema: SchemaVersion, Target: "t", Iteration: 1, Percentile: 95, ReportIntervalSec: 1,
				Downsampled: true, SourceIntervals: 5, BucketIntervals: 2,
				Time: []float64{2, 4, 5}, TPS: []float64{15, 40, 7}, QPS: []float64{60, 160, 28}, LatencyMS: []float64{0.15, 0.4, 0.07},
				ErrorsPerSec: []float64{0, 0, 0}, ReconnectsPerSec: []float64{0, 0, 0},
				TPSMin: []float64{10, 30, 7}, TPSMax: []float64{20, 50, 7}, QPSMin: []float64{40, 120, 28}, QPSMax: []float64{80, 200, 28},
				LatencyMinMS: []float64{0.1, 0.3, 0.07}, LatencyMaxMS: []float64{0.2, 0.5, 0.07},
				ErrorsPerSecMin: []float64{0, 0, 0}, ErrorsPerSecMax: []float64{0, 0, 0},
				ReconnectsPerSecMin: []float64{0, 0, 0}, ReconnectsPerSecMax: []float64{0, 0, 0}}},
		{name: "figures near the float64 limit do not overflow the mean", in: series(2, func(int) float64 { return math.MaxFloat64 / 4 }), buckets: 1,
			want: Series{Schema: SchemaVersion, Target: "t", Iteration: 1, Percentile: 95, ReportIntervalSec: 1,
				Downsampled: true, SourceIntervals: 2, BucketIntervals: 2,
				Time: []float64{2}, TPS: []float64{math.MaxFloat64 / 4}, QPS: []float64{math.MaxFloat64}, LatencyMS: []float64{math.MaxFloat64 / 400},
				ErrorsPerSec: []float64{0}, ReconnectsPerSec: []float64{0},
				TPSMin: []float64{math.MaxFloat64 / 4}, TPSMax: []float64{math.MaxFloat64 / 4}, QPSMin: []float64{math.MaxFloat64}, QPSMax: []float64{math.MaxFloat64},
				LatencyMinMS: []float64{math.MaxFloat64 / 400}, LatencyMaxMS: []float64{math.MaxFloat64 / 400},
				ErrorsPerSecMin: []float64{0}, ErrorsPerSecMax: []float64{0}, ReconnectsPerSecMin: []float64{0}, ReconnectsPerSecMax: []float64{0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Downsample(tc.in, tc.buckets)
			if d := cmp.Diff(tc.want, got, approx); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if err := got.check(); err != nil {
				t.Error(err)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("not JSON: %v", err)
			}
		})
	}
}

// TestFitDayAtOneSecond: the longest series the API admits (durationSeconds 86400, reportIntervalSeconds 1)
// is kept as at most MaxBuckets points, says so, keeps a one-interval dip and spike, and fits its ConfigMap
// with room to spare; it reads back through the same parser as the runner's line.
func TestFitDayAtOneSecond(t *testing.T) {
	const n = 86400
	s := series(n, func(i int) float64 {
		switch i {
		case 40000:
			return 0 // a stall
		case 70000:
			return 99999.99 // a burst
		}
		return 1234.56
	})
	got := Fit(s)
	if !got.Downsampled || got.SourceIntervals != n || got.Len() > MaxBuckets || got.Len() < MaxBuckets/2 {
		t.Fatalf("downsampled %v from %d into %d points (budget %d)", got.Downsampled, got.SourceIntervals, got.Len(), MaxBuckets)
	}
	if got.BucketIntervals*got.Len() < n || got.Time[got.Len()-1] != n {
		t.Errorf("%d buckets of %d intervals, last at %g: the run's end is not covered", got.Len(), got.BucketIntervals, got.Time[got.Len()-1])
	}
	low, high := math.Inf(1), math.Inf(-1)
	for i := range got.Time {
		low, high = min(low, got.TPSMin[i]), max(high, got.TPSMax[i])
	}
	if low != 0 || high != 99999.99 {
		t.Errorf("extremes %g..%g, want the stall 0 and the burst 99999.99", low, high)
	}
	size := keptBytes(t, got)
	if size > seriesBudgetBytes {
		t.Errorf("%d bytes kept, budget %d", size, seriesBudgetBytes)
	}
	t.Logf("a day at 1 s: %d intervals kept as %d buckets of %d, %d bytes", n, got.Len(), got.BucketIntervals, size)
	line, err := got.Line()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSeriesLine(line)
	if err != nil || !back.Downsampled || back.SourceIntervals != n || len(back.TPSMax) != back.Len() {
		t.Errorf("read back: %v, %+v", err, back.SourceIntervals)
	}
	csv := got.CSV()
	if !strings.HasPrefix(csv, CSVHeader+",tps_min,tps_max,") || strings.Count(csv, "\n") != got.Len()+1 {
		t.Errorf("CSV header %q, %d lines", csv[:strings.Index(csv, "\n")], strings.Count(csv, "\n"))
	}
}

// longest is the longest text a float64 takes in either format, as the budget assumes.
func longest(t *testing.T) float64 {
	t.Helper()
	worst, worstLen := 0.0, 0
	for _, base := range []float64{1e-7, 1e-6, 1e-5, 1e-4, 1e5, 1e6, 1e20, 1e21, 1e300, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		v := base
		for i := 0; i < 200; i++ {
			v = math.Nextafter(v, math.Inf(1))
			for _, x := range []float64{v, -v} {
				j, _ := json.Marshal(x)
				l := max(len(j), len(strconv.FormatFloat(x, 'g', -1, 64)))
				if l > worstLen {
					worst, worstLen = x, l
				}
			}
		}
	}
	if worstLen+1 > maxNumberBytes {
		t.Fatalf("%v takes %d bytes: the budget's maxNumberBytes %d is too small", worst, worstLen, maxNumberBytes)
	}
	t.Logf("longest number: %v, %d bytes", worst, worstLen)
	return worst
}

// TestFitWorstCaseFits: whatever the figures, a kept series fits a ConfigMap: the longest raw series and the
// most buckets, every number at the longest text a float64 can take.
func TestFitWorstCaseFits(t *testing.T) {
	w := longest(t)
	raw := series(MaxRawIntervals, func(int) float64 { return w })
	for i := range raw.Time {
		raw.Time[i], raw.QPS[i], raw.LatencyMS[i], raw.ErrorsPerSec[i], raw.ReconnectsPerSec[i] = w, w, w, w, w
	}
	if got := Fit(raw); got.Downsampled {
		t.Errorf("%d intervals were downsampled; the budget keeps them as they are", MaxRawIntervals)
	}
	full := Downsample(series(MaxBuckets*2, func(int) float64 { return 1 }), MaxBuckets)
	for _, col := range append([][]float64{full.Time, full.TPS, full.QPS, full.LatencyMS, full.ErrorsPerSec, full.ReconnectsPerSec}, mapValues(full.extremes())...) {
		for i := range col {
			col[i] = w
		}
	}
	if full.Len() != MaxBuckets {
		t.Fatalf("%d buckets", full.Len())
	}
	for name, s := range map[string]Series{"raw": raw, "downsampled": full} {
		if size := keptBytes(t, s); size > ConfigMapLimitBytes*7/8 {
			t.Errorf("%s worst case: %d bytes, limit %d: no room to spare", name, size, ConfigMapLimitBytes)
		} else {
			t.Logf("%s worst case: %d points, %d bytes of %d", name, s.Len(), size, ConfigMapLimitBytes)
		}
	}
	if got := Fit(series(MaxRawIntervals+1, func(int) float64 { return 1 })); !got.Downsampled || got.Len() > MaxBuckets {
		t.Errorf("one interval past the budget: downsampled %v into %d", got.Downsampled, got.Len())
	}
}

func mapValues(m map[string][]float64) [][]float64 {
	var out [][]float64
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestSeriesCSV(t *testing.T) {
	s := Series{Time: []float64{1, 2}, TPS: []float64{299, 1234567.5}, QPS: []float64{1200, 0.25}, LatencyMS: []float64{5, 6},
		ErrorsPerSec: []float64{0, 1}, ReconnectsPerSec: []float64{0, 0}}
	if got, want := s.CSV(), CSVHeader+"\n1,299,1200,5,0,0\n2,1.2345675e+06,0.25,6,1,0\n"; got != want {
		t.Errorf("CSV:\n%s\nwant\n%s", got, want)
	}
	bad := s
	bad.Downsampled, bad.TPSMin = true, []float64{1}
	if bad.check() == nil {
		t.Error("a downsampled series without all of its extremes passed the check")
	}
}
