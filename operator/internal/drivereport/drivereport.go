// Package drivereport is the contract between the drive sidecar of a benchmark Job (`znsbench drive`) and the
// operator: the report the sidecar leaves as its termination message (what the drive wrote during the phase, as
// its own counters say and as the FTL model estimates), and the files through which the sidecar and the runner
// beside it agree on when the phase starts. It is pure.
package drivereport

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// SchemaVersion is bumped on incompatible changes of Report.
const SchemaVersion = 1

// MaxBytes bounds an encoded Report: the kubelet keeps 4096 bytes of a termination message, and the pod's
// runner container needs its own share of the pod's 12 KiB.
const MaxBytes = 3072

// maxReasonBytes bounds each free-text reason before the whole is checked.
const maxReasonBytes = 400

// BeforeFile, in the directory the sidecar and the runner share, keeps the start readings, so that a sidecar
// the kubelet restarted keeps the phase's start instead of taking a later one.
const BeforeFile = "before.json"

// Report is what the drive wrote during one phase.
type Report struct {
	Schema    int    `json:"schema"`
	Phase     string `json:"phase"`
	Device    string `json:"device"`
	StartTime string `json:"startTime,omitempty"`
	EndTime   string `json:"endTime,omitempty"`
	// DeviceBytes is the device's size as the kernel exports it (the model's logical capacity).
	DeviceBytes int64 `json:"deviceBytes,omitempty"`
	// BlockLayerWrittenBytes is the block layer's count over the phase (/sys/block/<dev>/stat); nil when the
	// counters were not readable at both ends.
	BlockLayerWrittenBytes *int64 `json:"blockLayerWrittenBytes,omitempty"`

	Counters            *Counters `json:"counters,omitempty"`
	CountersUnavailable string    `json:"countersUnavailable,omitempty"`
	// CountersReset is set when a counter went backwards between the readings (the drive was reset or
	// replaced): CountersUnavailable then says so and no figure is kept.
	CountersReset bool `json:"countersReset,omitempty"`

	Model            []Modelled `json:"model,omitempty"`
	ModelUnavailable string     `json:"modelUnavailable,omitempty"`
}

// Counters are the differences of the drive's NVMe counters over the phase (measured by the drive).
type Counters struct {
	// Logs read at both ends: smart, ocp, fdp.
	Logs []string `json:"logs"`
	// HostWrittenBytes is what the drive received; HostResolutionBytes its step (512000 from SMART).
	HostWrittenBytes    int64 `json:"hostWrittenBytes"`
	HostResolutionBytes int64 `json:"hostResolutionBytes"`
	HostWriteCommands   int64 `json:"hostWriteCommands"`
	// MediaWrittenBytes is what the drive wrote to its media; nil when it reports no such counter.
	MediaWrittenBytes *int64 `json:"mediaWrittenBytes,omitempty"`
	MediaSource       string `json:"mediaSource,omitempty"`
	// NoMedia says why MediaWrittenBytes is nil.
	NoMedia string `json:"noMedia,omitempty"`
}

// WriteAmplification is media over host bytes; ok is false without a media counter or host bytes.
func (c Counters) WriteAmplification() (float64, bool) {
	if c.MediaWrittenBytes == nil || c.HostWrittenBytes <= 0 {
		return 0, false
	}
	return float64(*c.MediaWrittenBytes) / float64(c.HostWrittenBytes), true
}

// Modelled is the FTL model's estimate at one over-provisioning factor.
type Modelled struct {
	OverProvisioningPercent int   `json:"op"`
	HostWrittenBytes        int64 `json:"hostWrittenBytes"`
	MediaWrittenBytes       int64 `json:"mediaWrittenBytes"`
	// SteadyState is false when the model's own preconditioning hit its round limit first.
	SteadyState bool `json:"steadyState"`
	// PreconditionRounds is how many random-overwrite rounds the model needed to settle.
	PreconditionRounds int `json:"preconditionRounds,omitempty"`
	// PageBytes is the model's mapping unit.
	PageBytes int `json:"pageBytes,omitempty"`
}

// WriteAmplification is media over host bytes; ok is false when the model was fed nothing.
func (m Modelled) WriteAmplification() (float64, bool) {
	if m.HostWrittenBytes <= 0 {
		return 0, false
	}
	return float64(m.MediaWrittenBytes) / float64(m.HostWrittenBytes), true
}

// Label says what a modelled figure is, wherever it is shown.
func Label(opPercent int) string {
	return fmt.Sprintf("modelled (page-mapped FTL, greedy GC, OP %d%%)", opPercent)
}

// Encode renders the report as compact JSON, shortening the reasons so that it fits MaxBytes.
func (r Report) Encode() ([]byte, error) {
	r.Schema = SchemaVersion
	r.CountersUnavailable = shorten(r.CountersUnavailable, maxReasonBytes)
	r.ModelUnavailable = shorten(r.ModelUnavailable, maxReasonBytes)
	if r.Counters != nil {
		c := *r.Counters
		c.NoMedia = shorten(c.NoMedia, maxReasonBytes)
		r.Counters = &c
	}
	for _, m := range r.Model {
		if m.HostWrittenBytes < 0 || m.MediaWrittenBytes < 0 {
			return nil, fmt.Errorf("drivereport: negative byte count at OP %d%%", m.OverProvisioningPercent)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("drivereport: %d bytes encoded, at most %d fit a termination message", len(b), MaxBytes)
	}
	return b, nil
}

// ErrSchema: a report of another schema version, whose fields may mean other things.
var ErrSchema = errors.New("drivereport: unknown schema version")

// Decode reads a report written by Encode.
func Decode(b []byte) (Report, error) {
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, fmt.Errorf("drivereport: %w", err)
	}
	if r.Schema != SchemaVersion {
		return Report{}, fmt.Errorf("%w %d (want %d)", ErrSchema, r.Schema, SchemaVersion)
	}
	return r, nil
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && s[cut]&0xC0 == 0x80 { // never split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "..."
}

// PerTransaction divides bytes by transactions; ok is false without transactions.
func PerTransaction(bytes int64, transactions int64) (float64, bool) {
	if transactions <= 0 || bytes < 0 {
		return 0, false
	}
	v := float64(bytes) / float64(transactions)
	return v, !math.IsInf(v, 0) && !math.IsNaN(v)
}
