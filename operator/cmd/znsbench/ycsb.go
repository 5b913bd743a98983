package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/ycsb"
)

// The YCSB subcommands. They write the same Summary as the sysbench phases (Tool "ycsb"), under the phase the
// operator's state machine knows them by: the load is the prepare, the row count check the verify.
const (
	cmdYCSBLoad   = "ycsb-load"
	cmdYCSBVerify = "ycsb-verify"
	cmdYCSBRun    = "ycsb-run"
)

var ycsbPhases = map[string]string{
	cmdYCSBLoad:   benchresult.PhasePrepare,
	cmdYCSBVerify: benchresult.PhaseVerify,
	cmdYCSBRun:    benchresult.PhaseRun,
}

// ycsbConfig is what the YCSB subcommands need beyond config.
type ycsbConfig struct {
	path string
	spec ycsb.Spec
	// timeSec ends a run: go-ycsb v1.0.3 never reads its maxexecutiontime, so the runner sends SIGINT, on which
	// go-ycsb stops its threads and prints its summary.
	timeSec int
}

func ycsbFlagSet(c *config, y *ycsbConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("znsbench", flag.ContinueOnError)
	s := &y.spec
	fs.StringVar(&y.path, "go-ycsb", "go-ycsb", "go-ycsb binary")
	fs.StringVar(&s.Workload, "workload", "a", "YCSB core workload: "+strings.Join(ycsb.Workloads, ", "))
	fs.Int64Var(&s.RecordCount, "record-count", 1000, "records loaded (and picked from by the run)")
	fs.Int64Var(&s.OperationCount, "operation-count", 0, "run: operations after which go-ycsb stops (0: --time alone ends the run)")
	fs.Int64Var(&s.FieldCount, "field-count", 1, "fields per record")
	fs.Int64Var(&s.FieldLength, "field-length", 4096, "bytes per field")
	fs.StringVar(&s.Distribution, "distribution", "uniform", "request distribution: "+strings.Join(ycsb.Distributions, ", "))
	fs.IntVar(&s.Threads, "threads", 1, "go-ycsb threads")
	fs.IntVar(&s.TargetOpsPerSec, "target-ops", 0, "run: operations per second over all threads (0: unthrottled)")
	fs.IntVar(&s.ReportIntervalSec, "report-interval", 10, "seconds between go-ycsb's periodic summaries")
	fs.IntVar(&y.timeSec, "time", 60, "run: seconds after which go-ycsb is stopped (0: only --operation-count ends it)")
	fs.StringVar(&s.Host, "mysql-host", "127.0.0.1", "MySQL host")
	fs.IntVar(&s.Port, "mysql-port", 3306, "MySQL port")
	fs.StringVar(&s.User, "mysql-user", "root", "MySQL user; the password is read from $"+PasswordVar)
	fs.StringVar(&s.DB, "mysql-db", "ycsb", "database (the load creates it when missing)")
	fs.StringVar(&c.spec.StorageEngine, "storage-engine", "", "the target's engine (rocksdb, innodb), for the data size after the verify and the run")
	fs.StringVar(&c.target, "target", "", "target name, copied into the summary")
	fs.IntVar(&c.iteration, "iteration", 0, "iteration number, copied into the summary")
	fs.StringVar(&c.terminationLog, "termination-log", "/dev/termination-log", "where to write the summary (skipped if not writable)")
	c.start = &startBarrier{given: make(chan time.Time, 1)}
	startFlags(fs, c.start)
	fs.StringVar(&c.device, "device", "", "block device kernel name to sample written bytes from; DEV+DEV counts several together")
	fs.StringVar(&c.sysBlock, "sys-block", "/sys/block", "sysfs block directory")
	fs.IntVar(&c.tailLines, "tail-lines", 15, "go-ycsb output lines kept in a failure's error message")
	fs.DurationVar(&c.connectTimeout, "connect-timeout", defaultConnectTimeout, "how long to retry connecting to the server before the load and the verify")
	fs.StringVar(&c.driveDir, "drive-dir", "", "directory shared with the drive sidecar: wait (bounded) until it has read the drive before the phase starts")
	fs.StringVar(&c.metricsURL, "metrics-url", "", "verify: the database pod's metrics sidecar, read for the usable capacity")
	observerFlags(fs, c)
	fs.StringVar(&c.usableSource, "usable-source", UsableStatfs, "verify: which figures of --metrics-url are the usable capacity: "+UsableStatfs+" or "+UsableZenFS)
	return fs
}

