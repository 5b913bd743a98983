// Command znsbench is the benchmark runner of the bench image. The operator
// runs it in a Job per target and phase:
//
//	znsbench prepare|verify|run|cleanup [flags]
//	znsbench ycsb-load|ycsb-verify|ycsb-run [flags] (YCSB through go-ycsb; ycsb.go)
//	znsbench compare SUMMARY.json... (the last one is the baseline)
//	znsbench precondition --dir DIR [--passes 2] [--fill-percent 90]
//	znsbench drive --device DEV --dir DIR [--counters] [--model-op 7,28] (the drive sidecar)
//	znsbench fio --device DEV --profiles P,... [--runtime 60s] [--write-token T] (fio on a raw device; fio.go)
//	znsbench observe --device DEV [--listen :9106] [--drive-dir DIR] (the device's counters for a runner on
//	another node, which passes --observer URL; observe.go)
//
// prepare, run and cleanup run sysbench, streaming its output to the pod
// log; verify counts the prepared rows and, with --metrics-url, reads the
// usable capacity from the database pod's metrics sidecar. Each writes a
// compact JSON summary (package benchresult) to the termination log and to
// stdout; run also prints the per-interval series as one "ZNSBENCH-SERIES "
// line. The MySQL password comes from $MYSQL_PASSWORD and never appears on a
// command line or in the output. Exit status: 0 success, 1 failure, 2 usage error.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
)

