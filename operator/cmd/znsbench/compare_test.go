package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, s benchresult.Summary) string {
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.json", benchresult.Summary{Phase: "run", Target: "zns", OK: true, TPS: 300, LatencyPctMS: 4, Percentile: 95})
	b := write("b.json", benchresult.Summary{Phase: "run", Target: "xfs", OK: true, TPS: 100, LatencyPctMS: 16, Percentile: 95})
	var out, errb bytes.Buffer
	if code := compareCmd([]string{a, b}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "TPS vs xfs") {
		t.Fatalf("table:\n%s", out.String())
	}
	if f := strings.Fields(lines[1]); f[0] != "zns" || f[len(f)-2] != "3.00x" || f[len(f)-1] != "0.25x" {
		t.Errorf("zns row %q: want TPS ratio 3.00x and p95 ratio 0.25x", lines[1])
	}
	if code := compareCmd([]string{filepath.Join(dir, "missing.json")}, &out, &errb); code != 1 {
		t.Errorf("missing file: exit %d", code)
	}
}

// TestCompareMarksFailedRuns: a failed run is a FAILED row with its reason, not a row of zeros, and the exit
// status says the comparison is incomplete; figures that need two intervals are "-" without them; a run with
// many ignored errors is flagged.
func TestCompareMarksFailedRuns(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, s benchresult.Summary) string {
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lost := write("lost.json", benchresult.Summary{Phase: "run", Target: "zns", OK: false, Reason: "ConnectionLost",
		Error: "mysql_stmt_execute() returned error 2013 (Lost connection to server during query) for query 'COMMIT'\nsysbench run failed: exit status 1"})
	short := write("short.json", benchresult.Summary{Phase: "run", Target: "short", OK: true, TPS: 90, LatencyPctMS: 20, Percentile: 95, Intervals: 1})
	busy := write("busy.json", benchresult.Summary{Phase: "run", Target: "rocks", OK: true, TPS: 192.35, ErrorsPerSec: 17.9, LatencyPctMS: 10, Percentile: 95, Intervals: 5, TPSRelDevPct: 12.5})
	base := write("base.json", benchresult.Summary{Phase: "run", Target: "xfs", OK: true, TPS: 100, LatencyPctMS: 16, Percentile: 95, Intervals: 5})

	var out, errb bytes.Buffer
	if code := compareCmd([]string{lost, short, busy, base}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1 (a run failed)\n%s", code, out.String())
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			rows[f[0]] = f
		}
	}
	if r := rows["zns"]; len(r) < 3 || r[1] != "FAILED" || r[2] != "-" {
		t.Errorf("failed row %q", r)
	}
	if !strings.Contains(out.String(), "zns: FAILED (ConnectionLost): mysql_stmt_execute() returned error 2013") {
		t.Errorf("the failure's reason and cause are not printed:\n%s", out.String())
	}
	if r := rows["short"]; len(r) < 10 || r[8] != "-" || r[9] != "-" {
		t.Errorf("a run of one interval has no deviation figures: %q", r)
	}
	if r := rows["rocks"]; len(r) < 2 || r[1] != "ok*" || !strings.Contains(out.String(), "rocks: * 8.5% of transaction attempts ended in an ignored error (17.90/s)") {
		t.Errorf("many ignored errors not flagged:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "1 of 4 runs failed") {
		t.Errorf("stderr %q", errb.String())
	}

	// A failed baseline: no ratios at all.
	out.Reset()
	errb.Reset()
	if code := compareCmd([]string{base, lost}, &out, &errb); code != 1 || regexp.MustCompile(`\d\.\d\dx`).MatchString(out.String()) || strings.Contains(out.String(), "p0") || !strings.Contains(errb.String(), "the baseline is one of them") {
		t.Errorf("failed baseline: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

func TestCompareShowsDeviceBytesPerTransaction(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, s := range []benchresult.Summary{
		{Phase: "run", Target: "btrfs", OK: true, TPS: 100, Percentile: 95, DeviceWrittenBytes: 1 << 30, BytesPerTransaction: 20480},
		{Phase: "run", Target: "ext4", OK: true, TPS: 100, Percentile: 95},
	} {
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, s.Target+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var out, errb bytes.Buffer
	if code := compareCmd(paths, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "dev KiB/txn") {
		t.Fatalf("no device column:\n%s", out.String())
	}
	if f := strings.Fields(lines[1]); f[len(f)-1] != "20.0" {
		t.Errorf("btrfs row %q: want 20.0 KiB per transaction", lines[1])
	}
	if f := strings.Fields(lines[2]); f[len(f)-1] != "-" {
		t.Errorf("ext4 row without device bytes %q: want -", lines[2])
	}
}
