// Package chart draws a Benchmark's results with gonum/plot: TPS over time per target, the percentile latency
// over time, bars of mean TPS and latency with their deviation across intervals (with spec.workloads, grouped by
// workload; with spec.measureInterference, alone and together per target), and for a thread sweep latency
// against throughput. It is pure: report.Data in, PNG or SVG bytes out.
package chart

import (
	"fmt"
	"image/color"
	"io"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // registers png
	_ "gonum.org/v1/plot/vg/vgsvg" // registers svg

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

// Kind names one chart.
type Kind string

// The charts.
const (
	TPSOverTime     Kind = "tps"
	LatencyOverTime Kind = "latency"
	Bars            Kind = "bars"
	Distribution    Kind = "distribution"
	Sweep           Kind = "sweep"
)

// Kinds are the charts in the order of the combined figure.
var Kinds = []Kind{TPSOverTime, LatencyOverTime, Bars, Distribution, Sweep, Operations}

// palette tells the targets apart (colour-blind-safe Okabe-Ito colours).
var palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

func colorOf(i int) color.Color { return palette[i%len(palette)] }

// Available says whether a chart can be drawn from d, and why not.
func Available(d report.Data, k Kind) error {
	switch k {
	case TPSOverTime, LatencyOverTime:
		for _, r := range d.Runs {
			if r.Series != nil && r.Series.Len() > 0 {
				return nil
			}
		}
		return fmt.Errorf("%s: no run has an interval series (its ConfigMaps are gone, or no run finished)", k)
	case Bars:
		for _, ts := range d.Benchmark.Status.Targets {
			if ts.State != v1alpha1.TargetFailed && ts.Mean != nil {
				return nil
			}
		}
		if hasAlone(d.Benchmark) { // the runs alone are done, the runs together not yet
			return nil
		}
		return fmt.Errorf("%s: no target has results", k)
	case Distribution:
		for _, ts := range d.Benchmark.Status.Targets {
			if ts.State != v1alpha1.TargetFailed && ts.Mean != nil && ts.Mean.LatencyP50Ms != "" {
				return nil
			}
		}
		return fmt.Errorf("%s: no target has a latency distribution (the runs had no sysbench --histogram)", k)
	case Sweep:
		if len(d.Benchmark.Spec.ThreadSweep) == 0 {
			return fmt.Errorf("%s: the Benchmark is not a thread sweep", k)
		}
		for _, ts := range d.Benchmark.Status.Targets {
			if ts.State != v1alpha1.TargetFailed && len(ts.Sweep) > 0 {
				return nil
			}
		}
		return fmt.Errorf("%s: no target has sweep results yet", k)
	case Operations:
		return operationsAvailable(d)
	}
	return fmt.Errorf("unknown chart %q (want one of %v)", k, Kinds)
}

// Plot builds one chart.
func Plot(d report.Data, k Kind) (*plot.Plot, error) {
	if err := Available(d, k); err != nil {
		return nil, err
	}
	switch k {
	case TPSOverTime:
		return overTime(d, "TPS over time", "TPS", func(r report.Run, i int) float64 { return r.Series.TPS[i] })
	case LatencyOverTime:
		pct := pctLabel(d.Benchmark)
		return overTime(d, pct+" latency over time", pct+" latency (ms)", func(r report.Run, i int) float64 { return r.Series.LatencyMS[i] })
	case Bars:
		return bars(d)
	case Distribution:
		return distribution(d)
	case Sweep:
		return sweep(d)
	case Operations:
		return operations(d)
	}
	return nil, fmt.Errorf("unknown chart %q", k)
}

func pctLabel(b *v1alpha1.Benchmark) string {
	p := b.Spec.Percentile
	if p == 0 {
		p = 95
	}
	return fmt.Sprintf("p%d", p)
}

func title(p *plot.Plot, b *v1alpha1.Benchmark, what string) {
	p.Title.Text = fmt.Sprintf("%s: %s", b.Name, what)
	p.Title.Padding = vg.Points(4)
}

// targetOrder is the status order of the targets, for stable colours across charts.
func targetOrder(b *v1alpha1.Benchmark) map[string]int {
	out := map[string]int{}
	for i, ts := range b.Status.Targets {
		out[ts.Name] = i
	}
	return out
}

// overTime draws one line per target; successive runs follow each other on the time axis (run k starts where
// run k-1's duration ended), so a target's runs read as one line; the line breaks where the target did not run
// (the others' runs alone, with spec.measureInterference).
func overTime(d report.Data, what, ylabel string, y func(report.Run, int) float64) (*plot.Plot, error) {
	b := d.Benchmark
	p := plot.New()
	title(p, b, what)
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	order := targetOrder(b)
	byTarget := map[string][]report.Run{}
	for _, r := range d.Runs {
		if r.Series != nil && r.Series.Len() > 0 {
			byTarget[r.Target] = append(byTarget[r.Target], r)
		}
	}
	names := make([]string, 0, len(byTarget))
	for n := range byTarget {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	runLen := float64(b.Spec.DurationSeconds)
	for _, name := range names {
		for k, runs := range consecutive(byTarget[name]) {
			var xys plotter.XYs
			for _, r := range runs {
				off := float64(r.Iteration-1) * runLen
				for i := 0; i < r.Series.Len(); i++ {
					xys = append(xys, plotter.XY{X: off + r.Series.Time[i], Y: y(r, i)})
				}
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			l.Color = colorOf(order[name])
			l.Width = vg.Points(1.5)
			p.Add(l)
			if k == 0 {
				p.Legend.Add(name, l)
			}
		}
	}
	switch {
	case b.Spec.MeasureInterference:
		p.X.Label.Text = interferenceTimeLabel(b)
	case len(b.Spec.ThreadSweep) > 0:
		p.X.Label.Text = fmt.Sprintf("time (s; runs of %d s at %s threads one after the other)", b.Spec.DurationSeconds,
			strings.Trim(strings.Join(strings.Fields(fmt.Sprint(b.Spec.ThreadSweep)), ","), "[]"))
	case len(b.Spec.Workloads) > 0:
		p.X.Label.Text = fmt.Sprintf("time (s; runs of %d s one after the other, %d per workload: %s)", b.Spec.DurationSeconds,
			max(b.Spec.Iterations, 1), strings.Join(b.Spec.Workloads, ", "))
	case b.Spec.Iterations > 1:
		p.X.Label.Text = fmt.Sprintf("time (s; runs of %d s one after the other)", b.Spec.DurationSeconds)
	}
	return p, nil
}

// consecutive splits a target's runs, in the order of their iterations, where one does not follow the other.
func consecutive(runs []report.Run) [][]report.Run {
	var out [][]report.Run
	for i, r := range runs {
		if i == 0 || r.Iteration != runs[i-1].Iteration+1 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out
}

// sweep draws, for a thread sweep, the percentile latency against TPS of each target, one point per thread
// count joined in the order of the counts (seed 002's curve), each point labelled with its thread count.
func sweep(d report.Data) (*plot.Plot, error) {
	b := d.Benchmark
	p := plot.New()
	pct := pctLabel(b)
	title(p, b, pct+" latency against throughput (labels: threads)")
	p.X.Label.Text = "TPS"
	p.Y.Label.Text = pct + " latency (ms)"
	p.X.Min, p.Y.Min = 0, 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	for i, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		var xys plotter.XYs
		var labels []string
		for _, pt := range ts.Sweep {
			if pt.Mean == nil {
				continue
			}
			x, okx := parse(pt.Mean.TPS)
			y, oky := parse(pt.Mean.LatencyPctMs)
			if okx && oky {
				xys = append(xys, plotter.XY{X: x, Y: y})
				labels = append(labels, fmt.Sprint(pt.Threads))
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ts.Name, err)
		}
		l.Color, sc.Color = colorOf(i), colorOf(i)
		l.Width = vg.Points(1.5)
		sc.GlyphStyle.Radius = vg.Points(3)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, err
		}
		for j := range lb.TextStyle {
			lb.TextStyle[j].Color = colorOf(i)
		}
		lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(4)}
		p.Add(l, sc, lb)
		p.Legend.Add(ts.Name, l, sc)
	}
	return p, nil
}

// distribution draws each target's p50, p95, p99 and p99.9 latency (means over its runs, from sysbench's
// histogram) as groups of bars, one colour per target.
func distribution(d report.Data) (*plot.Plot, error) {
	b := d.Benchmark
	p := plot.New()
	title(p, b, "latency distribution (sysbench --histogram)"+firstWorkloadNote(b)+togetherNote(b))
	p.Y.Label.Text = "latency (ms)"
	p.Y.Min = 0
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	var shown []int
	for i, ts := range b.Status.Targets {
		if ts.State != v1alpha1.TargetFailed && ts.Mean != nil && ts.Mean.LatencyP50Ms != "" {
			shown = append(shown, i)
		}
	}
	w := vg.Points(18)
	for k, i := range shown {
		m := b.Status.Targets[i].Mean
		var vals plotter.Values
		for _, s := range []string{m.LatencyP50Ms, m.LatencyP95Ms, m.LatencyP99Ms, m.LatencyP999Ms} {
			v, _ := parse(s)
			vals = append(vals, v)
		}
		bc, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err
		}
		bc.Color = colorOf(i)
		bc.LineStyle.Width = 0
		bc.Offset = w * vg.Length(2*k-len(shown)+1) / 2
		p.Add(bc)
		p.Legend.Add(b.Status.Targets[i].Name, bc)
	}
	p.NominalX("p50", "p95", "p99", "p99.9")
	return p, nil
}

