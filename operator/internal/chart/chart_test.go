package chart

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

// data loads a real recorded Benchmark and its series (operator/internal/report/testdata/README.md).
func data(t *testing.T, name string) report.Data {
	t.Helper()
	dir := filepath.Join("..", "report", "testdata")
	b := &v1alpha1.Benchmark{}
	cms := &corev1.ConfigMapList{}
	for file, into := range map[string]any{name + ".yaml": b, name + "-series.yaml": cms} {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, into); err != nil {
			t.Fatal(err)
		}
	}
	d, err := report.Collect(b, cms.Items)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func render(t *testing.T, d report.Data, format string, kinds ...Kind) []byte {
	t.Helper()
	var buf bytes.Buffer
	drawn, err := Figure(&buf, d, format, kinds)
	if err != nil {
		t.Fatalf("%s %v: %v", format, kinds, err)
	}
	if len(drawn) == 0 || buf.Len() == 0 {
		t.Fatalf("%s %v: nothing drawn", format, kinds)
	}
	if os.Getenv("ZNS_CHART_KEEP") != "" { // look at them: ZNS_CHART_KEEP=/tmp/charts go test ./operator/internal/chart/
		_ = os.MkdirAll(os.Getenv("ZNS_CHART_KEEP"), 0o755)
		name := d.Benchmark.Name + "-" + string(kinds[0])
		if len(kinds) > 1 {
			name = d.Benchmark.Name + "-all"
		}
		_ = os.WriteFile(filepath.Join(os.Getenv("ZNS_CHART_KEEP"), name+"."+format), buf.Bytes(), 0o644)
	}
	return buf.Bytes()
}

// hasColor says whether the PNG has pixels of c (a target's line or bar).
func hasColor(img image.Image, c color.Color) int {
	r0, g0, b0, _ := c.RGBA()
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 == r0>>8 && g>>8 == g0>>8 && b>>8 == b0>>8 {
				n++
			}
		}
	}
	return n
}

