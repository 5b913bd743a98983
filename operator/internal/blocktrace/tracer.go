package blocktrace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Where tracefs is found: its own mount point (4.1+, what systemd mounts),
// then the one debugfs mounts on demand.
const (
	DefaultTracefs = "/sys/kernel/tracing"
	DebugfsTracing = "/sys/kernel/debug/tracing"
)

// DefaultBufferSizeKB is the ring buffer of the capture's instance, per
// CPU. A block_rq_complete event takes 52 bytes of it (the 6.1 record of
// 48 bytes and a 4-byte header), so 4 MiB holds about 80,000 events of one
// CPU: most of a second of 100,000 completions per second on that CPU if
// the reader stalls, several seconds of what a busy database sends one
// drive. The kernel allocates it for every CPU: 4 MiB x 64 CPUs is 256 MiB
// of kernel memory for the capture's lifetime; Options.BufferSizeKB lowers
// it.
const DefaultBufferSizeKB = 4096

// DefaultPollInterval is how long the reader sleeps when trace_pipe is
// empty. The buffer must hold this long's events; it bounds Stop's wait.
const DefaultPollInterval = 10 * time.Millisecond

// Options say what to capture.
type Options struct {
	// Device is the kernel name of a whole disk: nvme0n1, nullb1 (the
	// tracepoints report partitions' requests under their disk).
	Device string
	// Tracefs is where tracefs is mounted; empty tries DefaultTracefs,
	// then DebugfsTracing.
	Tracefs string
	// SysBlock is sysfs's block directory; empty means /sys/block.
	SysBlock string
	// BufferSizeKB is the instance's ring buffer per CPU; 0 means
	// DefaultBufferSizeKB.
	BufferSizeKB int
	// PollInterval: 0 means DefaultPollInterval.
	PollInterval time.Duration
	// Text, when set, receives the trace_pipe text as it is read, whole
	// lines, in order (to record a capture). It runs on the reader
	// goroutine, like the event callback: a slow one loses events.
	Text io.Writer
}

// Errors that say what is missing; the messages say what to do.
var (
	ErrNoTracefs     = errors.New("blocktrace: tracefs is not mounted")
	ErrNotPermitted  = errors.New("blocktrace: not permitted to use tracefs")
	ErrNoBlockEvents = errors.New("blocktrace: the kernel has no block:block_rq_complete trace event")
	ErrNoDevice      = errors.New("blocktrace: no such whole disk")
	ErrUnsupported   = errors.New("blocktrace: capturing needs Linux")
)

// Filter is the event filter that keeps one device's requests: the
// tracepoints' dev field holds the kernel's dev_t.
func Filter(d Dev) string { return "dev == " + strconv.FormatUint(uint64(d.KernelDevT()), 10) }

// InstanceName is a new tracing instance's name: zns-, the device, the
// process and 8 random hex digits (two pods' processes may share a PID).
func InstanceName(device string) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails on Linux
	return fmt.Sprintf("zns-%s-%d-%s", device, os.Getpid(), hex.EncodeToString(b[:]))
}

// DeviceNumber reads <sysBlock>/<name>/dev. name must be a whole disk.
func DeviceNumber(sysBlock, name string) (Dev, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return Dev{}, fmt.Errorf("%w: %q is not a kernel device name (e.g. nvme0n1)", ErrNoDevice, name)
	}
	b, err := os.ReadFile(filepath.Join(sysBlock, name, "dev"))
	if errors.Is(err, fs.ErrNotExist) {
		return Dev{}, fmt.Errorf("%w: %s has no %s/dev (a partition? trace its disk)", ErrNoDevice, name, filepath.Join(sysBlock, name))
	}
	if err != nil {
		return Dev{}, fmt.Errorf("blocktrace: %w", err)
	}
	return ParseDev(string(b))
}

// FindTracefs returns the first of dirs (DefaultTracefs, DebugfsTracing
// when none is given) where tracefs is mounted: it has an instances
// directory.
func FindTracefs(dirs ...string) (string, error) {
	if len(dirs) == 0 {
		dirs = []string{DefaultTracefs, DebugfsTracing}
	}
	var denied error
	for _, d := range dirs {
		st, err := os.Stat(filepath.Join(d, "instances"))
		if err == nil && st.IsDir() {
			return d, nil
		}
		if errors.Is(err, fs.ErrPermission) && denied == nil {
			denied = describe("look into", d, err)
		}
	}
	if denied != nil {
		return "", denied
	}
	return "", fmt.Errorf("%w at %s: mount it as root (mount -t tracefs nodev %s); in a pod, mount the host's %s "+
		"(a hostPath volume) and name that path", ErrNoTracefs, strings.Join(dirs, " or "), DefaultTracefs, DefaultTracefs)
}

// describe wraps a tracefs error with what it means.
func describe(op, path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: %s %s: %v: tracefs is root's (directories 0700/0750, files 0640): run as uid 0 of "+
			"the host's user namespace; a refusal to root is the kernel's lockdown or a security module (AppArmor, "+
			"SELinux) denying tracefs", ErrNotPermitted, op, path, unwrapPath(err))
	}
	return fmt.Errorf("blocktrace: %s %s: %v", op, path, unwrapPath(err))
}

// unwrapPath drops the *PathError's own copy of the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parseStats reads a per_cpu/cpuN/stats file's overrun and dropped events.
func parseStats(s string) (overrun, dropped uint64, err error) {
	var seen int
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch k {
		case "overrun":
			dst = &overrun
		case "dropped events":
			dst = &dropped
		default:
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("blocktrace: stats %q: %v", line, err)
		}
		*dst = n
		seen++
	}
	if seen != 2 {
		return 0, 0, fmt.Errorf("blocktrace: no overrun and dropped events in the stats:\n%s", s)
	}
	return overrun, dropped, nil
}
