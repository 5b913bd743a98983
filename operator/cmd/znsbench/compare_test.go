package main

import (
	"bytes"
	"os"
	"path/filepath"
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
