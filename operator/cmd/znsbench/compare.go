package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// compareCmd prints run summaries side by side, with ratios against the last one (the baseline): the
// comparison a lab reads off a hand-run benchmark. A failed run is marked FAILED with its reason, never shown
// as a row of zeros, and makes the exit status 1: a script must not take a partial comparison for a whole one.
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
	pct := base.Percentile
	for _, s := range sums { // a failed baseline carries none
		if pct == 0 {
			pct = s.Percentile
		}
	}
	// Runs that counted their device's writes (--device) get a column of bytes written per transaction.
	device := slices.ContainsFunc(sums, func(s benchresult.Summary) bool { return s.DeviceWrittenBytes > 0 })
	devHeader, devNone := "", ""
	if device {
		devHeader, devNone = "dev KiB/txn\t", "-\t"
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "target\tstatus\tTPS\tQPS\tlat avg ms\tlat p%g ms\tlat max ms\terr/s\tTPS reldev %%\tp%g reldev %%\tTPS vs %s\tp%g vs %s\t%s\n",
		pct, pct, base.Target, pct, base.Target, devHeader)
	var failed, notes []string
	for _, s := range sums {
		if !s.OK {
			reason := s.Reason
			if reason == "" {
				reason = "unknown reason"
			}
			fmt.Fprintf(w, "%s\tFAILED\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n", s.Target, devNone)
			cause, _, _ := strings.Cut(s.Error, "\n")
			failed = append(failed, fmt.Sprintf("%s: FAILED (%s): %s", s.Target, reason, cause))
			continue
		}
		status := "ok"
		if share, ok := s.IgnoredErrorShare(); ok && share > benchresult.ManyIgnoredErrors {
			status = "ok*"
			notes = append(notes, fmt.Sprintf("%s: * %.1f%% of transaction attempts ended in an ignored error (%.2f/s): TPS counts only the committed ones",
				s.Target, 100*share, s.ErrorsPerSec))
		}
		tpsDev, latDev := "-", "-"
		if s.Intervals >= 2 {
			tpsDev, latDev = fmt.Sprintf("%.1f", s.TPSRelDevPct), fmt.Sprintf("%.1f", s.LatencyRelDevPct)
		}
		tpsRatio, latRatio := "-", "-"
		if base.OK {
			tpsRatio, latRatio = ratio(s.TPS, base.TPS), ratio(s.LatencyPctMS, base.LatencyPctMS)
		}
		dev := devNone
		if device && s.BytesPerTransaction > 0 {
			dev = fmt.Sprintf("%.1f\t", s.BytesPerTransaction/1024)
		}
		fmt.Fprintf(w, "%s\t%s\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\n", s.Target, status, s.TPS, s.QPS,
			s.LatencyAvgMS, s.LatencyPctMS, s.LatencyMaxMS, s.ErrorsPerSec, tpsDev, latDev, tpsRatio, latRatio, dev)
	}
	if err := w.Flush(); err != nil {
		return 1
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
	for _, f := range failed {
		fmt.Fprintln(stdout, f)
	}
	if len(failed) > 0 {
		msg := fmt.Sprintf("znsbench compare: %d of %d runs failed", len(failed), len(sums))
		if !base.OK {
			msg += "; the baseline is one of them, so there are no ratios"
		}
		fmt.Fprintln(stderr, msg)
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
