package fsformat

import (
	"fmt"
	"strings"
)

// Policy says when the engine may make a file system.
type Policy string

const (
	// PolicyIfNeeded formats a device that is empty; the default.
	PolicyIfNeeded Policy = "IfNeeded"
	// PolicyNever never formats, even when a new reformat token is given: it is the lock for devices whose data
	// must survive any mistake.
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

// Action is what the engine does with the device.
type Action string

const (
	ActionFormat Action = "format"
	ActionKeep   Action = "keep"
	ActionRefuse Action = "refuse"
)

// Input is everything the decision depends on.
type Input struct {
	Want   Backend
	Policy Policy
	// Token is the reformatToken the user set now ("" for none).
	Token string
	Found Observed
	// Precondition: the user asked for the device to be preconditioned before the file system is made
	// (conventional devices only).
	Precondition bool
}

// Decision says what to do and why, in words for the user.
type Decision struct {
	Action Action
	// Force: the format replaces something (confirmed by a new token), so the zones are reset first and mkfs
	// is told to overwrite what it finds.
	Force  bool
	Reason string
	// Precondition: write the whole device before mkfs. Only when asked for and the format is confirmed by a
	// token that the device's file system was not made with: preconditioning destroys everything, an empty
	// device's unknown neighbours included, so emptiness alone never starts it. An interrupted precondition
	// left no file system (mkfs runs only after a complete one), so the token is still new and it runs again.
	Precondition bool
	// NotPreconditioned says why a precondition that was asked for does not run ("" when it runs, or was not
	// asked for).
	NotPreconditioned string
}

// NoTokenNoPrecondition is why an empty device is formatted without the precondition the user asked for.
const NoTokenNoPrecondition = "not preconditioned: preconditioning destroys the device's contents, so it runs " +
	"only with a new reformatToken"

// Decide is the format rule, the same for every backend: a device that holds the wanted file system is kept,
// an empty one is formatted, and anything else is refused unless the user set a reformat token that the file
// system on the device was not made with. format.policy Never overrides even that.
func Decide(in Input) Decision {
	d := decide(in)
	if !in.Precondition {
		return d
	}
	switch {
	case d.Action != ActionFormat:
		// Kept or refused: nothing is written, so nothing to say beyond the reason.
	case in.Token == "":
		d.NotPreconditioned = NoTokenNoPrecondition
	default:
		d.Precondition = true
	}
	return d
}

func decide(in Input) Decision {
	b, o := in.Want, in.Found
	if in.Policy != PolicyIfNeeded && in.Policy != PolicyNever {
		return Decision{Action: ActionRefuse, Reason: fmt.Sprintf("unknown format.policy %q", in.Policy)}
	}
	found := Describe(b, o)
	newToken := in.Token != "" && !b.MadeWith(o, in.Token)
	if b.Holds(o) {
		return decideOwn(in, found, newToken)
	}
	if in.Policy == PolicyNever {
		return Decision{Action: ActionRefuse, Reason: fmt.Sprintf("device holds %s, not %s, and format.policy is "+
			"Never; format it by hand, or set format.policy to IfNeeded", found, wanted(b))}
	}
	if empty(o) {
		mode := ""
		if b.Zoned() && b.Name() != "zenfs" {
			mode = " in zoned mode"
		}
		return Decision{Action: ActionFormat, Reason: fmt.Sprintf("device is empty; formatting it with %s%s", b.Name(), mode)}
	}
	if newToken {
		return Decision{Action: ActionFormat, Force: true, Reason: fmt.Sprintf(
			"reformatToken %q is set; formatting %s replaces %s", in.Token, b.Name(), found)}
	}
	var hint string
	if in.Token != "" {
		hint = fmt.Sprintf(" (reformatToken %q was already applied; a new value is needed)", in.Token)
	}
	return Decision{Action: ActionRefuse, Reason: fmt.Sprintf("device holds %s; it is not formatted with %s "+
		"without confirmation: set reformatToken to a new value to erase it%s", found, b.Name(), hint)}
}

// decideOwn decides for a device that holds the wanted file system.
func decideOwn(in Input, found string, newToken bool) Decision {
	if in.Found.ForeignMeta {
		// Only ZenFS reads its metadata zones this way; keeping it would hand mysqld a file system whose
		// mount aborts.
		switch {
		case in.Policy == PolicyNever:
			return Decision{Action: ActionRefuse, Reason: "device holds ZenFS, but " + foreignMeta +
				"; format.policy is Never, so only a reset of that zone by hand clears it"}
		case newToken:
			return Decision{Action: ActionFormat, Force: true, Reason: fmt.Sprintf(
				"reformatToken %q is not the one %s was made with; formatting replaces it and all its data", in.Token, found)}
		}
		return Decision{Action: ActionRefuse, Reason: "device holds ZenFS, but " + foreignMeta + ": reset that " +
			"zone (ZenFS's live log is in another one) or set reformatToken to a new value to erase the device"}
	}
	switch {
	case !newToken:
		return Decision{Action: ActionKeep, Reason: fmt.Sprintf("device holds %s; it is never re-formatted "+
			"unless reformatToken is set to a new value", found)}
	case in.Policy == PolicyNever:
		return Decision{Action: ActionKeep, Reason: fmt.Sprintf("device holds %s; format.policy is Never, so "+
			"reformatToken %q is ignored", found, in.Token)}
	}
	return Decision{Action: ActionFormat, Force: true, Reason: fmt.Sprintf(
		"reformatToken %q is not the one %s was made with; formatting replaces it and all its data", in.Token, found)}
}

// empty: nothing at all is on the device, by every reader.
func empty(o Observed) bool {
	return o.Empty && o.Probe.Type == "" && !o.ZenFS && !o.ForeignMeta
}

func wanted(b Backend) string {
	if b.Zoned() {
		return b.Name()
	}
	return b.Name() + " made by zns-mysql"
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
