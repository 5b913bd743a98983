package chart

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

// With spec.measureInterference each target ran alone before the runs together; its own figures are those of
// its runs together, and status.targets[].alone has its runs alone. The bars then show both: the targets on the
// x axis, an "alone" and a "together" bar for each.

// The colours of the runs alone and together: greys, since the targets' colours tell targets apart elsewhere.
var (
	aloneColor    = color.RGBA{170, 170, 170, 255}
	togetherColor = color.RGBA{70, 70, 70, 255}
)

// hasAlone says whether some target has figures of its runs alone.
func hasAlone(b *v1alpha1.Benchmark) bool {
	for _, ts := range b.Status.Targets {
		if ts.State != v1alpha1.TargetFailed && ts.Alone != nil && ts.Alone.Mean != nil {
			return true
		}
	}
	return false
}

// aloneFigures reads one figure of every target alone and together (get as in barPanel): the targets that have
// either, and the "alone" and "together" series of those that have bars; withCI says whether every bar has a
// confidence interval across runs.
func aloneFigures(b *v1alpha1.Benchmark, get func(*v1alpha1.RunFigures, *v1alpha1.RunSpread) (string, string, string)) (targets []string, series []barSeries, withCI bool) {
	type pair struct {
		alone, together             *v1alpha1.RunFigures
		aloneSpread, togetherSpread *v1alpha1.RunSpread
	}
	var pairs []pair
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		p := pair{together: ts.Mean, togetherSpread: ts.AcrossRuns}
		if a := ts.Alone; a != nil {
			p.alone, p.aloneSpread = a.Mean, a.AcrossRuns
		}
		if p.alone != nil || p.together != nil {
			targets, pairs = append(targets, ts.Name), append(pairs, p)
		}
	}
	alone, together := newBarSeries("alone", aloneColor, len(targets)), newBarSeries("together", togetherColor, len(targets))
	withCI = true
	for j, p := range pairs {
		withCI = alone.add(j, p.alone, p.aloneSpread, get) && withCI
		withCI = together.add(j, p.together, p.togetherSpread, get) && withCI
	}
	for _, s := range []barSeries{alone, together} {
		if len(s.Points) > 0 {
			series = append(series, s)
		}
	}
	return targets, series, withCI
}

// aloneBars draws one figure of every target alone and together as pairs of bars (get as in barPanel), with the
// error bars of barPanel.
func aloneBars(d report.Data, what, ylabel string, get func(*v1alpha1.RunFigures, *v1alpha1.RunSpread) (string, string, string)) (*plot.Plot, error) {
	b := d.Benchmark
	targets, series, withCI := aloneFigures(b, get)
	if len(series) == 0 {
		return nil, fmt.Errorf("no target has %s", ylabel)
	}
	p := barPlot(b, what+" alone and together (measured)", "target", ylabel, withCI)
	if err := groupedBars(p, targets, series, withCI); err != nil {
		return nil, err
	}
	return p, nil
}

// interferenceTimeLabel is the time axis's label with spec.measureInterference: the runs alone, then together.
func interferenceTimeLabel(b *v1alpha1.Benchmark) string {
	var names []string
	for _, t := range b.Spec.Targets {
		names = append(names, t.Name)
	}
	it := max(b.Spec.Iterations, 1)
	return fmt.Sprintf("time (s; runs of %d s one after the other: %d alone per target (%s), then %d together)",
		b.Spec.DurationSeconds, it, strings.Join(names, ", "), it)
}

// togetherNote says, measuring interference, that a chart of the targets' own means shows their runs together.
func togetherNote(b *v1alpha1.Benchmark) string {
	if b.Spec.MeasureInterference {
		return ", runs together"
	}
	return ""
}

// barPlot is a grouped-bar chart's frame: its title, the x axis named with what its error bars are (the 95%
// confidence interval across runs when every bar has one, else one standard deviation across intervals).
func barPlot(b *v1alpha1.Benchmark, what, axis, ylabel string, withCI bool) *plot.Plot {
	p := plot.New()
	title(p, b, what)
	p.X.Label.Text = axis + " (error bar: 1 s.d. across intervals)"
	if withCI {
		p.X.Label.Text = axis + " (error bar: 95% CI of the mean across runs)"
	}
	p.Y.Label.Text = ylabel
	return p
}
