// Command znsdb is the database-side helper of zns-mysql. It runs in the
// MySQL pod and in the operator's Jobs: it checks the device (preflight) and
// formats it when the policy allows (format: ZenFS, zoned btrfs or f2fs, or
// ext4 or xfs on a conventional device, which it may precondition with fio
// first); as a probe it checks that mysqld answers, and on a ZenFS database
// that MyRocks runs on the device (health). Every zenfs command it runs is
// under a memory bound (exec-bounded).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Exit codes.
const (
	exitOK      = 0
	exitRefused = 1 // the device is unfit, the format was refused or failed, mysqld is unhealthy
	exitUsage   = 2
)

const usage = `usage: znsdb <command> [flags]

commands:
  preflight  check that a device is fit: a zoned one for ZenFS (or zoned btrfs, f2fs), a conventional
             one for ext4 or xfs (--filesystem)
  format     preflight, then format the device if the policy allows (a conventional device may be
             preconditioned with fio first: --precondition)
  health     check that mysqld answers with a protocol-10 handshake; on a ZenFS database also that its
             rocksdb_fs_uri is the device's, and refresh the ZenFS space on the pod
  mycnf      print the mysqld configuration the operator would generate (for hand-run labs and demos)
  metrics    serve the database's zoned figures (zones, ZenFS space, device bytes, datadir) for Prometheus
  exec-bounded
             (internal) run a program under a data memory limit: how znsdb runs zenfs

Run znsdb <command> -h for its flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], hostDeps()))
}

// hostDeps are the helper's ties to the machine it runs on.
func hostDeps() deps {
	return deps{
		runner:  execRunner{},
		zenfs:   newZenFSRunner(execRunner{}),
		devices: hostDevices{},
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		getenv:  os.Getenv,
	}
}

// deps are the helper's ties to the machine; tests replace them.
type deps struct {
	runner Runner
	// zenfs runs the zenfs utility, under a memory bound (newZenFSRunner);
	// nil means runner, for tests whose runner is a fake.
	zenfs   Runner
	devices Devices
	stdout  io.Writer
	stderr  io.Writer
	getenv  func(string) string
	// now and annotate default to the clock and the in-cluster API.
	now      func() time.Time
	annotate Annotator
	// askFSURI defaults to asking mysqld over the MySQL protocol.
	askFSURI fsURIAsker
	// kernelRelease defaults to reading the node's uname -r, lookPath to exec.LookPath.
	kernelRelease func() (string, error)
	lookPath      func(string) (string, error)
}

func (d deps) clock() time.Time {
	if d.now == nil {
		return time.Now()
	}
	return d.now()
}

// zenfsRunner is what every zenfs command runs through.
func (d deps) zenfsRunner() Runner {
	if d.zenfs == nil {
		return d.runner
	}
	return d.zenfs
}

func (d deps) annotator() Annotator {
	if d.annotate == nil {
		return inClusterAnnotator{getenv: d.getenv}
	}
	return d.annotate
}

func run(ctx context.Context, args []string, d deps) int {
	if len(args) == 0 {
		fmt.Fprint(d.stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "preflight":
		return preflightCmd(ctx, args[1:], d)
	case "format":
		return formatCmd(ctx, args[1:], d)
	case "health":
		return healthCmd(ctx, args[1:], d)
	case "mycnf":
		return mycnfCmd(args[1:], d)
	case "metrics":
		return metricsCmd(ctx, args[1:], d)
	case execBoundedCmd:
		return execBounded(args[1:], d)
	case "-h", "--help", "help":
		fmt.Fprint(d.stdout, usage)
		return exitOK
	}
	fmt.Fprintf(d.stderr, "znsdb: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}
