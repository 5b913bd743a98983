package zonedfs

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// TestDecideConventional is the decision table of storage.device: what znsdb format does with a conventional
// device for ext4, and whether it preconditions first.
func TestDecideConventional(t *testing.T) {
	ours := Probe{Type: "ext4", Label: Label("t1"), UUID: "u"}
	oursNoToken := Probe{Type: "ext4", Label: Label("")}
	cases := []struct {
		name      string
		in        DecisionInput
		action    dbinit.Action
		force     bool
		precond   bool
		inMessage string
		// note is the start of NotPreconditioned, "" for none.
		note string
	}{
		// empty: no signature and zeroed ends
		{"empty, no token: format", DecisionInput{Empty: true}, dbinit.ActionFormat, false, false, "empty", ""},
		{"empty, no token, precondition asked: format without it", DecisionInput{Empty: true, Precondition: true},
			dbinit.ActionFormat, false, false, "empty", "not preconditioned: preconditioning destroys"},
		{"empty, new token, precondition asked: precondition and format", DecisionInput{Empty: true, Token: "t1", Precondition: true},
			dbinit.ActionFormat, false, true, "empty", ""},
		{"empty, Never: refused", DecisionInput{Empty: true, Policy: dbinit.PolicyNever, Precondition: true, Token: "t1"},
			dbinit.ActionRefuse, false, false, "Never", ""},
		// ours
		{"ours with the applied token: kept", DecisionInput{Found: ours, Token: "t1", Precondition: true},
			dbinit.ActionKeep, false, false, "never", ""},
		{"ours, no token now: kept", DecisionInput{Found: ours}, dbinit.ActionKeep, false, false, "never", ""},
		{"ours made without a token, none now: kept", DecisionInput{Found: oursNoToken, Precondition: true},
			dbinit.ActionKeep, false, false, "never", ""},
		{"ours, new token: preconditioned and replaced", DecisionInput{Found: ours, Token: "t2", Precondition: true},
			dbinit.ActionFormat, true, true, "t2", ""},
		{"ours, new token, no precondition asked", DecisionInput{Found: ours, Token: "t2"},
			dbinit.ActionFormat, true, false, "t2", ""},
		{"ours, new token, Never: kept", DecisionInput{Found: ours, Token: "t2", Policy: dbinit.PolicyNever, Precondition: true},
			dbinit.ActionKeep, false, false, "ignored", ""},
		{"ours but xfs, for ext4: refused", DecisionInput{Found: Probe{Type: "xfs", Label: Label("")}},
			dbinit.ActionRefuse, false, false, "xfs", ""},
		// anything else
		{"someone's ext4: refused", DecisionInput{Found: Probe{Type: "ext4", Label: "home"}, Precondition: true},
			dbinit.ActionRefuse, false, false, "not made by zns-mysql", ""},
		{"someone's ext4 without a label: refused", DecisionInput{Found: Probe{Type: "ext4"}},
			dbinit.ActionRefuse, false, false, "not made by zns-mysql", ""},
		{"someone's ext4, new token: preconditioned and replaced", DecisionInput{Found: Probe{Type: "ext4", Label: "home"}, Token: "t", Precondition: true},
			dbinit.ActionFormat, true, true, "home", ""},
		{"another file system: refused", DecisionInput{Found: Probe{Type: "xfs", Label: "data"}},
			dbinit.ActionRefuse, false, false, "xfs", ""},
		{"a partition table: refused", DecisionInput{Found: Probe{Type: "gpt"}}, dbinit.ActionRefuse, false, false, "gpt", ""},
		{"ZenFS superblock: refused", DecisionInput{HasZenFS: true}, dbinit.ActionRefuse, false, false, "ZenFS", ""},
		{"unknown non-zero data: refused", DecisionInput{}, dbinit.ActionRefuse, false, false, "first or last MiB", ""},
		{"unknown data, token: preconditioned and formatted", DecisionInput{Token: "t", Precondition: true},
			dbinit.ActionFormat, true, true, "first or last MiB", ""},
		// An interrupted precondition: fio's data, no label (mkfs never ran), the token not applied.
		{"fio data, no label, token not applied: precondition again", DecisionInput{Token: "t1", Precondition: true},
			dbinit.ActionFormat, true, true, "t1", ""},
		{"fio data, no token: refused, nothing written", DecisionInput{Precondition: true},
			dbinit.ActionRefuse, false, false, "reformatToken", ""},
		{"unknown policy", DecisionInput{Empty: true, Policy: "Sometimes"}, dbinit.ActionRefuse, false, false, "Sometimes", ""},
	}
	for _, c := range cases {
		c.in.Want = Ext4
		if c.in.Policy == "" {
			c.in.Policy = dbinit.PolicyIfNeeded
		}
		d := Decide(c.in)
		if d.Action != c.action || d.Force != c.force || d.Precondition != c.precond ||
			!strings.Contains(d.Reason, c.inMessage) || !strings.HasPrefix(d.NotPreconditioned, c.note) ||
			(c.note == "") != (d.NotPreconditioned == "") {
			t.Errorf("%s: %+v; want %s force=%v precondition=%v with %q, note %q", c.name, d, c.action, c.force,
				c.precond, c.inMessage, c.note)
		}
		if d.Precondition && (d.Action != dbinit.ActionFormat || c.in.Token == "") {
			t.Errorf("%s: preconditions without a confirmed format", c.name)
		}
	}
}

