package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
)

// The Benchmarks under testdata are real: see testdata/README.md.

func load(t *testing.T, name string) *v1alpha1.Benchmark {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.Benchmark{}
	if err := yaml.UnmarshalStrict(raw, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func loadData(t *testing.T, name string) Data {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+"-series.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cms := &corev1.ConfigMapList{}
	if err := yaml.Unmarshal(raw, cms); err != nil {
		t.Fatal(err)
	}
	d, err := Collect(load(t, name), cms.Items)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Missing) > 0 {
		t.Fatalf("series missing: %v", d.Missing)
	}
	return d
}

// readCSV writes d with write (SummaryCSV, SeriesCSV) and reads the records back.
func readCSV(t *testing.T, write func(io.Writer, Data) error, d Data) [][]string {
	t.Helper()
	var out bytes.Buffer
	if err := write(&out, d); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// summaryCSV writes d's summary CSV and reads it back: the records, the header's column numbers.
func summaryCSV(t *testing.T, d Data) ([][]string, map[string]int) {
	t.Helper()
	recs := readCSV(t, SummaryCSV, d)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	return recs, col
}

// exportJSON writes d's JSON export and reads it back.
func exportJSON(t *testing.T, d Data) Export {
	t.Helper()
	var js bytes.Buffer
	if err := JSON(&js, d); err != nil {
		t.Fatal(err)
	}
	var e Export
	if err := json.Unmarshal(js.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func target(t *testing.T, b *v1alpha1.Benchmark, name string) v1alpha1.TargetStatus {
	t.Helper()
	for _, ts := range b.Status.Targets {
		if ts.Name == name {
			return ts
		}
	}
	t.Fatalf("no target %s", name)
	return v1alpha1.TargetStatus{}
}

// rowOf finds the line of a table that starts with a target's name and splits it into fields.
func rowOf(t *testing.T, out, name string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return f
		}
	}
	t.Fatalf("no row for %s in:\n%s", name, out)
	return nil
}

func TestTableShowsStatusFigures(t *testing.T) {
	b := load(t, "pair")
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("\n%s", text)
	if !strings.Contains(text, "P95 MS") || !strings.Contains(text, "InnoDB on a volume (baseline)") || !strings.Contains(text, "MyRocks on a volume") {
		t.Errorf("header or stacks missing:\n%s", text)
	}
	for _, ts := range b.Status.Targets {
		row := rowOf(t, text, ts.Name)
		if ts.Mean == nil || ts.VsBaseline == nil {
			t.Fatalf("%s: the captured status has no mean or ratios", ts.Name)
		}
		for _, want := range []string{ts.Mean.TPS, ts.Mean.LatencyAvgMs, ts.Mean.LatencyPctMs, ts.Mean.LatencyMaxMs, ts.Mean.TPSRelDevPct, times(ts.VsBaseline.TPS)} {
			if !strings.Contains(strings.Join(row, " "), want) {
				t.Errorf("%s: row %q lacks %q", ts.Name, row, want)
			}
		}
	}
	if base := rowOf(t, text, "innodb"); base[len(base)-1] != "1.00x" || base[len(base)-2] != "1.00x" {
		t.Errorf("baseline against itself: %q", base)
	}
	if !strings.Contains(text, fmt.Sprintf("means over %d run(s) of %d", b.Spec.Iterations, b.Spec.Iterations)) {
		t.Errorf("footer:\n%s", text)
	}
}

func TestTableMarksFailedTarget(t *testing.T) {
	b := load(t, "failed")
	ghost := target(t, b, "ghost")
	if ghost.State != v1alpha1.TargetFailed || ghost.Reason == "" {
		t.Fatalf("the captured ghost target did not fail with a reason: %+v", ghost)
	}
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	row := strings.Join(rowOf(t, text, "ghost"), " ")
	if !strings.Contains(row, "FAILED ("+ghost.Reason+")") || strings.ContainsAny(strings.TrimPrefix(row, "ghost"), "0123456789") {
		t.Errorf("failed row %q: want FAILED (%s) and no figures", row, ghost.Reason)
	}
	cause := fmt.Sprintf("ghost: FAILED (%s): %s", ghost.Reason, firstLine(ghost.Message))
	if !strings.Contains(text, cause) {
		t.Errorf("cause line %q missing:\n%s", cause, text)
	}
	// The others keep their figures.
	my := target(t, b, "myrocks")
	if !strings.Contains(strings.Join(rowOf(t, text, "myrocks"), " "), my.Mean.TPS) {
		t.Errorf("myrocks lost its figures:\n%s", text)
	}
}

func TestResultLine(t *testing.T) {
	b := load(t, "pair")
	my := target(t, b, "myrocks")
	want := fmt.Sprintf("myrocks %s, p95 %s vs innodb", times(my.VsBaseline.TPS), times(my.VsBaseline.LatencyPct))
	if got := ResultLine(b); got != want {
		t.Errorf("pair: %q, want %q", got, want)
	}
	f := load(t, "failed")
	got := ResultLine(f)
	if !strings.Contains(got, "ghost failed ("+target(t, f, "ghost").Reason+")") || !strings.HasSuffix(got, " vs innodb") ||
		!strings.HasPrefix(got, "myrocks "+times(target(t, f, "myrocks").VsBaseline.TPS)) {
		t.Errorf("failed: %q", got)
	}
	// A failed baseline gives no ratios.
	for i := range f.Status.Targets {
		if f.Status.Targets[i].Name == "innodb" {
			f.Status.Targets[i].State, f.Status.Targets[i].Reason = v1alpha1.TargetFailed, "Crashed"
		}
	}
	if got := ResultLine(f); !strings.Contains(got, "baseline innodb failed (Crashed): no ratios") || strings.Contains(got, " vs innodb") {
		t.Errorf("failed baseline: %q", got)
	}
	// Nothing yet while it runs.
	if got := ResultLine(load(t, "pair-running")); got != "" {
		t.Errorf("running: %q", got)
	}
}

func TestCompare(t *testing.T) {
	pair, failed := load(t, "pair"), load(t, "failed")
	var out bytes.Buffer
	if err := Compare(&out, []*v1alpha1.Benchmark{pair, failed}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+len(pair.Status.Targets)+len(failed.Status.Targets) {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		b := map[string]*v1alpha1.Benchmark{"pair": pair, "failed": failed}[f[0]]
		if b == nil {
			t.Fatalf("line %q", l)
		}
		ts := target(t, b, f[1])
		if ts.State == v1alpha1.TargetFailed {
			if !strings.Contains(l, "FAILED ("+ts.Reason+")") {
				t.Errorf("line %q", l)
			}
			continue
		}
		if !strings.Contains(l, " "+ts.Mean.TPS+" ") || !strings.Contains(l, " "+ts.Mean.LatencyPctMs+" ") {
			t.Errorf("line %q lacks %s's figures", l, ts.Name)
		}
	}
}

func TestExportJSON(t *testing.T) {
	d := loadData(t, "pair")
	var out bytes.Buffer
	if err := JSON(&out, d); err != nil {
		t.Fatal(err)
	}
	var e Export
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, ts := range d.Benchmark.Status.Targets {
		runs += len(ts.Iterations)
		var et *ExportTarget
		for i := range e.Targets {
			if e.Targets[i].Name == ts.Name {
				et = &e.Targets[i]
			}
		}
		want, _ := strconv.ParseFloat(ts.Mean.TPS, 64)
		if et == nil || et.Mean["tps"] == nil || *et.Mean["tps"] != want || et.Stack != Stack(ts) {
			t.Errorf("%s: exported %+v, want mean tps %v", ts.Name, et, want)
		}
	}
	if len(e.Runs) != runs || runs == 0 {
		t.Fatalf("%d runs exported, status has %d", len(e.Runs), runs)
	}
	for _, r := range e.Runs {
		if r.Series == nil || r.Series.Len() < 2 || r.Series.Target != r.Target || r.Series.Iteration != int(r.Iteration) {
			t.Errorf("run %s/%d: series %+v", r.Target, r.Iteration, r.Series)
		}
	}
}

func TestExportCSV(t *testing.T) {
	d := loadData(t, "failed")
	recs, col := summaryCSV(t, d)
	want := 0
	for _, ts := range d.Benchmark.Status.Targets {
		want += len(ts.Iterations) + 1
	}
	if len(recs)-1 != want {
		t.Fatalf("%d summary rows, want %d", len(recs)-1, want)
	}
	for _, r := range recs[1:] {
		ts := target(t, d.Benchmark, r[col["target"]])
		switch {
		case ts.State == v1alpha1.TargetFailed:
			if r[col["reason"]] != ts.Reason || r[col["tps"]] != "" {
				t.Errorf("failed row %q", r)
			}
		case r[col["iteration"]] == "mean":
			if r[col["tps"]] != ts.Mean.TPS || r[col["tps_vs_baseline"]] != ts.VsBaseline.TPS {
				t.Errorf("mean row %q", r)
			}
		default:
			it, _ := strconv.Atoi(r[col["iteration"]])
			if r[col["tps"]] != ts.Iterations[it-1].TPS || r[col["latency_pct_ms"]] != ts.Iterations[it-1].LatencyPctMs {
				t.Errorf("run row %q", r)
			}
		}
	}

	recs = readCSV(t, SeriesCSV, d)
	intervals := 0
	for _, r := range d.Runs {
		intervals += r.Series.Len()
	}
	if len(recs)-1 != intervals || intervals == 0 {
		t.Fatalf("%d series rows, want %d", len(recs)-1, intervals)
	}
	first := d.Runs[0]
	if recs[1][1] != first.Target || recs[1][5] != strconv.FormatFloat(first.Series.TPS[0], 'f', -1, 64) {
		t.Errorf("first series row %q, want %s's first interval", recs[1], first.Target)
	}
}

func TestCollectNamesMissingSeries(t *testing.T) {
	d := loadData(t, "pair")
	d2, err := Collect(d.Benchmark, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d2.Missing) != len(d.Runs) || len(d2.Runs) != len(d.Runs) {
		t.Errorf("missing %v for %d runs", d2.Missing, len(d.Runs))
	}
}

func TestWatch(t *testing.T) {
	b := load(t, "pair-running")
	if b.Status.Phase != v1alpha1.BenchmarkRunning || b.Status.StartAt == nil {
		t.Fatalf("the running capture is %s", b.Status.Phase)
	}
	now := b.Status.StartAt.Add(4 * time.Second)
	left, ok := Remaining(b, now)
	wantLeft := time.Duration(b.Spec.DurationSeconds-4)*time.Second +
		time.Duration(b.Spec.Iterations-b.Status.Iteration)*time.Duration(b.Spec.DurationSeconds+b.Spec.StartDelaySeconds)*time.Second
	if !ok || left != wantLeft {
		t.Errorf("remaining %s %v, want %s", left, ok, wantLeft)
	}
	// The last interval of a real sysbench run, as the operator records it.
	res, err := sysbench.Parse(strings.NewReader(readFile(t, "../sysbench/testdata/run-rocksdb-ri1.txt")))
	if err != nil {
		t.Fatal(err)
	}
	iv := res.Intervals[len(res.Intervals)-1]
	for i := range b.Status.Targets {
		if b.Status.Targets[i].Name == "myrocks" {
			b.Status.Targets[i].Live = &v1alpha1.LiveFigures{Iteration: b.Status.Iteration, Seconds: strconv.FormatFloat(iv.Time, 'f', -1, 64),
				TPS: strconv.FormatFloat(iv.TPS, 'f', 2, 64), LatencyPctMs: strconv.FormatFloat(iv.LatencyMS, 'f', 2, 64)}
		}
	}
	var out bytes.Buffer
	if err := Watch(&out, b, now); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("\n%s", text)
	el, _ := Elapsed(b, now)
	for _, want := range []string{"phase Running", fmt.Sprintf("run %d/%d", b.Status.Iteration, b.Spec.Iterations), "elapsed " + Short(el),
		"remaining ~" + Short(wantLeft)} {
		if !strings.Contains(text, want) {
			t.Errorf("watch lacks %q:\n%s", want, text)
		}
	}
	my := strings.Join(rowOf(t, text, "myrocks"), " ")
	if !strings.Contains(my, strconv.FormatFloat(iv.TPS, 'f', 2, 64)) || !strings.Contains(my, "last interval") {
		t.Errorf("myrocks row %q lacks the live interval", my)
	}
	// innodb has no live figure: the mean of its last finished run.
	in := target(t, b, "innodb")
	if row := strings.Join(rowOf(t, text, "innodb"), " "); !strings.Contains(row, in.Iterations[len(in.Iterations)-1].TPS) || !strings.Contains(row, "run mean") {
		t.Errorf("innodb row %q", row)
	}

	done := load(t, "pair")
	out.Reset()
	if err := Watch(&out, done, time.Now()); err != nil {
		t.Fatal(err)
	}
	el, _ = Elapsed(done, time.Now())
	if el != done.Status.CompletedAt.Sub(done.Status.StartedAt.Time) || strings.Contains(out.String(), "remaining") ||
		!strings.Contains(out.String(), "result: "+ResultLine(done)) {
		t.Errorf("completed view (elapsed %s):\n%s", el, out.String())
	}
}

// TestElapsedSameBeforeAndAfterStorage: the controller computes status.elapsed from a completedAt it has just set,
// to the nanosecond; the API stores whole seconds. Both must give the same figure (they once gave 2s and 1s).
func TestElapsedSameBeforeAndAfterStorage(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, ns := range []int{0, 1, 499_999_999, 500_000_000, 999_999_999} {
		end := start.Add(time.Second + time.Duration(ns))
		inMemory := &v1alpha1.Benchmark{Status: v1alpha1.BenchmarkStatus{StartedAt: &metav1.Time{Time: start},
			CompletedAt: &metav1.Time{Time: end}}}
		stored := inMemory.DeepCopy()
		stored.Status.CompletedAt = &metav1.Time{Time: end.Truncate(time.Second)}
		a, _ := Elapsed(inMemory, time.Now())
		b, _ := Elapsed(stored, time.Now())
		if Short(a) != Short(b) || Short(b) != "1s" {
			t.Errorf("completed %d ns after a whole second: elapsed %s in memory, %s stored; want 1s both", ns, Short(a), Short(b))
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{9 * time.Second: "9s", 245 * time.Second: "4m05s", 3723 * time.Second: "1h02m03s", 1499 * time.Millisecond: "1s"} {
		if got := Short(d); got != want {
			t.Errorf("Short(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestTableLatencyDistribution: the p50/p95/p99/p99.9 of each target (from sysbench's histogram, means over
// the runs) follow the table, and are absent for a failed target.
func TestTableLatencyDistribution(t *testing.T) {
	for _, name := range []string{"pair", "failed"} {
		b := load(t, name)
		var out bytes.Buffer
		if err := Table(&out, b); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		_, dist, ok := strings.Cut(text, "latency distribution of the runs")
		if !ok {
			t.Fatalf("%s: no distribution:\n%s", name, text)
		}
		for _, ts := range b.Status.Targets {
			if ts.State == v1alpha1.TargetFailed {
				if strings.Contains(dist, "\n"+ts.Name+" ") {
					t.Errorf("%s: failed %s has a distribution row", name, ts.Name)
				}
				continue
			}
			m := ts.Mean
			if m.LatencyP50Ms == "" || m.LatencyP999Ms == "" {
				t.Fatalf("%s: the capture has no histogram percentiles for %s: %+v", name, ts.Name, m)
			}
			row := rowOf(t, dist, ts.Name)
			if strings.Join(row[1:5], " ") != strings.Join([]string{m.LatencyP50Ms, m.LatencyP95Ms, m.LatencyP99Ms, m.LatencyP999Ms}, " ") {
				t.Errorf("%s: row %q, status %+v", name, row, m)
			}
			p50, _ := num(m.LatencyP50Ms)
			p999, _ := num(m.LatencyP999Ms)
			if p50 > p999 {
				t.Errorf("%s: p50 %v above p99.9 %v", ts.Name, p50, p999)
			}
		}
	}
}

// TestStackNamesTheZonedFilesystem: a zoned target on btrfs or f2fs is not called ZenFS (the zoned node's demo
// once printed "InnoDB on ZenFS" for InnoDB on zoned btrfs).
func TestStackNamesTheZonedFilesystem(t *testing.T) {
	for _, tc := range []struct {
		engine, storage, fs, want string
	}{
		{"rocksdb", "zoned", "", "MyRocks on ZenFS"},
		{"rocksdb", "zoned", "zenfs", "MyRocks on ZenFS"},
		{"innodb", "zoned", "btrfs", "InnoDB on zoned btrfs"},
		{"rocksdb", "zoned", "f2fs", "MyRocks on zoned f2fs"},
		{"innodb", "volume", "", "InnoDB on a volume"},
		{"innodb", "device", "xfs", "InnoDB on xfs on a conventional device"},
	} {
		ts := v1alpha1.TargetStatus{Engine: tc.engine, Storage: tc.storage, Filesystem: tc.fs}
		if got := Stack(ts); got != tc.want {
			t.Errorf("Stack(%s, %s, %q) = %q, want %q", tc.engine, tc.storage, tc.fs, got, tc.want)
		}
	}
}

// A target that started its runs out of steady state is marked in its row, its note and, as the baseline, in the
// result line; a zoned one, which needs none, and a status from before the phase existed are not.
func TestNotInSteadyStateIsMarked(t *testing.T) {
	mean := &v1alpha1.RunFigures{TPS: "100.00", LatencyPctMs: "5.00"}
	b := &v1alpha1.Benchmark{Spec: v1alpha1.BenchmarkSpec{Workload: "oltp_update_index", Percentile: 95, Iterations: 1},
		Status: v1alpha1.BenchmarkStatus{Baseline: "conv", Phase: v1alpha1.BenchmarkCompleted, Iteration: 1, Targets: []v1alpha1.TargetStatus{
			{Name: "zoned", Engine: "innodb", Storage: "zoned", Filesystem: "btrfs", State: v1alpha1.TargetDone, Mean: mean,
				VsBaseline:  &v1alpha1.Ratios{TPS: "2.000", LatencyPct: "0.500"},
				SteadyState: &v1alpha1.SteadyStateStatus{Skipped: "zoned target"}},
			{Name: "conv", Engine: "innodb", Storage: "device", Filesystem: "ext4", State: v1alpha1.TargetDone, Mean: mean,
				VsBaseline:  &v1alpha1.Ratios{TPS: "1.000", LatencyPct: "1.000"},
				Notes:       []string{"not in steady state: 3 write-only round(s) did not settle: range 40.0%"},
				SteadyState: &v1alpha1.SteadyStateStatus{Required: true, Rounds: []v1alpha1.SteadyStateRound{{Round: 1, TPS: "1"}}}},
			{Name: "old", Engine: "innodb", Storage: "volume", State: v1alpha1.TargetDone, Mean: mean},
		}}}
	var out strings.Builder
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	if !strings.Contains(rows["conv"], "Done (not steady)") || strings.Contains(rows["zoned"], "not steady") || strings.Contains(rows["old"], "not steady") {
		t.Errorf("rows:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "conv: note: not in steady state") {
		t.Errorf("the note is missing:\n%s", out.String())
	}
	if got := ResultLine(b); !strings.HasPrefix(got, "zoned 2.00x, p95 0.50x") || !strings.HasSuffix(got, " vs conv (baseline not in steady state)") {
		t.Errorf("result %q", got)
	}
	if !strings.Contains(Stack(b.Status.Targets[1]), "ext4 on a conventional device") {
		t.Errorf("stack %q", Stack(b.Status.Targets[1]))
	}
}
