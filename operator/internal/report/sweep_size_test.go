package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// TestSweep: a recorded thread sweep (1, 4 and 8 threads, same data): the table has a row per target and
// count, the exports carry the count of every run and a mean per count, the result names the last count.
func TestSweep(t *testing.T) {
	d := loadData(t, "sweep")
	b := d.Benchmark
	if len(b.Spec.ThreadSweep) != 3 || b.Spec.Runs() != 3 {
		t.Fatalf("capture: sweep %v", b.Spec.ThreadSweep)
	}
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("\n%s", text)
	if !strings.Contains(text, "1,4,8 threads, 3 x 6 s") {
		t.Errorf("headline:\n%s", text)
	}
	_, sweep, ok := strings.Cut(text, "thread sweep (TPS and latency above are at 8 threads)")
	if !ok {
		t.Fatalf("no sweep table:\n%s", text)
	}
	for _, ts := range b.Status.Targets {
		if len(ts.Sweep) != 3 {
			t.Fatalf("%s: %d sweep points", ts.Name, len(ts.Sweep))
		}
		for _, p := range ts.Sweep {
			want := fmt.Sprintf("%s %d %s %s %s", ts.Name, p.Threads, p.Mean.TPS, p.Mean.LatencyAvgMs, p.Mean.LatencyPctMs)
			if !strings.Contains(strings.Join(strings.Fields(sweep), " "), want) {
				t.Errorf("sweep table lacks %q", want)
			}
		}
	}
	if got := ResultLine(b); !strings.HasPrefix(got, "at 8 threads: myrocks ") {
		t.Errorf("result %q", got)
	}
	recs, _ := summaryCSV(t, d)
	means := map[string]string{}
	for _, r := range recs[1:] {
		if r[6] == "mean" {
			means[r[1]+"@"+r[5]] = r[8]
		}
	}
	for _, ts := range b.Status.Targets {
		for _, p := range ts.Sweep {
			if got := means[fmt.Sprintf("%s@%d", ts.Name, p.Threads)]; got != p.Mean.TPS {
				t.Errorf("%s at %d threads: csv mean tps %q, status %q", ts.Name, p.Threads, got, p.Mean.TPS)
			}
		}
	}
	for _, r := range d.Runs {
		if want, _ := b.Spec.RunThreads(r.Iteration); r.Threads != want || r.Series == nil {
			t.Errorf("run %s/%d: threads %d (want %d), series %v", r.Target, r.Iteration, r.Threads, want, r.Series != nil)
		}
	}
	// The remaining time counts every run of the sweep.
	running := b.DeepCopy()
	running.Status.Phase, running.Status.Iteration, running.Status.StartAt, running.Status.CompletedAt = v1alpha1.BenchmarkRunning, 1, running.Status.StartedAt, nil
	left, _ := Remaining(running, running.Status.StartAt.Time)
	if want := time.Duration(6+2*(6+b.Spec.StartDelaySeconds)) * time.Second; left != want {
		t.Errorf("remaining at the start of run 1 of 3: %s, want %s", left, want)
	}
}

// TestTableDataSize: each target's data on disk after the prepare and after the runs, as the runner read it
// (recorded: MyRocks SST bytes, InnoDB tablespace bytes), with its size against the baseline's.
func TestTableDataSize(t *testing.T) {
	d := loadData(t, "pair")
	b := d.Benchmark
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	_, sizes, ok := strings.Cut(out.String(), "data on disk (MiB")
	if !ok {
		t.Fatalf("no size table:\n%s", out.String())
	}
	base := target(t, b, b.Status.Baseline).Size
	for _, ts := range b.Status.Targets {
		s := ts.Size
		if s == nil || s.AfterPrepareBytes <= 0 || s.AfterRunBytes <= 0 {
			t.Fatalf("%s: the capture has no sizes: %+v", ts.Name, s)
		}
		want := map[string]string{"rocksdb": "rocksdb-sst", "innodb": "innodb-tablespace"}[ts.Engine]
		if s.Source != want {
			t.Errorf("%s: source %q for engine %s", ts.Name, s.Source, ts.Engine)
		}
		row := rowOf(t, sizes, ts.Name)
		vs := fmt.Sprintf("%.2fx", float64(s.AfterPrepareBytes)/float64(base.AfterPrepareBytes))
		if strings.Join(row[1:5], " ") != strings.Join([]string{s.Source, MiB(s.AfterPrepareBytes), MiB(s.AfterRunBytes), vs}, " ") {
			t.Errorf("%s: row %q, status %+v", ts.Name, row, s)
		}
		// The runs' own sizes are in the export, the last one being the size after the runs.
		last := ts.Iterations[len(ts.Iterations)-1]
		if last.DataBytes != s.AfterRunBytes {
			t.Errorf("%s: last run %d bytes, after the runs %d", ts.Name, last.DataBytes, s.AfterRunBytes)
		}
	}
	for _, et := range exportJSON(t, d).Targets {
		if ts := target(t, b, et.Name); et.Size == nil || *et.Size != *ts.Size {
			t.Errorf("%s: exported size %+v, status %+v", et.Name, et.Size, ts.Size)
		}
	}
}

