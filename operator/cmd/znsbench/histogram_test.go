package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
)

// TestRunHistogramPercentiles: the runner asks sysbench for its histogram and puts p50/p95/p99/p99.9 of the
// whole run into the summary (a real --histogram capture replayed by the fake).
func TestRunHistogramPercentiles(t *testing.T) {
	out := capture(filepath.Join("histogram", "run-rocksdb-histogram.txt"))
	r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": out}, runArgs...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.record, "arg=--histogram=on\n") {
		t.Errorf("sysbench was not asked for its histogram:\n%s", r.record)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sysbench.ParseString(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	s := r.summary
	for p, got := range map[float64]float64{50: s.LatencyP50MS, 95: s.LatencyP95MS, 99: s.LatencyP99MS, 99.9: s.LatencyP999MS} {
		want, _ := res.Histogram.Percentile(p)
		if got != want || got <= 0 {
			t.Errorf("p%g: summary %v, histogram %v", p, got, want)
		}
	}
	if !(s.LatencyP50MS <= s.LatencyP95MS && s.LatencyP95MS <= s.LatencyP99MS && s.LatencyP99MS <= s.LatencyP999MS) {
		t.Errorf("percentiles out of order: %+v", s)
	}
	// Without --histogram, nothing is made up.
	r = runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-rocksdb-ri1.txt")}, append(runArgs, "--histogram=false")...)
	if strings.Contains(r.record, "--histogram") || r.summary.LatencyP50MS != 0 || r.summary.LatencyP999MS != 0 {
		t.Errorf("--histogram=false: %+v\n%s", r.summary, r.record)
	}
}
