package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// freeAddr is a loopback address nothing listens on (the port the kernel gave and took back).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func readyz(addr string) int {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestStartFileBarrier is the operator's way to start a run: the runner opens its readiness endpoint once it
// waits at the barrier, sysbench does not start before the start file holds a time, and then not before that
// time.
func TestStartFileBarrier(t *testing.T) {
	file := filepath.Join(t.TempDir(), "start-at")
	addr := freeAddr(t)
	if got := readyz(addr); got != 0 {
		t.Fatalf("something answers on %s before the runner: %d", addr, got)
	}
	type result struct {
		r    fakeRun
		took time.Duration
	}
	done := make(chan result, 1)
	began := time.Now()
	go func() {
		r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt")},
			append(runArgs, "--start-file="+file, "--ready-listen="+addr)...)
		done <- result{r, time.Since(began)}
	}()

	deadline := time.Now().Add(30 * time.Second)
	for readyz(addr) != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the readiness endpoint did not answer 200 within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Ready, and held: a second later the runner still waits (the file is missing, then empty).
	time.Sleep(time.Second)
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	select {
	case res := <-done:
		t.Fatalf("the runner did not wait for the start: exit %d, %s", res.r.code, res.r.stderr)
	default:
	}
	startAt := time.Now().Add(1200 * time.Millisecond).Truncate(time.Millisecond)
	if err := os.WriteFile(file, []byte(startAt.Format(time.RFC3339Nano)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", res.r.code, res.r.summary.Error, res.r.stderr)
	}
	startedNotBefore(t, res.r, startAt)
	for _, want := range []string{"at the start barrier: waiting for the common start in " + file, "common start " + startAt.UTC().Format(time.RFC3339) + ", given by the start file"} {
		if !strings.Contains(res.r.stderr, want) {
			t.Errorf("log lacks %q:\n%s", want, res.r.stderr)
		}
	}
	if got := readyz(addr); got != 0 {
		t.Errorf("the readiness endpoint still answers after the run: %d", got)
	}
}

func postStart(t *testing.T, addr, body string) int {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/start", "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestStartPosted: the operator's POST /start gives the start without the file; a time that is no time, or more
// than an hour ahead, is refused, and only the first start counts.
func TestStartPosted(t *testing.T) {
	file := filepath.Join(t.TempDir(), "start-at") // stays missing: the kubelet has not written it
	addr := freeAddr(t)
	done := make(chan fakeRun, 1)
	go func() {
		done <- runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt")},
			append(runArgs, "--start-file="+file, "--ready-listen="+addr)...)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for readyz(addr) != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the readiness endpoint did not answer 200 within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := postStart(t, addr, "soon"); got != http.StatusBadRequest {
		t.Errorf("a body that is no time: %d, want 400", got)
	}
	if got := postStart(t, addr, time.Now().Add(2*time.Hour).Format(time.RFC3339)); got != http.StatusBadRequest {
		t.Errorf("a start two hours ahead: %d, want 400", got)
	}
	startAt := time.Now().Add(1200 * time.Millisecond).Truncate(time.Millisecond)
	if got := postStart(t, addr, startAt.Format(time.RFC3339Nano)); got != http.StatusNoContent {
		t.Fatalf("the start: %d, want 204", got)
	}
	if got := postStart(t, addr, startAt.Add(time.Second).Format(time.RFC3339Nano)); got != http.StatusConflict {
		t.Errorf("a second start: %d, want 409", got)
	}
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.summary.Error, r.stderr)
	}
	startedNotBefore(t, r, startAt)
	if want := "common start " + startAt.UTC().Format(time.RFC3339) + ", given by the operator's call"; !strings.Contains(r.stderr, want) {
		t.Errorf("log lacks %q:\n%s", want, r.stderr)
	}
}

func TestStartFileRefusals(t *testing.T) {
	file := filepath.Join(t.TempDir(), "start-at")
	if err := os.WriteFile(file, []byte("soon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt")},
		append(runArgs, "--start-file="+file)...)
	if r.code != 1 || !strings.Contains(r.summary.Error, `holds "soon", not an RFC 3339 time`) || strings.Contains(r.record, "arg=") {
		t.Errorf("garbage in the start file: exit %d, error %q, sysbench ran %v", r.code, r.summary.Error, strings.Contains(r.record, "arg="))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--start-file=" + file, "--start-at=2026-11-29T12:00:00Z"}, "two ways to start"},
		{[]string{"--ready-listen=127.0.0.1:0"}, "--ready-listen needs --start-file"},
	} {
		r := runFake(t, context.Background(), nil, append(runArgs, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want usage error %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
