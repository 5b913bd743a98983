package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
)

// stopGrace is how long sysbench gets to exit after SIGTERM before it is
// killed, when the runner itself is being stopped.
const stopGrace = 10 * time.Second

type runner struct {
	cfg            config
	stdout, stderr io.Writer
	redact         redactor
	now            func() time.Time
	sleep          func(context.Context, time.Duration) error
	environ        func() []string

	sum    benchresult.Summary
	series *benchresult.Series

	// onStart, when set, is told of the tool's process once it runs (go-ycsb's run is ended by a signal when
	// its time is up).
	onStart func(*os.Process)
	// keepInTail, when set, says which lines go into the tail a failure reports (all are streamed to the log).
	keepInTail func(line string) bool

	// devices measures the target's device over the phase; nil when there is none to measure.
	devices     deviceSampler
	deviceBegun bool
	// holdDevice keeps sysbench from ending the device's measurement: prepareFresh ends it, once it knows the
	// attempt is the last, so that an observer (which exits at /end) is still there for the next attempt.
	holdDevice bool

	outMu sync.Mutex // serialises writes to stdout and stderr
	tail  *lineRing
}

func (r *runner) logf(format string, a ...any) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	fmt.Fprintf(r.stderr, "znsbench: %s\n", r.redact.String(fmt.Sprintf(format, a...)))
}

func (r *runner) main(ctx context.Context) int {
	started := r.now()
	c := r.cfg
	r.sum = benchresult.Summary{Phase: c.phase, Target: c.target, Iteration: c.iteration,
		Workload: c.spec.Workload, Threads: c.spec.Threads}
	r.tail = newLineRing(max(c.tailLines, 1))
	if c.driveDir != "" {
		awaitDrive(ctx, c.driveDir, r.sleep, r.logf)
	}

	var err error
	switch {
	case c.phase == benchresult.PhaseVerify:
		if err = r.verify(ctx); err == nil {
			r.measureSize(ctx)
			r.measureUsable(ctx)
		}
	case c.phase == benchresult.PhasePrepare && (c.createDatabase || c.dropExisting):
		err = r.prepareFresh(ctx)
	default:
		if err = r.sysbench(ctx); err == nil && c.phase == benchresult.PhaseRun {
			r.measureSize(ctx)
		}
	}
	if err != nil {
		r.sum.OK = false
		f := failreason.Failure{Text: err.Error(), Interrupted: ctx.Err() != nil}
		var ended *toolEnded
		if errors.As(err, &ended) {
			f.Signal = ended.signal
		}
		reason, cause := failreason.Classify(f)
		r.sum.Reason = reason
		// The cause comes first: TrimError keeps the first line and the end.
		r.sum.Error = r.redact.String(cause + "\n" + err.Error())
	} else {
		r.sum.OK = true
	}
	r.logCPU(started)
	r.report()
	if !r.sum.OK {
		return 1
	}
	return 0
}

// report writes the summary to the termination log and stdout, then the
// series line, which comes last so that it is the log's final line.
func (r *runner) report() {
	b, err := r.sum.Encode()
	if err != nil {
		// Only absurd --target values get here; keep the verdict.
		small := benchresult.Summary{Phase: r.sum.Phase, OK: r.sum.OK, Error: "summary too large: " + err.Error()}
		b, _ = small.Encode()
	}
	if r.cfg.terminationLog != "" {
		if werr := os.WriteFile(r.cfg.terminationLog, b, 0o644); werr != nil {
			r.logf("termination log not written (%v); the summary is on stdout", werr)
		}
	}
	r.outMu.Lock()
	fmt.Fprintf(r.stdout, "%s%s\n", benchresult.SummaryPrefix, b)
	r.outMu.Unlock()
	if r.series != nil && r.series.Len() > 0 {
		line, err := r.series.Line()
		if err != nil {
			r.logf("series not printed: %v", err)
			return
		}
		r.outMu.Lock()
		fmt.Fprintln(r.stdout, line)
		r.outMu.Unlock()
	}
}

// failure is a sysbench failure: what happened, then its last lines.
func (r *runner) failure(format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if lines := r.tail.Lines(); len(lines) > 0 {
		msg += "\n" + strings.Join(lines, "\n")
	}
	return errors.New(msg)
}

// toolEnded is a failure of a tool that a signal ended, which is its own reason (a crash) whatever it printed.
type toolEnded struct {
	error
	signal int
}

func (e *toolEnded) Unwrap() error { return e.error }

// signalOf is the signal that ended a process, 0 when it exited.
func signalOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return int(ws.Signal())
		}
	}
	return 0
}

