package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
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
