// Package qemu boots the project's QEMU test guest (hack/qemu): Debian's own
// kernel under software emulation, where null_blk zoned devices and emulated
// NVMe ZNS namespaces exist even though the host kernel has no zoned support.
//
// Require builds the guest once (it is cached across runs) or skips the test
// with the reason; Run boots it, runs one command inside with a host
// directory shared at the same path, and returns the command's output and
// exit status.
package qemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireEnv, set to 1, turns every skip of Require into a failure: for CI,
// where a missing package must not pass as a skipped tier.
const RequireEnv = "ZNS_REQUIRE_QEMU"

// Exit statuses of hack/qemu/run.sh that are not the command's own.
const (
	ExitTimeout = 124
	ExitNoRun   = 125
)

// Options say how to boot the guest for one command.
type Options struct {
	// Share is a host directory mounted in the guest at the same path (and
	// at /host). The command starts there.
	Share string
	// NullBlk lists argument strings for `nullblk-zoned.sh create`, run in
	// the guest before the command, e.g. "--size 4096 --zone-size 64".
	NullBlk []string
	// ZNS lists emulated NVMe ZNS namespaces to attach: "default" or
	// key=value pairs (see hack/qemu/run.sh). The first is nvme0n1.
	ZNS []string
	// NVMe lists conventional emulated NVMe namespaces to attach, each on
	// a controller of its own: "default" or key=value pairs over size=1G,
	// lbs=4096,ocp=on,fdp=off (see hack/qemu/run.sh). They come after the
	// ZNS ones: with one ZNS namespace, the first here is nvme1n1.
	NVMe []string
	// Disks lists files attached as virtio disks, /dev/vda onwards: "FILE",
	// or "FILE,snapshot" to drop the guest's writes.
	Disks []string
	// Env holds NAME=VALUE pairs exported in the guest.
	Env []string
	// MemoryMiB is the guest's memory; 0 means run.sh's default.
	MemoryMiB int
	// Timeout bounds the whole boot; 0 means 5 minutes.
	Timeout time.Duration
	// Userland runs the command in the host's own root on the guest's kernel (run.sh --userland): what the
	// host has installed (MariaDB, mkfs.btrfs, blkid) is there.
	Userland bool
}

var (
	buildOnce  sync.Once
	guestDir   string
	skipReason string
	buildErr   error
)

// Require skips t, with a one-line reason naming what is missing, when the
// guest cannot run here: no qemu-system-x86_64, a host tool or Debian package
// the build needs, or the pinned kernel package. Any other build failure
// fails t. It returns the built guest's directory. With ZNS_REQUIRE_QEMU=1 a
// skip becomes a failure.
func Require(t testing.TB) string {
	t.Helper()
	buildOnce.Do(build)
	switch {
	case skipReason != "" && os.Getenv(RequireEnv) == "1":
		t.Fatalf("QEMU guest required (%s=1) but unavailable: %s", RequireEnv, skipReason)
	case skipReason != "":
		t.Skip("QEMU guest tier: " + skipReason)
	case buildErr != nil:
		t.Fatalf("building the QEMU guest: %v", buildErr)
	}
	return guestDir
}

