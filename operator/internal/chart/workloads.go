package chart

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

// With spec.workloads a target's own figures are its first workload's; the bars then show every workload
// (status.targets[].workloads[]): the workloads on the x axis, one bar per target in each.

// chartedWorkloads are the workloads of spec.workloads that some target has a mean for, in the spec's order;
// nil without spec.workloads.
func chartedWorkloads(b *v1alpha1.Benchmark) []string {
	has := map[string]bool{}
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		for _, p := range ts.Workloads {
			has[p.Workload] = has[p.Workload] || p.Mean != nil
		}
	}
	var out []string
	for _, w := range b.Spec.Workloads {
		if has[w] {
			out = append(out, w)
		}
	}
	return out
}

// firstWorkloadNote says, with several workloads, whose figures a target's own are (", oltp_read_only (1st of
// 2 workloads)"); "" otherwise.
func firstWorkloadNote(b *v1alpha1.Benchmark) string {
	if n := len(b.Spec.Workloads); n > 1 {
		return fmt.Sprintf(", %s (1st of %d workloads)", b.Spec.Workloads[0], n)
	}
	return ""
}

// workloadSeries is one target's bars of a figure in a workload chart, by workload.
type workloadSeries struct {
	Target int // index in status.targets, for its colour
	barSeries
}

// workloadFigures reads one figure of every target for each of ws (get as in barPanel); withCI says whether every
// bar has a confidence interval across runs.
func workloadFigures(b *v1alpha1.Benchmark, ws []string, get func(*v1alpha1.RunFigures, *v1alpha1.RunSpread) (string, string, string)) (out []workloadSeries, withCI bool) {
	withCI = true
	for i, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		s := workloadSeries{Target: i, barSeries: newBarSeries(ts.Name, colorOf(i), len(ws))}
		for j, w := range ws {
			for _, p := range ts.Workloads {
				if p.Workload == w {
					withCI = s.add(j, p.Mean, p.AcrossRuns, get) && withCI
				}
			}
		}
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	return out, withCI
}

// workloadBars draws one figure of every target for each workload as groups of bars (get as in barPanel), with
// the same error bars as barPanel: the 95% confidence interval across runs when every bar has one, else one
// standard deviation across intervals.
func workloadBars(d report.Data, ws []string, what, ylabel string, get func(*v1alpha1.RunFigures, *v1alpha1.RunSpread) (string, string, string)) (*plot.Plot, error) {
	b := d.Benchmark
	all, withCI := workloadFigures(b, ws, get)
	if len(all) == 0 {
		return nil, fmt.Errorf("no target has %s for a workload", ylabel)
	}
	p := barPlot(b, what+" per workload (measured)", "workload", ylabel, withCI)
	series := make([]barSeries, len(all))
	for k, s := range all {
		series[k] = s.barSeries
	}
	if err := groupedBars(p, ws, series, withCI); err != nil {
		return nil, err
	}
	return p, nil
}

// shiftedErrors are error bars drawn offset to the side of their x, over one bar of a group.
type shiftedErrors struct {
	*plotter.YErrorBars
	offset vg.Length
}

// Plot implements plot.Plotter.
func (s shiftedErrors) Plot(c draw.Canvas, p *plot.Plot) {
	c.Rectangle = c.Rectangle.Add(vg.Point{X: s.offset})
	s.YErrorBars.Plot(c, p)
}

// barSeries is one series of a chart of grouped bars: Values by category (0 where it has none), and at each
// category it has, the error bar's X (the category's index), its Y (the value) and its half-widths.
type barSeries struct {
	Name    string
	Color   color.Color
	Values  plotter.Values
	Points  plotter.XYs
	DevBars plotter.YErrors // 1 s.d. across intervals: relative deviation x mean
	CIBars  plotter.YErrors // 95% CI of the mean across runs
}

func newBarSeries(name string, c color.Color, categories int) barSeries {
	return barSeries{Name: name, Color: c, Values: make(plotter.Values, categories)}
}

// add reads the bar of category j from a mean and its spread (get as in barPanel); nothing when m is nil or has
// no such figure. It is false when it added a bar without a confidence interval across runs.
func (s *barSeries) add(j int, m *v1alpha1.RunFigures, spread *v1alpha1.RunSpread, get func(*v1alpha1.RunFigures, *v1alpha1.RunSpread) (string, string, string)) bool {
	if m == nil {
		return true
	}
	if spread == nil {
		spread = &v1alpha1.RunSpread{}
	}
	vs, devs, cis := get(m, spread)
	v, ok := parse(vs)
	if !ok {
		return true
	}
	dev, _ := parse(devs)
	ci, hasCI := parse(cis)
	s.Values[j] = v
	s.Points = append(s.Points, plotter.XY{X: float64(j), Y: v})
	s.DevBars = append(s.DevBars, struct{ Low, High float64 }{v * dev / 100, v * dev / 100})
	s.CIBars = append(s.CIBars, struct{ Low, High float64 }{ci, ci})
	return hasCI
}

// groupedBars draws the series side by side in each category, with their error bars: the 95% confidence
// interval across runs when withCI, else one standard deviation across intervals; one legend line per series.
func groupedBars(p *plot.Plot, categories []string, all []barSeries, withCI bool) error {
	p.Y.Min = 0
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	top := 0.0 // headroom above the highest error bar for the legend, one line per series
	for _, s := range all {
		for i, pt := range s.Points {
			top = math.Max(top, pt.Y+math.Max(s.DevBars[i].High, s.CIBars[i].High))
		}
	}
	p.Y.Max = top * (1.1 + 0.08*float64(len(all)))
	p.X.Min, p.X.Max = -0.5, float64(len(categories))-0.5 // the groups centred in their slots
	w := vg.Points(math.Min(36, 240/float64(len(categories)*len(all))))
	for k, s := range all {
		bc, err := plotter.NewBarChart(s.Values, w)
		if err != nil {
			return err
		}
		bc.Color = s.Color
		bc.LineStyle.Width = 0
		bc.Offset = w * vg.Length(2*k-len(all)+1) / 2
		errBars := s.DevBars
		if withCI {
			errBars = s.CIBars
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{s.Points, errBars})
		if err != nil {
			return err
		}
		eb.Width = vg.Points(1.5)
		p.Add(bc, shiftedErrors{eb, bc.Offset})
		p.Legend.Add(s.Name, bc)
	}
	p.NominalX(categories...)
	return nil
}
