package fsformat

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// backendCases are every backend: the name and whether the device is zoned (xfs is made either way).
var backendCases = []struct {
	name  string
	zoned bool
}{{"zenfs", true}, {"btrfs", true}, {"f2fs", true}, {"xfs", true}, {"ext4", false}, {"xfs", false}}

func backends() []Backend {
	var bs []Backend
	for _, c := range backendCases {
		b, err := ForName(c.name, c.zoned)
		if err != nil {
			panic(err)
		}
		bs = append(bs, b)
	}
	return bs
}

// madeWith is what a device holding b's file system, made by zns-mysql with token, looks like to the readers:
// a ZenFS superblock and the aux directory's record, or a blkid signature with the label that hashes the token.
func madeWith(b Backend, token string) Observed {
	if b.Name() == "zenfs" {
		return Observed{ZenFS: true, RecordedToken: token}
	}
	return Observed{Probe: zonedfs.Probe{Type: b.Name(), Label: zonedfs.Label(token), UUID: "u"}}
}

// someoneElses is another file system than b's, which b's backend never keeps.
func someoneElses(b Backend) Observed {
	if b.Name() == "btrfs" {
		return Observed{Probe: zonedfs.Probe{Type: "f2fs", Label: "data"}}
	}
	return Observed{Probe: zonedfs.Probe{Type: "btrfs", Label: "data"}}
}

// TestDecideSameRuleForEveryBackend is issue 28's rule stated once and checked for every backend: empty:
// format; the wanted file system: keep, unless a token it was not made with asks to replace it; anything else:
// refused unless a new token; Never: never a format.
func TestDecideSameRuleForEveryBackend(t *testing.T) {
	devices := map[string]func(Backend) Observed{
		"empty":                func(Backend) Observed { return Observed{Empty: true} },
		"own, made without":    func(b Backend) Observed { return madeWith(b, "") },
		"own, made with t1":    func(b Backend) Observed { return madeWith(b, "t1") },
		"another file system":  someoneElses,
		"unknown data":         func(Backend) Observed { return Observed{} },
		"unknown data, old t1": func(Backend) Observed { return Observed{RecordedToken: "t1"} },
	}
	n := 0
	for _, b := range backends() {
		for dev, observe := range devices {
			for _, token := range []string{"", "t1", "t2"} {
				for _, p := range []Policy{PolicyIfNeeded, PolicyNever} {
					n++
					o := observe(b)
					got := Decide(Input{Want: b, Policy: p, Token: token, Found: o})
					own := strings.HasPrefix(dev, "own")
					applied := dev == "own, made with t1" && token == "t1" ||
						b.Name() == "zenfs" && dev == "unknown data, old t1" && token == "t1"
					newToken := token != "" && !applied
					var want Action
					switch {
					case own && p == PolicyNever, own && !newToken:
						want = ActionKeep
					case p == PolicyNever:
						want = ActionRefuse
					case own, dev == "empty", newToken:
						want = ActionFormat
					default:
						want = ActionRefuse
					}
					name := fmt.Sprintf("%s(zoned=%v)/%s/token=%q/%s", b.Name(), b.Zoned(), dev, token, p)
					if got.Action != want {
						t.Errorf("%s: %s (%s), want %s", name, got.Action, got.Reason, want)
					}
					if got.Force != (want == ActionFormat && dev != "empty") {
						t.Errorf("%s: force=%v; a format over anything but an empty device is forced, nothing else", name, got.Force)
					}
					if got.Reason == "" {
						t.Errorf("%s: no reason", name)
					}
				}
			}
		}
	}
	if n != len(backendCases)*6*3*2 {
		t.Fatalf("covered %d cases", n)
	}
}

// The property the product promises, stated on its own: a file system the backend keeps is never formatted
// without a token it was not made with.
func TestOwnFilesystemNeverFormattedWithoutNewToken(t *testing.T) {
	for _, b := range backends() {
		for _, p := range []Policy{PolicyIfNeeded, PolicyNever} {
			for _, tk := range [][2]string{{"", ""}, {"", "a"}, {"a", "a"}} {
				o := madeWith(b, tk[1])
				if d := Decide(Input{Want: b, Policy: p, Token: tk[0], Found: o}); d.Action == ActionFormat {
					t.Errorf("%s %s token %q made with %q: formatted: %s", b.Name(), p, tk[0], tk[1], d.Reason)
				}
			}
		}
	}
}

func TestDecideZoned(t *testing.T) {
	btrfs := Labelled{FS: zonedfs.Btrfs}
	cases := []struct {
		name      string
		in        in
		action    Action
		force     bool
		inMessage string
	}{
		{"someone's zoned btrfs kept: it was made for this", in{Found: zonedfs.Probe{Type: "btrfs", Label: "home"}}, ActionKeep, false, "home"},
		{"ZenFS refused for btrfs", in{HasZenFS: true}, ActionRefuse, false, "ZenFS"},
		{"ZenFS replaced with a token", in{HasZenFS: true, Token: "t"}, ActionFormat, true, "ZenFS"},
		{"ZenFS on an otherwise empty report", in{HasZenFS: true, Empty: true}, ActionRefuse, false, "ZenFS"},
		{"unknown data refused", in{}, ActionRefuse, false, "written zones"},
		{"empty: zoned mode", in{Empty: true}, ActionFormat, false, "in zoned mode"},
		{"Never ignores a new token", in{Found: zonedfs.Probe{Type: "btrfs", Label: zonedfs.Label("")}, Token: "t2", Policy: PolicyNever}, ActionKeep, false, "ignored"},
	}
	for _, c := range cases {
		d := Decide(c.in.input(btrfs))
		if d.Action != c.action || d.Force != c.force || !strings.Contains(d.Reason, c.inMessage) {
			t.Errorf("%s: %+v; want %s force=%v with %q", c.name, d, c.action, c.force, c.inMessage)
		}
	}
}

