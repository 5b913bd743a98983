// Package report turns a Benchmark's status, and the interval series kept in its ConfigMaps, into what people
// read: the comparison table, several Benchmarks side by side, exports for notebooks, the live view and the
// one-line result of `kubectl get benchmarks`. It is pure: it reads objects, it fetches nothing.
package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// Stack names a target's stack for people: engine and where its data lives.
func Stack(ts v1alpha1.TargetStatus) string {
	engine := map[string]string{string(v1alpha1.EngineRocksDB): "MyRocks", string(v1alpha1.EngineInnoDB): "InnoDB"}[ts.Engine]
	if engine == "" {
		engine = ts.Engine
	}
	switch {
	case engine == "":
		return "?"
	case ts.Storage == "zoned" && (ts.Filesystem == "" || ts.Filesystem == string(v1alpha1.FilesystemZenFS)):
		return engine + " on ZenFS"
	case ts.Storage == "zoned":
		return engine + " on zoned " + ts.Filesystem
	case ts.Storage == "volume":
		return engine + " on a volume"
	case ts.Storage == "device" && ts.Filesystem != "":
		return engine + " on " + ts.Filesystem + " on a conventional device"
	case ts.Storage != "":
		return engine + " on " + ts.Storage
	}
	return engine
}

// pctLabel is the latency column's label: "p95".
func pctLabel(b *v1alpha1.Benchmark) string {
	p := b.Spec.Percentile
	if p == 0 {
		p = 95
	}
	return fmt.Sprintf("p%d", p)
}

// dash shows a missing figure as "-", never as a zero.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// times formats a ratio as "0.81x".
func times(s string) string {
	if s == "" {
		return "-"
	}
	v, ok := num(s)
	if !ok {
		return s
	}
	return fmt.Sprintf("%.2fx", v)
}

// Headline is the line above a table: what ran and where it is.
func Headline(b *v1alpha1.Benchmark) string {
	if b.IsFio() {
		return fioHeadline(b)
	}
	if isYCSB(b) {
		return ycsbHeadline(b)
	}
	s := b.Spec
	line := fmt.Sprintf("benchmark %s/%s: %s, %d tables x %d rows, %s threads, %d x %d s; %s", b.Namespace, b.Name, s.WorkloadLabel(),
		s.Tables, s.TableSize, threadsLabel(b), s.Runs(), s.DurationSeconds, dash(string(b.Status.Phase)))
	if b.Status.Progress != "" && b.Status.Phase != v1alpha1.BenchmarkCompleted {
		line += " (" + b.Status.Progress + ")"
	}
	return line
}

func threadsLabel(b *v1alpha1.Benchmark) string {
	if len(b.Spec.ThreadSweep) > 0 {
		return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(b.Spec.ThreadSweep)), ","), "[]")
	}
	return fmt.Sprint(b.Spec.Threads)
}

