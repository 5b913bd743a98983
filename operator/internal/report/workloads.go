package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// With spec.workloads the target's own figures (mean, spread, ratios, drive mean) are those of the first
// workload; status.targets[].workloads[] has each workload's. What follows shows them all.

// runWorkload is the workload of a recorded run; statuses recorded before runs carried it fall back to the
// spec's plan.
func runWorkload(b *v1alpha1.Benchmark, it *v1alpha1.IterationResult) string {
	if it.Workload != "" {
		return it.Workload
	}
	return b.Spec.RunWorkload(it.Iteration)
}

// meanWorkload is the workload a target's own mean is of: the only one, or the first of spec.workloads.
func meanWorkload(b *v1alpha1.Benchmark) string { return b.Spec.RunWorkloads()[0] }

// workloadsTable writes, with spec.workloads, each target's figures for each workload.
func workloadsTable(w io.Writer, b *v1alpha1.Benchmark) error {
	if len(b.Spec.Workloads) == 0 {
		return nil
	}
	var rows []string
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		for _, p := range ts.Workloads {
			if p.Mean == nil {
				continue
			}
			tpsVs, pctVs := "-", "-"
			if v := p.VsBaseline; v != nil {
				tpsVs, pctVs = vsCell(v.TPS, v.TPSVerdict), vsCell(v.LatencyPct, v.LatencyPctVerdict)
			}
			rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ts.Name, p.Workload, dash(p.Mean.TPS),
				dash(p.Mean.LatencyAvgMs), dash(p.Mean.LatencyPctMs), dash(p.Mean.LatencyP99Ms), dash(p.Mean.TPSRelDevPct), tpsVs, pctVs))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	pct := strings.ToUpper(pctLabel(b))
	fmt.Fprintf(w, "workloads (TPS and latency above are %s's):\n", meanWorkload(b))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "TARGET\tWORKLOAD\tTPS\tAVG MS\t%s MS\tP99 MS\tTPS DEV%%\tTPS VS\t%s VS\n", pct, pct)
	for _, r := range rows {
		fmt.Fprint(tw, r)
	}
	return tw.Flush()
}

// workloadsNotSignificant says whether a workload's ratio shows as n.s. in the workloads table.
func workloadsNotSignificant(b *v1alpha1.Benchmark) bool {
	if len(b.Spec.Workloads) == 0 {
		return false
	}
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		for _, p := range ts.Workloads {
			if v := p.VsBaseline; p.Mean != nil && v != nil && (v.TPSVerdict == v1alpha1.VerdictNoSignificantDifference ||
				v.LatencyPctVerdict == v1alpha1.VerdictNoSignificantDifference) {
				return true
			}
		}
	}
	return false
}

// compareRow is one row of Compare: a target's figures for one workload.
type compareRow struct {
	workload string
	mean     *v1alpha1.RunFigures
	vs       *v1alpha1.Ratios
}

// compareRows are a target's rows in Compare: one per workload with spec.workloads, else its mean under the
// Benchmark's workload label.
func compareRows(b *v1alpha1.Benchmark, ts v1alpha1.TargetStatus) []compareRow {
	if ts.State == v1alpha1.TargetFailed {
		return []compareRow{{workload: b.Spec.WorkloadLabel()}}
	}
	var rows []compareRow
	if len(b.Spec.Workloads) > 0 {
		for _, p := range ts.Workloads {
			rows = append(rows, compareRow{workload: p.Workload, mean: p.Mean, vs: p.VsBaseline})
		}
	}
	if len(rows) == 0 {
		label := b.Spec.WorkloadLabel()
		if ts.Mean != nil {
			label = meanWorkload(b) // the first workload's, while the others have no figures yet
		}
		rows = append(rows, compareRow{workload: label, mean: ts.Mean, vs: ts.VsBaseline})
	}
	return rows
}

// ExportWorkloadPoint is one target's mean, spread, ratios and drive mean for one workload of spec.workloads.
type ExportWorkloadPoint struct {
	Workload   string              `json:"workload"`
	Mean       map[string]*float64 `json:"mean"`
	AcrossRuns map[string]*float64 `json:"acrossRuns,omitempty"`
	VsBaseline map[string]*float64 `json:"vsBaseline,omitempty"`
	Verdicts   map[string]string   `json:"verdicts,omitempty"`
	DriveMean  *ExportDrive        `json:"driveMean,omitempty"`
}

func exportWorkloads(ts v1alpha1.TargetStatus) []ExportWorkloadPoint {
	var out []ExportWorkloadPoint
	for _, p := range ts.Workloads {
		out = append(out, ExportWorkloadPoint{Workload: p.Workload, Mean: figureMap(p.Mean), AcrossRuns: spreadMap(p.AcrossRuns),
			VsBaseline: ratioMap(p.VsBaseline), Verdicts: verdictMap(p.VsBaseline), DriveMean: exportDrive(p.DriveMean)})
	}
	return out
}
