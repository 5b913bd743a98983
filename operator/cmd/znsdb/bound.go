package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// execBoundedCmd is the hidden subcommand through which znsdb runs zenfs:
// `znsdb exec-bounded --data-bytes N -- PROGRAM ARGS...` sets RLIMIT_DATA to
// N and execs PROGRAM in its place. os/exec cannot set a limit on a child
// alone, and setting it on znsdb itself would bound the helper's own
// memory (the metrics server runs for days); exec keeps the pid, so the
// caller sees PROGRAM's own exit status and signal.
const execBoundedCmd = "exec-bounded"

// boundedRunner runs every command through execBoundedCmd of the binary
// self, under a data limit of dataBytes (zenfs.MemoryLimitBytes for zenfs).
type boundedRunner struct {
	inner     Runner
	self      string
	dataBytes uint64
}

// newZenFSRunner bounds the zenfs commands of this process (see
// zenfs.MemoryLimitBytes for the size and why RLIMIT_DATA).
func newZenFSRunner(inner Runner) Runner {
	self, err := os.Executable()
	if err != nil {
		return failingRunner{fmt.Errorf("zenfs is run under a memory bound through this helper, whose own path is unknown: %w", err)}
	}
	return boundedRunner{inner: inner, self: self, dataBytes: zenfs.MemoryLimitBytes}
}

func (b boundedRunner) Run(ctx context.Context, name string, args ...string) (string, string, error) {
	// Resolved here, so that a missing program fails as os/exec reports it
	// (an *exec.Error, which zenfs.Classify names ZenFSMissing), not as an
	// exit of the wrapper.
	path, err := exec.LookPath(name)
	if err != nil {
		return "", "", err
	}
	wrapped := append([]string{execBoundedCmd, "--data-bytes", strconv.FormatUint(b.dataBytes, 10), "--", path}, args...)
	return b.inner.Run(ctx, b.self, wrapped...)
}

// failingRunner runs nothing: the bound cannot be set, and zenfs is not run without it.
type failingRunner struct{ err error }

func (f failingRunner) Run(context.Context, string, ...string) (string, string, error) {
	return "", "", f.err
}

// execBounded is execBoundedCmd: it returns only when it could not exec.
func execBounded(args []string, d deps) int {
	fs := flag.NewFlagSet(execBoundedCmd, flag.ContinueOnError)
	fs.SetOutput(d.stderr)
	dataBytes := fs.Uint64("data-bytes", 0, "RLIMIT_DATA of the program, in bytes")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	argv := fs.Args()
	if len(argv) == 0 || *dataBytes == 0 {
		fmt.Fprintln(d.stderr, "usage: znsdb exec-bounded --data-bytes N -- PROGRAM [ARGS...]")
		return exitUsage
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(d.stderr, "znsdb exec-bounded: %v\n", err)
		return 127 // a shell's "command not found"
	}
	err = setLimitAndExec(path, argv, os.Environ(), *dataBytes)
	if errors.As(err, new(limitError)) {
		fmt.Fprintf(d.stderr, "znsdb exec-bounded: %v\n", err)
		return exitRefused
	}
	fmt.Fprintf(d.stderr, "znsdb exec-bounded: exec %s: %v\n", path, err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126 // a shell's "cannot execute"
}

// limitError is a failure to read or set the limit, before any exec.
type limitError struct{ error }

// setLimitAndExec sets RLIMIT_DATA and execs path, returning only on error.
// Once the limit is set, the Go runtime of this process cannot map more
// memory either: a garbage collection starting in between (its mark workers
// need new stacks) died with "runtime: cannot allocate memory" about once in
// twenty runs. So everything exec needs is allocated first, collection is
// switched off, and nothing between the two system calls allocates.
func setLimitAndExec(path string, argv, env []string, dataBytes uint64) error {
	pathp, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &lim); err != nil {
		return limitError{fmt.Errorf("reading RLIMIT_DATA: %w", err)}
	}
	// A stricter limit set from outside stays; raising it would need privilege.
	lim.Cur, lim.Max = min(dataBytes, lim.Max), min(dataBytes, lim.Max)
	runtime.LockOSThread()
	gcPercent := debug.SetGCPercent(-1) // returns once no collection is running
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, uintptr(syscall.RLIMIT_DATA), uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		debug.SetGCPercent(gcPercent)
		runtime.UnlockOSThread()
		return limitError{fmt.Errorf("setting RLIMIT_DATA to %d bytes: %w", dataBytes, e)}
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(pathp)), uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	return e
}
