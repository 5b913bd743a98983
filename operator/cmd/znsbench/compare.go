package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// compareCmd prints run summaries side by side, with ratios against the last one (the baseline): the
// comparison a lab reads off a hand-run benchmark.
func compareCmd(files []string, stdout, stderr io.Writer) int {
	if len(files) == 0 {
		fmt.Fprintln(stderr, "usage: znsbench compare SUMMARY.json... (the last one is the baseline)")
		return 2
	}
	var sums []benchresult.Summary
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		s, err := benchresult.Decode([]byte(strings.TrimSpace(string(raw))))
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", f, err)
			return 1
		}
		if s.Target == "" {
			s.Target = filepath.Base(filepath.Dir(f))
		}
		sums = append(sums, s)
	}
	base := sums[len(sums)-1]
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "target\tTPS\tQPS\tlat avg ms\tlat p%g ms\tlat max ms\terr/s\tTPS reldev %%\tp%g reldev %%\tTPS vs %s\tp%g vs %s\t\n",
		base.Percentile, base.Percentile, base.Target, base.Percentile, base.Target)
	for _, s := range sums {
		fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t%s\t%s\t\n", s.Target, s.TPS, s.QPS,
			s.LatencyAvgMS, s.LatencyPctMS, s.LatencyMaxMS, s.ErrorsPerSec, s.TPSRelDevPct, s.LatencyRelDevPct,
			ratio(s.TPS, base.TPS), ratio(s.LatencyPctMS, base.LatencyPctMS))
	}
	if err := w.Flush(); err != nil {
		return 1
	}
	return 0
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}