// Table writes the comparison of one Benchmark: one row per target with its mean figures and its ratios to the
// baseline; a failed target is marked FAILED with its reason and, below the table, its cause. The latency
// distribution, a thread sweep or the workloads of spec.workloads, the runs alone against together of
// spec.measureInterference, the data on disk and the drive's write amplification and usable capacity follow
// when the status has them, then the notes the operator attached to targets.
func Table(w io.Writer, b *v1alpha1.Benchmark) error {
	if b.IsFio() {
		return fioTable(w, b)
	}
	fmt.Fprintln(w, Headline(b))
	pct := pctLabel(b)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "TARGET\tSTACK\tSTATE\tTPS\tAVG MS\t%s MS\tMAX MS\tTPS DEV%%\t%s DEV%%\tDEV B/TX\tTPS VS\t%s VS\n",
		strings.ToUpper(pct), strings.ToUpper(pct), strings.ToUpper(pct))
	var tail []string
	nsSeen := false
	for _, ts := range b.Status.Targets {
		stack := Stack(ts)
		if ts.Name == b.Status.Baseline {
			stack += " (baseline)"
		}
		if ts.State == v1alpha1.TargetFailed {
			fmt.Fprintf(tw, "%s\t%s\tFAILED (%s)\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", ts.Name, stack, dash(ts.Reason))
			tail = append(tail, fmt.Sprintf("%s: FAILED (%s): %s", ts.Name, dash(ts.Reason), firstLine(ts.Message)))
			continue
		}
		m := ts.Mean
		if m == nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", ts.Name, stack, dash(string(ts.State)))
			continue
		}
		tpsVs, pctVs := "-", "-"
		if v := ts.VsBaseline; v != nil {
			tpsVs, pctVs = vsCell(v.TPS, v.TPSVerdict), vsCell(v.LatencyPct, v.LatencyPctVerdict)
			nsSeen = nsSeen || tpsVs == notSignificant || pctVs == notSignificant
		}
		state := string(ts.State)
		if !InSteadyState(ts) {
			state += " (not steady)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ts.Name, stack, state, dash(m.TPS), dash(m.LatencyAvgMs),
			dash(m.LatencyPctMs), dash(m.LatencyMaxMs), dash(m.TPSRelDevPct), dash(m.LatencyRelDevPct), dash(m.BytesPerTransaction), tpsVs, pctVs)
		for _, n := range ts.Notes {
			tail = append(tail, ts.Name+": note: "+n)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if nsSeen || workloadsNotSignificant(b) || interferenceNotSignificant(b) {
		fmt.Fprintln(w, notSignificant+": no significant difference: the runs' own spread covers it (the across-runs table below)")
	}
	if err := geometryTable(w, b); err != nil {
		return err
	}
	sharedDrives(w, b)
	clientsPlacement(w, b)
	if err := runsTable(w, b); err != nil {
		return err
	}
	if err := distribution(w, b); err != nil {
		return err
	}
	if err := sweepTable(w, b); err != nil {
		return err
	}
	if err := ycsbTable(w, b); err != nil {
		return err
	}
	if err := workloadsTable(w, b); err != nil {
		return err
	}
	if err := interferenceTable(w, b); err != nil {
		return err
	}
	if err := sizeTable(w, b); err != nil {
		return err
	}
	if err := driveTables(w, b); err != nil {
		return err
	}
	for _, l := range tail {
		fmt.Fprintln(w, l)
	}
	switch {
	case len(b.Status.Targets) > 0 && b.Spec.MeasureInterference:
		fmt.Fprintf(w, "means over the runs together (each target ran alone first), %d run(s) of %d done; ratios are target / %s (TPS above 1 and %s below 1 are better)\n",
			b.Status.Iteration, RunsTotal(b), dash(b.Status.Baseline), pct)
	case len(b.Status.Targets) > 0 && len(b.Spec.Workloads) > 0:
		fmt.Fprintf(w, "means over each workload's run(s), %d run(s) of %d done; ratios are target / %s (TPS above 1 and %s below 1 are better)\n",
			b.Status.Iteration, RunsTotal(b), dash(b.Status.Baseline), pct)
	case len(b.Status.Targets) > 0:
		fmt.Fprintf(w, "means over %d run(s) of %d; ratios are target / %s (TPS above 1 and %s below 1 are better)\n",
			b.Status.Iteration, RunsTotal(b), dash(b.Status.Baseline), pct)
	}
	if warn := runsWarning(b); warn != "" {
		fmt.Fprintln(w, warn)
	}
	return nil
}

