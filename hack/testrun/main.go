// Command testrun is `make test`: what hack/test.sh was, in Go. hack/test.sh builds it and hands its command
// line over (hack/test.sh --help lists the stages and every knob). It runs the eight stages one after the
// other, each announced with a banner and timed in a stage log; starts the long builds side by side as
// background jobs it tracks by their process and waits for with progress lines; pipes the test stages
// (6 to 8) through hack/testsummary; and undoes what it set up (its kind cluster, a loop device, the zoned
// node) when it ends, fails or is interrupted. The commands it runs are the same shell scripts as before.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

const (
	stageCount = 8
	// e2ePackage is the e2e suite's: stage 6 runs every other package, stages 7 and 8 this one.
	e2ePackage = "github.com/zns-mysql/zns-mysql/test/e2e"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if err := parseArgs(args); errors.Is(err, errHelp) {
		fmt.Print(usage)
		return 0
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "test: ERROR: %v\n", err)
		return 2
	}
	cfg, err := parseConfig(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "test: ERROR: %v\n", err)
		return 1
	}
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(os.Stderr, "test: ERROR: %v\n", err)
		return 1
	}
	r := newRunner(cfg, root, os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	r.handleSignals()
	code := r.main()
	r.procs.gate()
	r.finish()
	return code
}

// runner is one run: its configuration, where it writes, what it started, and what the stages found out for
// the later ones.
type runner struct {
	cfg            Config
	root           string // the repository: the commands run there
	env            *environ
	stdin          *os.File
	stdout, stderr io.Writer // the terminal's
	out            outputs   // the runner's and its commands' outputs of the moment
	procs          procs
	jobs           jobs
	cleanups       cleanups
	stages         *Stages
	now            func() time.Time
	ticker         func(time.Duration) (<-chan time.Time, func())
	killGrace      time.Duration // how long a background job's process group has between TERM and KILL
	loopDir        string        // where the refusal test's loop device file goes: /var/tmp

	dockerOK     bool
	mode         e2eMode
	why          string // why there is no e2e cluster
	logs         string // the background builds' logs
	bg           map[string]*job
	helm, assets string // what stage 4 built
	qemuRC       int    // the QEMU guest build's status
	zloop        *job   // build-zloop-module.sh, when it runs
	summary      string // hack/testsummary's binary
	packages     []string
	cluster      *cleanupFunc // deletes the kind cluster the run created
}

func newRunner(cfg Config, root string, environ []string, stdin *os.File, stdout, stderr io.Writer) *runner {
	r := &runner{cfg: cfg, root: root, env: newEnviron(environ), stdin: stdin, stdout: stdout, stderr: stderr,
		now: time.Now, killGrace: 5 * time.Second, loopDir: "/var/tmp", bg: map[string]*job{}, logs: filepath.Join(cfg.CacheRoot, "last-test-logs"),
		summary: filepath.Join(cfg.CacheRoot, "tools", "testsummary")}
	r.ticker = func(d time.Duration) (<-chan time.Time, func()) {
		t := time.NewTicker(d)
		return t.C, t.Stop
	}
	r.out.set(stdout, stderr)
	r.stages = &Stages{Total: stageCount, Log: filepath.Join(cfg.CacheRoot, "last-test-stages.tsv"), Start: r.now(),
		Now: func() time.Time { return r.now() }, Out: r.out.stderr, Gate: r.procs.gate}
	return r
}

// main runs the stages and returns the run's exit status.
func (r *runner) main() int {
	if err := r.prepare(); err != nil {
		return r.stages.Report(0, err)
	}
	for _, s := range []struct {
		n    int
		name string
		body func() error
	}{
		{1, "Debian packages (hack/install-deps.sh)", r.debianPackages},
		{2, "Go modules (go mod download)", r.goModules},
		{3, "generated files, gofmt, go vet, shellcheck, staticcheck", r.checks},
		{4, buildsName(r.mode, r.dockerOK), r.builds},
		{5, "waiting for the background builds", r.waitBuilds},
	} {
		if rc := r.stages.Run(s.n, s.name, s.body); rc != 0 {
			return rc
		}
	}
	if err := r.prepareTests(); err != nil {
		return r.stages.Report(6, err)
	}
	return r.tests()
}