// TestDecideZenFS: what only ZenFS has, a metadata zone it reads on mounting and a token recorded beside it.
func TestDecideZenFS(t *testing.T) {
	cases := []struct {
		name      string
		in        in
		action    Action
		force     bool
		inMessage string
	}{
		{"foreign metadata zone beside a ZenFS: refused", in{HasZenFS: true, ForeignMeta: true}, ActionRefuse, false, "reset that zone"},
		{"foreign metadata zone, Never: refused", in{HasZenFS: true, ForeignMeta: true, Policy: PolicyNever}, ActionRefuse, false, "by hand"},
		{"foreign metadata zone, new token: replaced", in{HasZenFS: true, ForeignMeta: true, Token: "t2", Recorded: "t1"}, ActionFormat, true, "t2"},
		{"foreign metadata zone, applied token: refused", in{HasZenFS: true, ForeignMeta: true, Token: "t1", Recorded: "t1"}, ActionRefuse, false, "reset that zone"},
		{"foreign bytes alone: refused", in{ForeignMeta: true}, ActionRefuse, false, "not ZenFS"},
		{"token already applied, device not ZenFS: refused with the hint", in{Token: "t1", Recorded: "t1"}, ActionRefuse, false, `"t1" was already applied`},
		{"a btrfs where ZenFS is wanted: refused naming it", in{Found: zonedfs.Probe{Type: "btrfs", Label: "zns-mysql"}}, ActionRefuse, false, `btrfs (label "zns-mysql")`},
		{"Never, no ZenFS: refused", in{Empty: true, Policy: PolicyNever}, ActionRefuse, false, "not zenfs"},
		{"empty: formatted", in{Empty: true}, ActionFormat, false, "formatting it with zenfs"},
	}
	for _, c := range cases {
		d := Decide(c.in.input(ZenFS{}))
		if d.Action != c.action || d.Force != c.force || !strings.Contains(d.Reason, c.inMessage) {
			t.Errorf("%s: %+v; want %s force=%v with %q", c.name, d, c.action, c.force, c.inMessage)
		}
	}
}

func TestDecideUnknownPolicy(t *testing.T) {
	for _, b := range backends() {
		d := Decide(Input{Want: b, Policy: "Sometimes", Found: Observed{Empty: true}})
		if d.Action != ActionRefuse || !strings.Contains(d.Reason, `"Sometimes"`) {
			t.Errorf("%s: unknown policy: %+v", b.Name(), d)
		}
	}
}

func TestForName(t *testing.T) {
	for _, c := range backendCases {
		got, err := ForName(c.name, c.zoned)
		if err != nil || got.Name() != c.name || got.Zoned() != c.zoned {
			t.Errorf("ForName(%q, %v) = %v, %v", c.name, c.zoned, got, err)
		}
	}
	// zenfs, btrfs and f2fs are zoned whatever the caller says; ext4 has no zoned mode.
	for _, name := range []string{"zenfs", "btrfs", "f2fs"} {
		if got, err := ForName(name, false); err != nil || !got.Zoned() {
			t.Errorf("ForName(%q, false) = %v, %v", name, got, err)
		}
	}
	if _, err := ForName("ext4", true); err == nil || !strings.Contains(err.Error(), "no zoned mode") {
		t.Errorf("zoned ext4: %v", err)
	}
	if _, err := ForName("vfat", false); err == nil || !strings.Contains(err.Error(), "zenfs, btrfs, f2fs, ext4 or xfs") {
		t.Errorf("vfat: %v", err)
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

// A zoned device holds an XFS only because someone made it for zoned use, so zoned XFS keeps any XFS it finds,
// as btrfs and f2fs do; on a conventional device only zns-mysql's own XFS is kept, since any data disk may hold
// one.
func TestXFSKeptByMode(t *testing.T) {
	someones := Observed{Probe: zonedfs.Probe{Type: "xfs", Label: "archive"}}
	zoned, _ := ForName("xfs", true)
	conventional, _ := ForName("xfs", false)
	if d := Decide(Input{Want: zoned, Policy: PolicyIfNeeded, Found: someones}); d.Action != ActionKeep {
		t.Errorf("zoned XFS over someone's XFS: %s (%s), want keep", d.Action, d.Reason)
	}
	if d := Decide(Input{Want: conventional, Policy: PolicyIfNeeded, Found: someones}); d.Action != ActionRefuse ||
		!strings.Contains(d.Reason, "not made by zns-mysql") {
		t.Errorf("conventional XFS over someone's XFS: %s (%s), want refused naming it", d.Action, d.Reason)
	}
	// The realtime device of a zoned XFS whose metadata is elsewhere has no signature: only its written zones
	// tell it from an empty device, and then it is refused as data blkid does not know.
	rt := Observed{}
	if d := Decide(Input{Want: zoned, Policy: PolicyIfNeeded, Found: rt}); d.Action != ActionRefuse ||
		!strings.Contains(d.Reason, "written zones") {
		t.Errorf("written zones without a signature: %s (%s), want refused", d.Action, d.Reason)
	}
}