func build() {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		skipReason = "needs linux/amd64 (the guest reuses the host's x86-64 fio and bash)"
		return
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		skipReason = "needs qemu-system-x86_64 (Debian package qemu-system-x86)"
		return
	}
	root, err := RepoRoot()
	if err != nil {
		buildErr = err
		return
	}
	cmd := exec.Command(filepath.Join(root, "hack/qemu/build-guest.sh"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		skipReason = lastLine(stderr.String())
	case err != nil:
		buildErr = fmt.Errorf("hack/qemu/build-guest.sh: %v\n%s", err, stderr.String())
	default:
		guestDir = strings.TrimSpace(stdout.String())
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimPrefix(s, "build-guest: MISSING: ")
}

// NVMeLogsSupported says whether the qemu-system-x86_64 on PATH emulates
// what hack/qemu/run.sh --nvme asks for by default and with fdp=on: the OCP
// SMART extended log and Flexible Data Placement (QEMU 10 has both, Debian
// bookworm's 7.2 neither).
// It returns nil, or why not.
func NVMeLogsSupported() error {
	for _, probe := range []struct{ device, prop, what string }{
		{"nvme", "ocp=", "the OCP SMART extended log"},
		{"nvme-subsys", "fdp=", "Flexible Data Placement"},
	} {
		out, err := exec.Command("qemu-system-x86_64", "-device", probe.device+",help").CombinedOutput()
		if err != nil {
			return fmt.Errorf("qemu-system-x86_64 -device %s,help: %v", probe.device, err)
		}
		found := false
		for _, l := range strings.Split(string(out), "\n") {
			found = found || strings.HasPrefix(strings.TrimSpace(l), probe.prop)
		}
		if !found {
			v, _ := exec.Command("qemu-system-x86_64", "--version").Output()
			return fmt.Errorf("%s does not emulate %s: hack/install-deps.sh installs versions.mk's QEMU_VERSION",
				strings.SplitN(strings.TrimSpace(string(v)), "\n", 2)[0], probe.what)
		}
	}
	return nil
}

// RepoRoot is the directory of the project's go.mod, found upward from the
// working directory (go test runs in the package's directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/zns-mysql/zns-mysql\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of github.com/zns-mysql/zns-mysql above the working directory")
		}
		dir = parent
	}
}

// Run boots the guest and runs cmd in it. It returns the command's combined
// stdout and stderr and its exit status; it fails t when the guest did not
// run the command at all (boot failure, timeout, a NullBlk set-up that
// failed). run.sh's own log (timings) goes to t.Log.
func Run(t testing.TB, opts Options, cmd ...string) (output string, exit int) {
	t.Helper()
	dir := Require(t)
	res, err := run(dir, opts, cmd...)
	if res.log != "" {
		t.Log(strings.TrimSpace(res.log))
	}
	if err != nil {
		t.Fatalf("%v\noutput so far:\n%s", err, res.output)
	}
	switch res.exit {
	case ExitTimeout, ExitNoRun:
		t.Fatalf("the guest did not run %q to its end (run.sh exit %d); see the log above\noutput:\n%s",
			cmd, res.exit, res.output)
	}
	return res.output, res.exit
}

type result struct {
	output, log string
	exit        int
}

// Args is the hack/qemu/run.sh command line for opts and cmd.
func Args(guestDir string, opts Options, cmd ...string) ([]string, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	if len(cmd) == 0 {
		return nil, errors.New("no command to run in the guest")
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	args := []string{filepath.Join(root, "hack/qemu/run.sh"), "--guest-dir", guestDir,
		"--timeout", strconv.Itoa(int((timeout + time.Second - 1) / time.Second))}
	if opts.Share != "" {
		args = append(args, "--share", opts.Share)
	}
	for _, n := range opts.NullBlk {
		args = append(args, "--nullblk", n)
	}
	for _, z := range opts.ZNS {
		args = append(args, "--zns", z)
	}
	for _, n := range opts.NVMe {
		args = append(args, "--nvme", n)
	}
	for _, d := range opts.Disks {
		args = append(args, "--disk", d)
	}
	for _, e := range opts.Env {
		if !strings.Contains(e, "=") {
			return nil, fmt.Errorf("env %q is not NAME=VALUE", e)
		}
		args = append(args, "--env", e)
	}
	if opts.MemoryMiB > 0 {
		args = append(args, "--mem", strconv.Itoa(opts.MemoryMiB))
	}
	if opts.Userland {
		args = append(args, "--userland")
	}
	return append(append(args, "--"), cmd...), nil
}

func run(guestDir string, opts Options, cmd ...string) (result, error) {
	args, err := Args(guestDir, opts, cmd...)
	if err != nil {
		return result{}, err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	// run.sh enforces the timeout itself; this one only catches run.sh hanging.
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	if opts.Share != "" {
		c.Dir = opts.Share
	}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err = c.Run()
	res := result{output: stdout.String(), log: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.exit = ee.ExitCode()
	case err != nil:
		return res, fmt.Errorf("hack/qemu/run.sh: %w", err)
	}
	return res, nil
}