// workloadsData is a Benchmark of two workloads (spec.workloads, 2 iterations each: runs 1-2 oltp_read_only,
// 3-4 oltp_update_index) over two targets, completed, with a two-interval series per run. Run 4 of myrocks was
// recorded without its workload (a status from before runs carried it): its workload comes from the plan.
func workloadsData(t *testing.T) Data {
	t.Helper()
	b := &v1alpha1.Benchmark{}
	b.Namespace, b.Name = "zns-demo", "wl"
	b.Spec = v1alpha1.BenchmarkSpec{Workloads: []string{"oltp_read_only", "oltp_update_index"}, Iterations: 2, Threads: 4,
		Tables: 2, TableSize: 1000, DurationSeconds: 10, Percentile: 95}
	b.Status.Phase, b.Status.Baseline, b.Status.Iteration = v1alpha1.BenchmarkCompleted, "innodb", 4
	b.Status.Workload = b.Spec.WorkloadLabel()
	type wl struct {
		tps, avg, pct, p99, dev, ci, vsTPS, vsPct string
		tpsV, pctV                                v1alpha1.Verdict
	}
	point := func(name string, f wl) v1alpha1.WorkloadPoint {
		p := v1alpha1.WorkloadPoint{Workload: name,
			Mean: &v1alpha1.RunFigures{TPS: f.tps, LatencyAvgMs: f.avg, LatencyPctMs: f.pct, LatencyP99Ms: f.p99, TPSRelDevPct: f.dev,
				LatencyRelDevPct: "4.0"},
			AcrossRuns: &v1alpha1.RunSpread{Runs: 2, TPSCI95: f.ci, LatencyPctCI95Ms: "0.5"}}
		if f.vsTPS != "" {
			p.VsBaseline = &v1alpha1.Ratios{TPS: f.vsTPS, LatencyPct: f.vsPct, TPSVerdict: f.tpsV, LatencyPctVerdict: f.pctV}
		}
		return p
	}
	target := func(name, engine, storage string, tps [4]string, ro, ui wl) v1alpha1.TargetStatus {
		ts := v1alpha1.TargetStatus{Name: name, Engine: engine, Storage: storage, State: v1alpha1.TargetDone,
			Workloads: []v1alpha1.WorkloadPoint{point("oltp_read_only", ro), point("oltp_update_index", ui)}}
		for i, x := range tps {
			run := int32(i + 1)
			ts.Iterations = append(ts.Iterations, v1alpha1.IterationResult{Iteration: run, Threads: 4, Workload: b.Spec.RunWorkload(run),
				RunFigures: v1alpha1.RunFigures{TPS: x, LatencyPctMs: "10.00"}, SeriesConfigMap: fmt.Sprintf("wl-%s-run%d", name, run)})
		}
		first := ts.Workloads[0]
		ts.Mean, ts.AcrossRuns, ts.VsBaseline = first.Mean, first.AcrossRuns, first.VsBaseline
		return ts
	}
	my := target("myrocks", "rocksdb", "zoned", [4]string{"100.50", "102.50", "50.25", "52.25"},
		wl{"101.50", "9.80", "12.30", "20.10", "5.5", "12.70", "1.25", "0.80", v1alpha1.VerdictBetter, v1alpha1.VerdictNoSignificantDifference},
		wl{"51.25", "19.60", "30.40", "41.00", "8.5", "6.35", "0.50", "1.90", v1alpha1.VerdictWorse, v1alpha1.VerdictWorse})
	my.Iterations[3].Workload = ""
	in := target("innodb", "innodb", "volume", [4]string{"80.00", "82.40", "101.00", "104.00"},
		wl{"81.20", "12.10", "15.40", "22.00", "3.5", "15.20", "1.00", "1.00", v1alpha1.VerdictTooFewRuns, v1alpha1.VerdictTooFewRuns},
		wl{"102.50", "9.70", "16.00", "25.00", "4.5", "19.05", "1.00", "1.00", v1alpha1.VerdictTooFewRuns, v1alpha1.VerdictTooFewRuns})
	b.Status.Targets = []v1alpha1.TargetStatus{my, in}
	return collectTwoIntervals(t, b, 8)
}

