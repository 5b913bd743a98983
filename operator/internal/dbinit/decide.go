// Package dbinit decides whether the database-side helper formats a zoned
// device with ZenFS, and defines the report it hands to the operator.
package dbinit

import (
	"fmt"
	"strings"
)

// Policy says when the helper may run zenfs mkfs.
type Policy string

const (
	// PolicyIfNeeded formats a device that is empty; the default.
	PolicyIfNeeded Policy = "IfNeeded"
	// PolicyNever never formats, even when a new reformat token is given:
	// it is the lock for devices whose data must survive any mistake.
	PolicyNever Policy = "Never"
)

// ParsePolicy accepts the policy names; empty means IfNeeded.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", PolicyIfNeeded:
		return PolicyIfNeeded, nil
	case PolicyNever:
		return PolicyNever, nil
	}
	return "", fmt.Errorf("format policy %q: want %s or %s", s, PolicyIfNeeded, PolicyNever)
}

// Action is what the helper does with the device.
type Action string

const (
	ActionFormat Action = "format"
	ActionKeep   Action = "keep"
	ActionRefuse Action = "refuse"
)

// DecisionInput is everything the decision depends on.
type DecisionInput struct {
	Policy Policy
	// RequestedToken is the reformatToken the user set now ("" for none).
	RequestedToken string
	// RecordedToken is the last token a successful format applied.
	RecordedToken string
	// HasZenFS: the device holds a ZenFS file system.
	HasZenFS bool
	// Empty: no sequential zone of the device holds data.
	Empty bool
	// ForeignMeta: a written metadata zone starts with bytes that are not a
	// ZenFS superblock (zenfs.Meta.Unsafe). With a ZenFS beside it, the file
	// system cannot be used as it is: zenfs and MyRocks's ZenFS read every
	// written metadata zone when they mount, and take a word of those bytes
	// as a size to allocate.
	ForeignMeta bool
}

// Decision says what to do and why, in words for the user.
type Decision struct {
	Action Action
	// Force adds --force to zenfs mkfs, which refuses to replace an
	// existing file system without it.
	Force  bool
	Reason string
}

// Decide applies the format policy. Data is never destroyed by default:
// only an empty device is formatted unless the user sets a reformat token
// that has not been applied before, and PolicyNever overrides even that.
func Decide(in DecisionInput) Decision {
	newToken := in.RequestedToken != "" && in.RequestedToken != in.RecordedToken
	switch in.Policy {
	case PolicyNever:
		if in.HasZenFS && in.ForeignMeta {
			return Decision{Action: ActionRefuse, Reason: "device holds ZenFS, but " + foreignMeta +
				"; formatPolicy is Never, so only a reset of that zone by hand clears it"}
		}
		if in.HasZenFS {
			reason := "device holds ZenFS; formatPolicy is Never"
			if newToken {
				reason += fmt.Sprintf(", so reformatToken %q is ignored", in.RequestedToken)
			}
			return Decision{Action: ActionKeep, Reason: reason}
		}
		return Decision{Action: ActionRefuse, Reason: "device has no ZenFS and formatPolicy is Never; " +
			"format it by hand, or set formatPolicy to IfNeeded"}
	case PolicyIfNeeded:
	default:
		return Decision{Action: ActionRefuse, Reason: fmt.Sprintf("unknown formatPolicy %q", in.Policy)}
	}

	if newToken {
		what := "an empty device"
		switch {
		case in.HasZenFS:
			what = "the existing ZenFS and all its data"
		case !in.Empty:
			what = "the data on the device"
		}
		return Decision{Action: ActionFormat, Force: true, Reason: fmt.Sprintf(
			"reformatToken %q differs from the last applied one; formatting replaces %s", in.RequestedToken, what)}
	}
	switch {
	case in.HasZenFS && in.ForeignMeta:
		return Decision{Action: ActionRefuse, Reason: "device holds ZenFS, but " + foreignMeta + ": reset that " +
			"zone (ZenFS's live log is in another one) or set reformatToken to a new value to erase the device"}
	case in.HasZenFS:
		return Decision{Action: ActionKeep, Reason: "device holds ZenFS; it is never re-formatted " +
			"unless reformatToken is set to a new value"}
	case in.Empty:
		return Decision{Action: ActionFormat, Reason: "device is empty and has no ZenFS"}
	}
	var hint string
	if in.RequestedToken != "" {
		hint = fmt.Sprintf(" (reformatToken %q was already applied; a new value is needed)", in.RequestedToken)
	}
	return Decision{Action: ActionRefuse, Reason: "device holds data that is not ZenFS; it is not formatted " +
		"without confirmation: set reformatToken to a new value to erase it" + hint}
}

// foreignMeta says why a ZenFS with a foreign metadata zone is not kept as it is.
const foreignMeta = "a metadata zone starts with data that is not ZenFS, which zenfs and MyRocks would read as " +
	"a size to allocate on mounting it"

// maxTokenLen keeps the token readable in a status and in its file.
const maxTokenLen = 128

// ValidateToken accepts printable tokens without whitespace at the ends.
func ValidateToken(t string) error {
	if len(t) > maxTokenLen {
		return fmt.Errorf("reformatToken is %d bytes; at most %d", len(t), maxTokenLen)
	}
	if strings.TrimSpace(t) != t {
		return fmt.Errorf("reformatToken %q has leading or trailing whitespace", t)
	}
	for _, r := range t {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("reformatToken %q contains a control character", t)
		}
	}
	return nil
}
