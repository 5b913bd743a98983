// Package failreason names why a benchmark step failed with one reason from a fixed set, so that a person
// scanning `kubectl get benchmark -o yaml` or a program can tell failures apart without reading sysbench's
// output; the detail travels beside it. The runner classifies what it saw (sysbench's FATAL lines, the MySQL
// driver's errors, how sysbench ended); the operator adds the reasons only it can see. It is pure.
package failreason

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// Reason is one of the constants below.
type Reason = string

// Reasons the runner finds.
const (
	// AccessDenied: the server refused the user or a privilege (MySQL errors 1044, 1045, 1142, ...).
	AccessDenied Reason = "AccessDenied"
	// ConnectionFailed: no connection could be made (2002, 2003, 2005, connection refused, ...).
	ConnectionFailed Reason = "ConnectionFailed"
	// ConnectionLost: a connection broke during the run (2013, 2006, the server shutting down, ...).
	ConnectionLost Reason = "ConnectionLost"
	// MissingTables: the database or the sysbench tables are not there (1049, 1146).
	MissingTables Reason = "MissingTables"
	// Crashed: sysbench was killed by a signal it did not get from the runner (SIGSEGV: Debian's 1.0.20 with
	// libmariadb on reconnect).
	Crashed Reason = "Crashed"
	// Interrupted: the runner was told to stop (its pod deleted or evicted) before sysbench finished.
	Interrupted Reason = "Interrupted"
	// StartMissed: the runner came later than the common start time allows.
	StartMissed Reason = "StartMissed"
	// RowCountMismatch: the prepared tables do not hold tables x tableSize rows.
	RowCountMismatch Reason = "RowCountMismatch"
	// SQLError: another MySQL error number.
	SQLError Reason = "SQLError"
	// InvalidOutput: sysbench ended without the output a result is made from.
	InvalidOutput Reason = "InvalidOutput"
	// Other: none of the above; the detail says what happened.
	Other Reason = "Other"
)

// Reasons the operator finds.
const (
	// TimedOut: the step's Job ran past its deadline.
	TimedOut Reason = "TimedOut"
	// PodLost: the step's pod ended without a result (evicted, deleted, node lost).
	PodLost Reason = "PodLost"
	// TargetNotFound: the ZNSDatabase did not appear within targetTimeoutSeconds.
	TargetNotFound Reason = "TargetNotFound"
	// TargetDeleted: the ZNSDatabase was deleted during the benchmark.
	TargetDeleted Reason = "TargetDeleted"
	// TargetUnavailable: the database did not become Available within targetTimeoutSeconds.
	TargetUnavailable Reason = "TargetUnavailable"
	// JobRejected: the API server refused the step's Job.
	JobRejected Reason = "JobRejected"
	// ProfileChanged: the database left the workload profile while the Benchmark held it for its runs (someone
	// switched it to bulkload): what it measured then is not what the methodology measures.
	ProfileChanged Reason = "ProfileChanged"
	// RunnerNotReady: the run's runner did not reach the start barrier (its pod Ready) within
	// targetTimeoutSeconds, so it could not be given the common start.
	RunnerNotReady Reason = "RunnerNotReady"
	// TooFewConnections: the database's max_connections is below what the Benchmark would open against it
	// (its most threads plus the runner's own connection).
	TooFewConnections Reason = "TooFewConnections"
)

// All is the fixed set, in the order the API lists it.
var All = []Reason{AccessDenied, ConnectionFailed, ConnectionLost, MissingTables, Crashed, Interrupted, StartMissed,
	RowCountMismatch, SQLError, InvalidOutput, TimedOut, PodLost, TargetNotFound, TargetDeleted, TargetUnavailable,
	JobRejected, ProfileChanged, TooFewConnections, RunnerNotReady, Other}

