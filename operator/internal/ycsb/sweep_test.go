package ycsb

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestParseSweep: every run of the recorded sweep parses into reads and updates with their tails, and the failed
// operations (those SIGINT cancelled in flight) are never more than the run's threads.
func TestParseSweep(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "sweep", "run-threads*.txt"))
	if err != nil || len(files) < 3 {
		t.Fatalf("%d sweep captures, %v", len(files), err)
	}
	threadsOf := regexp.MustCompile(`run-threads(\d+)`)
	for _, f := range files {
		name := filepath.Join("sweep", filepath.Base(f))
		r, err := parseFile(t, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		threads, _ := strconv.Atoi(threadsOf.FindStringSubmatch(f)[1])
		var failed int64
		for _, want := range []string{OpRead, OpUpdate} {
			o, ok := r.Op(want)
			if !ok || o.Count == 0 || o.Percentiles[99] <= 0 || o.Percentiles[99.9] < o.Percentiles[99] {
				t.Errorf("%s: %s %+v", name, want, o)
			}
			failed += o.Errors
		}
		if failed > int64(threads) {
			t.Errorf("%s: %d failed operations with %d threads: more than SIGINT can cancel in flight", name, failed, threads)
		}
		s := Sum(r)
		lines := finalLines(t, name)
		if s.Count != int64(num(t, lines["TOTAL"]["Count"])) || s.P99MS != num(t, lines["TOTAL"]["99th(us)"])/1000 {
			t.Errorf("%s: totals %+v against the TOTAL line %v", name, s, lines["TOTAL"])
		}
	}
}