// TestWorkloadsTable: the headline names both workloads, and a table gives each target's figures per workload,
// ratios with their verdicts (n.s. where the runs' noise covers the difference).
func TestWorkloadsTable(t *testing.T) {
	b := workloadsData(t).Benchmark
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("\n%s", text)
	if want := "benchmark zns-demo/wl: oltp_read_only,oltp_update_index, 2 tables x 1000 rows, 4 threads, 4 x 10 s; Completed\n"; !strings.HasPrefix(text, want) {
		t.Errorf("headline: want %q", want)
	}
	_, table, ok := strings.Cut(text, "workloads (TPS and latency above are oltp_read_only's):\n")
	if !ok {
		t.Fatalf("no workloads table:\n%s", text)
	}
	lines := strings.Split(table, "\n")
	if got := strings.Join(strings.Fields(lines[0]), " "); got != "TARGET WORKLOAD TPS AVG MS P95 MS P99 MS TPS DEV% TPS VS P95 VS" {
		t.Errorf("header %q", got)
	}
	for i, want := range []string{
		"myrocks oltp_read_only 101.50 9.80 12.30 20.10 5.5 1.25x n.s.",
		"myrocks oltp_update_index 51.25 19.60 30.40 41.00 8.5 0.50x 1.90x",
		"innodb oltp_read_only 81.20 12.10 15.40 22.00 3.5 1.00x 1.00x",
		"innodb oltp_update_index 102.50 9.70 16.00 25.00 4.5 1.00x 1.00x",
	} {
		if got := strings.Join(strings.Fields(lines[1+i]), " "); got != want {
			t.Errorf("row %d: %q, want %q", i+1, got, want)
		}
	}
	if !strings.Contains(text, "\nmeans over each workload's run(s), 4 run(s) of 4 done; ratios are target / innodb") {
		t.Errorf("footer:\n%s", text)
	}
	if !strings.Contains(text, "n.s.: no significant difference") {
		t.Errorf("n.s. not explained:\n%s", text)
	}
	// Without spec.workloads there is no such table.
	one := b.DeepCopy()
	one.Spec.Workloads, one.Spec.Workload = nil, "oltp_read_only"
	out.Reset()
	if err := Table(&out, one); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "workloads (") || !strings.HasPrefix(out.String(), "benchmark zns-demo/wl: oltp_read_only, ") {
		t.Errorf("one workload:\n%s", out.String())
	}
}

