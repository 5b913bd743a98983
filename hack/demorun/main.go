// Command demorun is `make demo`: what hack/demo.sh was, in Go. hack/demo.sh builds it and hands its command
// line over (hack/demo.sh --help lists the steps and every knob). It decides which parts this machine can run
// (the zoned part here, on a QEMU node, or the conventional part only), brings up a kind cluster while the
// images and helm build beside it as background jobs it tracks by their process, installs the chart, applies
// the scenario's databases and a Benchmark, waits for them with progress lines, and prints the comparison and
// a table of the timings. The commands it runs are the same shell scripts as before; the cluster and the
// devices stay up afterwards (hack/demo.sh clean removes them).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the command: its arguments and knobs checked (exit 2 when they are wrong, as demo.sh did), then the
// demo or clean; it returns the exit status.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	act, err := parseArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if act == showHelp {
		fmt.Fprint(stdout, usage)
		return 0
	}
	cfg, err := parseConfig(getenv)
	if act == cleanDemo {
		// clean needs no other knob than the cache: a demo that was given bad ones can still be cleaned up
		cfg = Config{}
		cfg.CacheRoot, err = stagerun.CacheRoot(getenv)
	}
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return 2
	}
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "demo: ERROR: %v\n", err)
		return 1
	}
	d := newDemo(cfg, root, os.Environ(), os.Stdin, stdout, stderr)
	d.HandleSignals()
	if act == cleanDemo {
		return d.end(d.clean)
	}
	return d.end(d.main)
}

// demo is one run: the commands, outputs and background jobs (stagerun), the configuration, the timings, and
// what the steps found out for the later ones.
type demo struct {
	*stagerun.Runner
	cfg     Config
	start   time.Time
	timings []string
	isBlock func(string) bool // bash's [[ -b ]], or a test's
	poll    time.Duration     // between two looks at the Benchmark
	sleep   func(time.Duration)
	cpus    int // nproc's
	pid     int // the run's, which owns the QEMU node while it uses it

	zonedWhy, nodeWhy  string   // why the zoned part does not run here, on the QEMU node
	images             []string // hack/images/build.sh's targets
	devices            []string // the null_blk devices, when the zoned part runs here
	imagesJob, helmJob *stagerun.Job
	helm               string // the helm binary hack/helm.sh built
	kubeconfig, tag    string // the kind cluster's, and the images' there
	kindNS, kindBench  string // for the hint at the end
}

func newDemo(cfg Config, root string, environ []string, stdin *os.File, stdout, stderr io.Writer) *demo {
	d := &demo{Runner: stagerun.New("demo", root, environ, stdin, stdout, stderr), cfg: cfg,
		isBlock: stagerun.BlockDevice, poll: 3 * time.Second, sleep: time.Sleep,
		cpus: runtime.NumCPU(), pid: os.Getpid()}
	if cfg.ProgressEvery > 0 { // clean has no progress lines
		d.ProgressEvery = cfg.ProgressEvery
	}
	d.InterruptNote = "killing the background builds (what the demo set up stays: make demo-clean removes it)"
	d.start = d.Now()
	return d
}

// end runs body (the demo, or clean) to its end: a failure is said with what to do, then the background jobs
// still running are killed, as demo.sh's EXIT trap did (HandleSignals does the same on SIGINT and SIGTERM).
// It returns the exit status.
func (d *demo) end(body func() error) int {
	err := body()
	d.Procs.Gate()
	code := 0
	if err != nil {
		fmt.Fprintf(d.Out.Stderr(), "demo: ERROR: %v\n", err)
		code = 1
	}
	d.Finish()
	return code
}

// say is a banner a person can find in the output, with the time since the start.
func (d *demo) say(format string, a ...any) {
	fmt.Fprintf(d.Out.Stderr(), "\n==> %s (%ds since the start)\n", fmt.Sprintf(format, a...), d.elapsed())
}

// print writes to the demo's stdout: the tables and what they mean.
func (d *demo) print(format string, a ...any) {
	out, _ := d.Out.Get()
	fmt.Fprintf(out, format, a...)
}

// elapsed is the whole seconds since the start.
func (d *demo) elapsed() int { return d.since(d.start) }

func (d *demo) since(t0 time.Time) int { return int(d.Now().Sub(t0) / time.Second) }

// record remembers how long name took since t0, for the timings table.
func (d *demo) record(name string, t0 time.Time) {
	d.timings = append(d.timings, timingLine(name, d.since(t0)))
}

// timed runs step and, when it succeeds, records how long it took.
func (d *demo) timed(name string, step func() error) error {
	t0 := d.Now()
	if err := step(); err != nil {
		return err
	}
	d.record(name, t0)
	return nil
}

// errFailed is a step's failure whose command said why, and which the caller names.
var errFailed = errors.New("failed")
