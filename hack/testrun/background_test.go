package main

import (
	"errors"
	"os"
	"path/filepath"
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
