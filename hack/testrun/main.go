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

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
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
	r.HandleSignals()
	code := r.main()
	r.Procs.Gate()
	r.Finish()
	return code
}

// runner is one run: the commands, outputs, jobs and cleanups it shares with hack/demorun (stagerun), its
// configuration, and what the stages found out for the later ones.
type runner struct {
	*stagerun.Runner
	cfg     Config
	stages  *Stages
	loopDir string // where the refusal test's loop device file goes: /var/tmp

	dockerOK     bool
	mode         e2eMode
	why          string // why there is no e2e cluster
	logs         string // the background builds' logs
	bg           map[string]*stagerun.Job
	helm, assets string        // what stage 4 built
	qemuRC       int           // the QEMU guest build's status
	zloop        *stagerun.Job // build-zloop-module.sh, when it runs
	summary      string        // hack/testsummary's binary
	packages     []string
	cluster      *stagerun.CleanupFunc // deletes the kind cluster the run created
	node         *stagerun.CleanupFunc // stops the zoned node
}

func newRunner(cfg Config, root string, environ []string, stdin *os.File, stdout, stderr io.Writer) *runner {
	r := &runner{Runner: stagerun.New("test", root, environ, stdin, stdout, stderr), cfg: cfg, loopDir: "/var/tmp",
		bg: map[string]*stagerun.Job{}, logs: filepath.Join(cfg.CacheRoot, "last-test-logs"),
		summary: filepath.Join(cfg.CacheRoot, "tools", "testsummary")}
	r.ProgressEvery = cfg.ProgressEvery
	r.InterruptNote = "killing the background jobs, then undoing what the run set up"
	r.stages = &Stages{Total: stageCount, Log: filepath.Join(cfg.CacheRoot, "last-test-stages.tsv"), Start: r.Now(),
		Now: func() time.Time { return r.Now() }, Out: r.Out.Stderr, Gate: r.Procs.Gate}
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
