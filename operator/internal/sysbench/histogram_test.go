package sysbench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The histogram outputs are real: testdata/histogram/README.md says how they were captured (sysbench 1.0.20).
func TestHistogramOnRealOutput(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histogram", "run-*-histogram*.txt"))
	if err != nil || len(files) < 3 {
		t.Fatalf("captures: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := ParseString(string(raw))
			if err != nil {
				t.Fatal(err)
			}
			h, s := res.Histogram, res.Summary
			buckets := strings.Count(string(raw), " |")
			if len(h) != buckets || buckets < 10 {
				t.Fatalf("%d buckets parsed, the output has %d lines with a bar", len(h), buckets)
			}
			for i := 1; i < len(h); i++ {
				if h[i].ValueMS <= h[i-1].ValueMS || h[i].Count <= 0 {
					t.Fatalf("bucket %d %+v after %+v", i, h[i], h[i-1])
				}
			}
			// The histogram counts every event of the run...
			if h.Events() != s.TotalEvents {
				t.Errorf("histogram counts %d events, the summary %d", h.Events(), s.TotalEvents)
			}
			// ...and sysbench's own percentile is the one computed from it, to its 2 printed decimals.
			got, ok := h.Percentile(s.Percentile)
			if !ok || math.Abs(got-s.LatencyPctMS) > 0.0055 { // 3 printed decimals against 2
				t.Errorf("p%g from the histogram %.3f, sysbench printed %.2f", s.Percentile, got, s.LatencyPctMS)
			}
			// The extremes lie within the run's min and max (buckets are rounded values of them).
			lo, hi := h[0].ValueMS, h[len(h)-1].ValueMS
			if lo > s.LatencyMinMS*1.05 || hi < s.LatencyMaxMS*0.95 || hi > s.LatencyMaxMS*1.05 {
				t.Errorf("buckets %.3f..%.3f, run min %.2f max %.2f", lo, hi, s.LatencyMinMS, s.LatencyMaxMS)
			}
			var prev float64
			for _, p := range []float64{50, 95, 99, 99.9} {
				v, ok := h.Percentile(p)
				if !ok || v < prev {
					t.Errorf("p%g = %v after %v", p, v, prev)
				}
				prev = v
			}
			// The intervals and the summary are still read around the block.
			if len(res.Intervals) == 0 && strings.Contains(string(raw), "[ 1s ]") {
				t.Error("intervals lost")
			}
		})
	}
}

func TestHistogramPercentileEdges(t *testing.T) {
	h := Histogram{{1, 50}, {2, 45}, {3, 4}, {10, 1}}
	for p, want := range map[float64]float64{50: 1, 50.6: 2, 95: 2, 99: 3, 99.9: 10, 100: 10} {
		if got, ok := h.Percentile(p); !ok || got != want {
			t.Errorf("p%g = %v %v, want %v", p, got, ok, want)
		}
	}
	if _, ok := (Histogram{}).Percentile(50); ok {
		t.Error("empty histogram gave a percentile")
	}
	if _, ok := h.Percentile(0); ok {
		t.Error("p0 accepted")
	}
	// Without --histogram there is none.
	raw, err := os.ReadFile(filepath.Join("testdata", "run-rocksdb-ri1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ParseString(string(raw)); err != nil || res.Histogram != nil {
		t.Errorf("no --histogram: %v, %v", res.Histogram, err)
	}
}
