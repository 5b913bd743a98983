package zonedfs

import (
	"fmt"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
)

// DecisionInput is everything the format decision for a zoned btrfs or f2fs
// depends on.
type DecisionInput struct {
	Want   Filesystem
	Policy dbinit.Policy
	// Token is the reformatToken the user set now ("" for none).
	Token string
	// Found is blkid's probe of the device.
	Found Probe
	// HasZenFS: a ZenFS superblock is on the device (blkid does not know ZenFS).
	HasZenFS bool
	// Empty: no sequential zone holds data (zbd.IsEmpty).
	Empty bool
}

// Decide applies the format policy with the same rule as ZenFS's: nothing is
// formatted over data unless the user set a reformat token that the file
// system on the device was not made with, and formatPolicy Never overrides
// even that. A file system of the wanted type is kept, whoever made it.
func Decide(in DecisionInput) dbinit.Decision {
	found := describe(in)
	if in.Found.Type == string(in.Want) {
		applied, _ := AppliedToken(in.Found.Label, in.Token)
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
		return dbinit.Decision{Action: dbinit.ActionRefuse, Reason: fmt.Sprintf("device holds %s, not %s, and "+
			"formatPolicy is Never; format it by hand, or set formatPolicy to IfNeeded", found, in.Want)}
	}
	if in.Policy != dbinit.PolicyIfNeeded {
		return dbinit.Decision{Action: dbinit.ActionRefuse, Reason: fmt.Sprintf("unknown formatPolicy %q", in.Policy)}
	}
	if in.Token != "" && !(in.Empty && in.Found.Type == "" && !in.HasZenFS) {
		return dbinit.Decision{Action: dbinit.ActionFormat, Force: true, Reason: fmt.Sprintf(
			"reformatToken %q is set; formatting %s replaces %s", in.Token, in.Want, found)}
	}
	if in.Empty && in.Found.Type == "" && !in.HasZenFS {
		return dbinit.Decision{Action: dbinit.ActionFormat, Reason: fmt.Sprintf(
			"device is empty; formatting it with %s in zoned mode", in.Want)}
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
		return s
	case in.Empty:
		return "nothing"
	}
	return "data of no kind blkid knows (written zones)"
}
