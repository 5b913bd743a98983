package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFailedBackgroundJobShowsItsLogsEndAndTheHint(t *testing.T) {
	f := newFake(t)
	r, _, errs := f.runner(t)
	if err := os.MkdirAll(r.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.background("images", r.Cmd(nil, "sh", "-c", `i=1; while [ $i -le 50 ]; do echo "line $i"; i=$((i+1)); done; exit 4`)); err != nil {
		t.Fatal(err)
	}
	err := r.waitFor(5, "images", "hack/images/build.sh alone shows it again")
	var fl *Failure
	log := filepath.Join(r.logs, "images.log")
	if !errors.As(err, &fl) || fl.Stage != 5 || fl.ToDo != "images failed (exit 4; above, the end of "+log+"). hack/images/build.sh alone shows it again" {
		t.Fatalf("got %v", err)
	}
	got := errs.String()
	if !strings.HasPrefix(got, "test: images: building in the background (log: "+log+")\n") {
		t.Errorf("stderr starts %q", got)
	}
	if !strings.HasSuffix(got, "line 11\n") && !strings.Contains(got, "\nline 11\nline 12\n") || !strings.HasSuffix(got, "line 50\n") || strings.Contains(got, "line 10\n") {
		t.Errorf("stderr shows not the log's last 40 lines:\n%s", got)
	}
	// one that succeeded is done
	if err := r.background("node-image", r.Cmd(nil, "sh", "-c", "echo built")); err != nil {
		t.Fatal(err)
	}
	if err := r.waitFor(5, "node-image", "hint"); err != nil || !strings.HasSuffix(errs.String(), "test: node-image: done\n") {
		t.Errorf("got %v, stderr ends %q", err, errs.String())
	}
}

// TestRunTogetherKeepsLinesWhole: two commands that write their lines in pieces, at once, into one output: every
// line arrives whole, and each command's status is its own.
func TestRunTogetherKeepsLinesWhole(t *testing.T) {
	f := newFake(t)
	r, stdout, _ := f.runner(t)
	// each line in 20 writes of its own (printf is a shell builtin: one write each), the two shells racing
	script := `i=0; while [ $i -lt 30 ]; do j=0; while [ $j -lt 20 ]; do printf %s "$1"; j=$((j+1)); done; printf '\n'; i=$((i+1)); done; printf %s "$1-last"; exit $2`
	rcs := r.runTogether(r.Cmd(nil, "sh", "-c", script, "sh", "a", "0"), r.Cmd(nil, "sh", "-c", script, "sh", "b", "3"))
	if !reflect.DeepEqual(rcs, []int{0, 3}) {
		t.Errorf("statuses %v, want [0 3]", rcs)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	counts := map[string]int{}
	for _, l := range lines {
		counts[l]++
	}
	want := map[string]int{strings.Repeat("a", 20): 30, strings.Repeat("b", 20): 30, "a-last": 1, "b-last": 1}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("lines and how often each came: %v, want %v", counts, want)
	}
}