// TestWorkloadsCompare: compare has a row per target and workload, with that workload's figures.
func TestWorkloadsCompare(t *testing.T) {
	b := workloadsData(t).Benchmark
	var out bytes.Buffer
	if err := Compare(&out, []*v1alpha1.Benchmark{b}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"wl myrocks MyRocks on ZenFS - oltp_read_only 4 10 Done 101.50 9.80 p95 12.30 5.5 1.25x n.s. innodb",
		"wl myrocks MyRocks on ZenFS - oltp_update_index 4 10 Done 51.25 19.60 p95 30.40 8.5 0.50x 1.90x innodb",
		"wl innodb InnoDB on a volume - oltp_read_only 4 10 Done 81.20 12.10 p95 15.40 3.5 1.00x 1.00x innodb",
		"wl innodb InnoDB on a volume - oltp_update_index 4 10 Done 102.50 9.70 p95 16.00 4.5 1.00x 1.00x innodb",
	}
	if len(lines) != 1+len(want) {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	for i, w := range want {
		if got := strings.Join(strings.Fields(lines[1+i]), " "); got != w {
			t.Errorf("row %d: %q, want %q", i+1, got, w)
		}
	}
}

// TestWorkloadsExport: every run carries its workload (from the plan when the status lacks it), each target
// its figures per workload, and the CSV a mean row per target and workload.
func TestWorkloadsExport(t *testing.T) {
	d := workloadsData(t)
	e := exportJSON(t, d)
	if e.Workload != "oltp_read_only,oltp_update_index" || strings.Join(e.Workloads, " ") != "oltp_read_only oltp_update_index" {
		t.Errorf("JSON workload %q, workloads %q", e.Workload, e.Workloads)
	}
	runWorkload := map[int32]string{1: "oltp_read_only", 2: "oltp_read_only", 3: "oltp_update_index", 4: "oltp_update_index"}
	if len(e.Runs) != 8 {
		t.Fatalf("%d runs exported", len(e.Runs))
	}
	for _, r := range e.Runs {
		if r.Workload != runWorkload[r.Iteration] {
			t.Errorf("JSON run %s/%d: workload %q", r.Target, r.Iteration, r.Workload)
		}
	}
	for _, tc := range []struct {
		target, workload string
		tps, vsTPS, ci   float64
		verdict          string
	}{
		{"myrocks", "oltp_read_only", 101.5, 1.25, 12.7, "Better"},
		{"myrocks", "oltp_update_index", 51.25, 0.5, 6.35, "Worse"},
		{"innodb", "oltp_update_index", 102.5, 1, 19.05, "TooFewRuns"},
	} {
		var got *ExportWorkloadPoint
		for _, et := range e.Targets {
			for i := range et.Workloads {
				if et.Name == tc.target && et.Workloads[i].Workload == tc.workload {
					got = &et.Workloads[i]
				}
			}
		}
		if got == nil || got.Mean["tps"] == nil || *got.Mean["tps"] != tc.tps || got.VsBaseline["tps"] == nil ||
			*got.VsBaseline["tps"] != tc.vsTPS || got.AcrossRuns["tps_ci95"] == nil || *got.AcrossRuns["tps_ci95"] != tc.ci ||
			got.Verdicts["tps_verdict"] != tc.verdict {
			t.Errorf("JSON %s %s: %+v", tc.target, tc.workload, got)
		}
	}

	recs, col := summaryCSV(t, d)
	if h := recs[0]; h[len(h)-2] != "workload" || h[len(h)-1] != "alone" { // alone came after workload
		t.Errorf("last CSV columns %q, want workload, alone", h[len(h)-2:])
	}
	var rows []string
	for _, r := range recs[1:] {
		rows = append(rows, strings.Join([]string{r[col["target"]], r[col["iteration"]], r[col["workload"]], r[col["tps"]],
			r[col["tps_vs_baseline"]], r[col["tps_verdict"]]}, " "))
	}
	want := []string{
		"myrocks 1 oltp_read_only 100.50  ", "myrocks 2 oltp_read_only 102.50  ",
		"myrocks 3 oltp_update_index 50.25  ", "myrocks 4 oltp_update_index 52.25  ",
		"myrocks mean oltp_read_only 101.50 1.25 Better", "myrocks mean oltp_update_index 51.25 0.50 Worse",
		"innodb 1 oltp_read_only 80.00  ", "innodb 2 oltp_read_only 82.40  ",
		"innodb 3 oltp_update_index 101.00  ", "innodb 4 oltp_update_index 104.00  ",
		"innodb mean oltp_read_only 81.20 1.00 TooFewRuns", "innodb mean oltp_update_index 102.50 1.00 TooFewRuns",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("summary CSV rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}

	series := readCSV(t, SeriesCSV, d)
	if h := series[0]; h[len(h)-2] != "workload" || h[len(h)-1] != "alone" {
		t.Errorf("series header %q", h)
	}
	byRun := map[string]string{}
	for _, r := range series[1:] {
		byRun[r[1]+"/"+r[3]] = r[len(r)-2]
	}
	if len(series) != 1+16 || byRun["myrocks/4"] != "oltp_update_index" || byRun["innodb/1"] != "oltp_read_only" {
		t.Errorf("series CSV: %d rows, workloads %v", len(series)-1, byRun)
	}
}

// collectTwoIntervals collects b with a two-interval series for each of its runs, and wants runs of them.
func collectTwoIntervals(t *testing.T, b *v1alpha1.Benchmark, runs int) Data {
	t.Helper()
	var cms []corev1.ConfigMap
	for _, ts := range b.Status.Targets {
		for _, it := range ts.Iterations {
			s := benchresult.Series{Schema: 1, Target: ts.Name, Iteration: int(it.Iteration), Percentile: 95, ReportIntervalSec: 5,
				Time: []float64{5, 10}, TPS: []float64{1, 2}, QPS: []float64{3, 4}, LatencyMS: []float64{5, 6}, ErrorsPerSec: []float64{0, 0},
				ReconnectsPerSec: []float64{0, 0}}
			raw, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			cm := corev1.ConfigMap{Data: map[string]string{"series.json": string(raw)}}
			cm.Name = it.SeriesConfigMap
			cms = append(cms, cm)
		}
	}
	d, err := Collect(b, cms)
	if err != nil || len(d.Missing) > 0 || len(d.Runs) != runs {
		t.Fatalf("collect: %v, missing %v, %d runs", err, d.Missing, len(d.Runs))
	}
	return d
}