func (r *runner) sysbench(ctx context.Context) error {
	c := r.cfg
	phase := sysbench.Phase(c.phase)
	args, err := c.spec.Args(phase)
	if err != nil {
		return err
	}
	version, err := r.version(ctx)
	if err != nil {
		return err
	}
	r.sum.SysbenchVersion = version.Raw

	env := childEnv(r.environ())
	switch c.passwordMode {
	case "env":
		if c.password != "" {
			env = append(env, sysbench.PasswordEnv+"="+c.password)
		}
	case "config-file":
		if c.password != "" {
			path, cleanup, err := writeConfigFile(c.password)
			if err != nil {
				return err
			}
			defer cleanup()
			args = append([]string{"--config-file=" + path}, args...)
		}
	default:
		return fmt.Errorf("unknown --password-mode %q (want env or config-file)", c.passwordMode)
	}

	done, err := c.start.await(ctx, r.now, r.sleep, r.logf)
	defer done()
	if err != nil {
		return err
	}

	r.beginDevice(ctx)
	r.logf("running %s %s", c.sysbenchPath, strings.Join(args, " "))
	r.sum.StartTime = r.now().UTC().Format(time.RFC3339Nano)
	parser := sysbench.NewParser()
	var stdoutLines []string // prepare's output is small and parsed at the end
	onStdout := func(line string) {
		parser.Line(line)
		if phase == sysbench.PhasePrepare {
			stdoutLines = append(stdoutLines, line)
		}
	}
	waitErr := r.execStream(ctx, c.sysbenchPath, args, env, onStdout)
	r.sum.EndTime = r.now().UTC().Format(time.RFC3339Nano)
	var written int64 = -1
	if !r.holdDevice {
		written = r.endDevice(ctx)
	}

	res, parseErr := parser.Result()
	r.fillRun(res)

	var fatal *sysbench.FatalError
	switch {
	case waitErr != nil && ctx.Err() != nil:
		return r.failure("sysbench %s interrupted (%v): %v", phase, context.Cause(ctx), waitErr)
	case waitErr != nil:
		return &toolEnded{error: r.failure("sysbench %s failed: %v", phase, waitErr), signal: signalOf(waitErr)}
	case errors.As(parseErr, &fatal):
		// sysbench can print FATAL and still exit 0 (measured: 1.0.20's
		// prepare into existing tables), so the lines decide, not the status.
		return r.failure("sysbench %s printed FATAL errors although it exited 0", phase)
	}
	switch phase {
	case sysbench.PhaseRun:
		if parseErr != nil {
			return r.failure("sysbench run output unusable: %v", parseErr)
		}
		if written >= 0 {
			if per, ok := benchstat.BytesPerTransaction(written, r.sum.Transactions); ok {
				r.sum.BytesPerTransaction = per
			}
		}
	case sysbench.PhasePrepare:
		p, err := sysbench.ParsePrepare(strings.NewReader(strings.Join(stdoutLines, "\n")))
		if err != nil {
			return err
		}
		if err := p.Check(c.spec.Tables, c.spec.TableSize); err != nil {
			return r.failure("%v", err)
		}
	}
	return nil
}

// fillRun copies the parsed figures into the summary and the series.
func (r *runner) fillRun(res *sysbench.Result) {
	if res == nil {
		return
	}
	if res.Version != "" && r.sum.SysbenchVersion == "" {
		r.sum.SysbenchVersion = res.Version
	}
	r.sum.ReportIntervalSec = res.ReportIntervalSec
	if s := res.Summary; s != nil {
		r.sum.DurationSec = s.TotalTimeSec
		r.sum.Transactions = s.Transactions
		r.sum.TPS = s.TPS
		r.sum.QPS = s.QPS
		r.sum.LatencyAvgMS = s.LatencyAvgMS
		r.sum.LatencyPctMS = s.LatencyPctMS
		r.sum.LatencyMaxMS = s.LatencyMaxMS
		r.sum.Percentile = s.Percentile
		r.sum.IgnoredErrors = s.IgnoredErrors
		r.sum.ErrorsPerSec = s.IgnoredErrorsPerSec
		r.sum.Reconnects = s.Reconnects
		r.sum.ReconnectsPerSec = s.ReconnectsPerSec
	}
	for p, dst := range map[float64]*float64{50: &r.sum.LatencyP50MS, 95: &r.sum.LatencyP95MS, 99: &r.sum.LatencyP99MS, 99.9: &r.sum.LatencyP999MS} {
		if v, ok := res.Histogram.Percentile(p); ok {
			*dst = v
		}
	}
	if len(res.Intervals) == 0 {
		return
	}
	st := benchstat.FromIntervals(res.Intervals)
	r.sum.Intervals = st.Intervals
	r.sum.TPSRelDevPct = st.TPS.RelDevPct
	r.sum.TPSMin, r.sum.TPSMax = st.TPS.Min, st.TPS.Max
	r.sum.LatencyRelDevPct = st.Latency.RelDevPct
	r.sum.LatencyPctMinMS, r.sum.LatencyPctMaxMS = st.Latency.Min, st.Latency.Max

	s := &benchresult.Series{Target: r.cfg.target, Iteration: r.cfg.iteration,
		Percentile: st.Percentile, ReportIntervalSec: res.ReportIntervalSec}
	for _, iv := range res.Intervals {
		s.Time = append(s.Time, iv.Time)
		s.TPS = append(s.TPS, iv.TPS)
		s.QPS = append(s.QPS, iv.QPS)
		s.LatencyMS = append(s.LatencyMS, iv.LatencyMS)
		s.ErrorsPerSec = append(s.ErrorsPerSec, iv.ErrorsPerSec)
		s.ReconnectsPerSec = append(s.ReconnectsPerSec, iv.ReconnectsPerSec)
	}
	r.series = s
}

