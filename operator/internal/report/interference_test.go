package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// interferenceData is a completed Benchmark of spec.measureInterference over two targets, 2 iterations: runs 1-2
// a alone, 3-4 b alone, 5-6 together; b is the baseline. The others cost a 39% of its TPS (a real difference);
// b's differences are within the runs' noise. Run 2 of a was recorded without its alone mark (the plan says
// it ran alone). Each run has a two-interval series.
func interferenceData(t *testing.T) Data {
	t.Helper()
	b := &v1alpha1.Benchmark{}
	b.Namespace, b.Name = "zns-demo", "intf"
	b.Spec = v1alpha1.BenchmarkSpec{Workload: "oltp_read_write", Iterations: 2, Threads: 4, Tables: 2, TableSize: 1000,
		DurationSeconds: 10, Percentile: 95, MeasureInterference: true,
		Targets: []v1alpha1.BenchmarkTarget{{Name: "a"}, {Name: "b"}}}
	b.Status.Phase, b.Status.Baseline, b.Status.Iteration = v1alpha1.BenchmarkCompleted, "b", 6
	b.Status.Workload = b.Spec.WorkloadLabel()
	type run struct {
		iteration int32
		tps, pct  string
	}
	target := func(name, engine string, runs []run, mean, alone v1alpha1.RunFigures, vs, intf *v1alpha1.Ratios) v1alpha1.TargetStatus {
		ts := v1alpha1.TargetStatus{Name: name, Engine: engine, Storage: "volume", State: v1alpha1.TargetDone,
			Mean: &mean, AcrossRuns: &v1alpha1.RunSpread{Runs: 2, TPSCI95: "6.35"}, VsBaseline: vs,
			Alone: &v1alpha1.AloneResult{Mean: &alone, AcrossRuns: &v1alpha1.RunSpread{Runs: 2, BestIteration: runs[1].iteration, TPSCI95: "3.18"},
				Interference: intf}}
		for _, r := range runs {
			ts.Iterations = append(ts.Iterations, v1alpha1.IterationResult{Iteration: r.iteration, Threads: 4, Workload: "oltp_read_write",
				Alone: b.Spec.RunAlone(r.iteration) == name, RunFigures: v1alpha1.RunFigures{TPS: r.tps, LatencyPctMs: r.pct},
				SeriesConfigMap: fmt.Sprintf("intf-%s-run%d", name, r.iteration)})
		}
		return ts
	}
	a := target("a", "rocksdb", []run{{1, "200.00", "10.00"}, {2, "210.00", "11.00"}, {5, "120.00", "20.00"}, {6, "130.00", "22.00"}},
		v1alpha1.RunFigures{TPS: "125.00", LatencyPctMs: "21.00", BytesPerTransaction: "3000"},
		v1alpha1.RunFigures{TPS: "205.00", LatencyPctMs: "10.50", BytesPerTransaction: "2000"},
		&v1alpha1.Ratios{TPS: "1.344", LatencyPct: "1.273", TPSVerdict: v1alpha1.VerdictBetter, LatencyPctVerdict: v1alpha1.VerdictWorse},
		&v1alpha1.Ratios{TPS: "0.610", LatencyPct: "2.000", BytesPerTransaction: "1.500", TPSVerdict: v1alpha1.VerdictWorse,
			TPSPValue: "0.004", LatencyPctVerdict: v1alpha1.VerdictWorse})
	a.Iterations[1].Alone = false
	base := target("b", "innodb", []run{{3, "100.00", "15.00"}, {4, "104.00", "15.40"}, {5, "90.00", "16.00"}, {6, "96.00", "17.00"}},
		v1alpha1.RunFigures{TPS: "93.00", LatencyPctMs: "16.50"}, v1alpha1.RunFigures{TPS: "102.00", LatencyPctMs: "15.20"},
		&v1alpha1.Ratios{TPS: "1.000", LatencyPct: "1.000"},
		&v1alpha1.Ratios{TPS: "0.912", LatencyPct: "1.086", TPSVerdict: v1alpha1.VerdictNoSignificantDifference,
			LatencyPctVerdict: v1alpha1.VerdictNoSignificantDifference})
	b.Status.Targets = []v1alpha1.TargetStatus{a, base}
	return collectTwoIntervals(t, b, 8)
}