// TestDecideZonedUnchanged: the generalised decision keeps the zoned rule, which keeps a btrfs whoever made it,
// and never preconditions a zoned device (storage.device is the only place a precondition exists).
func TestDecideZonedUnchanged(t *testing.T) {
	d := Decide(DecisionInput{Want: Btrfs, Policy: dbinit.PolicyIfNeeded, Found: Probe{Type: "btrfs", Label: "home"}})
	if d.Action != dbinit.ActionKeep {
		t.Errorf("someone's zoned btrfs: %+v, want kept", d)
	}
	d = Decide(DecisionInput{Want: Btrfs, Policy: dbinit.PolicyIfNeeded})
	if !strings.Contains(d.Reason, "written zones") {
		t.Errorf("unknown data on a zoned device: %q", d.Reason)
	}
}

func TestJudgeConventional(t *testing.T) {
	fit := zbd.Device{Name: "nvme1n1", Model: zbd.ModelNone, CapacityBytes: 4 << 30, Scheduler: "none"}
	small := fit
	small.CapacityBytes = MinConventionalBytes - 4096
	zoned := fit
	zoned.Model = zbd.ModelHostManaged
	aware := fit
	aware.Model = zbd.ModelHostAware
	atMin := fit
	atMin.CapacityBytes = MinConventionalBytes
	for _, c := range []struct {
		name string
		dev  zbd.Device
		want []string
	}{
		{"fit", fit, nil},
		{"at the minimum", atMin, nil},
		{"too small", small, []string{CodeDeviceTooSmall}},
		{"host-managed", zoned, []string{CodeZonedDevice}},
		{"host-aware", aware, []string{CodeZonedDevice}},
	} {
		got := codes(JudgeConventional(XFS, c.dev))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: problems %v, want %v", c.name, got, c.want)
		}
	}
	for _, p := range JudgeConventional(Ext4, zoned) {
		if !strings.Contains(p.Message, "zonedDevice") {
			t.Errorf("the refusal of a zoned device does not point at zonedDevice: %s", p.Message)
		}
	}
	for _, p := range JudgeConventional(Ext4, small) {
		if !strings.Contains(p.Message, "511 MiB") || !strings.Contains(p.Message, "512 MiB") {
			t.Errorf("the size refusal does not give the size and the minimum: %s", p.Message)
		}
	}
}

// failingReader reads the device's start and fails at any other offset, as a device with a bad end does.
type failingReader struct{ r *bytes.Reader }

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off > 0 {
		return 0, errors.New("I/O error")
	}
	return f.r.ReadAt(p, off)
}

func TestZeroEnds(t *testing.T) {
	const size = 8 << 20
	dev := func(at ...int64) *bytes.Reader {
		b := make([]byte, size)
		for _, off := range at {
			b[off] = 1
		}
		return bytes.NewReader(b)
	}
	for _, c := range []struct {
		name string
		dev  *bytes.Reader
		size int64
		want bool
	}{
		{"all zeros", dev(), size, true},
		{"a byte in the first MiB", dev(4096), size, false},
		{"the first byte", dev(0), size, false},
		{"the last byte", dev(size - 1), size, false},
		{"a byte in the last MiB", dev(size - EndBytes), size, false},
		// data in the middle is what the ends cannot see: blkid's probe and the file system's own checks are
		// the rest of the test, and a precondition or format only ever runs with a token
		{"a byte in the middle only", dev(size / 2), size, true},
		{"a device smaller than both ends", bytes.NewReader(make([]byte, 1536<<10)), 1536 << 10, true},
		{"a tiny one with data at its end", bytes.NewReader(append(make([]byte, 4095), 7)), 4096, false},
	} {
		got, err := ZeroEnds(c.dev, c.size)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := ZeroEnds(failingReader{dev()}, size); err == nil {
		t.Error("a read error was not reported")
	}
	if _, err := ZeroEnds(dev(), 0); err == nil {
		t.Error("a device of no size was judged")
	}
}

func TestParseConventional(t *testing.T) {
	for _, ok := range []string{"ext4", "xfs"} {
		if fs, err := ParseConventional(ok); err != nil || string(fs) != ok || fs.Zoned() {
			t.Errorf("%s: %v, %v", ok, fs, err)
		}
	}
	for _, bad := range []string{"btrfs", "f2fs", "zenfs", "", "ext3"} {
		if _, err := ParseConventional(bad); err == nil {
			t.Errorf("%q accepted on a conventional device", bad)
		}
	}
}
