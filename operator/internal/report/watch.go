package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// Watch writes the live view of a Benchmark at now: phase, run, elapsed and estimated remaining time, and per
// target its state and the last interval the operator read from its running runner (status.targets[].live),
// or, between runs, the TPS of its last finished run.
func Watch(w io.Writer, b *v1alpha1.Benchmark, now time.Time) error {
	st := b.Status
	line := fmt.Sprintf("%s/%s  phase %s", b.Namespace, b.Name, dash(string(st.Phase)))
	if st.Iteration > 0 {
		line += fmt.Sprintf("  run %d/%d", RunIndex(b), RunsTotal(b))
	}
	if el, ok := Elapsed(b, now); ok {
		line += "  elapsed " + Short(el)
	}
	if left, ok := Remaining(b, now); ok {
		line += "  remaining ~" + Short(left)
	} else if st.Phase != v1alpha1.BenchmarkCompleted && st.Phase != v1alpha1.BenchmarkFailed {
		line += "  remaining: no estimate before the runs"
	}
	fmt.Fprintln(w, line)
	if st.Progress != "" {
		fmt.Fprintln(w, "  "+st.Progress)
	}
	if r := ResultLine(b); r != "" {
		fmt.Fprintln(w, "  result: "+r)
	}
	pct := pctLabel(b)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "TARGET\tSTATE\tLAST TPS\tLAST %s MS\tAT\tFROM\n", pct)
	for _, ts := range st.Targets {
		state := string(ts.State)
		if ts.State == v1alpha1.TargetFailed {
			state = "FAILED (" + dash(ts.Reason) + ")"
		}
		tps, lat, at, from := "-", "-", "-", "-"
		switch {
		case ts.Live != nil && ts.Live.Iteration == st.Iteration && st.Phase == v1alpha1.BenchmarkRunning:
			tps, lat = dash(ts.Live.TPS), dash(ts.Live.LatencyPctMs)
			at = fmt.Sprintf("%ss into run %d", dash(ts.Live.Seconds), ts.Live.Iteration)
			from = "last interval"
			if !ts.Live.ReadAt.IsZero() {
				from += fmt.Sprintf(" (read %s ago)", Short(now.Sub(ts.Live.ReadAt.Time)))
			}
		case len(ts.Iterations) > 0:
			last := ts.Iterations[len(ts.Iterations)-1]
			tps, lat = dash(last.TPS), dash(last.LatencyPctMs)
			at = fmt.Sprintf("run %d", last.Iteration)
			from = "run mean"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ts.Name, state, tps, lat, at, from)
	}
	return tw.Flush()
}