func TestEveryChartRendersToPNGAndSVG(t *testing.T) {
	d := data(t, "pair")
	pct := "p95"
	for _, k := range []Kind{TPSOverTime, LatencyOverTime, Bars, Distribution} {
		t.Run(string(k), func(t *testing.T) {
			svg := string(render(t, d, "svg", k))
			want := map[Kind][]string{
				TPSOverTime:     {"pair: TPS over time", "time (s", ">TPS<"},
				LatencyOverTime: {"pair: " + pct + " latency over time", pct + " latency (ms)"},
				Bars:            {"pair: mean TPS", "pair: mean " + pct + " latency", "95% CI of the mean across runs"}, // 3 runs each
				Distribution:    {"pair: latency distribution", ">p50<", ">p95<", ">p99<", ">p99.9<", "latency (ms)"},
			}[k]
			for _, ts := range d.Benchmark.Status.Targets {
				want = append(want, ">"+ts.Name+"<") // legend or bar label
			}
			for _, w := range want {
				if !strings.Contains(svg, w) {
					t.Errorf("svg lacks %q", w)
				}
			}
			raw := render(t, d, "png", k)
			img, err := png.Decode(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 300 {
				t.Errorf("png %v", b)
			}
			for i, ts := range d.Benchmark.Status.Targets {
				if n := hasColor(img, colorOf(i)); n < 50 {
					t.Errorf("%s's colour covers %d pixels: its series is not drawn", ts.Name, n)
				}
			}
		})
	}
}

// TestSweepChart: latency against throughput of a recorded thread sweep, one point per count and target.
func TestSweepChart(t *testing.T) {
	d := data(t, "sweep")
	svg := string(render(t, d, "svg", Sweep))
	for _, w := range []string{"sweep: p95 latency against throughput", ">TPS<", "p95 latency (ms)", ">myrocks<", ">innodb<"} {
		if !strings.Contains(svg, w) {
			t.Errorf("svg lacks %q", w)
		}
	}
	for _, th := range d.Benchmark.Spec.ThreadSweep { // point labels
		if n := strings.Count(svg, fmt.Sprintf(">%d<", th)); n < len(d.Benchmark.Status.Targets) {
			t.Errorf("thread count %d labels %d points, want one per target", th, n)
		}
	}
	img, err := png.Decode(bytes.NewReader(render(t, d, "png", Sweep)))
	if err != nil {
		t.Fatal(err)
	}
	for i, ts := range d.Benchmark.Status.Targets {
		if n := hasColor(img, colorOf(i)); n < 50 {
			t.Errorf("%s's curve covers %d pixels", ts.Name, n)
		}
	}
	drawn, err := Figure(&bytes.Buffer{}, d, "png", Kinds)
	if err != nil || len(drawn) != len(Kinds)-1 || slices.Contains(drawn, Operations) {
		t.Errorf("all charts of a sysbench sweep (every one but YCSB's operations): %v %v", drawn, err)
	}
	_ = render(t, d, "png", Kinds...)
}

func TestFigureSkipsWhatCannotBeDrawn(t *testing.T) {
	d := data(t, "failed")
	var buf bytes.Buffer
	drawn, err := Figure(&buf, d, "svg", Kinds)
	if err != nil {
		t.Fatal(err)
	}
	if len(drawn) != 4 || strings.Contains(buf.String(), ">ghost<") {
		t.Errorf("drawn %v; the failed target has no series nor bar, so it must not appear", drawn)
	}
	if _, err := Figure(&buf, d, "svg", []Kind{Sweep}); err == nil || !strings.Contains(err.Error(), "not a thread sweep") {
		t.Errorf("sweep of a Benchmark without one: %v", err)
	}
	if _, err := Figure(&buf, d, "gif", Kinds); err == nil {
		t.Error("gif accepted")
	}
	d.Runs = nil
	if _, err := Figure(&buf, d, "png", []Kind{TPSOverTime}); err == nil || !strings.Contains(err.Error(), "no run has an interval series") {
		t.Errorf("no series: %v", err)
	}
}

// With one run per target there is no interval across runs: the bars fall back to the noise within a run.
func TestBarsWithOneRunShowTheIntervalDeviation(t *testing.T) {
	svg := string(render(t, data(t, "sweep"), "svg", Bars))
	if !strings.Contains(svg, "1 s.d. across intervals") || strings.Contains(svg, "95% CI") {
		t.Errorf("one run per target: the bars' error bars should be 1 s.d. across intervals")
	}
}

// workloadsData is a completed Benchmark of spec.workloads [oltp_read_only, oltp_update_index], 2 iterations
// each, over two targets, with a two-interval series per run.
func workloadsData(t *testing.T) report.Data {
	t.Helper()
	b := &v1alpha1.Benchmark{}
	b.Namespace, b.Name = "zns-demo", "wl"
	b.Spec = v1alpha1.BenchmarkSpec{Workloads: []string{"oltp_read_only", "oltp_update_index"}, Iterations: 2, Threads: 4,
		Tables: 2, TableSize: 1000, DurationSeconds: 10, Percentile: 95}
	b.Status.Phase, b.Status.Baseline, b.Status.Iteration = v1alpha1.BenchmarkCompleted, "innodb", 4
	point := func(w, tps, dev, ci, pct, pctDev, pctCI string) v1alpha1.WorkloadPoint {
		return v1alpha1.WorkloadPoint{Workload: w,
			Mean:       &v1alpha1.RunFigures{TPS: tps, TPSRelDevPct: dev, LatencyPctMs: pct, LatencyRelDevPct: pctDev, LatencyP50Ms: "1.5", LatencyP95Ms: pct, LatencyP99Ms: "40", LatencyP999Ms: "80"},
			AcrossRuns: &v1alpha1.RunSpread{Runs: 2, TPSCI95: ci, LatencyPctCI95Ms: pctCI}}
	}
	target := func(name, engine string, ro, ui v1alpha1.WorkloadPoint) v1alpha1.TargetStatus {
		ts := v1alpha1.TargetStatus{Name: name, Engine: engine, Storage: "volume", State: v1alpha1.TargetDone,
			Workloads: []v1alpha1.WorkloadPoint{ro, ui}, Mean: ro.Mean, AcrossRuns: ro.AcrossRuns}
		for run := int32(1); run <= 4; run++ {
			ts.Iterations = append(ts.Iterations, v1alpha1.IterationResult{Iteration: run, Threads: 4, Workload: b.Spec.RunWorkload(run)})
		}
		return ts
	}
	b.Status.Targets = []v1alpha1.TargetStatus{
		target("myrocks", "rocksdb", point("oltp_read_only", "101.5", "10", "12.7", "12.3", "20", "1.1"),
			point("oltp_update_index", "51.25", "8", "6.35", "30.4", "10", "2.2")),
		target("innodb", "innodb", point("oltp_read_only", "81.2", "5", "15.2", "15.4", "4", "0.9"),
			point("oltp_update_index", "102.5", "4", "19.05", "16", "6", "1.3")),
	}
	d, err := report.Collect(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.Runs {
		tps := map[string][]float64{"myrocks": {90, 110}, "innodb": {40, 60}}[d.Runs[i].Target]
		d.Runs[i].Series = &benchresult.Series{Time: []float64{5, 10}, TPS: tps, QPS: []float64{1, 1},
			LatencyMS: []float64{10, 14}, ErrorsPerSec: []float64{0, 0}, ReconnectsPerSec: []float64{0, 0}}
	}
	return d
}

// TestWorkloadCharts: with spec.workloads the bars are grouped by workload (x axis) with one bar per target,
// from status.targets[].workloads[]; the other charts say whose figures they show.
func TestWorkloadCharts(t *testing.T) {
	d := workloadsData(t)
	for _, tc := range []struct {
		kind Kind
		want []string
	}{
		{Bars, []string{"wl: mean TPS per workload (measured)", "wl: mean p95 latency per workload (measured)",
			"workload (error bar: 95% CI of the mean across runs)", ">oltp_read_only<", ">oltp_update_index<", ">myrocks<", ">innodb<"}},
		{TPSOverTime, []string{"time (s; runs of 10 s one after the other, 2 per workload: oltp_read_only, oltp_update_index)"}},
		{Distribution, []string{"wl: latency distribution (sysbench --histogram), oltp_read_only (1st of 2 workloads)"}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			svg := string(render(t, d, "svg", tc.kind))
			for _, w := range tc.want {
				if !strings.Contains(svg, w) {
					t.Errorf("svg lacks %q", w)
				}
			}
			img, err := png.Decode(bytes.NewReader(render(t, d, "png", tc.kind)))
			if err != nil {
				t.Fatal(err)
			}
			for i, ts := range d.Benchmark.Status.Targets {
				if n := hasColor(img, colorOf(i)); n < 50 {
					t.Errorf("%s's colour covers %d pixels", ts.Name, n)
				}
			}
		})
	}
	if svg := string(render(t, d, "svg", Bars)); strings.Contains(svg, "1st of 2") {
		t.Error("the workload bars show every workload: no first-workload note")
	}

	ws := chartedWorkloads(d.Benchmark)
	if strings.Join(ws, " ") != "oltp_read_only oltp_update_index" {
		t.Fatalf("charted workloads %v", ws)
	}
	type bar struct{ value, errBar float64 }
	for _, tc := range []struct {
		name   string
		get    func(*v1alpha1.RunFigures, *v1alpha1.RunSpread) (string, string, string)
		noCI   bool
		withCI bool
		want   map[string][]bar // target -> by workload
	}{
		{"tps", func(m *v1alpha1.RunFigures, s *v1alpha1.RunSpread) (string, string, string) {
			return m.TPS, m.TPSRelDevPct, s.TPSCI95
		},
			false, true, map[string][]bar{"myrocks": {{101.5, 12.7}, {51.25, 6.35}}, "innodb": {{81.2, 15.2}, {102.5, 19.05}}}},
		{"latency", func(m *v1alpha1.RunFigures, s *v1alpha1.RunSpread) (string, string, string) {
			return m.LatencyPctMs, m.LatencyRelDevPct, s.LatencyPctCI95Ms
		}, false, true, map[string][]bar{"myrocks": {{12.3, 1.1}, {30.4, 2.2}}, "innodb": {{15.4, 0.9}, {16, 1.3}}}},
		{"tps, one run", func(m *v1alpha1.RunFigures, s *v1alpha1.RunSpread) (string, string, string) {
			return m.TPS, m.TPSRelDevPct, s.TPSCI95
		},
			true, false, map[string][]bar{"myrocks": {{101.5, 10.15}, {51.25, 4.1}}, "innodb": {{81.2, 4.06}, {102.5, 4.1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := d.Benchmark.DeepCopy()
			if tc.noCI {
				for i := range b.Status.Targets {
					b.Status.Targets[i].Workloads[1].AcrossRuns = nil
				}
			}
			series, withCI := workloadFigures(b, ws, tc.get)
			if withCI != tc.withCI || len(series) != 2 {
				t.Fatalf("%d series, withCI %v", len(series), withCI)
			}
			for _, s := range series {
				name := b.Status.Targets[s.Target].Name
				errs := s.CIBars
				if !withCI {
					errs = s.DevBars
				}
				for j, w := range tc.want[name] {
					if math.Abs(s.Values[j]-w.value) > 1e-9 || s.Points[j].X != float64(j) || math.Abs(errs[j].High-w.errBar) > 1e-9 {
						t.Errorf("%s %s: value %v at x %v, error bar %v; want %v, %v", name, ws[j], s.Values[j], s.Points[j].X, errs[j].High, w.value, w.errBar)
					}
				}
			}
		})
	}
}
