package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

// interferenceData is a completed Benchmark of spec.measureInterference over two targets, 2 iterations: runs 1-2
// a alone, 3-4 b alone, 5-6 together, with a two-interval series per run.
func interferenceData(t *testing.T) report.Data {
	t.Helper()
	b := &v1alpha1.Benchmark{}
	b.Namespace, b.Name = "zns-demo", "intf"
	b.Spec = v1alpha1.BenchmarkSpec{Workload: "oltp_read_write", Iterations: 2, Threads: 4, Tables: 2, TableSize: 1000,
		DurationSeconds: 10, Percentile: 95, MeasureInterference: true,
		Targets: []v1alpha1.BenchmarkTarget{{Name: "a"}, {Name: "b"}}}
	b.Status.Phase, b.Status.Baseline, b.Status.Iteration = v1alpha1.BenchmarkCompleted, "b", 6
	figures := func(tps, dev, ci, pct, pctDev, pctCI string) (*v1alpha1.RunFigures, *v1alpha1.RunSpread) {
		return &v1alpha1.RunFigures{TPS: tps, TPSRelDevPct: dev, LatencyPctMs: pct, LatencyRelDevPct: pctDev, LatencyP50Ms: "1.5",
				LatencyP95Ms: pct, LatencyP99Ms: "40", LatencyP999Ms: "80"},
			&v1alpha1.RunSpread{Runs: 2, TPSCI95: ci, LatencyPctCI95Ms: pctCI}
	}
	target := func(name string, runs []int32, alone, together [6]string) v1alpha1.TargetStatus {
		ts := v1alpha1.TargetStatus{Name: name, Engine: "innodb", Storage: "volume", State: v1alpha1.TargetDone, Alone: &v1alpha1.AloneResult{}}
		ts.Alone.Mean, ts.Alone.AcrossRuns = figures(alone[0], alone[1], alone[2], alone[3], alone[4], alone[5])
		ts.Mean, ts.AcrossRuns = figures(together[0], together[1], together[2], together[3], together[4], together[5])
		for _, run := range runs {
			ts.Iterations = append(ts.Iterations, v1alpha1.IterationResult{Iteration: run, Threads: 4, Alone: b.Spec.RunAlone(run) == name})
		}
		return ts
	}
	b.Status.Targets = []v1alpha1.TargetStatus{
		target("a", []int32{1, 2, 5, 6}, [6]string{"205", "10", "3.2", "10.5", "20", "0.4"}, [6]string{"125", "8", "6.35", "21", "10", "1.1"}),
		target("b", []int32{3, 4, 5, 6}, [6]string{"102", "5", "2.5", "15.2", "4", "0.3"}, [6]string{"93", "4", "4.1", "16.5", "6", "0.9"}),
	}
	d, err := report.Collect(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.Runs {
		tps := map[string][]float64{"a": {190, 210}, "b": {90, 110}}[d.Runs[i].Target]
		d.Runs[i].Series = &benchresult.Series{Time: []float64{5, 10}, TPS: tps, QPS: []float64{1, 1},
			LatencyMS: []float64{10, 14}, ErrorsPerSec: []float64{0, 0}, ReconnectsPerSec: []float64{0, 0}}
	}
	return d
}

// TestInterferenceCharts: with runs alone the bars show, per target, a bar alone and a bar together; the time
// axis says which runs were alone, and each target's line breaks over the others' runs alone.
func TestInterferenceCharts(t *testing.T) {
	d := interferenceData(t)
	for _, tc := range []struct {
		kind Kind
		want []string
	}{
		{Bars, []string{"intf: mean TPS alone and together (measured)", "intf: mean p95 latency alone and together (measured)",
			"target (error bar: 95% CI of the mean across runs)", ">alone<", ">together<", ">a<", ">b<"}},
		{TPSOverTime, []string{"time (s; runs of 10 s one after the other: 2 alone per target (a, b), then 2 together)"}},
		{Distribution, []string{"intf: latency distribution (sysbench --histogram), runs together"}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			svg := string(render(t, d, "svg", tc.kind))
			for _, w := range tc.want {
				if !strings.Contains(svg, w) {
					t.Errorf("svg lacks %q", w)
				}
			}
		})
	}
	img, err := png.Decode(bytes.NewReader(render(t, d, "png", Bars)))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]color.Color{"alone": aloneColor, "together": togetherColor} {
		if n := hasColor(img, c); n < 500 {
			t.Errorf("the %s bars' colour covers %d pixels", name, n)
		}
	}

	var lines []string
	for _, name := range []string{"a", "b"} {
		var runs []report.Run
		for _, r := range d.Runs {
			if r.Target == name {
				runs = append(runs, r)
			}
		}
		var parts []string
		for _, seg := range consecutive(runs) {
			var its []string
			for _, r := range seg {
				its = append(its, fmt.Sprint(r.Iteration))
			}
			parts = append(parts, strings.Join(its, ","))
		}
		lines = append(lines, name+":"+strings.Join(parts, " "))
	}
	if got := strings.Join(lines, " "); got != "a:1,2 5,6 b:3,4,5,6" {
		t.Errorf("lines over time %q, want a's line broken over b's runs alone, b's in one piece", got)
	}

	type bar struct{ value, errBar float64 }
	tps := func(m *v1alpha1.RunFigures, s *v1alpha1.RunSpread) (string, string, string) {
		return m.TPS, m.TPSRelDevPct, s.TPSCI95
	}
	pct := func(m *v1alpha1.RunFigures, s *v1alpha1.RunSpread) (string, string, string) {
		return m.LatencyPctMs, m.LatencyRelDevPct, s.LatencyPctCI95Ms
	}
	for _, tc := range []struct {
		name    string
		get     func(*v1alpha1.RunFigures, *v1alpha1.RunSpread) (string, string, string)
		early   bool // during the runs alone: no figures together yet
		noCI    bool // b alone without a confidence interval
		withCI  bool
		targets string
		want    map[string][]bar // series -> by target
	}{
		{"tps", tps, false, false, true, "a b", map[string][]bar{"alone": {{205, 3.2}, {102, 2.5}}, "together": {{125, 6.35}, {93, 4.1}}}},
		{"latency", pct, false, false, true, "a b", map[string][]bar{"alone": {{10.5, 0.4}, {15.2, 0.3}}, "together": {{21, 1.1}, {16.5, 0.9}}}},
		{"tps, one run alone", tps, false, true, false, "a b", map[string][]bar{"alone": {{205, 20.5}, {102, 5.1}}, "together": {{125, 10}, {93, 3.72}}}},
		{"tps, runs alone only", tps, true, false, true, "a b", map[string][]bar{"alone": {{205, 3.2}, {102, 2.5}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := d.Benchmark.DeepCopy()
			if tc.noCI {
				b.Status.Targets[1].Alone.AcrossRuns = nil
			}
			if tc.early {
				for i := range b.Status.Targets {
					b.Status.Targets[i].Mean, b.Status.Targets[i].AcrossRuns = nil, nil
				}
				if err := Available(report.Data{Benchmark: b}, Bars); err != nil {
					t.Errorf("bars during the runs alone: %v", err)
				}
			}
			targets, series, withCI := aloneFigures(b, tc.get)
			if strings.Join(targets, " ") != tc.targets || withCI != tc.withCI || len(series) != len(tc.want) {
				t.Fatalf("targets %v, %d series, withCI %v", targets, len(series), withCI)
			}
			for _, s := range series {
				errs := s.CIBars
				if !withCI {
					errs = s.DevBars
				}
				want := tc.want[s.Name]
				if len(want) != len(s.Points) {
					t.Fatalf("%s: %d bars, want %d", s.Name, len(s.Points), len(want))
				}
				for j, w := range want {
					if math.Abs(s.Values[j]-w.value) > 1e-9 || s.Points[j].X != float64(j) || math.Abs(errs[j].High-w.errBar) > 1e-9 {
						t.Errorf("%s %s: value %v at x %v, error bar %v; want %v, %v", s.Name, targets[j], s.Values[j], s.Points[j].X, errs[j].High, w.value, w.errBar)
					}
				}
			}
			if _, err := Plot(report.Data{Benchmark: b}, Bars); err != nil {
				t.Errorf("plot: %v", err)
			}
		})
	}
}