// bars draws the mean TPS and the mean percentile latency of each target side by side (two bar groups on one
// axis would mix units, so each figure has its own panel: see Figure). The error bars are the 95% confidence
// interval of the mean across runs when every target ran more than once, which is what says whether two bars
// differ; otherwise one standard deviation across report intervals (relative deviation x mean), the noise
// within a run. With spec.workloads the bars are grouped by workload (workloadBars); with runs alone
// (spec.measureInterference) each target has a bar alone and one together (aloneBars).
func bars(d report.Data) (*plot.Plot, error) {
	return barPanel(d, "mean TPS", "TPS", func(m *v1alpha1.RunFigures, s *v1alpha1.RunSpread) (string, string, string) {
		return m.TPS, m.TPSRelDevPct, s.TPSCI95
	})
}

// LatencyBars is the latency half of the bars.
func LatencyBars(d report.Data) (*plot.Plot, error) {
	pct := pctLabel(d.Benchmark)
	return barPanel(d, "mean "+pct+" latency", pct+" latency (ms)", func(m *v1alpha1.RunFigures, s *v1alpha1.RunSpread) (string, string, string) {
		return m.LatencyPctMs, m.LatencyRelDevPct, s.LatencyPctCI95Ms
	})
}

// barPanel draws one figure per target; get returns the mean, its relative deviation across intervals and the
// half-width of its confidence interval across runs ("" when unknown).
func barPanel(d report.Data, what, ylabel string, get func(*v1alpha1.RunFigures, *v1alpha1.RunSpread) (string, string, string)) (*plot.Plot, error) {
	b := d.Benchmark
	if ws := chartedWorkloads(b); len(ws) > 0 {
		return workloadBars(d, ws, what, ylabel, get)
	}
	if hasAlone(b) {
		return aloneBars(d, what, ylabel, get)
	}
	p := plot.New()
	var names []string
	var vals plotter.Values
	var errs plotter.XYs
	var devBars, ciBars plotter.YErrors
	var colors []color.Color
	withCI := true
	for i, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed || ts.Mean == nil {
			continue
		}
		spread := ts.AcrossRuns
		if spread == nil {
			spread = &v1alpha1.RunSpread{}
		}
		vs, devs, cis := get(ts.Mean, spread)
		v, ok := parse(vs)
		if !ok {
			continue
		}
		dev, _ := parse(devs)
		ci, hasCI := parse(cis)
		withCI = withCI && hasCI
		names = append(names, ts.Name)
		vals = append(vals, v)
		errs = append(errs, plotter.XY{X: float64(len(vals) - 1), Y: v})
		devBars = append(devBars, struct{ Low, High float64 }{v * dev / 100, v * dev / 100})
		ciBars = append(ciBars, struct{ Low, High float64 }{ci, ci})
		colors = append(colors, colorOf(i))
	}
	errBars := devBars
	if withCI && len(vals) > 0 {
		errBars, what = ciBars, what+" (error bar: 95% CI of the mean across runs)"
	} else {
		what += " (error bar: 1 s.d. across intervals)"
	}
	if n := len(b.Spec.ThreadSweep); n > 0 {
		what += fmt.Sprintf(", at %d threads", b.Spec.ThreadSweep[n-1])
	}
	what += firstWorkloadNote(b)
	title(p, b, what)
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	if len(vals) == 0 {
		return nil, fmt.Errorf("no target has %s", ylabel)
	}
	w := vg.Points(40)
	for i := range vals {
		one := make(plotter.Values, len(vals))
		one[i] = vals[i]
		bc, err := plotter.NewBarChart(one, w)
		if err != nil {
			return nil, err
		}
		bc.Color = colors[i]
		bc.LineStyle.Width = 0
		p.Add(bc)
	}
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{errs, errBars})
	if err != nil {
		return nil, err
	}
	eb.Width = vg.Points(1.5)
	p.Add(eb)
	p.NominalX(names...)
	return p, nil
}

