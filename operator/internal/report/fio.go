package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// A fio Benchmark (spec.tool fio) measures devices: none of the database figures of the main table apply, so its
// report is a table of its own: each target's device, then each run's figures per direction.

// fioHeadline is the Headline of a fio Benchmark.
func fioHeadline(b *v1alpha1.Benchmark) string {
	f := b.Spec.Fio
	profiles := make([]string, len(f.Profiles))
	for i, p := range f.Profiles {
		profiles[i] = string(p)
	}
	runtime := f.RuntimeSeconds
	if runtime <= 0 {
		runtime = 60
	}
	line := fmt.Sprintf("benchmark %s/%s: fio on %d device(s), %s, %d s a run; %s", b.Namespace, b.Name, len(b.Spec.Targets),
		strings.Join(profiles, ", "), runtime, dash(string(b.Status.Phase)))
	if b.Status.Progress != "" && b.Status.Phase != v1alpha1.BenchmarkCompleted {
		line += " (" + b.Status.Progress + ")"
	}
	return line
}

// fioTable writes a fio Benchmark's report: per target its device and what it held, then per run and direction
// the bandwidth, IOPS and completion latency percentiles; a failed target's cause below.
func fioTable(w io.Writer, b *v1alpha1.Benchmark) error {
	fmt.Fprintln(w, fioHeadline(b))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "TARGET\tDEVICE\tSTATE\tFOUND\tBLOCK LAYER WRITTEN\n")
	var runs, tail []string
	for _, ts := range b.Status.Targets {
		device, found, written := "-", "-", "-"
		if f := ts.Fio; f != nil {
			if f.Device != "" {
				device = "/dev/" + f.Device + " on " + dash(f.Node)
				if f.Zoned {
					device += " (zoned)"
				}
			}
			found = dash(f.Found)
			if f.Drive != nil {
				written = bytesCell(f.Drive.BlockLayerWrittenBytes)
			}
			for _, r := range f.Results {
				for _, d := range fioDirections(r) {
					runs = append(runs, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ts.Name, r.Profile, dash(r.Point), d.name,
						mibPerSec(d.figures.BytesPerSec), dash(d.figures.IOPS), dash(d.figures.LatencyP50Us), dash(d.figures.LatencyP99Us),
						dash(d.figures.LatencyP999Us)))
				}
			}
		}
		state := string(ts.State)
		if ts.State == v1alpha1.TargetFailed {
			state = "FAILED (" + dash(ts.Reason) + ")"
			tail = append(tail, fmt.Sprintf("%s: FAILED (%s): %s", ts.Name, dash(ts.Reason), firstLine(ts.Message)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ts.Name, device, dash(state), found, written)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(runs) > 0 {
		fmt.Fprintln(w, "fio runs (per direction; completion latency in microseconds):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "TARGET\tPROFILE\tPOINT\tDIR\tMIB/S\tIOPS\tP50 US\tP99 US\tP99.9 US\n")
		for _, r := range runs {
			fmt.Fprint(tw, r)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, l := range tail {
		fmt.Fprintln(w, l)
	}
	return nil
}

// fioDirection is one direction a fio run did I/O in.
type fioDirection struct {
	name    string
	figures *v1alpha1.FioDirection
}

// fioDirections are the directions r did I/O in, read first: a run has no figures in a direction it did not use.
func fioDirections(r v1alpha1.FioRunResult) []fioDirection {
	var out []fioDirection
	if r.Read != nil {
		out = append(out, fioDirection{"read", r.Read})
	}
	if r.Write != nil {
		out = append(out, fioDirection{"write", r.Write})
	}
	return out
}

// fioFigureColumns are a direction's figures in the order of FioCSV's columns.
var fioFigureColumns = []column[v1alpha1.FioDirection]{
	{"bytes", func(d *v1alpha1.FioDirection) string { return strconv.FormatInt(d.Bytes, 10) }},
	{"bytes_per_sec", func(d *v1alpha1.FioDirection) string { return d.BytesPerSec }},
	{"iops", func(d *v1alpha1.FioDirection) string { return d.IOPS }},
	{"latency_p50_us", func(d *v1alpha1.FioDirection) string { return d.LatencyP50Us }},
	{"latency_p99_us", func(d *v1alpha1.FioDirection) string { return d.LatencyP99Us }},
	{"latency_p999_us", func(d *v1alpha1.FioDirection) string { return d.LatencyP999Us }},
}

// FioCSV writes a fio Benchmark's figures: one row per target, run (a profile, or a grid point) and direction;
// tidy data, one header line. A failed target's runs before its failure are measurements and have rows; its
// state and reason are in the JSON export.
func FioCSV(w io.Writer, d Data) error {
	b := d.Benchmark
	if !b.IsFio() {
		return fmt.Errorf("benchmark %s/%s runs %s, not fio: it has no device figures (its CSVs are summary, series and, for ycsb, operations)",
			b.Namespace, b.Name, toolName(b))
	}
	cw := csv.NewWriter(w)
	head := []string{"benchmark", "target", "node", "device", "zoned", "profile", "point", "direction"}
	for _, c := range fioFigureColumns {
		head = append(head, c.name)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, ts := range b.Status.Targets {
		f := ts.Fio
		if f == nil {
			continue
		}
		for _, r := range f.Results {
			for _, dir := range fioDirections(r) {
				rec := []string{b.Name, ts.Name, f.Node, f.Device, strconv.FormatBool(f.Zoned), string(r.Profile), r.Point, dir.name}
				if err := cw.Write(append(rec, values(dir.figures, fioFigureColumns)...)); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// toolName is spec.tool as the API server defaults it.
func toolName(b *v1alpha1.Benchmark) string {
	if b.Spec.Tool == "" {
		return string(v1alpha1.ToolSysbench)
	}
	return string(b.Spec.Tool)
}

// notForFio refuses a database export (what) of a fio Benchmark, which has no database runs: written anyway, it
// would be empty or carry the spec's unused database defaults (threads, percentile) as if they had run.
func notForFio(b *v1alpha1.Benchmark, what string) error {
	if !b.IsFio() {
		return nil
	}
	return fmt.Errorf("benchmark %s/%s runs fio on devices: it has no %s; its figures are in --data fio (or --format json)",
		b.Namespace, b.Name, what)
}

// mibPerSec writes a rate in bytes per second as MiB/s.
func mibPerSec(s string) string {
	v, ok := num(s)
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f", v/(1<<20))
}

// bytesCell writes a byte count as GiB or MiB.
func bytesCell(s string) string {
	v, ok := num(s)
	switch {
	case !ok:
		return "-"
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	default:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	}
}
