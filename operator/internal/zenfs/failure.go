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
	// ReasonAborted: zenfs died on SIGABRT; seen as std::bad_alloc when the
	// first meta zone starts with non-ZenFS bytes whose record length word is
	// huge.
	ReasonAborted Reason = "ZenFSAborted"
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
	advice string   // %[1]s is the device's kernel name
}

var classifiers = []classifier{
	{ReasonAborted, []string{"std::bad_alloc", "terminate called after throwing"},
		"zenfs aborted reading %[1]s: its first metadata zone holds data that is not ZenFS (zenfs takes a word " +
			"of it as a record length and fails to allocate that much). No ZenFS is lost here; setting a new " +
			"reformatToken resets the device's zones before formatting, which clears it"},
	{ReasonBusy, []string{"Device or resource busy"},
		"%[1]s is busy: another process holds it open exclusively (a mysqld/RocksDB still running on it, " +
			"another zenfs command, or a mount). Stop that process; nothing was changed"},
	{ReasonWrongScheduler, []string{"scheduler is not mq-deadline"},
		"%[1]s does not use the mq-deadline I/O scheduler, which ZenFS requires: on the node run " +
			"`echo mq-deadline > /sys/block/%[1]s/queue/scheduler` (and keep it with a udev rule)"},
	{ReasonTooFewZones, []string{"To few zones", "Too few zones"},
		"%[1]s has too few zones for ZenFS (it needs at least 32): use a larger device or smaller zones"},
	{ReasonNoSuchDevice, []string{"for read: No such file or directory"},
		"there is no /dev/%[1]s in the container: check the device name and that the device is passed into the pod"},
	{ReasonNotZoned, []string{"for read: Invalid argument"},
		"%[1]s could not be opened as a zoned device (libzbd: invalid argument): it is not host-managed zoned; " +
			"use a zoned device, or a filesystem volume for a conventional one"},
	{ReasonAuxPath, []string{"Aux path ", "Aux directory ", "aux directory", "Aux filesystem path", "--aux_path"},
		"the ZenFS aux directory is not usable: it must be an absolute path shorter than 256 bytes to an empty, " +
			"writable directory whose parent exists"},
	{ReasonExistingFileSystem, []string{"Existing filesystem found"},
		"%[1]s already holds ZenFS and zenfs mkfs refuses to replace it without --force; it is replaced only " +
			"when reformatToken is set to a new value"},
	{ReasonUnformatted, []string{"No valid superblock found"},
		"%[1]s holds no ZenFS (no valid superblock)"},
	{ReasonUsage, []string{"unknown command line flag", "illegal value", "You need to specify", "Subcommand not recognized"},
		"zenfs rejected the command line the helper built for %[1]s: the image's zenfs does not take the flags " +
			"this operator uses (report it with the image's zenfs version)"},
}

// Classify explains a failed zenfs run from its stderr and the error of the
// process (an *exec.ExitError, or anything whose text says how it ended).
// dev is the device's kernel name, for the advice; "" for commands that read
// every device of the node (ls-uuid).
func Classify(dev, stderr string, runErr error) *Failure {
	if dev == "" {
		dev = "one of this node's zoned devices"
	}
	first := firstLine(stderr)
	if runErr != nil && isStartFailure(runErr) {
		return &Failure{ReasonNoBinary, fmt.Sprintf("the zenfs utility could not be run (%v): the image must "+
			"carry ZenFS's zenfs utility (the Percona ZenFS image has it at %s)", runErr, DefaultBinary)}
	}
	for _, c := range classifiers {
		for _, m := range c.match {
			if strings.Contains(stderr, m) {
				return &Failure{c.reason, withDetail(fmt.Sprintf(c.advice, dev), first)}
			}
		}
	}
	if aborted(runErr) {
		return &Failure{ReasonAborted, withDetail(fmt.Sprintf(classifiers[0].advice, dev), first)}
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

// aborted: SIGABRT, or exit status 134 when a shell ran zenfs.
func aborted(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal() == syscall.SIGABRT
		}
		return ee.ExitCode() == 128+int(syscall.SIGABRT)
	}
	return err != nil && (strings.Contains(err.Error(), "signal: aborted") || strings.Contains(err.Error(), "exit status 134"))
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
