package report

import (
	"bytes"
	"strings"
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// lineAfter returns the first line that starts with name after the line holding marker.
func lineAfter(t *testing.T, text, marker, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, marker)
	if !ok {
		t.Fatalf("no %q in:\n%s", marker, text)
	}
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	t.Fatalf("no %s row after %q in:\n%s", name, marker, text)
	return ""
}

func TestRunsTableShowsSpreadBestAndVerdict(t *testing.T) {
	b := load(t, "pair")
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, name := range []string{"myrocks", "innodb"} {
		ts := target(t, b, name)
		s := ts.AcrossRuns
		if s == nil || s.Runs < 2 || s.TPSCI95 == "" {
			t.Fatalf("%s: the recorded status has no spread across runs: %+v", name, s)
		}
		row := lineAfter(t, text, "across runs (", name)
		for _, want := range []string{ts.Mean.TPS + " ± " + s.TPSCI95, s.BestTPS, ts.Mean.LatencyPctMs + " ± " + s.LatencyPctCI95Ms, s.BestLatencyPctMs} {
			if !strings.Contains(row, want) {
				t.Errorf("%s: across-runs row %q lacks %q", name, row, want)
			}
		}
		if name == b.Status.Baseline {
			if !strings.Contains(row, "(baseline)") {
				t.Errorf("baseline row %q", row)
			}
			continue
		}
		v := ts.VsBaseline
		if !strings.Contains(row, times(v.BestTPS)) || !strings.Contains(row, verdictText(v.TPSVerdict, v.TPSPValue)) {
			t.Errorf("%s: row %q lacks best-to-best %s or the verdict %q", name, row, times(v.BestTPS), verdictText(v.TPSVerdict, v.TPSPValue))
		}
	}
	if strings.Contains(text, "warning:") {
		t.Errorf("three runs a target need no warning:\n%s", text)
	}
}

func TestNoSignificantDifferenceReplacesTheRatio(t *testing.T) {
	b := load(t, "pair")
	for i := range b.Status.Targets {
		if v := b.Status.Targets[i].VsBaseline; b.Status.Targets[i].Name == "myrocks" {
			v.TPSVerdict, v.TPSPValue = v1alpha1.VerdictNoSignificantDifference, "0.41"
		}
	}
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	my := target(t, b, "myrocks")
	row := rowOf(t, text, "myrocks")
	if strings.Contains(strings.Join(row, " "), times(my.VsBaseline.TPS)) || row[len(row)-2] != notSignificant {
		t.Errorf("the TPS ratio is printed although the noise covers it: %q", row)
	}
	if !strings.Contains(text, "n.s.: no significant difference") ||
		!strings.Contains(lineAfter(t, text, "across runs (", "myrocks"), "no significant difference (p=0.41)") {
		t.Errorf("no legend or verdict:\n%s", text)
	}
	line := ResultLine(b)
	if !strings.Contains(line, "myrocks no significant TPS difference") || strings.Contains(line, times(my.VsBaseline.TPS)) {
		t.Errorf("result line %q", line)
	}
}

func TestTooFewRunsAreWarned(t *testing.T) {
	sweep := load(t, "sweep") // one run per thread count
	var out bytes.Buffer
	if err := Table(&out, sweep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "warning: 1 run per target: the ratios are not tested") || strings.Contains(out.String(), "across runs (") {
		t.Errorf("one run a target:\n%s", out.String())
	}
	pair := load(t, "pair")
	for i := range pair.Status.Targets {
		pair.Status.Targets[i].AcrossRuns.Runs = 2
	}
	out.Reset()
	if err := Table(&out, pair); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "warning: 2 runs per target: only differences of several standard deviations") {
		t.Errorf("two runs a target:\n%s", out.String())
	}
}

func TestExportsCarryVerdictsAndSpread(t *testing.T) {
	d := loadData(t, "pair")
	my := target(t, d.Benchmark, "myrocks")
	for _, et := range exportJSON(t, d).Targets {
		if et.Name != "myrocks" {
			continue
		}
		if et.Verdicts["tps_verdict"] != string(my.VsBaseline.TPSVerdict) || et.AcrossRuns["runs"] == nil ||
			*et.AcrossRuns["runs"] != float64(my.AcrossRuns.Runs) || et.VsBaseline["best_tps"] == nil {
			t.Errorf("JSON target: verdicts %v, across runs %v, vsBaseline %v", et.Verdicts, et.AcrossRuns, et.VsBaseline)
		}
	}
	recs, col := summaryCSV(t, d)
	found := false
	for _, r := range recs[1:] {
		if r[col["target"]] == "myrocks" && r[col["iteration"]] == "mean" {
			found = true
			if r[col["tps_verdict"]] != string(my.VsBaseline.TPSVerdict) || r[col["tps_ci95"]] != my.AcrossRuns.TPSCI95 ||
				r[col["tps_p_vs_baseline"]] != my.VsBaseline.TPSPValue {
				t.Errorf("CSV mean row %v", r)
			}
		}
	}
	if !found {
		t.Error("no mean row for myrocks")
	}
}
