package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
)

// capture is a real sysbench output from the parser's testdata.
func capture(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "internal", "sysbench", "testdata", name))
	if err != nil {
		panic(err)
	}
	return p
}

// fakeSysbench copies the script with its execute bit set, which a checkout
// may have lost.
func fakeSysbench(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fake-sysbench.sh"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "sysbench")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

type fakeRun struct {
	code           int
	stdout, stderr string
	termLog        string
	summary        benchresult.Summary
	record         string
}

// runFake runs Main with the fake sysbench; env sets FAKE_* and friends.
func runFake(t *testing.T, ctx context.Context, env map[string]string, args ...string) fakeRun {
	t.Helper()
	dir := t.TempDir()
	rec := filepath.Join(dir, "record")
	term := filepath.Join(dir, "termination-log")
	t.Setenv("FAKE_RECORD", rec)
	for k, v := range env {
		t.Setenv(k, v)
	}
	full := append([]string{args[0], "--sysbench=" + fakeSysbench(t), "--termination-log=" + term}, args[1:]...)
	var out, errb bytes.Buffer
	code := Main(ctx, full, &out, &errb, os.Getenv)
	r := fakeRun{code: code, stdout: out.String(), stderr: errb.String()}
	if b, err := os.ReadFile(term); err == nil {
		r.termLog = string(b)
		if r.summary, err = benchresult.Decode(b); err != nil {
			t.Fatalf("termination log %q: %v", b, err)
		}
	}
	if b, err := os.ReadFile(rec); err == nil {
		r.record = string(b)
	}
	return r
}

var runArgs = []string{"run", "--workload=oltp_read_write", "--tables=2", "--table-size=2000", "--threads=2",
	"--time=5", "--report-interval=1", "--mysql-host=127.0.0.1", "--mysql-port=3306", "--target=zns-a", "--iteration=3"}

func TestRunSuccess(t *testing.T) {
	// A device whose stat file advances by 2048 written sectors during the run.
	sys := t.TempDir()
	dev := filepath.Join(sys, "nullb0")
	if err := os.Mkdir(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	before := "1 0 8 0 100 0 4096 0 0 0 0 0 0 0 0 0 0\n"
	after := "1 0 8 0 116 0 6144 0 0 0 0 0 0 0 0 0 0\n"
	if err := os.WriteFile(filepath.Join(dev, "stat"), []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	afterFile := filepath.Join(t.TempDir(), "after")
	if err := os.WriteFile(afterFile, []byte(after), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runFake(t, context.Background(), map[string]string{
		"FAKE_STDOUT": capture("run-rocksdb-ri1.txt"), "FAKE_STAT_FROM": afterFile, "FAKE_STAT_TO": filepath.Join(dev, "stat"),
	}, append(runArgs, "--device=nullb0", "--sys-block="+sys)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	s := r.summary
	if !s.OK || s.Phase != "run" || s.Target != "zns-a" || s.Iteration != 3 || s.SysbenchVersion != "1.0.20" {
		t.Errorf("summary %+v", s)
	}
	// The capture's own numbers (see TestParse1020ReadWrite).
	if s.Transactions != 963 || s.TPS != 192.35 || s.QPS != 4256.30 || s.LatencyAvgMS != 10.39 || s.LatencyPctMS != 19.65 ||
		s.LatencyMaxMS != 1032.40 || s.Percentile != 95 || s.IgnoredErrors != 128 || s.ErrorsPerSec != 25.57 ||
		s.DurationSec != 5.0051 || s.Intervals != 5 || s.ReportIntervalSec != 1 {
		t.Errorf("summary figures %+v", s)
	}
	if s.TPSRelDevPct <= 0 || s.LatencyRelDevPct <= 0 || s.TPSMin != 49.85 || s.TPSMax != 355.78 {
		t.Errorf("deviations %+v", s)
	}
	if s.Device != "nullb0" || s.DeviceWrittenBytes != 2048*512 || s.BytesPerTransaction != float64(2048*512)/963 {
		t.Errorf("device %q written %d per tx %v", s.Device, s.DeviceWrittenBytes, s.BytesPerTransaction)
	}
	if s.StartTime == "" || s.EndTime == "" || s.EndTime < s.StartTime {
		t.Errorf("times %q .. %q", s.StartTime, s.EndTime)
	}

	// stdout: sysbench's lines as printed, then the summary, then the series.
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	capt, _ := os.ReadFile(capture("run-rocksdb-ri1.txt"))
	if want := strings.TrimRight(string(capt), "\n"); strings.TrimRight(strings.Join(lines[:len(lines)-2], "\n"), "\n") != want {
		t.Errorf("streamed output differs from sysbench's:\n%s", strings.Join(lines[:len(lines)-2], "\n"))
	}
	if !strings.HasPrefix(lines[len(lines)-2], benchresult.SummaryPrefix+r.termLog) {
		t.Errorf("summary line %q, termination log %q", lines[len(lines)-2], r.termLog)
	}
	series, err := benchresult.ParseSeriesLine(lines[len(lines)-1])
	if err != nil {
		t.Fatal(err)
	}
	if series.Len() != 5 || series.TPS[0] != 49.85 || series.LatencyMS[4] != 18.61 || series.ErrorsPerSec[1] != 29.02 ||
		series.Percentile != 95 || series.Target != "zns-a" || series.Iteration != 3 {
		t.Errorf("series %+v", series)
	}
	// The argv sysbench got.
	for _, want := range []string{"arg=oltp_read_write", "arg=--time=5", "arg=--report-interval=1", "arg=--percentile=95", "arg=--create_secondary=off", "arg=run"} {
		if !strings.Contains(r.record, want+"\n") {
			t.Errorf("sysbench not called with %q:\n%s", want, r.record)
		}
	}
}

// TestVersionProbeTimeout: a sysbench that does not answer --version in time fails the phase with a reason that
// names the probe and its flag, not a bare "signal: killed" (what the CI run of a026ea5 showed).
func TestVersionProbeTimeout(t *testing.T) {
	r := runFake(t, context.Background(), map[string]string{"FAKE_VERSION_DELAY": "3"}, append(append([]string{}, runArgs...), "--probe-timeout=500ms")...)
	if r.code != 1 || r.summary.OK {
		t.Fatalf("exit %d ok %v", r.code, r.summary.OK)
	}
	if want := "--version did not answer within 500ms (--probe-timeout)"; !strings.Contains(r.summary.Error, want) {
		t.Errorf("error %q lacks %q", r.summary.Error, want)
	}
	if strings.Contains(r.record, "arg=run") {
		t.Errorf("sysbench ran although its probe failed:\n%s", r.record)
	}
}

func TestPasswordNeverPrinted(t *testing.T) {
	const pw = `s3cr3t p#w"d`
	t.Setenv(PasswordVar, pw)
	r := runFake(t, context.Background(), map[string]string{
		"FAKE_STDOUT": capture("fatal-wrong-db.txt"), "FAKE_ECHO_PWD": "1", "FAKE_EXIT": "1",
	}, runArgs...)
	if r.code != 1 {
		t.Fatalf("exit %d", r.code)
	}
	// sysbench got it through MYSQL_PWD only: not on argv, and not as the
	// operator's variable either.
	if !strings.Contains(r.record, "MYSQL_PWD="+pw+"\n") || !strings.Contains(r.record, "MYSQL_PASSWORD=<unset>\n") {
		t.Errorf("sysbench's environment:\n%s", r.record)
	}
	for _, l := range strings.Split(r.record, "\n") {
		if strings.HasPrefix(l, "arg=") && strings.Contains(l, "s3cr3t") {
			t.Errorf("password on argv: %q", l)
		}
	}
	for name, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "termination log": r.termLog} {
		if strings.Contains(text, "s3cr3t") {
			t.Errorf("password in %s:\n%s", name, text)
		}
	}
	if !strings.Contains(r.stdout, "connecting with password "+redacted) || !strings.Contains(r.stderr, "stderr: password "+redacted) {
		t.Errorf("echoed password not redacted:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.summary.Error, "connecting with password "+redacted) && !strings.Contains(r.summary.Error, "stderr: password "+redacted) {
		t.Errorf("error tail %q", r.summary.Error)
	}
}

func TestPasswordConfigFile(t *testing.T) {
	const pw = `x#y=z'q\`
	t.Setenv(PasswordVar, pw)
	r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt")},
		append(runArgs, "--password-mode=config-file")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.record, "config=mysql-password="+pw+"\n") || !strings.Contains(r.record, "MYSQL_PWD=<unset>\n") {
		t.Errorf("sysbench saw:\n%s", r.record)
	}
	var cfg string
	for _, l := range strings.Split(r.record, "\n") {
		if v, ok := strings.CutPrefix(l, "arg=--config-file="); ok {
			cfg = v
		}
	}
	if cfg == "" {
		t.Fatalf("no --config-file argument:\n%s", r.record)
	}
	if _, err := os.Stat(cfg); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("config file %s left behind: %v", cfg, err)
	}
	if strings.Contains(r.stdout+r.stderr+r.termLog, "x#y=z") {
		t.Error("password printed")
	}

	// sysbench's config reader splits on whitespace: refused up front.
	t.Setenv(PasswordVar, "has space")
	r = runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt")},
		append(runArgs, "--password-mode=config-file")...)
	if r.code != 1 || !strings.Contains(r.summary.Error, "whitespace") || strings.Contains(r.record, "arg=") {
		t.Errorf("exit %d, error %q, sysbench ran: %v", r.code, r.summary.Error, strings.Contains(r.record, "arg="))
	}
}

func TestSysbenchFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		reason  string   // the summary's reason
		want    []string // in the summary's error
		summary bool     // the run printed intervals: series expected
	}{
		{"exit 1 with FATAL", map[string]string{"FAKE_STDOUT": capture("fatal-wrong-db.txt"), "FAKE_EXIT": "1"}, runArgs, "MissingTables",
			[]string{"error 1049: Unknown database 'nosuchdb'\nsysbench run failed: exit status 1\n", "FATAL: error 1049: Unknown database 'nosuchdb'", "FATAL: Thread initialization failed!"}, false},
		{"option error on stderr", map[string]string{"FAKE_STDOUT": capture("bad-percentile.txt"), "FAKE_STDERR": capture("bad-percentile.stderr"), "FAKE_EXIT": "1"}, runArgs, "Other",
			[]string{"exit status 1", "Invalid value for the 'percentile' option: '99.9'"}, false},
		{"failure mid-run", map[string]string{"FAKE_STDOUT": capture("fatal-midrun.txt"), "FAKE_EXIT": "1"}, runArgs, "MissingTables",
			[]string{"exit status 1", "Table 'sbdrop.sbtest2' doesn't exist"}, true},
		{"FATAL with exit 0", map[string]string{"FAKE_STDOUT": capture("fatal-prepare-exists.txt")},
			[]string{"prepare", "--tables=2", "--table-size=2000", "--threads=2"}, "SQLError",
			[]string{"sysbench prepare printed FATAL errors although it exited 0", "Table 'sbtest2' already exists"}, false},
		{"prepare short of a table", map[string]string{"FAKE_STDOUT": capture("prepare-rocksdb.txt")},
			[]string{"prepare", "--tables=3", "--table-size=2000"}, "Other",
			[]string{"sbtest3 not created", "Inserting 2000 records into 'sbtest2'"}, false},
		{"exit 139", map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt"), "FAKE_EXIT": "139"}, runArgs, "Other",
			[]string{"exit status 139"}, true},
		{"killed by SIGSEGV", map[string]string{"FAKE_STDOUT": capture("failures/server-gone-reconnect.txt"), "FAKE_SIGNAL": "SEGV"}, runArgs, "Crashed",
			[]string{"sysbench was killed by signal 11 (segmentation fault)", "signal: segmentation fault", "[ 2s ] thds: 2"}, true},
		{"access denied", map[string]string{"FAKE_STDOUT": capture("failures/access-denied.txt"), "FAKE_EXIT": "1"}, runArgs, "AccessDenied",
			[]string{"error 1045: Access denied for user 'bench'@'localhost'"}, false},
		{"server gone", map[string]string{"FAKE_STDOUT": capture("failures/server-gone.txt"), "FAKE_EXIT": "1"}, runArgs, "ConnectionLost",
			[]string{"error 2013 (Lost connection to server during query)"}, true},
		{"missing tables", map[string]string{"FAKE_STDOUT": capture("failures/missing-tables.txt"), "FAKE_EXIT": "1"}, runArgs, "MissingTables",
			[]string{"1146 \"Table 'sbempty.sbtest1' doesn't exist\""}, false},
		{"no summary", map[string]string{"FAKE_STDOUT": capture("prepare-rocksdb.txt")}, runArgs, "InvalidOutput",
			[]string{"sysbench run output unusable: sysbench output has no complete final summary"}, false},
		{"invalid spec", nil, append(append([]string{}, runArgs...), "--workload=bulk_insert"), "Other",
			[]string{"unknown workload \"bulk_insert\""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runFake(t, context.Background(), tc.env, tc.args...)
			if r.code != 1 || r.summary.OK {
				t.Fatalf("exit %d ok %v", r.code, r.summary.OK)
			}
			if r.summary.Reason != tc.reason {
				t.Errorf("reason %q, want %q; error:\n%s", r.summary.Reason, tc.reason, r.summary.Error)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.summary.Error, w) {
					t.Errorf("error lacks %q:\n%s", w, r.summary.Error)
				}
			}
			if has := strings.Contains(r.stdout, benchresult.SeriesPrefix); has != tc.summary {
				t.Errorf("series line printed: %v", has)
			}
		})
	}
}

func TestStreamsAsItComes(t *testing.T) {
	// The fake prints the header and the first interval (13 lines), then
	// waits for the gate, which the test opens only once it has read that
	// interval from the runner's stdout: a runner that buffered would leave
	// the gate shut until the fake gave up.
	gate := filepath.Join(t.TempDir(), "gate")
	dir := t.TempDir()
	rec := filepath.Join(dir, "record")
	t.Setenv("FAKE_RECORD", rec)
	t.Setenv("FAKE_STDOUT", capture("run-innodb-ri1.txt"))
	t.Setenv("FAKE_GATE", gate)
	t.Setenv("FAKE_GATE_LINES", "13")
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	args := append([]string{"run", "--sysbench=" + fakeSysbench(t), "--termination-log="}, runArgs[1:]...)
	go func() {
		done <- Main(context.Background(), args, pw, io.Discard, os.Getenv)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	sawSummary := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "[ 1s ]") {
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sawSummary = sawSummary || strings.HasPrefix(line, benchresult.SummaryPrefix)
	}
	if code := <-done; code != 0 || !sawSummary {
		t.Fatalf("exit %d, summary printed %v", code, sawSummary)
	}
	b, _ := os.ReadFile(rec)
	if !strings.Contains(string(b), "gate=opened") {
		t.Errorf("the first interval did not reach stdout while sysbench was still running:\n%s", b)
	}
}

func TestInterrupted(t *testing.T) {
	// Stopped (pod deleted) while sysbench runs: SIGTERM to sysbench, and a
	// failed summary that says so.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gate := filepath.Join(t.TempDir(), "never")
	t.Setenv("FAKE_GATE", gate)
	t.Setenv("FAKE_GATE_LINES", "13")
	t.Setenv("FAKE_STDOUT", capture("run-innodb-ri1.txt"))
	pr, pw := io.Pipe()
	var r fakeRun
	var wg sync.WaitGroup
	wg.Add(1)
	fake := fakeSysbench(t)
	go func() {
		defer wg.Done()
		r = runFakeTo(t, ctx, pw, fake, runArgs...)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "[ 1s ]") {
			cancel()
		}
	}
	wg.Wait()
	if r.code != 1 || !strings.Contains(r.summary.Error, "sysbench run interrupted") || r.summary.Reason != "Interrupted" {
		t.Errorf("exit %d, reason %q, error %q", r.code, r.summary.Reason, r.summary.Error)
	}
	if !strings.Contains(r.summary.Error, "[ 1s ] thds: 2") {
		t.Errorf("error lacks the last output: %q", r.summary.Error)
	}
}

// runFakeTo is runFake with stdout going to w.
func runFakeTo(t *testing.T, ctx context.Context, w io.Writer, fake string, args ...string) fakeRun {
	term := filepath.Join(t.TempDir(), "termination-log")
	full := append([]string{args[0], "--sysbench=" + fake, "--termination-log=" + term}, args[1:]...)
	var errb bytes.Buffer
	code := Main(ctx, full, w, &errb, os.Getenv)
	r := fakeRun{code: code, stderr: errb.String()}
	b, err := os.ReadFile(term)
	if err == nil {
		r.summary, err = benchresult.Decode(b)
	}
	if err != nil {
		t.Errorf("termination log: %v", err)
	}
	return r
}

func TestBarrier(t *testing.T) {
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var slept []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	at := func(t time.Time) func() time.Time { return func() time.Time { return t } }

	if err := waitForStart(context.Background(), start, 5*time.Second, at(start.Add(-1500*time.Millisecond)), sleep); err != nil || len(slept) != 1 || slept[0] != 1500*time.Millisecond {
		t.Errorf("early: %v, slept %v", err, slept)
	}
	slept = nil
	if err := waitForStart(context.Background(), start, 5*time.Second, at(start.Add(4*time.Second)), sleep); err != nil || len(slept) != 0 {
		t.Errorf("4 s late within 5 s: %v, slept %v", err, slept)
	}
	err := waitForStart(context.Background(), start, 5*time.Second, at(start.Add(6*time.Second)), sleep)
	if err == nil || !strings.Contains(err.Error(), "missed by 6s (tolerance 5s)") || len(slept) != 0 {
		t.Errorf("6 s late: %v", err)
	}
	if err := waitForStart(context.Background(), time.Time{}, 0, at(start), sleep); err != nil || len(slept) != 0 {
		t.Errorf("no barrier: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := waitForStart(ctx, start, time.Second, at(start.Add(-time.Hour)), sleepCtx); err == nil || !strings.Contains(err.Error(), "interrupted while waiting") {
		t.Errorf("cancelled wait: %v", err)
	}
}

// startedNotBefore fails when the fake sysbench of r started before startAt.
func startedNotBefore(t *testing.T, r fakeRun, startAt time.Time) {
	t.Helper()
	var started float64
	for _, l := range strings.Split(r.record, "\n") {
		if v, ok := strings.CutPrefix(l, "start="); ok {
			var err error
			if started, err = parseFloat(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if barrier := float64(startAt.UnixNano()) / 1e9; started < barrier {
		t.Errorf("sysbench started at %.3f, before the common start %.3f", started, barrier)
	}
}

func TestBarrierEndToEnd(t *testing.T) {
	startAt := time.Now().Add(1200 * time.Millisecond).Truncate(time.Millisecond)
	r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt")},
		append(runArgs, "--start-at="+startAt.Format(time.RFC3339Nano))...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.summary.Error)
	}
	startedNotBefore(t, r, startAt)

	late := time.Now().Add(-time.Minute).Format(time.RFC3339)
	r = runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt")},
		append(runArgs, "--start-at="+late, "--start-tolerance=10s")...)
	if r.code != 1 || !strings.Contains(r.summary.Error, "refusing to run unsynchronised") || strings.Contains(r.record, "arg=") {
		t.Errorf("missed barrier: exit %d error %q sysbench ran %v", r.code, r.summary.Error, strings.Contains(r.record, "arg="))
	}
}

func TestDeviceNotVisible(t *testing.T) {
	r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt")},
		append(runArgs, "--device=nvme9n9", "--sys-block="+t.TempDir())...)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if strings.Contains(r.termLog, "device") || strings.Contains(r.termLog, "Bytes") {
		t.Errorf("device fields in %s", r.termLog)
	}
	if !strings.Contains(r.stderr, "device nvme9n9 not sampled") {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestTerminationLogUnwritable(t *testing.T) {
	t.Setenv("FAKE_STDOUT", capture("run-innodb-ri1.txt"))
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"run", "--sysbench=" + fakeSysbench(t),
		"--termination-log=" + filepath.Join(t.TempDir(), "no", "such", "dir")}, runArgs[1:]...), &out, &errb, os.Getenv)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	s, ok, err := benchresult.FindSummary(out.String())
	if !ok || err != nil || s.TPS != 378.00 {
		t.Errorf("summary on stdout: %+v %v %v", s, ok, err)
	}
	if !strings.Contains(errb.String(), "termination log not written") {
		t.Errorf("stderr %q", errb.String())
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"--tables=2"}, {"warmup"}, {"run", "--no-such-flag"}, {"run", "extra"}} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), args, &out, &errb, os.Getenv); code != 2 || !strings.Contains(errb.String(), "usage: znsbench") && !strings.Contains(errb.String(), "unexpected arguments") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errb.String())
		}
	}
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"help"}, &out, io.Discard, os.Getenv); code != 0 || !strings.Contains(out.String(), "-start-at") {
		t.Errorf("help: %d %q", code, out.String())
	}
}

func TestVerifyCannotConnect(t *testing.T) {
	var out, errb bytes.Buffer
	term := filepath.Join(t.TempDir(), "t")
	code := Main(context.Background(), []string{"verify", "--mysql-socket=" + filepath.Join(t.TempDir(), "none.sock"),
		"--tables=2", "--table-size=10", "--connect-timeout=1s", "--termination-log=" + term}, &out, &errb, os.Getenv)
	b, _ := os.ReadFile(term)
	s, err := benchresult.Decode(b)
	if code != 1 || err != nil || s.OK || !strings.Contains(s.Error, "verify: cannot connect") || s.RowsExpected != 20 {
		t.Errorf("exit %d, summary %+v, %v", code, s, err)
	}
}

func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", PasswordVar + "=a", sysbench.PasswordEnv + "=b", "MYSQL_PASSWORDX=c"})
	if strings.Join(got, " ") != "PATH=/bin MYSQL_PASSWORDX=c" {
		t.Errorf("childEnv = %q", got)
	}
}

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(strings.TrimSpace(s), 64) }

// TestShortPasswordRefused: a password so short that replacing it would blank out ordinary text ("x" turned
// "exit status 1" into "e<redacted>it status 1") is refused before anything runs; from the minimum on, the
// password is replaced as a whole and the rest of the text stays readable.
func TestShortPasswordRefused(t *testing.T) {
	for _, pw := range []string{"x", "exit", "1234567"} {
		t.Setenv(PasswordVar, pw)
		r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-innodb-ri1.txt")}, runArgs...)
		if r.code != 2 || !strings.Contains(r.stderr, "at least 8 are needed") || r.record != "" {
			t.Errorf("password of %d characters: exit %d, stderr %q, sysbench ran: %v", len(pw), r.code, r.stderr, r.record != "")
		}
		if strings.Contains(r.stderr, pw+" ") {
			t.Errorf("the refusal prints the password: %q", r.stderr)
		}
	}
	t.Setenv(PasswordVar, "xxxxxxxx")
	r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("fatal-wrong-db.txt"), "FAKE_EXIT": "1", "FAKE_ECHO_PWD": "1"}, runArgs...)
	if !strings.Contains(r.summary.Error, "exit status 1") || strings.Contains(r.stdout, "xxxxxxxx") ||
		!strings.Contains(r.stdout, "connecting with password "+redacted+"\n") {
		t.Errorf("error %q\nstdout %q", r.summary.Error, r.stdout)
	}
}

// TestVerifyRowCountOverflow: tables x table size beyond int64 is refused before any connection, instead of
// expecting a wrapped, negative row count.
func TestVerifyRowCountOverflow(t *testing.T) {
	r := runFake(t, context.Background(), nil, "verify", "--tables=1000", "--table-size=9223372036854775807",
		"--mysql-host=127.0.0.1", "--mysql-port=1", "--connect-timeout=1ms")
	if r.code != 1 || !strings.Contains(r.summary.Error, "more rows than a 64-bit count holds") || r.summary.RowsExpected != 0 {
		t.Errorf("exit %d, summary %+v", r.code, r.summary)
	}
}

// Zoned XFS writes file data to its zoned device and metadata and log to its metadata device: --device names
// both, and the run counts what each took during it, together.
func TestRunCountsSeveralDevices(t *testing.T) {
	sys := t.TempDir()
	for dev, stat := range map[string]string{
		"nullb0":  "1 0 8 0 100 0 4096 0 0 0 0 0 0 0 0 0 0\n",
		"nvme0n1": "1 0 8 0 50 0 777 0 0 0 0 0 0 0 0 0 0\n", // unchanged during the run: adds nothing
	} {
		if err := os.MkdirAll(filepath.Join(sys, dev), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sys, dev, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	afterFile := filepath.Join(t.TempDir(), "after")
	if err := os.WriteFile(afterFile, []byte("1 0 8 0 116 0 6144 0 0 0 0 0 0 0 0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runFake(t, context.Background(), map[string]string{
		"FAKE_STDOUT": capture("run-rocksdb-ri1.txt"), "FAKE_STAT_FROM": afterFile, "FAKE_STAT_TO": filepath.Join(sys, "nullb0", "stat"),
	}, append(runArgs, "--device=nullb0+nvme0n1", "--sys-block="+sys)...)
	if s := r.summary; r.code != 0 || s.Device != "nullb0+nvme0n1" || s.DeviceWrittenBytes != 2048*512 {
		t.Errorf("exit %d, device %q written %d (stderr %s)", r.code, s.Device, s.DeviceWrittenBytes, r.stderr)
	}
	missing := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-rocksdb-ri1.txt")},
		append(runArgs, "--device=nullb0+nvme9n9", "--sys-block="+sys)...)
	if missing.summary.DeviceWrittenBytes != 0 || !strings.Contains(missing.stderr, "device nvme9n9 not sampled") {
		t.Errorf("one device missing: written %d, stderr %s", missing.summary.DeviceWrittenBytes, missing.stderr)
	}
}
