package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// With spec.measureInterference each target first runs alone, then every target runs together; the target's
// own figures (mean, spread, ratios, drive mean) are those of its runs together, and status.targets[].alone
// holds its runs alone with the interference, together over alone. What follows shows them.

// aloneMean labels, in the summary CSV's iteration column, the row of a target's mean over its runs alone.
const aloneMean = "alone-mean"

// runAlone says whether a recorded run was of its target alone; statuses recorded without the mark fall back
// to the spec's plan.
func runAlone(b *v1alpha1.Benchmark, target string, it *v1alpha1.IterationResult) bool {
	return it.Alone || b.Spec.RunAlone(it.Iteration) == target
}

// interferenceShown is a target's alone figures when the interference table shows them: a target not failed
// whose runs alone have a mean.
func interferenceShown(ts v1alpha1.TargetStatus) *v1alpha1.AloneResult {
	if ts.State == v1alpha1.TargetFailed || ts.Alone == nil || ts.Alone.Mean == nil {
		return nil
	}
	return ts.Alone
}

// interferenceTable writes, when targets ran alone, each target's figures alone and together and their
// ratios, together / alone, with the significance of each difference.
func interferenceTable(w io.Writer, b *v1alpha1.Benchmark) error {
	var shown []v1alpha1.TargetStatus
	withBytes := false
	for _, ts := range b.Status.Targets {
		if a := interferenceShown(ts); a != nil {
			shown = append(shown, ts)
			withBytes = withBytes || a.Interference != nil && a.Interference.BytesPerTransaction != ""
		}
	}
	if len(shown) == 0 {
		return nil
	}
	pct := strings.ToUpper(pctLabel(b))
	fmt.Fprintln(w, "interference (runs together / runs alone):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := fmt.Sprintf("TARGET\tALONE TPS\tTOGETHER TPS\tTPS T/A\tALONE %s MS\tTOGETHER %s MS\t%s T/A", pct, pct, pct)
	if withBytes {
		head += "\tB/TX T/A"
	}
	fmt.Fprintln(tw, head)
	for _, ts := range shown {
		a := ts.Alone
		var together v1alpha1.RunFigures
		if ts.Mean != nil {
			together = *ts.Mean
		}
		tpsTA, pctTA, bytesTA := "-", "-", "-"
		if v := a.Interference; v != nil {
			tpsTA, pctTA, bytesTA = vsCell(v.TPS, v.TPSVerdict), vsCell(v.LatencyPct, v.LatencyPctVerdict), times(v.BytesPerTransaction)
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", ts.Name, dash(a.Mean.TPS), dash(together.TPS), tpsTA,
			dash(a.Mean.LatencyPctMs), dash(together.LatencyPctMs), pctTA)
		if withBytes {
			row += "\t" + bytesTA
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "T/A: TPS below 1 and %s above 1 are what the other targets cost running together\n", pctLabel(b))
	return nil
}

// interferenceNotSignificant says whether a ratio shows as n.s. in the interference table.
func interferenceNotSignificant(b *v1alpha1.Benchmark) bool {
	for _, ts := range b.Status.Targets {
		if a := interferenceShown(ts); a != nil && a.Interference != nil &&
			(a.Interference.TPSVerdict == v1alpha1.VerdictNoSignificantDifference ||
				a.Interference.LatencyPctVerdict == v1alpha1.VerdictNoSignificantDifference) {
			return true
		}
	}
	return false
}

// interferenceResult is the one-line result's part on interference: "together/alone TPS: a 0.61x, b n.s."
// ("" until a target has a ratio).
func interferenceResult(b *v1alpha1.Benchmark) string {
	var parts []string
	for _, ts := range b.Status.Targets {
		if a := interferenceShown(ts); a != nil && a.Interference != nil && a.Interference.TPS != "" {
			parts = append(parts, ts.Name+" "+vsCell(a.Interference.TPS, a.Interference.TPSVerdict))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "together/alone TPS: " + strings.Join(parts, ", ")
}

// ExportAlone is a target's runs alone (spec.measureInterference): their mean and spread, and the interference,
// together / alone, with the verdicts of the significance test (Better means better together).
type ExportAlone struct {
	Mean         map[string]*float64 `json:"mean"`
	AcrossRuns   map[string]*float64 `json:"acrossRuns,omitempty"`
	Interference map[string]*float64 `json:"interference,omitempty"`
	Verdicts     map[string]string   `json:"verdicts,omitempty"`
}

func exportAlone(ts v1alpha1.TargetStatus) *ExportAlone {
	a := ts.Alone
	if a == nil {
		return nil
	}
	return &ExportAlone{Mean: figureMap(a.Mean), AcrossRuns: spreadMap(a.AcrossRuns), Interference: ratioMap(a.Interference),
		Verdicts: verdictMap(a.Interference)}
}

// aloneCell is the CSV's alone column.
func aloneCell(alone bool) string { return strconv.FormatBool(alone) }
