package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFailedBackgroundJobShowsItsLogsEndAndTheHint(t *testing.T) {
	f := newFake(t)
	r, _, errs := f.runner(t)
	if err := os.MkdirAll(r.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.background("images", r.cmd(nil, "sh", "-c", `i=1; while [ $i -le 50 ]; do echo "line $i"; i=$((i+1)); done; exit 4`)); err != nil {
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
	if err := r.background("node-image", r.cmd(nil, "sh", "-c", "echo built")); err != nil {
		t.Fatal(err)
	}
	if err := r.waitFor(5, "node-image", "hint"); err != nil || !strings.HasSuffix(errs.String(), "test: node-image: done\n") {
		t.Errorf("got %v, stderr ends %q", err, errs.String())
	}
}

// TestBackgroundJobsKilledAtExit: a job still running when the run ends is killed with its process group,
// children that ignore TERM included.
func TestBackgroundJobsKilledAtExit(t *testing.T) {
	f := newFake(t)
	r, _, _ := f.runner(t)
	if err := os.MkdirAll(r.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	childFile := filepath.Join(f.root, "child.pid")
	// both ignore TERM (an ignored signal stays ignored across exec): KILL after the grace ends them
	if err := r.background("qemu-guest", r.cmd(nil, "sh", "-c", `trap "" TERM; sleep 300 & echo $! >`+childFile+`; wait`)); err != nil {
		t.Fatal(err)
	}
	if err := r.background("images", r.cmd(nil, "sh", "-c", "exec sleep 300")); err != nil {
		t.Fatal(err)
	}
	if err := r.background("done", r.cmd(nil, "true")); err != nil {
		t.Fatal(err)
	}
	r.bg["done"].wait()
	var child int
	waitFor(t, "the job's child", func() bool {
		b, _ := os.ReadFile(childFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return child > 0
	})
	pids := []int{r.bg["qemu-guest"].pid, r.bg["images"].pid, child}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d is not running before the end", pid)
		}
	}
	r.finish()
	for name, j := range r.bg {
		if j.running() {
			t.Errorf("job %s still running", name)
		}
	}
	if got := r.bg["images"].status; got != 128+int(syscall.SIGTERM) {
		t.Errorf("images: status %d, want TERM's", got)
	}
	if got := r.bg["qemu-guest"].status; got != 128+int(syscall.SIGKILL) {
		t.Errorf("qemu-guest ignored TERM: status %d, want KILL's", got)
	}
	for _, pid := range pids {
		waitFor(t, "process "+strconv.Itoa(pid)+" to be gone", func() bool { return !alive(pid) })
	}
}

// alive: the process exists and is no zombie (an orphan's zombie waits for whoever reaps orphans here).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestHeartbeat: a progress line at each tick, with the hint and the log's last line, none once the command
// ended; the command's status comes back.
func TestHeartbeat(t *testing.T) {
	f := newFake(t)
	r, _, errs := f.runner(t)
	tick := make(chan time.Time)
	stopped := false
	r.ticker = func(d time.Duration) (<-chan time.Time, func()) {
		if d != 30*time.Second {
			t.Errorf("ticker every %v, want ZNS_PROGRESS_EVERY's default 30 s", d)
		}
		return tick, func() { stopped = true }
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return clock }
	log := filepath.Join(f.root, "job.log")
	if err := os.WriteFile(log, []byte("step 1\r  step 2 of 3  \n\n  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	release := make(chan int)
	got := make(chan int)
	go func() {
		got <- r.heartbeat("qemu-guest", "the first build takes long", log, func() int { return <-release })
	}()
	tick <- clock
	// the second tick is taken once the first line is written
	tick <- clock.Add(150 * time.Second)
	release <- 7
	if rc := <-got; rc != 7 || !stopped {
		t.Errorf("status %d (ticker stopped: %v), want 7", rc, stopped)
	}
	want := "test: qemu-guest: still running, 0m00s elapsed (the first build takes long); last:   step 2 of 3  \n" +
		"test: qemu-guest: still running, 2m30s elapsed (the first build takes long); last:   step 2 of 3  \n"
	if errs.String() != want {
		t.Errorf("got\n%q\nwant\n%q", errs.String(), want)
	}
}

func TestProgressLineAndLogTail(t *testing.T) {
	if got := progressLine("go mod download", "", 61, ""); got != "go mod download: still running, 1m01s elapsed" {
		t.Errorf("got %q", got)
	}
	dir := t.TempDir()
	long := filepath.Join(dir, "long.log")
	body := strings.Repeat("x", 5000) + "\n" + strings.Repeat("é", 100) + "\n"
	if err := os.WriteFile(long, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := lastLogLine(long); got != strings.Repeat("é", 70) {
		t.Errorf("last line cut to 140 bytes: got %q", got)
	}
	if got := lastLogLine(filepath.Join(dir, "none")); got != "" {
		t.Errorf("no log: %q", got)
	}
	for _, tc := range []struct {
		body string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"}, {"a\nb\nc", 2, "b\nc"}, {"a\n", 5, "a\n"}, {"", 5, ""}, {"a\nb\n", 1, "b\n"},
	} {
		p := filepath.Join(dir, "t")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := tailLines(p, tc.n); got != tc.want {
			t.Errorf("tail -n %d of %q: %q, want %q", tc.n, tc.body, got, tc.want)
		}
	}
}