// TestInterferenceTable: the report has a table of each target alone and together with the ratios, n.s. where
// the runs' noise covers the difference; the main table's figures are said to be the runs together.
func TestInterferenceTable(t *testing.T) {
	b := interferenceData(t).Benchmark
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("\n%s", text)
	if want := "benchmark zns-demo/intf: oltp_read_write, 2 tables x 1000 rows, 4 threads, 6 x 10 s; Completed\n"; !strings.HasPrefix(text, want) {
		t.Errorf("headline: want %q", want)
	}
	if got := strings.Join(rowOf(t, text, "a")[5:9], " "); got != "Done 125.00 - 21.00" {
		t.Errorf("main table: a's TPS is its mean together; got %q", got)
	}
	_, table, ok := strings.Cut(text, "interference (runs together / runs alone):\n")
	if !ok {
		t.Fatalf("no interference table:\n%s", text)
	}
	lines := strings.Split(table, "\n")
	if got := strings.Join(strings.Fields(lines[0]), " "); got != "TARGET ALONE TPS TOGETHER TPS TPS T/A ALONE P95 MS TOGETHER P95 MS P95 T/A B/TX T/A" {
		t.Errorf("header %q", got)
	}
	for i, want := range []string{
		"a 205.00 125.00 0.61x 10.50 21.00 2.00x 1.50x",
		"b 102.00 93.00 n.s. 15.20 16.50 n.s. -",
		"T/A: TPS below 1 and p95 above 1 are what the other targets cost running together",
	} {
		if got := strings.Join(strings.Fields(lines[1+i]), " "); got != want {
			t.Errorf("row %d: %q, want %q", i+1, got, want)
		}
	}
	for _, want := range []string{
		"\nn.s.: no significant difference",
		"\nacross the runs together (mean ± ",
		"\nmeans over the runs together (each target ran alone first), 6 run(s) of 6 done; ratios are target / b",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	// Without any ratio n.s., nothing explains n.s.; without bytes per transaction, no B/TX column.
	clear := b.DeepCopy()
	clear.Status.Targets[1].Alone.Interference.TPSVerdict = v1alpha1.VerdictWorse
	clear.Status.Targets[1].Alone.Interference.LatencyPctVerdict = v1alpha1.VerdictTooFewRuns
	clear.Status.Targets[0].Alone.Interference.BytesPerTransaction = ""
	out.Reset()
	if err := Table(&out, clear); err != nil {
		t.Fatal(err)
	}
	_, table, _ = strings.Cut(out.String(), "interference (runs together / runs alone):\n")
	if s := out.String(); strings.Contains(s, "n.s.") || strings.Contains(s, "B/TX T/A") ||
		strings.Join(rowOf(t, table, "b")[1:], " ") != "102.00 93.00 0.91x 15.20 16.50 1.09x" {
		t.Errorf("no n.s., no bytes:\n%s", s)
	}

	// Without runs alone there is no such table.
	plain := b.DeepCopy()
	plain.Spec.MeasureInterference = false
	for i := range plain.Status.Targets {
		plain.Status.Targets[i].Alone = nil
	}
	out.Reset()
	if err := Table(&out, plain); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "interference") || strings.Contains(s, "together") {
		t.Errorf("without measureInterference:\n%s", s)
	}
}

// TestInterferenceResultLine: the one-line result ends with each target's TPS together / alone.
func TestInterferenceResultLine(t *testing.T) {
	b := interferenceData(t).Benchmark
	if got, want := ResultLine(b), "a 1.34x, p95 1.27x vs b; together/alone TPS: a 0.61x, b n.s."; got != want {
		t.Errorf("result %q, want %q", got, want)
	}
	// During the runs alone there is neither a comparison nor an interference yet.
	early := b.DeepCopy()
	early.Status.Phase = v1alpha1.BenchmarkRunning
	for i := range early.Status.Targets {
		ts := &early.Status.Targets[i]
		ts.State, ts.Mean, ts.VsBaseline = v1alpha1.TargetVerified, nil, nil
		ts.Alone.Interference = nil
	}
	if got := ResultLine(early); got != "" {
		t.Errorf("runs alone only: result %q", got)
	}
}

