// Package blocktrace captures the block-level request stream of one device
// from the kernel's block tracepoints, as tracefs prints them, so that a
// model of a drive's FTL can be fed the real writes and discards of a
// benchmark phase.
//
// ParseLine reads one line of trace_pipe (or trace) text: the events
// block:block_rq_complete and block:block_rq_issue, and the lost-events
// markers trace_pipe prints when the ring buffer overwrote events before
// they were read. Totals adds them up for comparison with the block layer's
// own counters (/sys/block/<dev>/stat, package blockstat). Start (Linux)
// runs a capture in a private tracing instance.
//
// Which requests the kernel names how (blk_fill_rwbs, kernel 6.1): the rwbs
// field starts with F for a preflush, then one operation letter (W write,
// R read, D discard, F flush, N anything else), then flags (F FUA, A
// readahead, S sync, M meta). On 6.1 zone append, write zeroes, zone
// management and passthrough commands all print N; later kernels name some
// of them (ZA zone append, ZR/ZF/ZO/ZC zone management). The stat file
// counts zone append and write zeroes as written sectors, so a trace with
// OtherBytes > 0 cannot be matched with it exactly.
package blocktrace

import (
	"bytes"
	"fmt"
	"strings"
)

// SectorBytes is the unit of the sector fields of the block tracepoints.
const SectorBytes = 512

// Dev is a block device number.
type Dev struct{ Major, Minor uint32 }

// String is the "major:minor" form of /sys/block/<dev>/dev.
func (d Dev) String() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// KernelDevT is the device number as the kernel stores it in its dev_t
// (major << 20 | minor), the value a trace event filter on the `dev` field
// compares with. It is not the user-space encoding of stat(2).
func (d Dev) KernelDevT() uint32 { return d.Major<<20 | d.Minor }

// ParseDev reads the "major:minor" of /sys/block/<dev>/dev.
func ParseDev(s string) (Dev, error) {
	maj, min, ok := cut(bytes.TrimSpace([]byte(s)), ':')
	a, okA := atou(maj)
	b, okB := atou(min)
	// the kernel's dev_t has 12 bits of major and 20 of minor
	if !ok || !okA || !okB || a >= 1<<12 || b >= 1<<20 {
		return Dev{}, fmt.Errorf("blocktrace: %q is not a block device number major:minor", s)
	}
	return Dev{uint32(a), uint32(b)}, nil
}

// Op is what a request did, from the operation letter of rwbs.
type Op uint8

// Operations. OpOther is N: on 6.1 zone append, write zeroes, zone
// management and passthrough requests (see the package comment).
const (
	OpOther Op = iota
	OpRead
	OpWrite
	OpDiscard
	OpFlush
)

func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpDiscard:
		return "discard"
	case OpFlush:
		return "flush"
	}
	return "other"
}

// NoSector is the sector block_rq_complete prints for a request without a
// position: a driver's own command passed through the block layer (on 6.1
// NVMe's zone report, for one), which the stat file does not count.
const NoSector = ^uint64(0)

// Event is one request as a block tracepoint reports it.
type Event struct {
	// Sector is the first 512-byte sector; NoSector for a passthrough
	// request's completion (block_rq_issue prints 0 for those).
	Sector uint64
	Dev    Dev
	// Sectors is the length in 512-byte sectors. For block_rq_complete it
	// is what this completion finished (nr_bytes >> 9 in the kernel), the
	// amount the stat file counts; a request completed in parts yields one
	// event per part.
	Sectors uint32
	// Error is block_rq_complete's error: 0, or a negative errno.
	Error int16
	Op    Op
}

// Bytes is the event's length in bytes.
func (e Event) Bytes() uint64 { return uint64(e.Sectors) * SectorBytes }

// Passthrough reports a completion without a position (NoSector).
func (e Event) Passthrough() bool { return e.Sector == NoSector }

// Kind says what a line of trace text is.
type Kind uint8

// Line kinds.
const (
	// NotEvent: a blank or comment line, or another event (Reason says).
	NotEvent Kind = iota
	// Malformed: a block_rq_complete or block_rq_issue line that does not
	// parse (Reason says why).
	Malformed
	Complete // block:block_rq_complete
	Issue    // block:block_rq_issue
	// Lost: trace_pipe's "CPU:N [LOST M EVENTS]": the ring buffer of CPU N
	// overwrote M events before they were read.
	Lost
)

// Parsed is one line of trace text.
type Parsed struct {
	Kind  Kind
	Event Event // Complete, Issue
	// Lost is the count of a Lost marker; -1 when the kernel printed
	// "[LOST EVENTS]" without one.
	Lost   int64
	Reason string // NotEvent, Malformed
}

var (
	completeTag = []byte(" block_rq_complete: ")
	issueTag    = []byte(" block_rq_issue: ")
	lostTag     = []byte("[LOST ")
)

// ParseLine parses one line of trace_pipe or trace output, with or without
// its newline, in the kernel's default format (task-pid, [cpu], flags,
// timestamp, then "event: payload"). The payload is
//
//	complete: MAJ,MIN RWBS (CMD) SECTOR + NR_SECTORS [ERROR]
//	issue:    MAJ,MIN RWBS BYTES (CMD) SECTOR + NR_SECTORS [COMM]
//
// where later kernels add an I/O priority before the bracket. ParseLine
// does not allocate for event and lost lines.
func ParseLine(line []byte) Parsed {
	line = bytes.TrimRight(line, "\r\n")
	if i := bytes.Index(line, completeTag); i >= 0 {
		return parsePayload(line[i+len(completeTag):], Complete)
	}
	if i := bytes.Index(line, issueTag); i >= 0 {
		return parsePayload(line[i+len(issueTag):], Issue)
	}
	if bytes.HasPrefix(line, []byte("CPU:")) {
		if n, ok := parseLost(line); ok {
			return Parsed{Kind: Lost, Lost: n}
		}
	}
	switch {
	case len(bytes.TrimSpace(line)) == 0:
		return Parsed{Reason: "blank line"}
	case line[0] == '#':
		return Parsed{Reason: "comment"}
	}
	return Parsed{Reason: "not a block_rq_complete or block_rq_issue event"}
}