// PasswordVar is the environment variable the operator fills from a Secret.
const PasswordVar = "MYSQL_PASSWORD"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	os.Exit(Main(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// config is everything a subcommand needs.
type config struct {
	phase          string
	spec           sysbench.Spec
	sysbenchPath   string
	probeTimeout   time.Duration
	passwordMode   string
	password       string
	target         string
	iteration      int
	terminationLog string
	// start is the common start of a run (barrier.go).
	start          *startBarrier
	device         string
	sysBlock       string
	tailLines      int
	connectTimeout time.Duration
	createDatabase bool
	dropExisting   bool
	driveDir       string
	metricsURL     string
	usableSource   string
	// observer is the URL of `znsbench observe` on the device's node, for a runner on another node.
	observer        string
	observerTimeout time.Duration
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: znsbench prepare|verify|run|cleanup [flags]\n       znsbench ycsb-load|ycsb-verify|ycsb-run [flags] (znsbench ycsb-run -h)\n       znsbench compare SUMMARY.json... (the last one is the baseline)\n"+
		"       znsbench observe --device DEV [--listen :9106] [--drive-dir DIR] (samples the device for a runner on another node; znsbench observe -h)\n\nflags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

func newFlagSet(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("znsbench", flag.ContinueOnError)
	s := &c.spec
	fs.StringVar(&c.sysbenchPath, "sysbench", "sysbench", "sysbench binary")
	fs.DurationVar(&c.probeTimeout, "probe-timeout", defaultProbeTimeout, "how long sysbench --version may take to answer before the phase starts (a starved node starts processes slowly)")
	fs.StringVar(&s.ScriptDir, "script-dir", "", "directory of sysbench's .lua scripts (default: sysbench's own search path)")
	fs.StringVar(&s.Workload, "workload", "oltp_read_write", "sysbench OLTP script: "+strings.Join(sysbench.Workloads, ", "))
	fs.IntVar(&s.Tables, "tables", 1, "number of tables sbtest1..N")
	fs.Int64Var(&s.TableSize, "table-size", 10000, "rows per table")
	fs.IntVar(&s.Threads, "threads", 1, "sysbench threads")
	fs.IntVar(&s.TimeSec, "time", 60, "run duration in seconds")
	fs.IntVar(&s.ReportIntervalSec, "report-interval", 1, "seconds between interval reports (0 = none)")
	fs.BoolVar(&s.Histogram, "histogram", true, "run: sysbench --histogram=on, for p50/p95/p99/p99.9 of the whole run")
	fs.IntVar(&s.Percentile, "percentile", 95, "latency percentile, integer 1-100 (0 = sysbench's default, 95)")
	fs.StringVar(&s.Host, "mysql-host", "127.0.0.1", "MySQL host")
	fs.IntVar(&s.Port, "mysql-port", 3306, "MySQL port")
	fs.StringVar(&s.Socket, "mysql-socket", "", "MySQL unix socket (instead of host and port)")
	fs.StringVar(&s.User, "mysql-user", "root", "MySQL user; the password is read from $"+PasswordVar)
	fs.StringVar(&s.DB, "mysql-db", "sbtest", "database")
	fs.StringVar(&s.StorageEngine, "storage-engine", "", "table engine for prepare (--mysql-storage-engine): rocksdb, innodb")
	fs.BoolVar(&s.CreateSecondary, "create-secondary", false, "create the secondary index on k (the seed prepares without)")
	fs.StringVar(&s.PSMode, "db-ps-mode", "", "prepared statements: auto or disable (default: sysbench's, auto)")
	fs.StringVar(&s.IgnoreErrors, "mysql-ignore-errors", "", "errors sysbench ignores: \"all\" or a comma list (default: sysbench's 1213,1020,1205)")
	fs.StringVar(&c.passwordMode, "password-mode", "env", "how sysbench gets the password: env (MYSQL_PWD, works with libmariadb) or config-file (a private --config-file, for libmysqlclient builds; no whitespace in the password)")
	fs.StringVar(&c.target, "target", "", "target name, copied into the summary")
	fs.IntVar(&c.iteration, "iteration", 0, "iteration number, copied into the summary")
	fs.StringVar(&c.terminationLog, "termination-log", "/dev/termination-log", "where to write the summary (skipped if not writable)")
	c.start = &startBarrier{given: make(chan time.Time, 1)}
	startFlags(fs, c.start)
	fs.StringVar(&c.device, "device", "", "block device kernel name to sample written bytes from (e.g. nvme0n2); "+
		"DEV+DEV counts several together (zoned XFS's data and metadata devices)")
	fs.StringVar(&c.sysBlock, "sys-block", "/sys/block", "sysfs block directory")
	fs.IntVar(&c.tailLines, "tail-lines", 15, "sysbench output lines kept in a failure's error message")
	fs.DurationVar(&c.connectTimeout, "connect-timeout", defaultConnectTimeout, "verify and --create-database: how long to retry connecting to the server")
	fs.BoolVar(&c.createDatabase, "create-database", false, "prepare: create --mysql-db first if it does not exist")
	fs.StringVar(&c.driveDir, "drive-dir", "", "directory shared with the drive sidecar: wait (bounded) until it has read the drive before the phase starts")
	fs.StringVar(&c.metricsURL, "metrics-url", "", "verify: the database pod's metrics sidecar (znsdb metrics, http://HOST:9105/metrics), read for the usable capacity; unreadable is logged, never a failure")
	fs.StringVar(&c.usableSource, "usable-source", UsableStatfs, "verify: which figures of --metrics-url are the usable capacity: "+UsableStatfs+" (the datadir's file system) or "+UsableZenFS+" (zenfs df's free, used and reclaimable)")
	observerFlags(fs, c)
	fs.BoolVar(&c.dropExisting, "drop-existing", false, "prepare: drop the sysbench tables (sbtest<N>) an earlier prepare left in --mysql-db first")
	return fs
}

// Main runs one subcommand and returns the exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var c config
	fs := newFlagSet(&c)
	fs.SetOutput(io.Discard)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		usage(stderr, fs)
		return 2
	}
	switch args[0] {
	case "compare":
		return compareCmd(args[1:], stdout, stderr)
	case benchresult.PhasePrecondition:
		return preconditionCmd(ctx, args[1:], stdout, stderr)
	case "drive":
		return driveCmd(ctx, args[1:], stdout, stderr)
	case cmdObserve:
		return observeCmd(ctx, args[1:], stdout, stderr)
	case cmdYCSBLoad, cmdYCSBVerify, cmdYCSBRun:
		return ycsbMain(ctx, args[0], args[1:], stdout, stderr, getenv)
	case cmdFio:
		return fioCmd(ctx, args[1:], stdout, stderr)
	}
	c.phase = args[0]
	switch c.phase {
	case benchresult.PhasePrepare, benchresult.PhaseVerify, benchresult.PhaseRun, benchresult.PhaseCleanup:
	case "help":
		usage(stdout, fs)
		return 0
	default:
		fmt.Fprintf(stderr, "znsbench: unknown subcommand %q\n", c.phase)
		usage(stderr, fs)
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		fmt.Fprintf(stderr, "znsbench %s: %v\n", c.phase, err)
		usage(stderr, fs)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "znsbench %s: unexpected arguments %q\n", c.phase, fs.Args())
		return 2
	}
	if err := checkPhaseFlags(c); err != nil {
		fmt.Fprintf(stderr, "znsbench %s: %v\n", c.phase, err)
		return 2
	}
	c.password = getenv(PasswordVar)
	if n := len([]rune(c.password)); n > 0 && n < minPasswordLength {
		fmt.Fprintf(stderr, "znsbench %s: $%s has %d character(s); at least %d are needed, because the runner replaces the password wherever it would print it, and a shorter one would also blank out ordinary text\n",
			c.phase, PasswordVar, n, minPasswordLength)
		return 2
	}
	r := &runner{cfg: c, stdout: stdout, stderr: stderr, redact: newRedactor(c.password),
		now: time.Now, sleep: sleepCtx, environ: os.Environ}
	r.devices = r.newDeviceSampler()
	return r.main(ctx)
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// defaultConnectTimeout is how long a runner retries its first connection. A database counts as Available when
// its pod is ready, and the Service reaches it once kube-proxy has the new endpoint: on the zoned node under
// QEMU's emulation a prepare right after the bulk-load profile's restart could not connect for the 30 s this
// used to be (ConnectionFailed, MyRocks on zoned XFS, 2026-11-27). Waiting costs nothing when the server answers.
const defaultConnectTimeout = 2 * time.Minute

// waitForStart is the barrier: sleep until startAt, or fail when it has
// passed by more than tolerance, since starting late would run this target
// unsynchronised with the others and skew a multi-tenant comparison.
func waitForStart(ctx context.Context, startAt time.Time, tolerance time.Duration,
	now func() time.Time, sleep func(context.Context, time.Duration) error) error {
	if startAt.IsZero() {
		return nil
	}
	late := now().Sub(startAt)
	if late > tolerance {
		return fmt.Errorf("start barrier %s missed by %s (tolerance %s): refusing to run unsynchronised with the other targets",
			startAt.UTC().Format(time.RFC3339), late.Round(time.Millisecond), tolerance)
	}
	if late < 0 {
		if err := sleep(ctx, -late); err != nil {
			return fmt.Errorf("interrupted while waiting for the start barrier %s: %w", startAt.UTC().Format(time.RFC3339), err)
		}
	}
	return nil
}

// minPasswordLength matches the operator's v1alpha1.MinPasswordLength; the runner does not import the API.
const minPasswordLength = 8

// redactor hides the password in everything the runner prints or reports. It replaces the password as a
// whole, never parts of it; Main refuses passwords shorter than minPasswordLength, with which whole-word
// replacement would still blank out ordinary text ("x" in "exit").
type redactor struct{ secret string }

const redacted = "<redacted>"

func newRedactor(secret string) redactor { return redactor{secret: secret} }

func (r redactor) String(s string) string {
	if r.secret == "" {
		return s
	}
	return strings.ReplaceAll(s, r.secret, redacted)
}