// TestInterferenceExport: every run says whether it was alone (from the plan when the status lacks the mark),
// each target carries its runs alone and the interference, and the CSVs an alone column last and an
// alone-mean row per target whose ratio columns are together / alone.
func TestInterferenceExport(t *testing.T) {
	d := interferenceData(t)
	e := exportJSON(t, d)
	if !e.MeasureInterference || e.Result != ResultLine(d.Benchmark) {
		t.Errorf("JSON measureInterference %v, result %q", e.MeasureInterference, e.Result)
	}
	var runs []string
	for _, r := range e.Runs {
		runs = append(runs, fmt.Sprintf("%s/%d:%v", r.Target, r.Iteration, r.Alone))
	}
	if got, want := strings.Join(runs, " "), "a/1:true a/2:true b/3:true b/4:true a/5:false b/5:false a/6:false b/6:false"; got != want {
		t.Errorf("JSON runs %s, want %s", got, want)
	}
	for _, tc := range []struct {
		target                   string
		tps, alone, intf, ci, ba float64
		verdict, pctVerdict      string
	}{
		{"a", 125, 205, 0.61, 3.18, 2, "Worse", "Worse"},
		{"b", 93, 102, 0.912, 3.18, 4, "NoSignificantDifference", "NoSignificantDifference"},
	} {
		var et *ExportTarget
		for i := range e.Targets {
			if e.Targets[i].Name == tc.target {
				et = &e.Targets[i]
			}
		}
		if et == nil || et.Mean["tps"] == nil || *et.Mean["tps"] != tc.tps {
			t.Fatalf("JSON %s: %+v", tc.target, et)
		}
		a := et.Alone
		if a == nil || a.Mean["tps"] == nil || *a.Mean["tps"] != tc.alone || a.Interference["tps"] == nil ||
			*a.Interference["tps"] != tc.intf || a.AcrossRuns["tps_ci95"] == nil || *a.AcrossRuns["tps_ci95"] != tc.ci ||
			a.AcrossRuns["best_iteration"] == nil || *a.AcrossRuns["best_iteration"] != tc.ba ||
			a.Verdicts["tps_verdict"] != tc.verdict || a.Verdicts["latency_pct_verdict"] != tc.pctVerdict {
			t.Errorf("JSON %s alone: %+v", tc.target, a)
		}
	}
	if a := e.Targets[0].Alone; a == nil || a.Interference["bytes_per_tx"] == nil || *a.Interference["bytes_per_tx"] != 1.5 ||
		a.Interference["tps_p"] == nil || *a.Interference["tps_p"] != 0.004 {
		t.Errorf("JSON a's interference: %+v", e.Targets[0].Alone)
	}

	recs, col := summaryCSV(t, d)
	if h := recs[0]; h[len(h)-2] != "workload" || h[len(h)-1] != "alone" {
		t.Errorf("last CSV columns %q, want workload, alone", h[len(h)-2:])
	}
	var rows []string
	for _, r := range recs[1:] {
		rows = append(rows, strings.Join([]string{r[col["target"]], r[col["iteration"]], r[col["alone"]], r[col["tps"]],
			r[col["latency_pct_ms"]], r[col["tps_vs_baseline"]], r[col["latency_pct_vs_baseline"]], r[col["tps_verdict"]],
			r[col["tps_ci95"]]}, " "))
	}
	want := []string{
		"a 1 true 200.00 10.00    ", "a 2 true 210.00 11.00    ",
		"a 5 false 120.00 20.00    ", "a 6 false 130.00 22.00    ",
		"a mean false 125.00 21.00 1.344 1.273 Better 6.35", "a alone-mean true 205.00 10.50 0.610 2.000 Worse 3.18",
		"b 3 true 100.00 15.00    ", "b 4 true 104.00 15.40    ",
		"b 5 false 90.00 16.00    ", "b 6 false 96.00 17.00    ",
		"b mean false 93.00 16.50 1.000 1.000  6.35", "b alone-mean true 102.00 15.20 0.912 1.086 NoSignificantDifference 3.18",
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
		byRun[r[1]+"/"+r[3]] = r[len(r)-1]
	}
	if len(series) != 1+16 || byRun["a/1"] != "true" || byRun["a/2"] != "true" || byRun["b/3"] != "true" ||
		byRun["a/5"] != "false" || byRun["b/6"] != "false" || byRun["b/1"] != "" {
		t.Errorf("series CSV: %d rows, alone %v", len(series)-1, byRun)
	}
}
