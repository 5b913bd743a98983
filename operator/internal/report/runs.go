package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/significance"
)

// notSignificant is the ratio cell of a difference the runs' noise covers.
const notSignificant = "n.s."

// vsCell is a ratio cell: "0.81x", or "n.s." when the significance test found no difference; a ratio that
// could not be tested (too few runs) stays a ratio, and the report says why below the table.
func vsCell(ratio string, v v1alpha1.Verdict) string {
	if v == v1alpha1.VerdictNoSignificantDifference {
		return notSignificant
	}
	return times(ratio)
}

// verdictText is a verdict with its p-value in words: "better (p=0.003)", "no significant difference
// (p=0.41)".
func verdictText(v v1alpha1.Verdict, p string) string {
	switch v {
	case "":
		return "-"
	case v1alpha1.VerdictTooFewRuns:
		return "too few runs"
	}
	words := map[v1alpha1.Verdict]string{v1alpha1.VerdictBetter: "better", v1alpha1.VerdictWorse: "worse",
		v1alpha1.VerdictNoSignificantDifference: "no significant difference"}[v]
	if words == "" {
		words = string(v)
	}
	if x, ok := num(p); ok {
		words += " (" + significance.PText(x) + ")"
	}
	return words
}

// withCI is "101.23 ± 3.10", or the mean alone when there is no interval.
func withCI(mean, ci string) string {
	if ci == "" {
		return dash(mean)
	}
	return dash(mean) + " ± " + ci
}

// runsTable writes, when targets ran more than once, how their runs differ: the best run, the mean with its
// 95% confidence interval, best-to-best ratios, and whether each difference from the baseline is larger than
// the runs' noise.
func runsTable(w io.Writer, b *v1alpha1.Benchmark) error {
	several := false
	for _, ts := range b.Status.Targets {
		several = several || ts.State != v1alpha1.TargetFailed && ts.AcrossRuns != nil && ts.AcrossRuns.Runs > 1
	}
	if !several {
		return nil
	}
	pct := strings.ToUpper(pctLabel(b))
	what := "across runs"
	if b.Spec.MeasureInterference {
		what = "across the runs together"
	}
	fmt.Fprintln(w, what+" (mean ± half-width of its 95% confidence interval; best-to-best ratios; differences "+
		"tested by Welch's t-test at 5%):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "TARGET\tRUNS\tTPS\tBEST TPS (RUN)\t%s MS\tBEST %s MS\tBEST TPS VS\tBEST %s VS\tTPS\t%s\n", pct, pct, pct, pct)
	for _, ts := range b.Status.Targets {
		s, m := ts.AcrossRuns, ts.Mean
		if ts.State == v1alpha1.TargetFailed || s == nil || m == nil {
			continue
		}
		name := ts.Name
		bestVs, bestPctVs, tpsV, pctV := "-", "-", "-", "-"
		if ts.Name == b.Status.Baseline {
			name += " (baseline)"
		} else if v := ts.VsBaseline; v != nil {
			bestVs, bestPctVs = times(v.BestTPS), times(v.BestLatencyPct)
			tpsV, pctV = verdictText(v.TPSVerdict, v.TPSPValue), verdictText(v.LatencyPctVerdict, v.LatencyPctPValue)
		}
		best := dash(s.BestTPS)
		if s.BestIteration > 0 {
			best += fmt.Sprintf(" (%d)", s.BestIteration)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, s.Runs, withCI(m.TPS, s.TPSCI95), best,
			withCI(m.LatencyPctMs, s.LatencyPctCI95Ms), dash(s.BestLatencyPctMs), bestVs, bestPctVs, tpsV, pctV)
	}
	return tw.Flush()
}

// runsWarning says when the targets ran too few times for the ratios to be told from noise ("" when enough).
func runsWarning(b *v1alpha1.Benchmark) string {
	fewest := int32(-1)
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed || ts.AcrossRuns == nil || ts.VsBaseline == nil && ts.Name != b.Status.Baseline {
			continue
		}
		if fewest < 0 || ts.AcrossRuns.Runs < fewest {
			fewest = ts.AcrossRuns.Runs
		}
	}
	if fewest < 0 || b.Status.Baseline == "" {
		return ""
	}
	switch {
	case fewest < significance.MinRuns:
		return fmt.Sprintf("warning: %d run per target: the ratios are not tested against run-to-run noise (two identical "+
			"runs differed by 8%% on a 2-core machine); set spec.iterations to %d or more", fewest, significance.AdvisedRuns)
	case fewest < significance.AdvisedRuns:
		return fmt.Sprintf("warning: %d runs per target: only differences of several standard deviations can be told from "+
			"noise; set spec.iterations to %d or more", fewest, significance.AdvisedRuns)
	}
	return ""
}