// parseLost reads "CPU:%d [LOST %lu EVENTS]" or "CPU:%d [LOST EVENTS]".
func parseLost(line []byte) (int64, bool) {
	cpu, rest, ok := cut(line[len("CPU:"):], ' ')
	if _, okc := atou(cpu); !ok || !okc || !bytes.HasPrefix(rest, lostTag) {
		return 0, false
	}
	rest = rest[len(lostTag):]
	if string(rest) == "EVENTS]" {
		return -1, true
	}
	num, rest, ok := cut(rest, ' ')
	n, okn := atou(num)
	if !ok || !okn || string(rest) != "EVENTS]" || n > 1<<62 {
		return 0, false
	}
	return int64(n), true
}

func malformed(kind Kind, why string, payload []byte) Parsed {
	name := "block_rq_complete"
	if kind == Issue {
		name = "block_rq_issue"
	}
	return Parsed{Kind: Malformed, Reason: fmt.Sprintf("%s: %s in %q", name, why, payload)}
}

func parsePayload(p []byte, kind Kind) Parsed {
	var e Event
	devs, rest, ok := cut(p, ' ')
	maj, min, okd := cut(devs, ',')
	a, okA := atou(maj)
	b, okB := atou(min)
	if !ok || !okd || !okA || !okB || a > 1<<32-1 || b > 1<<32-1 {
		return malformed(kind, "no MAJOR,MINOR", p)
	}
	e.Dev = Dev{uint32(a), uint32(b)}
	rwbs, rest, ok := cut(rest, ' ')
	if e.Op, okd = parseRWBS(rwbs); !ok || !okd {
		return malformed(kind, "bad rwbs", p)
	}
	if kind == Issue { // the request's bytes, before the command
		_, rest, ok = cut(rest, ' ')
		if !ok {
			return malformed(kind, "no bytes", p)
		}
	}
	// (CMD): empty but for passthrough requests, whose command bytes it
	// prints in hex, separated by spaces
	if len(rest) == 0 || rest[0] != '(' {
		return malformed(kind, "no (cmd)", p)
	}
	end := bytes.IndexByte(rest, ')')
	if end < 0 || end+1 >= len(rest) || rest[end+1] != ' ' {
		return malformed(kind, "no (cmd)", p)
	}
	rest = rest[end+2:]
	sector, rest, ok := cut(rest, ' ')
	s, oks := atou(sector)
	if !ok || !oks || len(rest) < 2 || rest[0] != '+' || rest[1] != ' ' {
		return malformed(kind, "no SECTOR + N", p)
	}
	nr, rest, ok := cut(rest[2:], ' ')
	n, okn := atou(nr)
	if !ok || !okn || n > 1<<32-1 {
		return malformed(kind, "no sector count", p)
	}
	e.Sector, e.Sectors = s, uint32(n)
	// the last field is [ERROR] (complete) or [COMM] (issue); later kernels
	// print an I/O priority before it
	open := bytes.IndexByte(rest, '[')
	if open < 0 || rest[len(rest)-1] != ']' {
		return malformed(kind, "no [...] at the end", p)
	}
	if kind == Complete {
		v, ok := atoi(rest[open+1 : len(rest)-1])
		if !ok || v < -1<<15 || v >= 1<<15 {
			return malformed(kind, "bad [error]", p)
		}
		e.Error = int16(v)
	}
	return Parsed{Kind: kind, Event: e}
}

// parseRWBS reads the operation from the rwbs field (see the package
// comment).
func parseRWBS(s []byte) (Op, bool) {
	if len(s) == 0 {
		return 0, false
	}
	i := 0
	if s[0] == 'F' && len(s) > 1 && strings.IndexByte("WRDFNZ", s[1]) >= 0 {
		i = 1 // the preflush F before an operation letter
	}
	op := OpOther
	switch s[i] {
	case 'W':
		op = OpWrite
	case 'R':
		op = OpRead
	case 'D':
		if i+1 < len(s) && s[i+1] == 'E' {
			op = OpOther // secure erase, which the stat counts as a write
		} else {
			op = OpDiscard
		}
	case 'F':
		op = OpFlush
	case 'N':
	case 'Z': // later kernels: ZA zone append, ZR, ZF, ZO, ZC zone management
		if i+1 < len(s) && s[i+1] == 'A' {
			op = OpWrite
		}
	default:
		return 0, false
	}
	for _, c := range s[i+1:] {
		if c < 'A' || c > 'z' || (c > 'Z' && c < 'a') {
			return 0, false
		}
	}
	return op, true
}

// cut splits b at the first sep.
func cut(b []byte, sep byte) (before, after []byte, found bool) {
	if i := bytes.IndexByte(b, sep); i >= 0 {
		return b[:i], b[i+1:], true
	}
	return b, nil, false
}

// atou parses a decimal uint64 without allocating.
func atou(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func atoi(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := atou(b)
	if !ok || u > 1<<62 {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}
