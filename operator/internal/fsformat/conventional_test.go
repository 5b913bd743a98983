package fsformat

import (
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// in is a decision's input in the words of the tables below.
type in struct {
	Found        zonedfs.Probe
	HasZenFS     bool
	ForeignMeta  bool
	Recorded     string
	Empty        bool
	Precondition bool
	Token        string
	Policy       Policy
}

func (c in) input(b Backend) Input {
	if c.Policy == "" {
		c.Policy = PolicyIfNeeded
	}
	return Input{Want: b, Policy: c.Policy, Token: c.Token, Precondition: c.Precondition, Found: Observed{
		Probe: c.Found, ZenFS: c.HasZenFS, ForeignMeta: c.ForeignMeta, Empty: c.Empty, RecordedToken: c.Recorded}}
}

// TestDecideConventional is the decision table of storage.device: what znsdb format does with a conventional
// device for ext4, and whether it preconditions first.
func TestDecideConventional(t *testing.T) {
	ours := zonedfs.Probe{Type: "ext4", Label: zonedfs.Label("t1"), UUID: "u"}
	oursNoToken := zonedfs.Probe{Type: "ext4", Label: zonedfs.Label("")}
	cases := []struct {
		name      string
		in        in
		action    Action
		force     bool
		precond   bool
		inMessage string
		// note is the start of NotPreconditioned, "" for none.
		note string
	}{
		// empty: no signature and zeroed ends
		{"empty, no token: format", in{Empty: true}, ActionFormat, false, false, "empty", ""},
		{"empty, no token, precondition asked: format without it", in{Empty: true, Precondition: true},
			ActionFormat, false, false, "empty", "not preconditioned: preconditioning destroys"},
		{"empty, new token, precondition asked: precondition and format", in{Empty: true, Token: "t1", Precondition: true},
			ActionFormat, false, true, "empty", ""},
		{"empty, Never: refused", in{Empty: true, Policy: PolicyNever, Precondition: true, Token: "t1"},
			ActionRefuse, false, false, "Never", ""},
		// ours
		{"ours with the applied token: kept", in{Found: ours, Token: "t1", Precondition: true},
			ActionKeep, false, false, "never", ""},
		{"ours, no token now: kept", in{Found: ours}, ActionKeep, false, false, "never", ""},
		{"ours made without a token, none now: kept", in{Found: oursNoToken, Precondition: true},
			ActionKeep, false, false, "never", ""},
		{"ours, new token: preconditioned and replaced", in{Found: ours, Token: "t2", Precondition: true},
			ActionFormat, true, true, "t2", ""},
		{"ours, new token, no precondition asked", in{Found: ours, Token: "t2"},
			ActionFormat, true, false, "t2", ""},
		{"ours, new token, Never: kept", in{Found: ours, Token: "t2", Policy: PolicyNever, Precondition: true},
			ActionKeep, false, false, "ignored", ""},
		{"ours but xfs, for ext4: refused", in{Found: zonedfs.Probe{Type: "xfs", Label: zonedfs.Label("")}},
			ActionRefuse, false, false, "xfs", ""},
		// anything else
		{"someone's ext4: refused", in{Found: zonedfs.Probe{Type: "ext4", Label: "home"}, Precondition: true},
			ActionRefuse, false, false, "not made by zns-mysql", ""},
		{"someone's ext4 without a label: refused", in{Found: zonedfs.Probe{Type: "ext4"}},
			ActionRefuse, false, false, "not made by zns-mysql", ""},
		{"someone's ext4, new token: preconditioned and replaced", in{Found: zonedfs.Probe{Type: "ext4", Label: "home"}, Token: "t", Precondition: true},
			ActionFormat, true, true, "home", ""},
		{"another file system: refused", in{Found: zonedfs.Probe{Type: "xfs", Label: "data"}},
			ActionRefuse, false, false, "xfs", ""},
		{"a partition table: refused", in{Found: zonedfs.Probe{Type: "gpt"}}, ActionRefuse, false, false, "gpt", ""},
		{"ZenFS superblock: refused", in{HasZenFS: true}, ActionRefuse, false, false, "ZenFS", ""},
		{"unknown non-zero data: refused", in{}, ActionRefuse, false, false, "first or last MiB", ""},
		{"unknown data, token: preconditioned and formatted", in{Token: "t", Precondition: true},
			ActionFormat, true, true, "first or last MiB", ""},
		// An interrupted precondition: fio's data, no label (mkfs never ran), the token not applied.
		{"fio data, no label, token not applied: precondition again", in{Token: "t1", Precondition: true},
			ActionFormat, true, true, "t1", ""},
		{"fio data, no token: refused, nothing written", in{Precondition: true},
			ActionRefuse, false, false, "reformatToken", ""},
		{"unknown policy", in{Empty: true, Policy: "Sometimes"}, ActionRefuse, false, false, "Sometimes", ""},
	}
	for _, c := range cases {
		d := Decide(c.in.input(Labelled{FS: zonedfs.Ext4}))
		if d.Action != c.action || d.Force != c.force || d.Precondition != c.precond ||
			!strings.Contains(d.Reason, c.inMessage) || !strings.HasPrefix(d.NotPreconditioned, c.note) ||
			(c.note == "") != (d.NotPreconditioned == "") {
			t.Errorf("%s: %+v; want %s force=%v precondition=%v with %q, note %q", c.name, d, c.action, c.force,
				c.precond, c.inMessage, c.note)
		}
		if d.Precondition && (d.Action != ActionFormat || c.in.Token == "") {
			t.Errorf("%s: preconditions without a confirmed format", c.name)
		}
	}
}
