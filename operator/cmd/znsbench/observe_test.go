package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/observe"
)

// statLine is a 17-field /sys/block/<dev>/stat with the given write sectors.
func statLine(writeSectors uint64) string {
	return fmt.Sprintf("1 0 8 0 100 0 %d 0 0 0 0 0 0 0 0 0 0\n", writeSectors)
}

// fakeSysBlock is a sysfs block directory with a stat file per device.
func fakeSysBlock(t *testing.T, stats map[string]string) string {
	t.Helper()
	sys := t.TempDir()
	for dev, st := range stats {
		if err := os.MkdirAll(filepath.Join(sys, dev), 0o755); err != nil {
			t.Fatal(err)
		}
		writeStat(t, sys, dev, st)
	}
	return sys
}

func writeStat(t *testing.T, sys, dev, st string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(sys, dev, "stat"), []byte(st), 0o644); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects a subcommand's stderr from several goroutines and hands over the address the observer
// says it listens on.
type logBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	addr chan string
	sent bool
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	if !l.sent {
		if _, rest, ok := strings.Cut(l.b.String(), "listening on "); ok {
			if a, _, ok := strings.Cut(rest, " "); ok {
				l.sent = true
				l.addr <- a
			}
		}
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// observeProc is `znsbench observe` running in a goroutine on a loopback port.
type observeProc struct {
	url     string
	termLog string
	stderr  *logBuffer
	code    chan int
	cancel  context.CancelFunc
}

func startObserve(t *testing.T, args ...string) *observeProc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &observeProc{termLog: filepath.Join(t.TempDir(), "termination-log"), stderr: &logBuffer{addr: make(chan string, 1)},
		code: make(chan int, 1), cancel: cancel}
	full := append([]string{cmdObserve, "--listen=127.0.0.1:0", "--termination-log=" + p.termLog}, args...)
	go func() { p.code <- Main(ctx, full, io.Discard, p.stderr, os.Getenv) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-p.code:
		case <-time.After(5 * time.Second):
			t.Errorf("the observer did not stop")
		}
	})
	select {
	case a := <-p.stderr.addr:
		p.url = "http://" + a
	case c := <-p.code:
		p.code <- c
		t.Fatalf("observe exited %d before listening: %s", c, p.stderr)
	case <-time.After(5 * time.Second):
		t.Fatalf("observe did not listen: %s", p.stderr)
	}
	return p
}

// exit waits for the observer's status.
func (p *observeProc) exit(t *testing.T) int {
	t.Helper()
	select {
	case c := <-p.code:
		p.code <- c // for the cleanup
		return c
	case <-time.After(5 * time.Second):
		t.Fatalf("the observer did not exit: %s", p.stderr)
		return -1
	}
}

func (p *observeProc) summary(t *testing.T) observe.Summary {
	t.Helper()
	b, err := os.ReadFile(p.termLog)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, []byte("\n")) > 0 {
		t.Errorf("termination log is not one line: %q", b)
	}
	var s observe.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("termination log %q: %v", b, err)
	}
	return s
}

