package zenfs

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
)

// Reason is a stable name for why a zenfs command failed, for machines (a
// condition reason); Failure.Message says it for a person.
type Reason string

// Reasons, from what the real zenfs utility (v2.1.0-65) prints; the captures
// under testdata/real hold one example of each.
const (
	// ReasonBusy: another process holds the device open exclusively (a
	// running RocksDB/mysqld, another zenfs, a mount).
	ReasonBusy Reason = "DeviceBusy"
	// ReasonNoSuchDevice: there is no /dev/<name>.
	ReasonNoSuchDevice Reason = "NoSuchDevice"
	// ReasonNotZoned: libzbd refused to open the device as zoned (a
	// conventional device gives EINVAL).
	ReasonNotZoned Reason = "NotZoned"
	// ReasonTooFewZones: fewer zones than ZENFS_MIN_ZONES.
	ReasonTooFewZones Reason = "TooFewZones"
	// ReasonWrongScheduler: the device's I/O scheduler is not mq-deadline.
	ReasonWrongScheduler Reason = "WrongScheduler"
	// ReasonAuxPath: the aux directory is not usable (not empty, not a
	// directory, its parent missing, too long, not given).
	ReasonAuxPath Reason = "AuxPathProblem"
	// ReasonExistingFileSystem: mkfs without --force found a ZenFS.
	ReasonExistingFileSystem Reason = "ExistingFileSystem"
	// ReasonUnformatted: no valid ZenFS superblock (df, list, ... on a device
	// that is not formatted).
	ReasonUnformatted Reason = "Unformatted"
	// ReasonAborted: zenfs died on SIGABRT (exit 134 under a shell); seen as
	// std::bad_alloc when the first meta zone starts with non-ZenFS bytes whose
	// record length word is huge, or past the helper's memory bound
	// (MemoryLimitBytes). A failed assertion aborts the same way.
	ReasonAborted Reason = "ZenFSAborted"
	// ReasonKilled: zenfs died on SIGKILL (exit 137 under a shell): the
	// kernel's OOM killer (a whole node's, or a container's memory limit) or
	// a person. Nothing of zenfs's own is on stderr then.
	ReasonKilled Reason = "ZenFSKilled"
	// ReasonSignaled: zenfs died on any other signal (SIGSEGV, SIGBUS, ...),
	// named in the message.
	ReasonSignaled Reason = "ZenFSSignaled"
	// ReasonTimedOut: the helper stopped zenfs because it took longer than
	// allowed (the readiness probe's df); set by the caller, which knows its
	// deadline, since the process only shows a SIGKILL.
	ReasonTimedOut Reason = "ZenFSTimedOut"
	// ReasonNoBinary: the zenfs utility could not be started at all.
	ReasonNoBinary Reason = "ZenFSMissing"
	// ReasonUsage: zenfs rejected its command line, which the helper builds:
	// a bug in the helper (or a zenfs with other flags).
	ReasonUsage Reason = "ZenFSUsage"
	// ReasonUnknown: anything else; the message carries zenfs's own words.
	ReasonUnknown Reason = "ZenFSFailed"
)

// Failure is a classified zenfs failure.
type Failure struct {
	Reason Reason
	// Message says what happened and what to do, with zenfs's own first
	// stderr line at the end.
	Message string
}

func (f *Failure) Error() string { return f.Message }

// classifier matches zenfs's stderr; the first match wins, so the specific
// open errors come before anything looser.
type classifier struct {
	reason Reason
	match  []string // any of these substrings
	advice string   // {dev} names the device for a person, {kernel} is its kernel name (see advise)
}

// resetAdvice is what clears data that is not ZenFS from a metadata zone.
const resetAdvice = "No ZenFS is lost by that. Either reset that zone (`blkzone reset -o <zone start> -c 1 " +
	"/dev/{kernel}`, the first sequential zone in `blkzone report`) if nothing on the device is to be kept, or set " +
	"reformatToken to a new value: a confirmed reformat resets the device's zones before zenfs mkfs runs"

var classifiers = []classifier{
	{ReasonAborted, []string{"std::bad_alloc", "terminate called after throwing"},
		"zenfs aborted reading {dev}: it could not allocate memory (std::bad_alloc). Its first metadata zone " +
			"most likely holds data that is not ZenFS: zenfs takes a word of it as a record length and tries to " +
			"allocate that much, which fails at once or at the helper's memory bound for zenfs. " + resetAdvice},
	{ReasonBusy, []string{"Device or resource busy"},
		"{dev} is busy: another process holds it open exclusively (a mysqld/RocksDB still running on it, " +
			"another zenfs command, or a mount). Stop that process; nothing was changed"},
	{ReasonWrongScheduler, []string{"scheduler is not mq-deadline"},
		"{dev} does not use the mq-deadline I/O scheduler, which ZenFS requires: on the node run " +
			"`echo mq-deadline > /sys/block/{kernel}/queue/scheduler` (and keep it with a udev rule)"},
	{ReasonTooFewZones, []string{"To few zones", "Too few zones"},
		"{dev} has too few zones for ZenFS (it needs at least 32): use a larger device or smaller zones"},
	{ReasonNoSuchDevice, []string{"for read: No such file or directory"},
		"there is no /dev/{kernel} in the container: check the device name and that the device is passed into the pod"},
	{ReasonNotZoned, []string{"for read: Invalid argument"},
		"{dev} could not be opened as a zoned device (libzbd: invalid argument): it is not host-managed zoned; " +
			"use a zoned device, or a filesystem volume for a conventional one"},
	{ReasonAuxPath, []string{"Aux path ", "Aux directory ", "aux directory", "Aux filesystem path", "--aux_path"},
		"the ZenFS aux directory is not usable: it must be an absolute path shorter than 256 bytes to an empty, " +
			"writable directory whose parent exists"},
	{ReasonExistingFileSystem, []string{"Existing filesystem found"},
		"{dev} already holds ZenFS and zenfs mkfs refuses to replace it without --force; it is replaced only " +
			"when reformatToken is set to a new value"},
	{ReasonUnformatted, []string{"No valid superblock found"},
		"{dev} holds no ZenFS (no valid superblock)"},
	{ReasonUsage, []string{"unknown command line flag", "illegal value", "You need to specify", "Subcommand not recognized"},
		"zenfs rejected the command line the helper built for {dev}: the image's zenfs does not take the flags " +
			"this operator uses (report it with the image's zenfs version)"},
}

