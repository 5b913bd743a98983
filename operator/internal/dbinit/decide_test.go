package dbinit

import (
	"fmt"
	"strings"
	"testing"
)

// Every combination of the inputs, with the expected action and force flag.
func TestDecideExhaustive(t *testing.T) {
	type tokens struct{ requested, recorded string }
	tokenCases := map[string]tokens{
		"no token":          {"", ""},
		"no token, old one": {"", "t1"},
		"applied token":     {"t1", "t1"},
		"new token":         {"t2", "t1"},
		"first token":       {"t1", ""},
	}
	type want struct {
		action  Action
		force   bool
		mention string
	}
	expect := func(p Policy, tok string, hasZenFS, empty, foreign bool) want {
		newToken := tok == "new token" || tok == "first token"
		switch {
		case p == PolicyNever && hasZenFS && foreign:
			// Keeping it would hand mysqld a file system whose mount aborts.
			return want{ActionRefuse, false, "reset of that zone"}
		case p == PolicyNever && hasZenFS:
			return want{ActionKeep, false, "formatPolicy is Never"}
		case p == PolicyNever:
			return want{ActionRefuse, false, "device has no ZenFS and formatPolicy is Never"}
		case newToken:
			return want{ActionFormat, true, "reformatToken"}
		case hasZenFS && foreign:
			return want{ActionRefuse, false, "not ZenFS"}
		case hasZenFS:
			return want{ActionKeep, false, "never re-formatted"}
		case empty:
			return want{ActionFormat, false, "empty"}
		default:
			return want{ActionRefuse, false, "set reformatToken"}
		}
	}
	n := 0
	for _, p := range []Policy{PolicyIfNeeded, PolicyNever} {
		for name, tk := range tokenCases {
			for _, hasZenFS := range []bool{false, true} {
				// A foreign metadata zone is written, so an empty device has none.
				for _, c := range []struct{ empty, foreign bool }{{false, false}, {false, true}, {true, false}} {
					empty, foreign := c.empty, c.foreign
					n++
					in := DecisionInput{Policy: p, RequestedToken: tk.requested, RecordedToken: tk.recorded,
						HasZenFS: hasZenFS, Empty: empty, ForeignMeta: foreign}
					w := expect(p, name, hasZenFS, empty, foreign)
					got := Decide(in)
					t.Run(fmt.Sprintf("%s/%s/zenfs=%v/empty=%v/foreign=%v", p, name, hasZenFS, empty, foreign), func(t *testing.T) {
						if got.Action != w.action || got.Force != w.force {
							t.Errorf("Decide = %+v, want action %s force %v", got, w.action, w.force)
						}
						if !strings.Contains(got.Reason, w.mention) {
							t.Errorf("reason %q does not mention %q", got.Reason, w.mention)
						}
					})
				}
			}
		}
	}
	if n != 2*5*2*3 {
		t.Fatalf("covered %d cases", n)
	}
}

// The property the product promises, stated on its own.
func TestExistingZenFSNeverFormattedWithoutNewToken(t *testing.T) {
	for _, p := range []Policy{PolicyIfNeeded, PolicyNever} {
		for _, tk := range [][2]string{{"", ""}, {"", "a"}, {"a", "a"}} {
			for _, empty := range []bool{false, true} {
				d := Decide(DecisionInput{Policy: p, RequestedToken: tk[0], RecordedToken: tk[1], HasZenFS: true, Empty: empty})
				if d.Action == ActionFormat {
					t.Errorf("%s %q: formatted an existing ZenFS", p, tk)
				}
			}
		}
	}
}

func TestDecideReasons(t *testing.T) {
	d := Decide(DecisionInput{Policy: PolicyNever, RequestedToken: "t2", RecordedToken: "t1", HasZenFS: true})
	if !strings.Contains(d.Reason, `reformatToken "t2" is ignored`) {
		t.Errorf("Never with a new token: %q", d.Reason)
	}
	d = Decide(DecisionInput{Policy: PolicyIfNeeded, RequestedToken: "t1", RecordedToken: "t1"})
	if !strings.Contains(d.Reason, `"t1" was already applied`) {
		t.Errorf("refusal with an applied token: %q", d.Reason)
	}
	d = Decide(DecisionInput{Policy: PolicyIfNeeded, RequestedToken: "t2", HasZenFS: true})
	if !strings.Contains(d.Reason, "existing ZenFS") {
		t.Errorf("reformat: %q", d.Reason)
	}
	d = Decide(DecisionInput{Policy: "Sometimes", HasZenFS: false, Empty: true})
	if d.Action != ActionRefuse || !strings.Contains(d.Reason, `"Sometimes"`) {
		t.Errorf("unknown policy: %+v", d)
	}
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]Policy{"": PolicyIfNeeded, "IfNeeded": PolicyIfNeeded, "Never": PolicyNever} {
		if got, err := ParsePolicy(in); err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"never", "Always", " IfNeeded"} {
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) accepted", bad)
		}
	}
}

func TestValidateToken(t *testing.T) {
	for _, ok := range []string{"", "2024-05-01", "reformat please #3"} {
		if err := ValidateToken(ok); err != nil {
			t.Errorf("ValidateToken(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{" x", "x\n", "a\tb", strings.Repeat("x", 129), "a\x00b"} {
		if err := ValidateToken(bad); err == nil {
			t.Errorf("ValidateToken(%q) accepted", bad)
		}
	}
}