// defaultProbeTimeout bounds sysbench --version. On a node under QEMU's emulation with six databases restarting,
// starting a process once took more than 30 s (the CI run of a026ea5): a slow answer is logged, not a failure.
const defaultProbeTimeout = 3 * time.Minute

// version asks sysbench for its version: it proves the binary runs before
// the barrier, and the summary records which one produced the numbers.
func (r *runner) version(ctx context.Context) (sysbench.Version, error) {
	vctx, cancel := context.WithTimeout(ctx, r.cfg.probeTimeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(vctx, r.cfg.sysbenchPath, "--version")
	cmd.Env = childEnv(r.environ())
	cmd.WaitDelay = time.Second // a child the probe left holding its output does not hold the phase
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil && vctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		return sysbench.Version{}, fmt.Errorf("%s --version did not answer within %s (--probe-timeout): the node is too busy to start a process",
			r.cfg.sysbenchPath, r.cfg.probeTimeout)
	}
	if err != nil {
		return sysbench.Version{}, fmt.Errorf("cannot run %s --version: %v: %s", r.cfg.sysbenchPath, err, strings.TrimSpace(string(out)))
	}
	if took > slowProbe {
		r.logf("%s --version answered after %s: the node is slow to start processes", r.cfg.sysbenchPath, took.Round(100*time.Millisecond))
	}
	return sysbench.ParseVersion(string(out))
}

// slowProbe is when the version probe's time is worth a line: a process starts in about a second under emulation.
const slowProbe = 5 * time.Second

// childEnv is the runner's environment without the password variables:
// sysbench gets the password only the way --password-mode says.
func childEnv(environ []string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if strings.HasPrefix(kv, PasswordVar+"=") || strings.HasPrefix(kv, sysbench.PasswordEnv+"=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// writeConfigFile puts the password into a file only this user can read.
func writeConfigFile(password string) (string, func(), error) {
	line, err := sysbench.ConfigFileLine(password)
	if err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp("", "znsbench-*.cfg") // created 0600
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.Remove(f.Name()) }
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		cleanup()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		cleanup()
		return "", nil, err
	}
	return f.Name(), cleanup, nil
}

// execStream runs the program, copying its stdout and stderr line by line,
// redacted, to the runner's own as they arrive, and handing each stdout
// line to onStdout. On ctx's end sysbench gets SIGTERM, then SIGKILL.
func (r *runner) execStream(ctx context.Context, path string, args, env []string, onStdout func(string)) error {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if r.onStart != nil {
		r.onStart(cmd.Process)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.copyLines(outPipe, r.stdout, onStdout)
	}()
	go func() {
		defer wg.Done()
		r.copyLines(errPipe, r.stderr, nil)
	}()
	wg.Wait() // all output read before Wait closes the pipes
	return cmd.Wait()
}

func (r *runner) copyLines(src io.Reader, dst io.Writer, each func(string)) {
	br := bufio.NewReaderSize(src, 64*1024)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			line = strings.TrimRight(line, "\r\n")
			if each != nil {
				each(line)
			}
			shown := r.redact.String(line)
			if r.keepInTail == nil || r.keepInTail(shown) {
				r.tail.Add(shown)
			}
			r.outMu.Lock()
			_, _ = io.WriteString(dst, shown+"\n")
			r.outMu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// lineRing keeps the last n lines.
type lineRing struct {
	mu    sync.Mutex
	lines []string
	n     int
}

func newLineRing(n int) *lineRing { return &lineRing{n: n} }

func (l *lineRing) Add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.TrimSpace(s) == "" {
		return // blank lines carry nothing into an error message
	}
	l.lines = append(l.lines, s)
	if len(l.lines) > l.n {
		l.lines = l.lines[len(l.lines)-l.n:]
	}
}

func (l *lineRing) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}