// ycsbMain runs one YCSB subcommand and returns the exit status.
func ycsbMain(ctx context.Context, sub string, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var c config
	var y ycsbConfig
	fs := ycsbFlagSet(&c, &y)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "znsbench %s: %v\n", sub, err)
		fmt.Fprintf(stderr, "usage: znsbench %s|%s|%s [flags]\n\nflags:\n", cmdYCSBLoad, cmdYCSBVerify, cmdYCSBRun)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "znsbench %s: unexpected arguments %q\n", sub, fs.Args())
		return 2
	}
	c.phase = ycsbPhases[sub]
	// connect, ensureDatabase and measureSize read the server from the sysbench spec.
	c.spec.Host, c.spec.Port, c.spec.User, c.spec.DB = y.spec.Host, y.spec.Port, y.spec.User, y.spec.DB
	c.spec.Threads = y.spec.Threads
	if err := checkPhaseFlags(c); err != nil {
		fmt.Fprintf(stderr, "znsbench %s: %v\n", sub, err)
		return 2
	}
	c.password = getenv(PasswordVar)
	y.spec.Password = c.password != ""
	if n := len([]rune(c.password)); n > 0 && n < minPasswordLength {
		fmt.Fprintf(stderr, "znsbench %s: $%s has %d character(s); at least %d are needed, because the runner replaces the password wherever it would print it\n",
			sub, PasswordVar, n, minPasswordLength)
		return 2
	}
	if err := ycsb.CheckPassword(c.password); err != nil {
		fmt.Fprintf(stderr, "znsbench %s: $%s: %v\n", sub, PasswordVar, err)
		return 2
	}
	phase := ycsb.PhaseRun
	if sub == cmdYCSBLoad {
		phase = ycsb.PhaseLoad
	}
	if err := y.spec.Validate(phase); err != nil {
		fmt.Fprintf(stderr, "znsbench %s: %v\n", sub, err)
		return 2
	}
	if sub == cmdYCSBRun && y.timeSec <= 0 && y.spec.OperationCount == 0 {
		fmt.Fprintf(stderr, "znsbench %s: --time or --operation-count must end the run\n", sub)
		return 2
	}
	r := &runner{cfg: c, stdout: stdout, stderr: stderr, redact: newRedactor(c.password),
		now: time.Now, sleep: sleepCtx, environ: os.Environ}
	r.devices = r.newDeviceSampler()
	return r.ycsbPhase(ctx, sub, y)
}

// ycsbPhase is runner.main for the YCSB subcommands: the same summary, the same failure reasons.
func (r *runner) ycsbPhase(ctx context.Context, sub string, y ycsbConfig) int {
	started := r.now()
	c := r.cfg
	r.sum = benchresult.Summary{Phase: c.phase, Tool: benchresult.ToolYCSB, Target: c.target, Iteration: c.iteration,
		Workload: y.spec.Workload, Threads: y.spec.Threads}
	r.tail = newLineRing(max(c.tailLines, 1))
	r.keepInTail = withoutGoroutineStacks()
	if c.driveDir != "" {
		awaitDrive(ctx, c.driveDir, r.sleep, r.logf)
	}
	var err error
	switch sub {
	case cmdYCSBLoad:
		if err = r.ensureDatabase(ctx); err == nil {
			err = r.goYCSB(ctx, ycsb.PhaseLoad, y)
		}
	case cmdYCSBVerify:
		if err = r.verifyRecords(ctx, y.spec.RecordCount); err == nil {
			r.measureSize(ctx)
			r.measureUsable(ctx)
		}
	case cmdYCSBRun:
		if err = r.goYCSB(ctx, ycsb.PhaseRun, y); err == nil {
			r.measureSize(ctx)
		}
	}
	r.finish(ctx, err)
	r.logCPU(started)
	r.report()
	if !r.sum.OK {
		return 1
	}
	return 0
}

// finish sets the verdict of the summary from the phase's error, as runner.main does.
func (r *runner) finish(ctx context.Context, err error) {
	if err == nil {
		r.sum.OK = true
		return
	}
	r.sum.OK = false
	f := failreason.Failure{Text: err.Error(), Interrupted: ctx.Err() != nil}
	var ended *toolEnded
	if errors.As(err, &ended) {
		f.Signal = ended.signal
	}
	reason, cause := failreason.Classify(f)
	r.sum.Reason = reason
	r.sum.Error = r.redact.String(cause + "\n" + err.Error())
}

