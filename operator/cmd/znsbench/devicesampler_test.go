package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/observe"
)

// fastObserverRetries keeps the tests of an observer that does not answer short.
func fastObserverRetries(t *testing.T, attempts int) {
	a, p := observerAttempts, observerRetryPause
	observerAttempts, observerRetryPause = attempts, 10*time.Millisecond
	t.Cleanup(func() { observerAttempts, observerRetryPause = a, p })
}

// TestRunWithObserver: a runner on another node than the device gets the device's figures from the observer
// on the device's node, which samples it while sysbench runs and exits once the runner is done.
func TestRunWithObserver(t *testing.T) {
	sys := fakeSysBlock(t, map[string]string{"nullb3": statLine(4096), "nullb4": statLine(777)})
	after := filepath.Join(t.TempDir(), "after")
	if err := os.WriteFile(after, []byte(statLine(4096+2048)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startObserve(t, "--device=nullb3+nullb4", "--sys-block="+sys, "--phase=run", "--target=zns-a")
	r := runFake(t, context.Background(), map[string]string{
		"FAKE_STDOUT": capture("run-rocksdb-ri1.txt"), "FAKE_STAT_FROM": after, "FAKE_STAT_TO": filepath.Join(sys, "nullb3", "stat"),
	}, append(runArgs, "--observer="+p.url)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	s := r.summary
	if s.Device != "nullb3+nullb4" || s.DeviceWrittenBytes != 2048*512 || s.BytesPerTransaction != float64(2048*512)/963 || s.Transactions != 963 {
		t.Errorf("device %q written %d per tx %v (stderr %s)", s.Device, s.DeviceWrittenBytes, s.BytesPerTransaction, r.stderr)
	}
	if strings.Contains(r.stderr, "omitted") || !strings.Contains(r.stderr, "observer counted 1048576 bytes written to nullb3+nullb4") {
		t.Errorf("runner log:\n%s", r.stderr)
	}
	if code := p.exit(t); code != 0 {
		t.Errorf("observer exit %d: %s", code, p.stderr)
	}
	if obs := p.summary(t); !obs.Sampled || *obs.WrittenBytes != 2048*512 {
		t.Errorf("observer summary %+v", obs)
	}
}

// TestYCSBRunWithObserver: the YCSB runner measures through the observer the same way.
func TestYCSBRunWithObserver(t *testing.T) {
	sys := fakeSysBlock(t, map[string]string{"nullb0": statLine(100)})
	after := filepath.Join(t.TempDir(), "after")
	if err := os.WriteFile(after, []byte(statLine(100+4096)), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := filepath.Abs(filepath.Join("..", "..", "internal", "ycsb", "testdata", "run-a-4k.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(t.TempDir(), "go-ycsb")
	script := "#!/bin/sh\ncat '" + data + "'\ncp '" + after + "' '" + filepath.Join(sys, "nullb0", "stat") + "'\n"
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startObserve(t, "--device=nullb0", "--sys-block="+sys)
	term := filepath.Join(t.TempDir(), "term")
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{cmdYCSBRun, "--go-ycsb=" + tool, "--record-count=1000", "--time=0",
		"--operation-count=1000", "--termination-log=" + term, "--observer=" + p.url}, &out, &errb, func(string) string { return "" })
	b, _ := os.ReadFile(term)
	s, err := benchresult.Decode(b)
	if code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, errb.String())
	}
	if s.Device != "nullb0" || s.DeviceWrittenBytes != 4096*512 || s.Transactions == 0 || s.BytesPerTransaction != float64(4096*512)/float64(s.Transactions) {
		t.Errorf("device %q written %d, %d transactions, per tx %v", s.Device, s.DeviceWrittenBytes, s.Transactions, s.BytesPerTransaction)
	}
	if code := p.exit(t); code != 0 {
		t.Errorf("observer exit %d", code)
	}
}

// TestRunObserverUnreachable: an observer that cannot be reached costs the byte figures, never the run.
func TestRunObserverUnreachable(t *testing.T) {
	fastObserverRetries(t, 3)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-rocksdb-ri1.txt")},
		append(runArgs, "--observer=http://"+addr)...)
	if r.code != 0 || !r.summary.OK || r.summary.TPS != 192.35 {
		t.Fatalf("exit %d, summary %+v\n%s", r.code, r.summary, r.stderr)
	}
	if strings.Contains(r.termLog, `"device`) || r.summary.DeviceWrittenBytes != 0 || r.summary.BytesPerTransaction != 0 {
		t.Errorf("device figures in %s", r.termLog)
	}
	for _, want := range []string{"device figures omitted: Post \"http://" + addr + "/begin\"", "connection refused (after 3 attempts)",
		"device figures omitted: Post \"http://" + addr + "/end\"", "trying again in 10ms (attempt 3 of 3)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("log lacks %q:\n%s", want, r.stderr)
		}
	}
}

// fakeObserver is an observer that misbehaves as the handler for a path says, and counts the calls.
type fakeObserver struct {
	mu    sync.Mutex
	calls map[string]int
}

func (f *fakeObserver) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

func serveFakeObserver(t *testing.T, begin, end http.HandlerFunc) (*fakeObserver, string) {
	f := &fakeObserver{calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.calls[r.URL.Path]++
		f.mu.Unlock()
		switch r.URL.Path {
		case observe.PathBegin:
			begin(w, r)
		case observe.PathEnd:
			end(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func answer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, body) }
}

// TestRunObserverAnswers: each way an observer fails to give a figure leaves the figures out with a line that
// says why, tries again only what another try may cure, and still ends with one /end, which lets the observer go.
func TestRunObserverAnswers(t *testing.T) {
	fastObserverRetries(t, 2)
	ended := answer(`{"device":"nullb0","sampled":true,"writtenBytes":4096}`)
	for _, tc := range []struct {
		name       string
		begin, end http.HandlerFunc
		begins     int
		want       string
	}{
		{"begin times out", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, ended, 2,
			"device figures omitted: Post \"URL/begin\": context deadline exceeded (Client.Timeout exceeded while awaiting headers) (after 2 attempts)"},
		{"begin not sampled", answer(`{"device":"nullb0","sampled":false,"reason":"device nullb0 not sampled (gone)"}`), ended, 1,
			"device figures omitted: the observer could not sample nullb0 at /begin: device nullb0 not sampled (gone)"},
		{"begin unavailable", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "stopping", http.StatusServiceUnavailable) }, ended, 2,
			"device figures omitted: observer URL/begin: 503 Service Unavailable: stopping (after 2 attempts)"},
		{"wrong URL", http.NotFound, ended, 1, "device figures omitted: observer URL/begin: 404 Not Found: 404 page not found"},
		{"end not counted", answer(`{"device":"nullb0","sampled":true}`), answer(`{"device":"nullb0","sampled":false,"reason":"device nullb0: counters went backwards"}`), 1,
			"device figures omitted: the observer could not count nullb0 at /end: device nullb0: counters went backwards"},
		{"end not JSON", answer(`{"device":"nullb0","sampled":true}`), answer(`<html>`), 1, "device figures omitted: observer URL/end: answer is not JSON"},
		{"end without bytes", answer(`{"device":"nullb0","sampled":true}`), answer(`{"device":"nullb0","sampled":true}`), 1,
			"device figures omitted: the observer's /end answer has no usable writtenBytes or device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, url := serveFakeObserver(t, tc.begin, tc.end)
			r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-rocksdb-ri1.txt")},
				append(runArgs, "--observer="+url, "--observer-timeout=200ms")...)
			if r.code != 0 || !r.summary.OK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if r.summary.Device != "" || r.summary.DeviceWrittenBytes != 0 || r.summary.BytesPerTransaction != 0 {
				t.Errorf("device %q written %d", r.summary.Device, r.summary.DeviceWrittenBytes)
			}
			if want := strings.ReplaceAll(tc.want, "URL", url); !strings.Contains(r.stderr, want) {
				t.Errorf("log lacks %q:\n%s", want, r.stderr)
			}
			if b, e := f.count(observe.PathBegin), f.count(observe.PathEnd); b != tc.begins || e != 1 {
				t.Errorf("%d /begin and %d /end calls, want %d and 1", b, e, tc.begins)
			}
		})
	}
}