func call(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func reply(t *testing.T, method, url string) observe.Reply {
	t.Helper()
	code, body := call(t, method, url)
	var r observe.Reply
	if err := json.Unmarshal([]byte(body), &r); code != http.StatusOK || err != nil {
		t.Fatalf("%s %s: %d %q (%v)", method, url, code, body, err)
	}
	return r
}

// TestObserveReadyAfterDriveGate: the observer is not ready, and a /begin does not sample, before the drive
// sidecar beside it has taken its first readings.
func TestObserveReadyAfterDriveGate(t *testing.T) {
	gate := t.TempDir()
	sys := fakeSysBlock(t, map[string]string{"nullb0": statLine(100)})
	p := startObserve(t, "--device=nullb0", "--sys-block="+sys, "--drive-dir="+gate)
	if code, body := call(t, http.MethodGet, p.url+observe.PathReady); code != http.StatusServiceUnavailable {
		t.Fatalf("/ready before the gate: %d %q", code, body)
	}
	began := make(chan observe.Reply, 1)
	go func() {
		resp, err := http.Post(p.url+observe.PathBegin, "", nil)
		if err != nil {
			close(began)
			return
		}
		defer resp.Body.Close()
		var r observe.Reply
		_ = json.NewDecoder(resp.Body).Decode(&r)
		began <- r
	}()
	select {
	case r := <-began:
		t.Fatalf("/begin answered before the drive gate: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	// The sample must come after the sidecar's readings: a write now, before the gate opens, is not counted.
	writeStat(t, sys, "nullb0", statLine(300))
	if err := drivereport.OpenGate(gate); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(4 * time.Second)
	for {
		code, body := call(t, http.MethodGet, p.url+observe.PathReady)
		if code == http.StatusOK && body == "ready\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/ready after the gate opened: %d %q", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case r := <-began:
		if !r.Sampled {
			t.Fatalf("/begin after the gate: %+v", r)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("/begin still waiting after the gate opened")
	}
	writeStat(t, sys, "nullb0", statLine(310))
	if r := reply(t, http.MethodPost, p.url+observe.PathEnd); !r.Sampled || r.WrittenBytes == nil || *r.WrittenBytes != 10*512 {
		t.Errorf("/end: %+v", r)
	}
	if code := p.exit(t); code != 0 {
		t.Errorf("exit %d", code)
	}
	if log := p.stderr.String(); !strings.Contains(log, "drive sidecar ready after") || strings.Count(log, "/ready") != 2 {
		t.Errorf("log (one line per /ready answer kind expected):\n%s", log)
	}
}

// TestObserveCountsDevicesTogether: zoned XFS's data and metadata devices are counted as one, and the observer
// exits once it has answered /end, leaving what it counted as its termination message.
func TestObserveCountsDevicesTogether(t *testing.T) {
	sys := fakeSysBlock(t, map[string]string{"nullb3": statLine(4096), "nullb4": statLine(777)})
	p := startObserve(t, "--device=nullb3+nullb4", "--sys-block="+sys, "--target=zns-a", "--phase=run")
	if code, body := call(t, http.MethodGet, p.url+observe.PathReady); code != http.StatusOK || body != "ready\n" {
		t.Fatalf("/ready without --drive-dir: %d %q", code, body)
	}
	if code, body := call(t, http.MethodPost, p.url+observe.PathBegin); code != http.StatusOK || body != `{"device":"nullb3+nullb4","sampled":true}`+"\n" {
		t.Fatalf("/begin: %d %q", code, body)
	}
	writeStat(t, sys, "nullb3", statLine(4096+2048))
	writeStat(t, sys, "nullb4", statLine(777+16))
	const want = (2048 + 16) * 512
	r := reply(t, http.MethodPost, p.url+observe.PathEnd)
	if r.Device != "nullb3+nullb4" || !r.Sampled || r.WrittenBytes == nil || *r.WrittenBytes != want || r.Reason != "" {
		t.Fatalf("/end: %+v", r)
	}
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d: %s", code, p.stderr)
	}
	if _, err := http.Post(p.url+observe.PathEnd, "", nil); err == nil {
		t.Error("still answering after /end")
	}
	s := p.summary(t)
	if s.Device != "nullb3+nullb4" || !s.Sampled || s.WrittenBytes == nil || *s.WrittenBytes != want || s.Phase != "run" || s.Target != "zns-a" ||
		s.BeginTime == "" || s.EndTime < s.BeginTime {
		t.Errorf("summary %+v", s)
	}
	if log := p.stderr.String(); !strings.Contains(log, "znsbench observe [run zns-a]: POST /end from 127.0.0.1:") ||
		!strings.Contains(log, fmt.Sprintf("nullb3+nullb4 took %d bytes", want)) {
		t.Errorf("log:\n%s", log)
	}
}

// TestObserveSecondBeginReplacesFirst: a prepare the runner tries again begins again, and only the last try counts.
func TestObserveSecondBeginReplacesFirst(t *testing.T) {
	sys := fakeSysBlock(t, map[string]string{"nullb0": statLine(100)})
	p := startObserve(t, "--device=nullb0", "--sys-block="+sys)
	reply(t, http.MethodPost, p.url+observe.PathBegin)
	writeStat(t, sys, "nullb0", statLine(200))
	reply(t, http.MethodPost, p.url+observe.PathBegin)
	writeStat(t, sys, "nullb0", statLine(250))
	if r := reply(t, http.MethodPost, p.url+observe.PathEnd); !r.Sampled || *r.WrittenBytes != 50*512 {
		t.Errorf("/end: %+v", r)
	}
	if code := p.exit(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestObserveEndSaysWhy: a missing figure is an answer with a reason, not an error, and still ends the observer.
func TestObserveEndSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name, device string
		begin        bool
		between      func(t *testing.T, sys string)
		beginReason  string
		endReason    string
	}{
		{name: "no begin", device: "nullb0", endReason: "no /begin before this /end"},
		{name: "device missing", device: "nullb0+nvme9n9", begin: true, beginReason: "device nvme9n9 not sampled",
			endReason: "the /begin sample failed: device nvme9n9 not sampled"},
		{name: "device vanished", device: "nullb0", begin: true, endReason: "device nullb0 not sampled",
			between: func(t *testing.T, sys string) {
				if err := os.RemoveAll(filepath.Join(sys, "nullb0")); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "counters backwards", device: "nullb0", begin: true, endReason: "device nullb0: blockstat: counters went backwards",
			between: func(t *testing.T, sys string) { writeStat(t, sys, "nullb0", statLine(10)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := fakeSysBlock(t, map[string]string{"nullb0": statLine(100)})
			p := startObserve(t, "--device="+tc.device, "--sys-block="+sys)
			if tc.begin {
				r := reply(t, http.MethodPost, p.url+observe.PathBegin)
				if r.Sampled != (tc.beginReason == "") || !strings.Contains(r.Reason, tc.beginReason) || r.Device != tc.device {
					t.Errorf("/begin: %+v, want reason %q", r, tc.beginReason)
				}
			}
			if tc.between != nil {
				tc.between(t, sys)
			}
			r := reply(t, http.MethodPost, p.url+observe.PathEnd)
			if r.Sampled || r.WrittenBytes != nil || !strings.Contains(r.Reason, tc.endReason) {
				t.Errorf("/end: %+v, want reason %q", r, tc.endReason)
			}
			if code := p.exit(t); code != 0 {
				t.Errorf("exit %d", code)
			}
			if s := p.summary(t); s.Sampled || !strings.Contains(s.Reason, tc.endReason) {
				t.Errorf("summary %+v", s)
			}
		})
	}
}

func TestObserveMaxWait(t *testing.T) {
	sys := fakeSysBlock(t, map[string]string{"nullb0": statLine(100)})
	p := startObserve(t, "--device=nullb0", "--sys-block="+sys, "--max-wait=300ms")
	reply(t, http.MethodPost, p.url+observe.PathBegin)
	if code := p.exit(t); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(p.stderr.String(), "no /end within --max-wait 300ms; exiting with status 1") {
		t.Errorf("log:\n%s", p.stderr)
	}
	if s := p.summary(t); s.Sampled || s.BeginTime == "" || s.EndTime != "" || !strings.Contains(s.Reason, "no /end within --max-wait 300ms") {
		t.Errorf("summary %+v", s)
	}
}

func TestObserveStopped(t *testing.T) {
	sys := fakeSysBlock(t, map[string]string{"nullb0": statLine(100)})
	p := startObserve(t, "--device=nullb0", "--sys-block="+sys)
	reply(t, http.MethodPost, p.url+observe.PathBegin)
	p.cancel()
	if code := p.exit(t); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if log := p.stderr.String(); !strings.Contains(log, "stopped (context canceled) before the runner's /end; exiting with status 1") {
		t.Errorf("log:\n%s", log)
	}
}

// TestObserveRoutes: what the observer does not serve is refused, and a refused /end does not end it.
func TestObserveRoutes(t *testing.T) {
	sys := fakeSysBlock(t, map[string]string{"nullb0": statLine(100)})
	p := startObserve(t, "--device=nullb0", "--sys-block="+sys)
	for _, tc := range []struct {
		method, path string
		code         int
		allow        string
	}{
		{http.MethodGet, "/metrics", http.StatusNotFound, ""},
		{http.MethodPost, "/", http.StatusNotFound, ""},
		{http.MethodGet, observe.PathBegin, http.StatusMethodNotAllowed, http.MethodPost},
		{http.MethodGet, observe.PathEnd, http.StatusMethodNotAllowed, http.MethodPost},
		{http.MethodPut, observe.PathEnd, http.StatusMethodNotAllowed, http.MethodPost},
		{http.MethodPost, observe.PathReady, http.StatusMethodNotAllowed, http.MethodGet},
	} {
		req, _ := http.NewRequest(tc.method, p.url+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d, Allow %q; want %d, %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), tc.code, tc.allow)
		}
	}
	select {
	case c := <-p.code:
		t.Fatalf("exited %d on a refused request", c)
	default:
	}
	if log := p.stderr.String(); !strings.Contains(log, "GET /end from 127.0.0.1:") || !strings.Contains(log, "405 (only POST)") {
		t.Errorf("log:\n%s", log)
	}
	reply(t, http.MethodPost, p.url+observe.PathEnd)
	if code := p.exit(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

func TestObserveUsage(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "--device DEV or DEV+DEV"},
		{[]string{"--device=nullb0+"}, 2, "--device DEV or DEV+DEV"},
		{[]string{"--device=../sda"}, 2, "--device DEV or DEV+DEV"},
		{[]string{"--device=nullb0", "--max-wait=0s"}, 2, "--max-wait positive"},
		{[]string{"--device=nullb0", "extra"}, 2, "no arguments"},
		{[]string{"--device=nullb0", "--no-such-flag"}, 2, "flag provided but not defined"},
		{[]string{"--device=nullb0", "--listen=" + busy.Addr().String(), "--termination-log="}, 1, "cannot listen on " + busy.Addr().String()},
	} {
		var errb bytes.Buffer
		code := Main(context.Background(), append([]string{cmdObserve}, tc.args...), io.Discard, &errb, os.Getenv)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
	var errb bytes.Buffer
	if Main(context.Background(), nil, io.Discard, &errb, os.Getenv); !strings.Contains(errb.String(), "znsbench observe --device DEV") {
		t.Errorf("usage lacks observe: %s", errb.String())
	}
}