func parse(s string) (float64, bool) {
	var v float64
	if s == "" {
		return 0, false
	}
	_, err := fmt.Sscan(s, &v)
	return v, err == nil
}

// Figure draws every chart d has into one image of the format of the file name's extension (png or svg),
// one panel per chart, two per row.
func Figure(w io.Writer, d report.Data, format string, kinds []Kind) ([]Kind, error) {
	format = strings.ToLower(strings.TrimPrefix(format, "."))
	if format != "png" && format != "svg" {
		return nil, fmt.Errorf("format %q: want png or svg", format)
	}
	var panels []*plot.Plot
	var drawn []Kind
	for _, k := range kinds {
		if err := Available(d, k); err != nil {
			if len(kinds) == 1 {
				return nil, err
			}
			continue
		}
		p, err := Plot(d, k)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
		if k == Bars {
			lp, err := LatencyBars(d)
			if err != nil {
				return nil, err
			}
			panels = append(panels, lp)
		}
		drawn = append(drawn, k)
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("nothing to draw: %v", Available(d, TPSOverTime))
	}
	cols := min(2, len(panels))
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, p := range panels {
		grid[i/cols][i%cols] = p
	}
	panelW, panelH := 6*vg.Inch, 4*vg.Inch
	c, err := draw.NewFormattedCanvas(vg.Length(cols)*panelW, vg.Length(rows)*panelH, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	_, err = c.WriteTo(w)
	return drawn, err
}