// distribution writes the latency distribution of each target (means over its runs), when the runner
// recorded sysbench's histogram.
func distribution(w io.Writer, b *v1alpha1.Benchmark) error {
	var rows []string
	for _, ts := range b.Status.Targets {
		m := ts.Mean
		if ts.State == v1alpha1.TargetFailed || m == nil || m.LatencyP50Ms == "" {
			continue
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\n", ts.Name, m.LatencyP50Ms, dash(m.LatencyP95Ms), dash(m.LatencyP99Ms), dash(m.LatencyP999Ms), dash(m.LatencyMaxMs)))
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "latency distribution of the runs (ms; sysbench --histogram, means over the runs):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tP50\tP95\tP99\tP99.9\tMAX")
	for _, r := range rows {
		fmt.Fprint(tw, r)
	}
	return tw.Flush()
}

// sweepTable writes, for a thread sweep, each target's figures at each thread count: the curve of latency
// against throughput as the load rises.
func sweepTable(w io.Writer, b *v1alpha1.Benchmark) error {
	if len(b.Spec.ThreadSweep) == 0 {
		return nil
	}
	pct := strings.ToUpper(pctLabel(b))
	fmt.Fprintf(w, "thread sweep (TPS and latency above are at %d threads):\n", b.Spec.ThreadSweep[len(b.Spec.ThreadSweep)-1])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "TARGET\tTHREADS\tTPS\tAVG MS\t%s MS\tP99 MS\tTPS VS\t%s VS\n", pct, pct)
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		for _, p := range ts.Sweep {
			if p.Mean == nil {
				continue
			}
			tpsVs, pctVs := "-", "-"
			if v := p.VsBaseline; v != nil {
				tpsVs, pctVs = vsCell(v.TPS, v.TPSVerdict), vsCell(v.LatencyPct, v.LatencyPctVerdict)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", ts.Name, p.Threads, dash(p.Mean.TPS), dash(p.Mean.LatencyAvgMs),
				dash(p.Mean.LatencyPctMs), dash(p.Mean.LatencyP99Ms), tpsVs, pctVs)
		}
	}
	return tw.Flush()
}

// MiB formats bytes in MiB with two decimals.
func MiB(n int64) string {
	if n <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(n)/(1<<20))
}

// sizeTable writes each target's data on disk after the prepare and after the runs, and its size against the
// baseline's (below 1 takes less space).
func sizeTable(w io.Writer, b *v1alpha1.Benchmark) error {
	var base *v1alpha1.DataSize
	found := false
	for _, ts := range b.Status.Targets {
		if ts.Size != nil {
			found = true
			if ts.Name == b.Status.Baseline {
				base = ts.Size
			}
		}
	}
	if !found {
		return nil
	}
	vs := func(a, b int64) string {
		if a <= 0 || b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", float64(a)/float64(b))
	}
	fmt.Fprintln(w, "data on disk (MiB; MyRocks: SST files, InnoDB: the tables' tablespaces):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tSOURCE\tAFTER PREPARE\tAFTER RUNS\tPREPARE VS\tRUNS VS")
	for _, ts := range b.Status.Targets {
		if ts.Size == nil {
			continue
		}
		pv, rv := "-", "-"
		if base != nil {
			pv, rv = vs(ts.Size.AfterPrepareBytes, base.AfterPrepareBytes), vs(ts.Size.AfterRunBytes, base.AfterRunBytes)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ts.Name, dash(ts.Size.Source), MiB(ts.Size.AfterPrepareBytes), MiB(ts.Size.AfterRunBytes), pv, rv)
	}
	return tw.Flush()
}

// Compare writes several Benchmarks side by side: one row per Benchmark and target (and workload, with
// spec.workloads), with what differs between them (zone geometry, workload, threads, duration) next to the figures.
func Compare(w io.Writer, bs []*v1alpha1.Benchmark) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tTARGET\tSTACK\tZONES\tWORKLOAD\tTHREADS\tSECONDS\tSTATE\tTPS\tAVG MS\tPCT\tPCT MS\tTPS DEV%\tTPS VS\tPCT VS\tBASELINE")
	for _, b := range bs {
		for _, ts := range b.Status.Targets {
			state := string(ts.State)
			if ts.State == v1alpha1.TargetFailed {
				state = "FAILED (" + dash(ts.Reason) + ")"
			}
			for _, r := range compareRows(b, ts) {
				var m v1alpha1.RunFigures
				if r.mean != nil {
					m = *r.mean
				}
				tpsVs, pctVs := "-", "-"
				if v := r.vs; v != nil {
					tpsVs, pctVs = vsCell(v.TPS, v.TPSVerdict), vsCell(v.LatencyPct, v.LatencyPctVerdict)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.Name, ts.Name, Stack(ts), ZoneLabel(ts.Zones),
					r.workload, threadsLabel(b), b.Spec.DurationSeconds, state, dash(m.TPS), dash(m.LatencyAvgMs), pctLabel(b),
					dash(m.LatencyPctMs), dash(m.TPSRelDevPct), tpsVs, pctVs, dash(b.Status.Baseline))
			}
		}
	}
	return tw.Flush()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
