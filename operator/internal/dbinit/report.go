package dbinit

import (
	"encoding/json"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"time"
	"unicode/utf8"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// Report is what znsdb's preflight and format write to their termination message; the operator reads it into
// the ZNSDatabase status.
type Report struct {
	Device *zbd.Device `json:"device,omitempty"`
	// MetadataDevice is zoned XFS's conventional metadata device, when it has one.
	MetadataDevice *zbd.Device   `json:"metadataDevice,omitempty"`
	Problems       []zbd.Problem `json:"problems,omitempty"`
	// Warnings are risks of a device that was accepted (zbd.Advise).
	Warnings []zbd.Problem `json:"warnings,omitempty"`
	// Filesystem is what the format engine found and did, for every file system it makes.
	Filesystem *FilesystemState `json:"filesystem,omitempty"`
	// Precondition is what the format step's preconditioning of a
	// conventional device did, or why it did not run; nil when none was
	// asked for.
	Precondition *PreconditionState `json:"precondition,omitempty"`
	Error        string             `json:"error,omitempty"`
	// ErrorReason classifies Error for machines (a condition reason), e.g.
	// zenfs.ReasonBusy; empty when unknown.
	ErrorReason string `json:"errorReason,omitempty"`
}

// FilesystemState is the file system on the device and what the format
// engine did with it.
type FilesystemState struct {
	// Type is the file system asked for (zenfs, btrfs, f2fs, ext4, xfs).
	Type string `json:"type"`
	// Found is what was on the device before any format: a file system
	// type, zenfs, or "" for none (fsformat.Found).
	Found string `json:"found,omitempty"`
	// UUID is the file system's, as blkid or zenfs ls-uuid reads it.
	UUID string `json:"uuid,omitempty"`
	// Label records the reformat token a blkid-visible file system was made
	// with (zonedfs.Label); ZenFS has none.
	Label  string          `json:"label,omitempty"`
	Action fsformat.Action `json:"action,omitempty"`
	Reason string          `json:"reason,omitempty"`
	// ZonesReset is how many written zones a confirmed reformat reset
	// before mkfs ran.
	ZonesReset int `json:"zonesReset,omitempty"`
	// Space is ZenFS's own account of its space (zenfs df); nil for the
	// file systems the kubelet mounts, and when unknown.
	Space *Space `json:"space,omitempty"`
}

// Present reports whether the device holds the wanted file system after
// the format step: it made it or kept it.
func (s *FilesystemState) Present() bool {
	return s != nil && (s.Action == fsformat.ActionFormat || s.Action == fsformat.ActionKeep)
}

// PreconditionState is what preconditioning a conventional device did: its
// sequential passes and random rounds, in order, and the steady-state rule's
// verdict on the rounds' write IOPS.
type PreconditionState struct {
	// Complete: every pass and every round asked for ran to its end (or the
	// rounds stopped at steady state); only then was the file system made.
	Complete bool `json:"complete"`
	// Note says why nothing ran, or where it stopped.
	Note       string         `json:"note,omitempty"`
	StartedAt  time.Time      `json:"startedAt,omitzero"`
	FinishedAt time.Time      `json:"finishedAt,omitzero"`
	Passes     []PassFigures  `json:"passes,omitempty"`
	Rounds     []RoundFigures `json:"rounds,omitempty"`
	// RoundsAsked is the round limit; 0 means no random rounds, and so no
	// steady-state verdict.
	RoundsAsked int  `json:"roundsAsked,omitempty"`
	SteadyState bool `json:"steadyState,omitempty"`
	// SteadyReason is the rule's verdict on the last window, with figures.
	SteadyReason string `json:"steadyReason,omitempty"`
}

// PassFigures is one sequential pass over the whole device.
type PassFigures struct {
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	// MBps is the write throughput in MB/s (10^6 bytes per second).
	MBps float64 `json:"mbps"`
}

// RoundFigures is one round of random writes.
type RoundFigures struct {
	WriteIOPS float64 `json:"writeIOPS"`
	Bytes     int64   `json:"bytes"`
	Seconds   float64 `json:"seconds"`
}

// Bounds of the precondition's lists in a report: what the API allows
// (ZNSDatabase spec.storage.device.precondition), and what keeps a report
// within MaxReportBytes.
const (
	MaxPreconditionPasses = 10
	MaxPreconditionRounds = 20
)

// MaxReportBytes is the kubelet's limit on a termination message.
const MaxReportBytes = 4096

// Caps on free text before anything else is shortened: a device and its
// problems fit in well under the limit, and a long stderr must not push
// them out.
const (
	maxErrorLen    = 1024
	maxMessageLen  = 600
	maxReasonLen   = 400
	maxProblems    = 8
	maxSchedulers  = 8
	truncationMark = "…"
)

// Encode marshals r to JSON no longer than MaxReportBytes, shortening free
// text (error, problem messages, reason) when it has to, so the operator
// always gets a report it can parse.
func (r Report) Encode() ([]byte, error) {
	errLen, msgLen, reasonLen := maxErrorLen, maxMessageLen, maxReasonLen
	for {
		b, err := json.Marshal(r.shortened(errLen, msgLen, reasonLen))
		if err != nil || len(b) <= MaxReportBytes || errLen+msgLen+reasonLen == 0 {
			return b, err
		}
		errLen, msgLen, reasonLen = errLen/2, msgLen/2, reasonLen/2
	}
}

func (r Report) shortened(errLen, msgLen, reasonLen int) Report {
	out := Report{Error: truncate(r.Error, errLen), ErrorReason: r.ErrorReason,
		Device: shortDevice(r.Device), MetadataDevice: shortDevice(r.MetadataDevice)}
	for i, p := range r.Problems {
		if i == maxProblems {
			break
		}
		out.Problems = append(out.Problems, zbd.Problem{Code: p.Code, Message: truncate(p.Message, msgLen)})
	}
	for i, p := range r.Warnings {
		if i == maxProblems {
			break
		}
		out.Warnings = append(out.Warnings, zbd.Problem{Code: p.Code, Message: truncate(p.Message, msgLen)})
	}
	if r.Filesystem != nil {
		fs := *r.Filesystem
		fs.Reason = truncate(fs.Reason, reasonLen)
		out.Filesystem = &fs
	}
	if r.Precondition != nil {
		p := *r.Precondition
		p.Note, p.SteadyReason = truncate(p.Note, reasonLen), truncate(p.SteadyReason, reasonLen)
		// The first passes and the last rounds: the steady-state verdict is on the last rounds.
		p.Passes = p.Passes[:min(len(p.Passes), MaxPreconditionPasses)]
		p.Rounds = p.Rounds[max(0, len(p.Rounds)-MaxPreconditionRounds):]
		out.Precondition = &p
	}
	return out
}

func shortDevice(dev *zbd.Device) *zbd.Device {
	if dev == nil {
		return nil
	}
	d := *dev
	if len(d.AvailableSchedulers) > maxSchedulers {
		d.AvailableSchedulers = d.AvailableSchedulers[:maxSchedulers]
	}
	return &d
}

// truncate cuts s to at most n bytes (JSON escaping aside) on a rune
// boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len(truncationMark)
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + truncationMark
}