// Failure is what a step saw when it failed.
type Failure struct {
	// Text is the error, followed by the tool's last lines.
	Text string
	// Signal is the signal that ended the tool, 0 when it exited.
	Signal int
	// Interrupted is set when the runner itself was told to stop.
	Interrupted bool
}

// MySQL error numbers by reason. The client errors (2xxx) come from libmariadb and the Go driver alike.
var byNumber = map[int]Reason{
	1044: AccessDenied, 1045: AccessDenied, 1142: AccessDenied, 1143: AccessDenied, 1227: AccessDenied,
	1370: AccessDenied, 1698: AccessDenied,
	1049: MissingTables, 1146: MissingTables,
	1040: ConnectionFailed, 2002: ConnectionFailed, 2003: ConnectionFailed, 2005: ConnectionFailed,
	1053: ConnectionLost, 1927: ConnectionLost, 2006: ConnectionLost, 2013: ConnectionLost, 2055: ConnectionLost,
	4031: ConnectionLost,
}

// errorNumberRE finds MySQL error numbers as sysbench ("error 1045:", "returned error 2013 (", "errno = 2013",
// `MySQL error: 1146 "`) and the Go driver ("Error 1146 (42S02):") print them.
var errorNumberRE = regexp.MustCompile(`(?i)\b(?:error|errno =|MySQL error:)\s+(\d{4})\b`)

// Patterns for failures that carry no error number, checked in order.
var patterns = []struct {
	reason Reason
	text   string
}{
	{StartMissed, "start barrier"},
	{ConnectionFailed, "connection refused"},
	{ConnectionFailed, "no such host"},
	{ConnectionFailed, "network is unreachable"},
	{ConnectionFailed, "i/o timeout"},
	{ConnectionLost, "invalid connection"},
	{ConnectionLost, "bad connection"},
	{ConnectionLost, "broken pipe"},
	{ConnectionLost, "connection reset"},
	{ConnectionLost, "unexpected eof"},
	{AccessDenied, "access denied"},
	{MissingTables, "doesn't exist"},
	{RowCountMismatch, "row count mismatch"},
	{InvalidOutput, "output unusable"},
	{InvalidOutput, "no complete final summary"},
}

// Classify names the reason of a failure and a one-line cause for people.
func Classify(f Failure) (Reason, string) {
	switch {
	case f.Interrupted:
		return Interrupted, "the runner was told to stop (its pod was deleted or evicted) before the step finished"
	case f.Signal != 0:
		cause := fmt.Sprintf("sysbench was killed by signal %d (%s)", f.Signal, syscall.Signal(f.Signal))
		if f.Signal == int(syscall.SIGSEGV) {
			cause += "; Debian's sysbench 1.0.20 with libmariadb crashes so when it reconnects after the server went away (upstream sysbench issue 527)"
		}
		return Crashed, cause
	}
	text := f.Text
	for _, p := range patterns[:1] {
		if strings.Contains(strings.ToLower(text), p.text) {
			return p.reason, firstLineWith(text, p.text)
		}
	}
	if m := errorNumberRE.FindStringSubmatchIndex(text); m != nil {
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		reason, ok := byNumber[n]
		if !ok {
			reason = SQLError
		}
		return reason, lineAround(text, m[0])
	}
	lower := strings.ToLower(text)
	for _, p := range patterns[1:] {
		if strings.Contains(lower, p.text) {
			return p.reason, firstLineWith(text, p.text)
		}
	}
	return Other, firstLine(text)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// firstLineWith is the first line holding sub (case-insensitive), without sysbench's "FATAL: " prefix.
func firstLineWith(s, sub string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(strings.ToLower(line), sub) {
			return clean(line)
		}
	}
	return firstLine(s)
}

func lineAround(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		end = len(s) - i
	}
	return clean(s[start : i+end])
}

func clean(line string) string {
	line = strings.TrimSpace(line)
	if i := strings.Index(line, "FATAL: "); i >= 0 {
		line = line[i+len("FATAL: "):]
	}
	return line
}
