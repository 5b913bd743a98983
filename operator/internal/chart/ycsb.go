package chart

import (
	"fmt"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

// Operations is a YCSB Benchmark's chart: each operation type's p99 latency per target, the study's read and
// update tail latency apart.
const Operations Kind = "operations"

// operationsAvailable says whether d has per-operation figures to draw.
func operationsAvailable(d report.Data) error {
	for _, ts := range d.Benchmark.Status.Targets {
		if ts.State != v1alpha1.TargetFailed && ts.YCSB != nil && len(ts.YCSB.Operations) > 0 {
			return nil
		}
	}
	return fmt.Errorf("%s: no target has YCSB figures per operation type (not a YCSB Benchmark, or no run finished)", Operations)
}

// operations draws the p99 latency of each operation type (means over the runs), grouped by type, one colour
// per target. go-ycsb gives no spread across intervals, so the bars have no error bars.
func operations(d report.Data) (*plot.Plot, error) {
	b := d.Benchmark
	seen := map[string]bool{}
	for _, ts := range b.Status.Targets {
		if ts.State != v1alpha1.TargetFailed && ts.YCSB != nil {
			for _, o := range ts.YCSB.Operations {
				seen[o.Operation] = true
			}
		}
	}
	var cats []string
	for op := range seen {
		cats = append(cats, op)
	}
	sort.Strings(cats)
	var all []barSeries
	for i, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetFailed || ts.YCSB == nil {
			continue
		}
		s := newBarSeries(ts.Name, colorOf(i), len(cats))
		for j, op := range cats {
			for _, o := range ts.YCSB.Operations {
				if v, ok := parse(o.LatencyP99Ms); ok && o.Operation == op {
					s.Values[j] = v
					s.Points = append(s.Points, plotter.XY{X: float64(j), Y: v})
					s.DevBars = append(s.DevBars, struct{ Low, High float64 }{})
					s.CIBars = append(s.CIBars, struct{ Low, High float64 }{})
				}
			}
		}
		all = append(all, s)
	}
	p := plot.New()
	title(p, b, "p99 latency per YCSB operation")
	p.Y.Label.Text = "p99 latency (ms)"
	return p, groupedBars(p, cats, all, false)
}
