package dbinit

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Space is the ZenFS space the helper measured in a running database's pod
// (zenfs df). It travels to the operator in a pod annotation
// (v1alpha1.AnnotationZenFSSpace), since the kubelet reports nothing a
// running container prints.
type Space struct {
	// At is when zenfs df ran.
	At time.Time `json:"at"`
	// The figures are zenfs's, rounded down to MiB; absent when Error is set.
	FreeBytes                 int64 `json:"freeBytes"`
	UsedBytes                 int64 `json:"usedBytes"`
	ReclaimableBytes          int64 `json:"reclaimableBytes"`
	SpaceAmplificationPercent int64 `json:"spaceAmplificationPercent"`
	// Error says why df failed at At; the figures are then zero.
	Error string `json:"error,omitempty"`
	// ErrorReason classifies Error (a zenfs.Reason).
	ErrorReason string `json:"errorReason,omitempty"`
}

// maxSpaceError keeps the annotation small.
const maxSpaceError = 512

// Encode is the annotation's value.
func (s Space) Encode() (string, error) {
	s.Error = truncate(s.Error, maxSpaceError)
	b, err := json.Marshal(s)
	return string(b), err
}

// ParseSpace reads an annotation value, refusing what a helper would not
// write: no time, or negative figures.
func ParseSpace(v string) (Space, error) {
	var s Space
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return Space{}, fmt.Errorf("zenfs space annotation: %w", err)
	}
	if s.At.IsZero() {
		return Space{}, errors.New("zenfs space annotation: no time")
	}
	if s.FreeBytes < 0 || s.UsedBytes < 0 || s.ReclaimableBytes < 0 || s.SpaceAmplificationPercent < 0 {
		return Space{}, fmt.Errorf("zenfs space annotation: negative figures in %q", v)
	}
	return s, nil
}
