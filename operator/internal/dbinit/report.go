package dbinit

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// Report is what the init container writes to its termination message; the
// operator reads it into the ZNSDatabase status.
type Report struct {
	Device   *zbd.Device   `json:"device,omitempty"`
	Problems []zbd.Problem `json:"problems,omitempty"`
	// Warnings are risks of a device that was accepted (zbd.Advise).
	Warnings []zbd.Problem `json:"warnings,omitempty"`
	ZenFS    *ZenFSState   `json:"zenfs,omitempty"`
	// Filesystem is set instead of ZenFS for a zoned btrfs or f2fs.
	Filesystem *FilesystemState `json:"filesystem,omitempty"`
	Error      string           `json:"error,omitempty"`
	// ErrorReason classifies Error for machines (a condition reason), e.g.
	// zenfs.ReasonBusy; empty when unknown.
	ErrorReason string `json:"errorReason,omitempty"`
}

// ZenFSState is the file system on the device and what the helper did.
type ZenFSState struct {
	Present bool `json:"present"`
	// UUID is the file system's, as zenfs ls-uuid lists it.
	UUID   string `json:"uuid,omitempty"`
	Action Action `json:"action,omitempty"`
	Reason string `json:"reason,omitempty"`
	// ZonesReset is how many written zones a confirmed reformat reset
	// before zenfs mkfs ran.
	ZonesReset int `json:"zonesReset,omitempty"`
	// Space from zenfs df, rounded down to MiB by zenfs; nil when unknown.
	FreeBytes                 *int64 `json:"freeBytes,omitempty"`
	UsedBytes                 *int64 `json:"usedBytes,omitempty"`
	ReclaimableBytes          *int64 `json:"reclaimableBytes,omitempty"`
	SpaceAmplificationPercent *int64 `json:"spaceAmplificationPercent,omitempty"`
}

// FilesystemState is the zoned btrfs or f2fs on the device and what the
// helper did.
type FilesystemState struct {
	// Type is the file system asked for; Found what blkid found before any
	// format ("" for no signature).
	Type  string `json:"type"`
	Found string `json:"found,omitempty"`
	UUID  string `json:"uuid,omitempty"`
	Label string `json:"label,omitempty"`
	// HadZenFS: a ZenFS superblock was on the device (blkid cannot see it).
	HadZenFS   bool   `json:"hadZenFS,omitempty"`
	Action     Action `json:"action,omitempty"`
	Reason     string `json:"reason,omitempty"`
	ZonesReset int    `json:"zonesReset,omitempty"`
}

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
	out := Report{Error: truncate(r.Error, errLen), ErrorReason: r.ErrorReason}
	if r.Device != nil {
		d := *r.Device
		if len(d.AvailableSchedulers) > maxSchedulers {
			d.AvailableSchedulers = d.AvailableSchedulers[:maxSchedulers]
		}
		out.Device = &d
	}
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
	if r.ZenFS != nil {
		z := *r.ZenFS
		z.Reason = truncate(z.Reason, reasonLen)
		out.ZenFS = &z
	}
	if r.Filesystem != nil {
		fs := *r.Filesystem
		fs.Reason = truncate(fs.Reason, reasonLen)
		out.Filesystem = &fs
	}
	return out
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