// Classify explains a failed zenfs run from its stderr and the error of the
// process (an *exec.ExitError, or anything whose text says how it ended).
// dev is the device's kernel name, for the advice; "" for commands that read
// every device of the node (ls-uuid).
func Classify(dev, stderr string, runErr error) *Failure {
	kernel, display := dev, dev
	if dev == "" {
		kernel, display = "<device>", "one of this node's zoned devices"
	}
	advise := strings.NewReplacer("{dev}", display, "{kernel}", kernel).Replace
	first := firstLine(stderr)
	if runErr != nil && isStartFailure(runErr) {
		return &Failure{ReasonNoBinary, fmt.Sprintf("the zenfs utility could not be run (%v): the image must "+
			"carry ZenFS's zenfs utility (the Percona ZenFS image has it at %s)", runErr, DefaultBinary)}
	}
	sig := signalOf(runErr)
	// A kill comes first: whatever zenfs printed before, the kill is why it
	// stopped, and its cause is outside zenfs.
	if sig == syscall.SIGKILL {
		return &Failure{ReasonKilled, withDetail(fmt.Sprintf("zenfs was killed (%s, exit %d) while reading %s: "+
			"the kernel's OOM killer or a memory limit stopped it, unless someone killed it by hand. On a device "+
			"whose first metadata zone holds data that is not ZenFS, zenfs takes a word of it as a record length "+
			"and allocates that much. ", signalName(sig), 128+int(sig), display)+advise(resetAdvice), first)}
	}
	for _, c := range classifiers {
		for _, m := range c.match {
			if strings.Contains(stderr, m) {
				return &Failure{c.reason, withDetail(advise(c.advice), first)}
			}
		}
	}
	switch {
	case sig == syscall.SIGABRT:
		return &Failure{ReasonAborted, withDetail(fmt.Sprintf("zenfs aborted (%s, exit %d) reading %s: an "+
			"allocation it could not make (data that is not ZenFS in the first metadata zone) or a failed internal "+
			"assertion; its own words, if any, follow. ", signalName(sig), 128+int(sig), display)+advise(resetAdvice), first)}
	case sig != 0:
		return &Failure{ReasonSignaled, withDetail(fmt.Sprintf("zenfs died on %s (%s, exit %d) reading %s: a "+
			"crash of zenfs itself; keep the device as it is and report it with the image's zenfs version",
			signalName(sig), sig, 128+int(sig), display), first)}
	}
	what := "zenfs failed"
	if runErr != nil {
		what = fmt.Sprintf("zenfs failed (%v)", runErr)
	}
	return &Failure{ReasonUnknown, withDetail(what, first)}
}

func withDetail(msg, zenfsSaid string) string {
	if zenfsSaid == "" {
		return msg + "."
	}
	return fmt.Sprintf("%s. zenfs said: %s", msg, zenfsSaid)
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// signalOf is the signal that ended the run, 0 for none: from the wait
// status of a process the runner started, from exit status 128+n when a
// shell ran zenfs (as in the captures), or from an error that only carries
// the text of either ("signal: killed", "exit status 137").
func signalOf(err error) syscall.Signal {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
		return shellSignal(ee.ExitCode())
	}
	text := err.Error()
	if i := strings.LastIndex(text, "signal: "); i >= 0 {
		desc := strings.TrimRight(text[i+len("signal: "):], ")")
		for n := syscall.Signal(1); n <= maxSignal; n++ {
			if n.String() == desc {
				return n
			}
		}
	}
	if i := strings.LastIndex(text, "exit status "); i >= 0 {
		var code int
		if _, err := fmt.Sscanf(text[i:], "exit status %d", &code); err == nil {
			return shellSignal(code)
		}
	}
	return 0
}

// maxSignal is the highest Linux signal number (SIGRTMAX).
const maxSignal = 64

// shellSignal reads a shell's exit status 128+n as signal n.
func shellSignal(code int) syscall.Signal {
	if code > 128 && code <= 128+maxSignal {
		return syscall.Signal(code - 128)
	}
	return 0
}

// signalNames are the signals a crashing or stopped program ends on.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

// signalName is the signal's C name, e.g. SIGSEGV.
func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

// isStartFailure: the process never ran (missing binary, not executable).
func isStartFailure(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return false
	}
	var pe *exec.Error
	return errors.As(err, &pe) || strings.HasPrefix(err.Error(), "fork/exec ")
}
