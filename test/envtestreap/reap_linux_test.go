//go:build linux

package envtestreap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const helperEnv = "ENVTESTREAP_TEST_HELPER"

// TestMain doubles as the helper process the tests re-exec, standing in for a test binary.
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "orphan":
		// A test binary that panics: envtest's servers are still running when it dies.
		sleep := exec.Command("sleep", "300")
		if err := sleep.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		Guard()
		st, err := readProc(sleep.Process.Pid)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(proc{sleep.Process.Pid, st.start})
		os.Exit(2)
	case "nochildren":
		Guard()
		os.Exit(0)
	}
}

func TestParseStat(t *testing.T) {
	// Fields 3 to 52 of a real line; a name like "x) S 1 (y" must not shift them.
	rest := "S 4242 1 1 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 987654 1000 200 " +
		strings.TrimSpace(strings.Repeat("0 ", 30))
	for _, comm := range []string{"sleep", "kube-apiserver", "a b", "x) S 1 (y", "))", "( ("} {
		st, err := parseStat([]byte("31337 (" + comm + ") " + rest + "\n"))
		if err != nil {
			t.Fatalf("comm %q: %v", comm, err)
		}
		want := procStat{comm: comm, state: "S", ppid: 4242, start: "987654"}
		if st != want {
			t.Errorf("comm %q: got %+v, want %+v", comm, st, want)
		}
	}
	for _, bad := range []string{"", "1 sleep S 1", "1 (sleep S 1 1", "1 (sleep) S 1 2 3", "1 (sleep) S x " + rest[7:]} {
		if st, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("%q: got %+v, want an error", bad, st)
		}
	}
}

func TestParseStatOfThisProcess(t *testing.T) {
	st, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != os.Getppid() || st.state == "Z" || st.start == "" {
		t.Fatalf("got %+v; ppid want %d", st, os.Getppid())
	}
}

func TestChildrenOfFindsOnlyOwnChildren(t *testing.T) {
	a, b := startSleep(t), startSleep(t)
	children, err := childrenOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	found := map[int]bool{}
	for _, c := range children {
		found[c.pid] = true
		if c.pid == os.Getpid() || c.pid == os.Getppid() {
			t.Errorf("%d is not a child of %d", c.pid, os.Getpid())
		}
	}
	if !found[a.pid] || !found[b.pid] {
		t.Fatalf("children %v miss %v or %v", children, a, b)
	}
}

// The case Guard exists for: the test binary dies without stopping its child.
func TestReapsChildOfAbruptlyEndedProcess(t *testing.T) {
	helper := exec.Command(os.Args[0])
	helper.Env = append(os.Environ(), helperEnv+"=orphan")
	var stderr bytes.Buffer
	helper.Stderr = &stderr
	out, err := helper.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("helper: %v, want exit status 2; stderr: %s", err, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("helper wrote to stderr: %s", stderr.String())
	}
	orphan, err := parseProc(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	t.Cleanup(func() { killIfRunning(orphan) })
	// The reaper looks once a second and `sleep` dies at SIGTERM; 15 s only bounds a failure.
	deadline := time.Now().Add(15 * time.Second)
	for running(orphan) {
		if time.Now().After(deadline) {
			t.Fatalf("orphaned sleep %v still runs 15 s after its parent died", orphan)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// PID reuse: a recorded process whose PID now belongs to another process must be spared.
// One reaper gets both a true record and a stale one, so its exit proves it has acted.
func TestReaperSparesReusedPID(t *testing.T) {
	watched, target, stranger := startSleep(t), startSleep(t), startSleep(t)
	stale := proc{stranger.pid, stranger.start + "1"} // same PID, another process
	reaper, err := startReaper(watched.proc, []proc{target.proc, stale})
	if err != nil {
		t.Fatal(err)
	}
	reaperDone := waitAsync(reaper)
	watched.stop(t)

	select {
	case err := <-reaperDone:
		if err != nil {
			t.Fatalf("reaper: %v", err)
		}
	case <-time.After(20 * time.Second):
		_ = reaper.Process.Kill()
		t.Fatal("reaper still runs 20 s after the watched process died")
	}
	if sig := target.signal(t); sig != syscall.SIGTERM {
		t.Errorf("recorded process ended by %v, want SIGTERM", sig)
	}
	if !running(stranger.proc) {
		t.Errorf("process %v with a reused PID was killed", stranger.proc)
	}
}

// After a normal env.Stop() the reaper must leave by itself, not linger until the binary ends.
func TestReaperLeavesWhenTargetsAreGone(t *testing.T) {
	watched, target := startSleep(t), startSleep(t)
	reaper, err := startReaper(watched.proc, []proc{target.proc})
	if err != nil {
		t.Fatal(err)
	}
	reaperDone := waitAsync(reaper)
	target.stop(t)
	select {
	case err := <-reaperDone:
		if err != nil {
			t.Fatalf("reaper: %v", err)
		}
	case <-time.After(15 * time.Second):
		_ = reaper.Process.Kill()
		t.Fatal("reaper still runs 15 s after its only target was stopped")
	}
	if !running(watched.proc) {
		t.Error("the reaper touched the watched process")
	}
}

func TestGuardWithoutChildrenSaysSoInOneLine(t *testing.T) {
	helper := exec.Command(os.Args[0])
	helper.Env = append(os.Environ(), helperEnv+"=nochildren")
	out, err := helper.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v; output: %s", err, out)
	}
	if lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); len(lines) != 1 ||
		!strings.HasPrefix(lines[0], "envtestreap: ") {
		t.Fatalf("want one envtestreap line, got %q", out)
	}
}

// sleeper is a `sleep 300` child of the test, stopped at the end of the test at the latest.
type sleeper struct {
	proc
	cmd  *exec.Cmd
	done chan error
}

func startSleep(t *testing.T) *sleeper {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sleeper{cmd: cmd, done: waitAsync(cmd)}
	st, err := readProc(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatal(err)
	}
	s.proc = proc{cmd.Process.Pid, st.start}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.done
	})
	return s
}

func (s *sleeper) stop(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Kill()
	s.signal(t)
}

// signal waits for the process to end and tells by which signal.
func (s *sleeper) signal(t *testing.T) syscall.Signal {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%v still runs", s.proc)
	}
	s.done = closed()
	ws, _ := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		return 0
	}
	return ws.Signal()
}

func closed() chan error {
	c := make(chan error, 1)
	close(c)
	return c
}

func waitAsync(cmd *exec.Cmd) chan error {
	c := make(chan error, 1)
	go func() { c <- cmd.Wait() }()
	return c
}

// running mirrors the reaper's check: that very process exists and has not exited.
func running(p proc) bool {
	st, err := readProc(p.pid)
	return err == nil && st.state != "Z" && st.start == p.start
}

func killIfRunning(p proc) {
	if running(p) {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

func parseProc(s string) (proc, error) {
	pid, start, ok := strings.Cut(s, ":")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || start == "" {
		return proc{}, fmt.Errorf("not PID:STARTTIME: %q", s)
	}
	return proc{n, start}, nil
}
