package stagerun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

// testRunner is a Runner in a temporary directory, writing into stdout and stderr buffers.
func testRunner(t *testing.T) (*Runner, *stageruntest.SyncBuffer, *stageruntest.SyncBuffer) {
	t.Helper()
	out, errs := &stageruntest.SyncBuffer{}, &stageruntest.SyncBuffer{}
	root := t.TempDir()
	r := New("test", root, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}, nil, out, errs)
	r.KillGrace = 200 * time.Millisecond
	return r, out, errs
}

// TestHeartbeat: a progress line at each tick, with the hint and the log's last line, none once the command
// ended; the command's status comes back.
func TestHeartbeat(t *testing.T) {
	r, _, errs := testRunner(t)
	tick := make(chan time.Time)
	stopped := false
	r.Ticker = func(d time.Duration) (<-chan time.Time, func()) {
		if d != 30*time.Second {
			t.Errorf("ticker every %v, want ZNS_PROGRESS_EVERY's default 30 s", d)
		}
		return tick, func() { stopped = true }
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { return clock }
	log := filepath.Join(r.Root, "job.log")
	if err := os.WriteFile(log, []byte("step 1\r  step 2 of 3  \n\n  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	release := make(chan int)
	got := make(chan int)
	go func() {
		got <- r.Heartbeat("qemu-guest", "the first build takes long", log, func() int { return <-release })
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
	if got := ProgressLine("go mod download", "", 61, ""); got != "go mod download: still running, 1m01s elapsed" {
		t.Errorf("got %q", got)
	}
	dir := t.TempDir()
	long := filepath.Join(dir, "long.log")
	body := strings.Repeat("x", 5000) + "\n" + strings.Repeat("é", 100) + "\n"
	if err := os.WriteFile(long, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := LastLogLine(long); got != strings.Repeat("é", 70) {
		t.Errorf("last line cut to 140 bytes: got %q", got)
	}
	if got := LastLogLine(filepath.Join(dir, "none")); got != "" {
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
		if got := TailLines(p, tc.n); got != tc.want {
			t.Errorf("tail -n %d of %q: %q, want %q", tc.n, tc.body, got, tc.want)
		}
		if got := Tail(tc.body, tc.n); got != tc.want {
			t.Errorf("Tail(%q, %d): %q, want %q", tc.body, tc.n, got, tc.want)
		}
	}
	if got := TailLines(filepath.Join(dir, "none"), 3); got != "" {
		t.Errorf("no file: %q", got)
	}
}

func TestMmss(t *testing.T) {
	for s, want := range map[int]string{0: "0m00s", 65: "1m05s", 3600: "60m00s"} {
		if got := Mmss(s); got != want {
			t.Errorf("Mmss(%d) = %q, want %q", s, got, want)
		}
	}
}
