package zonedfs

import (
	"fmt"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
)

// DecisionInput is everything the format decision depends on, for every file
// system of the package.
type DecisionInput struct {
	Want   Filesystem
	Policy dbinit.Policy
	// Token is the reformatToken the user set now ("" for none).
	Token string
	// Found is blkid's probe of the device.
	Found Probe
	// HasZenFS: a ZenFS superblock is on the device (blkid does not know ZenFS).
	HasZenFS bool
	// Empty: nothing is on the device. Zoned: no sequential zone holds data
	// (zbd.IsEmpty). Conventional: blkid found no signature and both ends
	// read back as zeros (ZeroEnds).
	Empty bool
	// Precondition: the user asked for the device to be preconditioned before
	// the file system is made (conventional devices only).
	Precondition bool
}

// Decision is the format decision, with whether to precondition first.
type Decision struct {
	dbinit.Decision
	// Precondition: write the whole device before mkfs. Only when asked for
	// and the format is confirmed by a token that the device's file system
	// was not made with: preconditioning destroys everything, an empty
	// device's unknown neighbours included, so emptiness alone never starts it.
	Precondition bool
	// NotPreconditioned says why a precondition that was asked for does not
	// run ("" when it runs, or was not asked for).
	NotPreconditioned string
}

// NoTokenNoPrecondition is why an empty device is formatted without the
// precondition the user asked for.
const NoTokenNoPrecondition = "not preconditioned: preconditioning destroys the device's contents, so it runs " +
	"only with a new reformatToken"

// Decide applies the format policy, the same for every file system: nothing
// is formatted over data unless the user set a reformat token that the file
// system on the device was not made with, and formatPolicy Never overrides
// even that. A zoned file system of the wanted type is kept whoever made it
// (a btrfs in zoned mode was made for this); on a conventional device only
// one zns-mysql made is kept, since any data disk may hold an ext4 or xfs.
//
// A decision to format with a new token also preconditions when asked to.
// A precondition that was interrupted left no label (mkfs, which writes it,
// runs only after a complete one), so the device then holds fio's data and
// no file system, the token is still new, and it preconditions again.
func Decide(in DecisionInput) Decision {
	d := Decision{Decision: decide(in)}
	if !in.Precondition {
		return d
	}
	switch {
	case d.Action != dbinit.ActionFormat:
		// Kept or refused: nothing is written, so nothing to say beyond the reason.
	case in.Token == "":
		d.NotPreconditioned = NoTokenNoPrecondition
	default:
		d.Precondition = true
	}
	return d
}

func decide(in DecisionInput) dbinit.Decision {
	found := describe(in)
	applied, ours := AppliedToken(in.Found.Label, in.Token)
	if in.Found.Type == string(in.Want) && (ours || in.Want.Zoned()) {
		switch {
		case in.Token == "" || applied:
			return dbinit.Decision{Action: dbinit.ActionKeep, Reason: fmt.Sprintf("device holds %s; it is never "+
				"re-formatted unless reformatToken is set to a new value", found)}
		case in.Policy == dbinit.PolicyNever:
			return dbinit.Decision{Action: dbinit.ActionKeep, Reason: fmt.Sprintf("device holds %s; formatPolicy "+
				"is Never, so reformatToken %q is ignored", found, in.Token)}
		}
		return dbinit.Decision{Action: dbinit.ActionFormat, Force: true, Reason: fmt.Sprintf(
			"reformatToken %q is not the one %s was made with; formatting replaces it and all its data", in.Token, found)}
	}
	if in.Policy == dbinit.PolicyNever {
		want := string(in.Want)
		if !in.Want.Zoned() {
			want += " made by zns-mysql"
		}
		return dbinit.Decision{Action: dbinit.ActionRefuse, Reason: fmt.Sprintf("device holds %s, not %s, and "+
			"formatPolicy is Never; format it by hand, or set formatPolicy to IfNeeded", found, want)}
	}
	if in.Policy != dbinit.PolicyIfNeeded {
		return dbinit.Decision{Action: dbinit.ActionRefuse, Reason: fmt.Sprintf("unknown formatPolicy %q", in.Policy)}
	}
	empty := in.Empty && in.Found.Type == "" && !in.HasZenFS
	if in.Token != "" && !empty {
		return dbinit.Decision{Action: dbinit.ActionFormat, Force: true, Reason: fmt.Sprintf(
			"reformatToken %q is set; formatting %s replaces %s", in.Token, in.Want, found)}
	}
	if empty {
		mode := ""
		if in.Want.Zoned() {
			mode = " in zoned mode"
		}
		return dbinit.Decision{Action: dbinit.ActionFormat, Reason: fmt.Sprintf(
			"device is empty; formatting it with %s%s", in.Want, mode)}
	}
	return dbinit.Decision{Action: dbinit.ActionRefuse, Reason: fmt.Sprintf("device holds %s; it is not "+
		"formatted with %s without confirmation: set reformatToken to a new value to erase it", found, in.Want)}
}

// describe names what the device holds, for a person.
func describe(in DecisionInput) string {
	switch {
	case in.HasZenFS:
		return "a ZenFS file system"
	case in.Found.Type != "":
		s := in.Found.Type
		if in.Found.Label != "" {
			s += fmt.Sprintf(" (label %q)", in.Found.Label)
		}
		if _, ours := AppliedToken(in.Found.Label, ""); !ours && !in.Want.Zoned() {
			s += " not made by zns-mysql"
		}
		return s
	case in.Empty:
		return "nothing"
	case in.Want.Zoned():
		return "data of no kind blkid knows (written zones)"
	}
	return "data of no kind blkid knows (non-zero bytes in its first or last MiB)"
}
