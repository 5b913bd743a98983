package chart

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
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
	if err != nil || len(drawn) != len(Kinds) {
		t.Errorf("all charts of a sweep: %v %v", drawn, err)
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
