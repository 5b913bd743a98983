package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/ycsb"
)

// fakeGoYCSB is a go-ycsb that replays a real capture (operator/internal/ycsb/testdata): its stdout, its stderr
// and its exit status.
func fakeGoYCSB(t *testing.T, capture string, exit string) string {
	t.Helper()
	dir := t.TempDir()
	data, err := filepath.Abs(filepath.Join("..", "..", "internal", "ycsb", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncat '" + filepath.Join(data, capture+".txt") + "'\n"
	if _, err := os.Stat(filepath.Join(data, capture+".stderr")); err == nil {
		script += "cat '" + filepath.Join(data, capture+".stderr") + "' >&2\n"
	}
	script += "exit " + exit + "\n"
	path := filepath.Join(dir, "go-ycsb")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestYCSBFailuresFromCaptures: each captured go-ycsb failure ends the phase with a reason from the fixed set.
func TestYCSBFailuresFromCaptures(t *testing.T) {
	for _, tc := range []struct {
		sub, capture, exit string
		records            string
		want               string
		text               string
	}{
		{"ycsb-run", "fail-wrong-password", "1", "100", failreason.AccessDenied, "Error 1045"},
		{"ycsb-run", "fail-no-database", "1", "100", failreason.MissingTables, "Error 1049"},
		{"ycsb-run", "fail-server-down", "1", "100", failreason.ConnectionFailed, "connection refused"},
		{"ycsb-run", "fail-server-gone", "2", "1000", failreason.ConnectionLost, "invalid connection"},
		{"ycsb-run", "fail-bad-workload", "2", "100", failreason.Other, "exit status 2"},
		// go-ycsb exiting 0 without its final summary.
		{"ycsb-run", "fail-bad-distribution", "0", "100", failreason.InvalidOutput, "no final summary"},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			term := filepath.Join(t.TempDir(), "term")
			var out, errb bytes.Buffer
			code := Main(context.Background(), []string{tc.sub, "--go-ycsb=" + fakeGoYCSB(t, tc.capture, tc.exit),
				"--record-count=" + tc.records, "--threads=1", "--time=0", "--operation-count=100", "--termination-log=" + term},
				&out, &errb, func(string) string { return "" })
			b, err := os.ReadFile(term)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := benchresult.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if code != 1 || sum.OK || sum.Reason != tc.want || !strings.Contains(sum.Error, tc.text) {
				t.Errorf("exit %d, reason %s, error %q; want %s with %q", code, sum.Reason, sum.Error, tc.want, tc.text)
			}
		})
	}
}

// TestYCSBUsage: what go-ycsb could not do is refused before it runs, with the runner's usage status.
func TestYCSBUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"ycsb-run", "--workload=z"}, "", `unknown YCSB workload "z"`},
		{[]string{"ycsb-load", "--distribution=hotspot"}, "", `unknown request distribution "hotspot"`},
		{[]string{"ycsb-load", "--field-length=0"}, "", "a record of 0 bytes"},
		{[]string{"ycsb-load", "--field-count=1", "--field-length=16319"}, "", "above the 65535"},
		{[]string{"ycsb-run", "--time=0"}, "", "--time or --operation-count must end the run"},
		{[]string{"ycsb-run"}, "pass${HOME}word", "cannot reach it intact"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), tc.args, &out, &errb, func(k string) string {
			if k == PasswordVar {
				return tc.env
			}
			return ""
		})
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestCheckYCSB: a load MyRocks' bulk load partly refused exits 0; its summary alone shows the records missing.
func TestCheckYCSB(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "internal", "ycsb", "testdata", "load-a-ordered-4threads-bulkload.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := ycsb.NewParser()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p.Line(sc.Text())
	}
	res, err := p.Result()
	if err != nil {
		t.Fatal(err)
	}
	ins, _ := res.Op(ycsb.OpInsert)
	err = checkYCSB(ycsb.PhaseLoad, ycsb.Spec{RecordCount: 1000}, res)
	want := fmt.Sprintf("inserted %d of 1000 records (%d inserts failed)", ins.Count, ins.Errors)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("checkYCSB: %v; want %q", err, want)
	}
	if r, _ := failreason.Classify(failreason.Failure{Text: err.Error()}); r != failreason.RowCountMismatch {
		t.Errorf("reason %s, want RowCountMismatch", r)
	}
	if err := checkYCSB(ycsb.PhaseLoad, ycsb.Spec{RecordCount: ins.Count + ins.Errors}, &ycsb.Result{Ops: []ycsb.Op{{Name: ycsb.OpInsert, Count: ins.Count + ins.Errors}}}); err != nil {
		t.Errorf("a complete load: %v", err)
	}
	if err := checkYCSB(ycsb.PhaseRun, ycsb.Spec{}, &ycsb.Result{Ops: []ycsb.Op{{Name: ycsb.OpRead, Errors: 5}}}); err == nil || !strings.Contains(err.Error(), "no operation succeeded") {
		t.Errorf("a run without one successful operation: %v", err)
	}
}
