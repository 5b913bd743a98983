package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testStages is a Stages on a clock the test moves, writing into out.
func testStages(t *testing.T, out io.Writer) (*Stages, *time.Time) {
	t.Helper()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := start
	s := &Stages{Total: 8, Log: filepath.Join(t.TempDir(), "last-test-stages.tsv"), Start: start,
		Now: func() time.Time { return now }, Out: func() io.Writer { return out }}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	return s, &now
}

func TestStagesBannersAndTimings(t *testing.T) {
	var out strings.Builder
	s, now := testStages(t, &out)
	ran := 0
	if rc := s.Run(1, "Debian packages (hack/install-deps.sh)", func() error { ran++; return nil }); rc != 0 {
		t.Fatalf("stage 1: %d", rc)
	}
	*now = now.Add(65*time.Second + 900*time.Millisecond)
	if rc := s.Run(2, "Go modules (go mod download)", func() error { ran++; return nil }); rc != 0 {
		t.Fatalf("stage 2: %d", rc)
	}
	*now = now.Add(3600 * time.Second)
	if err := s.Begin(8, "zoned end to end"); err != nil {
		t.Fatal(err)
	}
	want := "\n==> [1/8] Debian packages (hack/install-deps.sh) (0m00s since the start)\n" +
		"\n==> [2/8] Go modules (go mod download) (1m05s since the start)\n" +
		"\n==> [8/8] zoned end to end (61m05s since the start)\n"
	if out.String() != want || ran != 2 {
		t.Errorf("banners:\n%q\nwant\n%q (ran %d)", out.String(), want, ran)
	}
	tsv, err := os.ReadFile(s.Log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1\tDebian packages (hack/install-deps.sh)\t0\n2\tGo modules (go mod download)\t65\n8\tzoned end to end\t3665\n"; string(tsv) != want {
		t.Errorf("stage log %q, want %q", tsv, want)
	}
	// a new run starts a new log
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if tsv, _ := os.ReadFile(s.Log); len(tsv) != 0 {
		t.Errorf("after Reset: %q", tsv)
	}
}

func TestStageFailureSaysWhichAndWhatToDo(t *testing.T) {
	var out strings.Builder
	s, _ := testStages(t, &out)
	rc := s.Run(3, "checks", func() error { return fail(3, "fix what is shown above") })
	if want := "\n==> [3/8] checks (0m00s since the start)\n\ntest: ERROR in stage 3. fix what is shown above\n"; rc != 1 || out.String() != want {
		t.Errorf("got %d, %q; want 1, %q", rc, out.String(), want)
	}
	// a failure may name another stage than the one running (building testsummary is stage 6's)
	out.Reset()
	if rc := s.Report(5, fail(6, "building hack/testsummary failed (above)")); rc != 1 ||
		out.String() != "\ntest: ERROR in stage 6. building hack/testsummary failed (above)\n" {
		t.Errorf("got %d, %q", rc, out.String())
	}
	// an error that is no Failure is the running stage's
	out.Reset()
	if rc := s.Report(4, errors.New("mkdir /x: permission denied")); rc != 1 || out.String() != "\ntest: ERROR in stage 4. mkdir /x: permission denied\n" {
		t.Errorf("got %d, %q", rc, out.String())
	}
}

// TestStageOfAShellCommand: a stage whose command exits 3 fails with the stage's hint; the status bash would
// give is what the stage sees.
func TestStageOfAShellCommand(t *testing.T) {
	f := newFake(t)
	r, _, errs := f.runner(t)
	start := time.Now()
	r.stages.Start, r.Now = start, func() time.Time { return start }
	if err := os.MkdirAll(f.Cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.stages.Reset(); err != nil {
		t.Fatal(err)
	}
	var got int
	rc := r.stages.Run(1, "a command", func() error {
		if got = r.Run(r.Cmd(nil, "sh", "-c", "echo from the command >&2; exit 3")); got != 0 {
			return fail(1, "what to do")
		}
		return nil
	})
	if rc != 1 || got != 3 {
		t.Errorf("Run: %d, the command's status %d; want 1, 3", rc, got)
	}
	want := "\n==> [1/8] a command (0m00s since the start)\nfrom the command\n\ntest: ERROR in stage 1. what to do\n"
	if errs.String() != want {
		t.Errorf("stderr %q, want %q", errs.String(), want)
	}
	for cmd, want := range map[string]int{"kill -TERM $$": 143, "exit 0": 0} {
		if got := r.Run(r.Cmd(nil, "sh", "-c", cmd)); got != want {
			t.Errorf("%s: status %d, want %d", cmd, got, want)
		}
	}
	if got := r.Run(r.Cmd(nil, "hack/no-such-script.sh")); got != 127 {
		t.Errorf("a missing script: status %d, want 127", got)
	}
}