// goYCSB runs go-ycsb once and fills the summary from its final summary.
func (r *runner) goYCSB(ctx context.Context, phase ycsb.Phase, y ycsbConfig) error {
	c := r.cfg
	args, err := y.spec.Args(phase)
	if err != nil {
		return err
	}
	env := childEnv(r.environ())
	if c.password != "" {
		env = append(env, ycsb.PasswordEnv+"="+c.password)
	}
	if phase == ycsb.PhaseRun {
		done, err := c.start.await(ctx, r.now, r.sleep, r.logf)
		defer done()
		if err != nil {
			return err
		}
	}
	var timer *time.Timer
	timeUp := make(chan struct{})
	if phase == ycsb.PhaseRun && y.timeSec > 0 {
		r.onStart = func(p *os.Process) {
			timer = time.AfterFunc(time.Duration(y.timeSec)*time.Second, func() {
				close(timeUp)
				_ = p.Signal(syscall.SIGINT)
			})
		}
	}
	r.beginDevice(ctx)
	r.logf("running %s %s", y.path, strings.Join(args, " "))
	r.sum.StartTime = r.now().UTC().Format(time.RFC3339Nano)
	parser := ycsb.NewParser()
	waitErr := r.execStream(ctx, y.path, args, env, parser.Line)
	if timer != nil {
		timer.Stop()
	}
	r.sum.EndTime = r.now().UTC().Format(time.RFC3339Nano)
	written := r.endDevice(ctx)
	res, parseErr := parser.Result()
	fillYCSB(&r.sum, res)
	if written >= 0 && r.sum.Transactions > 0 {
		r.sum.BytesPerTransaction = float64(written) / float64(r.sum.Transactions)
	}
	select {
	case <-timeUp:
		r.logf("run stopped after --time %ds", y.timeSec)
	default:
	}
	switch {
	case waitErr != nil && ctx.Err() != nil:
		return r.failure("go-ycsb %s interrupted (%v): %v", phase, context.Cause(ctx), waitErr)
	case waitErr != nil:
		return &toolEnded{error: r.failure("go-ycsb %s failed: %v", phase, waitErr), signal: signalOf(waitErr)}
	case parseErr != nil:
		// The words "output unusable" make failreason say InvalidOutput.
		return r.failure("go-ycsb %s output unusable: %v", phase, parseErr)
	}
	return checkYCSB(phase, y.spec, res)
}

// checkYCSB fails a phase whose summary shows it did not do its job although go-ycsb exited 0: a load that did
// not insert every record, a run in which no operation succeeded.
func checkYCSB(phase ycsb.Phase, s ycsb.Spec, res *ycsb.Result) error {
	var ok, failed int64
	for _, o := range res.Ops {
		ok += o.Count
		failed += o.Errors
	}
	if phase == ycsb.PhaseLoad {
		ins, _ := res.Op(ycsb.OpInsert)
		if ins.Count != s.RecordCount || ins.Errors > 0 {
			return fmt.Errorf("row count mismatch: the load inserted %d of %d records (%d inserts failed)", ins.Count, s.RecordCount, ins.Errors)
		}
		return nil
	}
	if ok == 0 {
		return fmt.Errorf("go-ycsb run output unusable: no operation succeeded (%d failed; go-ycsb counts failures without printing their errors)", failed)
	}
	return nil
}

// fillYCSB copies a go-ycsb summary into the runner's: each operation type, and over all of them (go-ycsb's
// TOTAL line, see ycsb.Sum) the operations (Transactions), their rate (TPS and QPS alike: an operation is one
// statement), the mean, p95, p99 and p99.9 latency and the maximum, so that the operator's comparisons work on
// YCSB runs as on sysbench runs. Failed operations of every type are ErrorsPerSec.
func fillYCSB(sum *benchresult.Summary, res *ycsb.Result) {
	if res == nil {
		return
	}
	sum.Ops = nil
	for _, o := range res.Ops {
		sum.Ops = append(sum.Ops, benchresult.OpFigures{Op: o.Name, Count: o.Count, OPS: o.OPS, AvgMS: o.AvgMS,
			P50MS: o.Percentiles[50], P90MS: o.Percentiles[90], P95MS: o.Percentiles[95], P99MS: o.Percentiles[99],
			P999MS: o.Percentiles[99.9], MaxMS: o.MaxMS, Errors: o.Errors})
	}
	t := ycsb.Sum(res)
	sum.DurationSec = res.TookSec
	sum.Transactions = t.Count
	sum.TPS, sum.QPS = t.OPS, t.OPS
	sum.LatencyAvgMS = t.AvgMS
	sum.Percentile = 95
	p95 := t.P95MS
	if !t.FromTotal {
		p95 = t.WorstP95MS
	}
	sum.LatencyPctMS, sum.LatencyP95MS = p95, p95
	sum.LatencyP99MS, sum.LatencyP999MS = t.P99MS, t.P999MS
	if res.Total != nil {
		sum.LatencyP50MS = res.Total.Percentiles[50]
	}
	sum.LatencyMaxMS = t.MaxMS
	if res.TookSec > 0 {
		sum.ErrorsPerSec = float64(t.Errors) / res.TookSec
	}
}

// withoutGoroutineStacks keeps a Go panic's goroutine dumps out of a failure's tail: go-ycsb panics when the
// server goes away mid-run (testdata/fail-server-gone.stderr), and its stack would push out the MySQL driver's
// lines before it ("invalid connection"), which are what names the reason. The panic line itself is kept.
func withoutGoroutineStacks() func(string) bool {
	var mu sync.Mutex
	inStack := false
	return func(line string) bool {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasPrefix(line, "goroutine ") && strings.HasSuffix(line, "]:"):
			inStack = true
			return false
		case strings.HasPrefix(line, "panic: "), strings.HasPrefix(line, "[signal "):
			inStack = false
			return true
		}
		return !inStack
	}
}
