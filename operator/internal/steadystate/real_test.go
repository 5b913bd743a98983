package steadystate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
)

// The series below were recorded on the development machine by capture_test.go;
// testdata/README.md says how, and what the rule made of them.

// rounds reads testdata/dir/round-01... in order, through parse.
func rounds(t *testing.T, dir string, n int, ext string, parse func([]byte) (float64, error)) []float64 {
	t.Helper()
	ys := make([]float64, 0, n)
	for i := 1; i <= n; i++ {
		name := filepath.Join("testdata", dir, fmt.Sprintf("round-%02d.%s", i, ext))
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		y, err := parse(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ys = append(ys, y)
	}
	return ys
}

func fioWriteIOPS(b []byte) (float64, error) {
	r, err := fio.Parse(b)
	if err != nil {
		return 0, err
	}
	if err := r.Err(); err != nil {
		return 0, err
	}
	return r.Totals(fio.Write).IOPS, nil
}

func sysbenchTPS(b []byte) (float64, error) {
	r, err := sysbench.ParseString(string(b))
	if err != nil {
		return 0, err
	}
	if r.Summary == nil {
		return 0, fmt.Errorf("no summary (FATAL: %q)", r.Fatal)
	}
	return r.Summary.TPS, nil
}

func TestRealFioRandomWrite(t *testing.T) {
	// 20 rounds of 5 s of 4 KiB random writes (iodepth 16, direct) on one
	// 1 GiB file on the VM's virtio disk, with a CI build running beside.
	ys := rounds(t, "fio-randwrite", 20, "json", fioWriteIOPS)
	if math.Abs(ys[0]-32851.888867) > 1e-3 || math.Abs(ys[19]-48020.391843) > 1e-3 {
		t.Fatalf("write IOPS of rounds 1 and 20: %v and %v; the capture changed, update this test", ys[0], ys[19])
	}
	rule := DefaultRule()
	got := rule.Evaluate(ys)
	t.Logf("write IOPS %.0f: %s", ys, got.Reason)
	// The host's load swings the IOPS by up to half from round to round:
	// no window of 5 satisfies the rule, the last misses both limits.
	if got.Reached || got.Start != 15 || !strings.HasPrefix(got.Reason, "range 47.6% of the average, limit 20%; excursion 18.6%") {
		t.Errorf("last window: %+v", got)
	}
	if w := rule.FirstWindow(ys); w != -1 {
		t.Errorf("FirstWindow = %d, want -1", w)
	}
	// The closest call, rounds 4-8, misses on range alone.
	if near := rule.judge(ys, 3); near.Reached || !strings.HasPrefix(near.Reason, "range 22.0%") || near.ExcursionPct > 10 {
		t.Errorf("rounds 4-8: %+v", near)
	}
}

func TestRealSysbenchWriteOnly(t *testing.T) {
	// 15 rounds of 10 s of oltp_write_only, 4 threads, against a private
	// MariaDB 10.11 with MyRocks on loopback (4 tables x 100,000 rows),
	// right after the prepare, with a CI build running beside.
	ys := rounds(t, "sysbench-write-only", 15, "txt", sysbenchTPS)
	if ys[0] != 1322.61 || ys[14] != 1018.60 {
		t.Fatalf("TPS of rounds 1 and 15: %v and %v; the capture changed, update this test", ys[0], ys[14])
	}
	rule := DefaultRule()
	got := rule.Evaluate(ys)
	t.Logf("TPS %.0f: %s", ys, got.Reason)
	// No warm-up shows (round 1 is not the slowest); the load swings TPS
	// by a third within every window, so the rule never holds.
	if got.Reached || got.Start != 10 || got.Reason != "range 48.5% of the average, limit 20%; excursion 39.6% of the average, limit 10%" {
		t.Errorf("last window: %+v", got)
	}
	if w := rule.FirstWindow(ys); w != -1 {
		t.Errorf("FirstWindow = %d, want -1", w)
	}
	// Flat lines are there (rounds 9-13: excursion 2.4%), but never with
	// the range within 20%: the closest is rounds 5-9 at 22.2%.
	if flat := rule.judge(ys, 8); flat.Reached || flat.ExcursionPct > 10 || !strings.HasPrefix(flat.Reason, "range 33.0%") {
		t.Errorf("rounds 9-13: %+v", flat)
	}
	if near := rule.judge(ys, 4); near.Reached || !strings.HasPrefix(near.Reason, "range 22.2%") {
		t.Errorf("rounds 5-9: %+v", near)
	}
}
