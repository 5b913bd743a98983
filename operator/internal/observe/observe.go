// Package observe is the contract between a benchmark runner whose pod is on another node than the database's
// device (`znsbench run|prepare|ycsb-* --observer URL`) and the observer on the device's node (`znsbench
// observe`), which samples the device's block-layer counters on the runner's behalf: the paths, the port and
// the JSON the observer answers with, and the summary it leaves as its termination message. It is pure.
package observe

import (
	"encoding/json"
	"unicode/utf8"
)

// DefaultPort is the observer's port; the database pod's metrics sidecar has 9105.
const DefaultPort = 9106

// The observer's endpoints. PathReady (GET) answers 200 once the drive sidecar beside the observer has taken
// its first readings, or has been given up on, and 503 before: it is the observer pod's readiness probe, and the
// runner must not be started before it. PathBegin and PathEnd (POST) take the samples before and after the
// phase; both answer 200 with a Reply even when a figure is missing, which is not a failure. The observer exits
// once it has answered PathEnd, which stops the drive sidecar beside it.
const (
	PathReady = "/ready"
	PathBegin = "/begin"
	PathEnd   = "/end"
)

// Reply is the body of PathBegin's and PathEnd's answers.
type Reply struct {
	// Device is what the observer samples: DEV or DEV+DEV, as its --device.
	Device string `json:"device"`
	// Sampled says whether every device was read (at PathBegin) or the difference is known (at PathEnd).
	Sampled bool `json:"sampled"`
	// WrittenBytes is what the devices took between PathBegin and PathEnd, together; only in PathEnd's answer,
	// and only when Sampled. A pointer, so that a device that took nothing still says 0.
	WrittenBytes *int64 `json:"writtenBytes,omitempty"`
	// Reason says why Sampled is false.
	Reason string `json:"reason,omitempty"`
}

// Summary is what the observer leaves as its termination message.
type Summary struct {
	Phase        string `json:"phase,omitempty"`
	Target       string `json:"target,omitempty"`
	Device       string `json:"device"`
	Sampled      bool   `json:"sampled"`
	WrittenBytes *int64 `json:"writtenBytes,omitempty"`
	// BeginTime and EndTime are when the last PathBegin and PathEnd were answered (RFC 3339, UTC).
	BeginTime string `json:"beginTime,omitempty"`
	EndTime   string `json:"endTime,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// MaxReasonBytes bounds a reason: the kubelet keeps 12 KiB of termination messages for the whole pod, and the
// drive sidecar's report beside the observer needs most of it.
const MaxReasonBytes = 400

// Encode is the summary as one line of JSON, its reason cut to MaxReasonBytes.
func (s Summary) Encode() ([]byte, error) {
	s.Reason = Truncate(s.Reason, MaxReasonBytes)
	return json.Marshal(s)
}

// Truncate cuts s to at most n bytes without splitting a character, marking the cut with "...".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n-3, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