// TestRunObserverEndedWhenInterrupted: a runner stopped mid-run still tells the observer, which would otherwise
// wait for its --max-wait, and the drive sidecar beside it with it.
func TestRunObserverEndedWhenInterrupted(t *testing.T) {
	f, url := serveFakeObserver(t, answer(`{"device":"nullb0","sampled":true}`), answer(`{"device":"nullb0","sampled":true,"writtenBytes":0}`))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Setenv("FAKE_GATE", filepath.Join(t.TempDir(), "never"))
	t.Setenv("FAKE_GATE_LINES", "13")
	t.Setenv("FAKE_STDOUT", capture("run-innodb-ri1.txt"))
	pr, pw := io.Pipe()
	done := make(chan fakeRun, 1)
	fake := fakeSysbench(t)
	go func() {
		done <- runFakeTo(t, ctx, pw, fake, append(runArgs, "--observer="+url)...)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "[ 1s ]") {
			cancel()
		}
	}
	r := <-done
	if r.code != 1 || r.summary.Reason != "Interrupted" {
		t.Fatalf("exit %d, reason %q", r.code, r.summary.Reason)
	}
	if b, e := f.count(observe.PathBegin), f.count(observe.PathEnd); b != 1 || e != 1 {
		t.Errorf("%d /begin and %d /end calls, want 1 and 1\n%s", b, e, r.stderr)
	}
}

// TestObserverFlagConflicts: the flags of a runner beside the device make no sense with an observer.
func TestObserverFlagConflicts(t *testing.T) {
	for _, sub := range []string{"run", cmdYCSBRun} {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--observer=http://10.1.2.3:9106", "--device=nullb0"}, "--observer and --device exclude each other"},
			{[]string{"--observer=http://10.1.2.3:9106", "--drive-dir=/drive"}, "--observer and --drive-dir exclude each other"},
			{[]string{"--observer=10.1.2.3:9106"}, `--observer "10.1.2.3:9106" is not an http://HOST:PORT URL`},
			{[]string{"--observer=http://"}, "is not an http://HOST:PORT URL"},
			{[]string{"--observer=http://10.1.2.3:9106", "--observer-timeout=0s"}, "--observer-timeout 0s: must be positive"},
		} {
			rec := filepath.Join(t.TempDir(), "record")
			t.Setenv("FAKE_RECORD", rec)
			var errb bytes.Buffer
			args := append([]string{sub, "--termination-log=", "--time=1"}, tc.args...)
			if sub == "run" {
				args = append(args, "--sysbench="+fakeSysbench(t))
			}
			code := Main(context.Background(), args, io.Discard, &errb, os.Getenv)
			if code != 2 || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("%s %q: exit %d, %q; want 2 and %q", sub, tc.args, code, errb.String(), tc.want)
			}
			if _, err := os.Stat(rec); err == nil {
				t.Errorf("%s %q: sysbench ran", sub, tc.args)
			}
		}
	}
}
