package zonedfs

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

func TestParseProbeRealOutput(t *testing.T) {
	for file, want := range map[string]Probe{
		"testdata/blkid-btrfs-zoned.txt": {Type: "btrfs", UUID: "b476b9a5-29e7-4d00-bc19-083d43d60898", Usage: "filesystem"},
		"testdata/blkid-f2fs-zoned.txt":  {Type: "f2fs", UUID: "9a01b019-91b8-4919-accb-fae07dcb2c56", Usage: "filesystem"},
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseProbe(string(b))
		if err != nil || got != want {
			t.Errorf("%s: got %+v, %v; want %+v", file, got, err, want)
		}
	}
	if p, err := ParseProbe(""); err != nil || p.Type != "" {
		t.Errorf("empty output: %+v, %v; want no type", p, err)
	}
	if _, err := ParseProbe("garbage line\n"); err == nil {
		t.Error("a line without = was accepted")
	}
}

func fitDevice() zbd.Device {
	return zbd.Device{Name: "nullb0", Model: zbd.ModelHostManaged, NrZones: 64, ZoneSizeBytes: 64 << 20,
		Scheduler: "mq-deadline", AvailableSchedulers: []string{"none", "mq-deadline"}, CapacityBytes: 4 << 30}
}

func codes(ps []zbd.Problem) []string {
	var cs []string
	for _, p := range ps {
		cs = append(cs, p.Code)
	}
	return cs
}

func TestJudge(t *testing.T) {
	withLimits := func(open, active int64) zbd.Device {
		d := fitDevice()
		d.MaxOpenZones, d.MaxActiveZones = open, active
		return d
	}
	few := fitDevice()
	few.NrZones = 7
	conv := fitDevice()
	conv.Model = zbd.ModelNone
	wrongSched := fitDevice()
	wrongSched.Scheduler = "none"
	cases := []struct {
		name string
		fs   Filesystem
		dev  zbd.Device
		conv int
		want []string
	}{
		{"btrfs fit, no limits", Btrfs, fitDevice(), 0, nil},
		{"btrfs at the active minimum", Btrfs, withLimits(14, 8), 0, nil},
		{"btrfs below it (measured refusal at 6)", Btrfs, withLimits(6, 6), 0, []string{CodeTooFewActiveZonesForBtrfs}},
		{"btrfs: open limit counts when no active limit", Btrfs, withLimits(6, 0), 0, []string{CodeTooFewActiveZonesForBtrfs}},
		{"btrfs too few zones", Btrfs, few, 0, []string{CodeTooFewZonesForBtrfs}},
		{"f2fs without conventional zones", F2FS, fitDevice(), 0, []string{CodeNoConventionalZones}},
		{"f2fs with conventional zones", F2FS, fitDevice(), 8, nil},
		{"f2fs unknown conventional zones (sysfs only)", F2FS, fitDevice(), -1, nil},
		{"f2fs too small", F2FS, few, 4, []string{CodeTooSmallForF2FS}},
		{"conventional device", Btrfs, conv, 0, []string{zbd.CodeNotHostManaged}},
		{"scheduler none", F2FS, wrongSched, 4, []string{zbd.CodeWrongScheduler}},
	}
	for _, c := range cases {
		got := codes(Judge(c.fs, c.dev, c.conv))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: problems %v, want %v", c.name, got, c.want)
		}
	}
	if ps := Judge(F2FS, wrongSched, 4); len(ps) != 1 || !strings.Contains(ps[0].Message, "f2fs in zoned mode needs mq-deadline") {
		t.Errorf("the scheduler refusal speaks of ZenFS: %+v", ps)
	}
	for _, p := range Judge(F2FS, fitDevice(), 0) {
		if !strings.Contains(p.Message, "btrfs") || !strings.Contains(p.Message, "nullb0") {
			t.Errorf("the refusal does not name the device and the way out: %s", p.Message)
		}
	}
}

func TestLabelRecordsToken(t *testing.T) {
	if Label("") != "zns-mysql" {
		t.Errorf("label without token: %q", Label(""))
	}
	l := Label("2026-11-24")
	if l == Label("2026-11-25") || !strings.HasPrefix(l, "zns-") {
		t.Errorf("label %q: want a token-specific zns- label", l)
	}
	// XFS keeps 12 bytes of label, ext4 16: a longer one would be cut, and the token lost with it.
	for _, tok := range []string{"", "t", "2026-11-24", strings.Repeat("x", 128)} {
		if n := len(Label(tok)); n > MaxLabelLen || n > 12 {
			t.Errorf("Label(%q) = %q: %d bytes, more than XFS keeps", tok, Label(tok), n)
		}
	}
	if applied, ours := AppliedToken(l, "2026-11-24"); !applied || !ours {
		t.Error("the token a label was made with is not recognised")
	}
	if applied, ours := AppliedToken(l, "other"); applied || !ours {
		t.Error("another token counts as applied")
	}
	if applied, ours := AppliedToken(Label(""), ""); !applied || !ours {
		t.Error("a file system made without a token is not ours without one")
	}
	if applied, _ := AppliedToken(Label(""), "t"); applied {
		t.Error("a new token counts as applied to a file system made without one")
	}
	// What earlier versions wrote on btrfs and f2fs: zns-mysql- and 12 hex digits of the same hash.
	legacy := "zns-mysql-" + tokenHash("2026-11-24")[:12]
	if applied, ours := AppliedToken(legacy, "2026-11-24"); !applied || !ours {
		t.Errorf("the earlier label %q is not read", legacy)
	}
	if applied, ours := AppliedToken(legacy, "other"); applied || !ours {
		t.Errorf("the earlier label %q: applied %v ours %v with another token", legacy, applied, ours)
	}
	// Labels a person may choose, close to ours, are not ours.
	for _, foreign := range []string{"home", "", "zns", "zns-data", "zns-mysql2", "zns-0123456", "zns-0123456789",
		"zns-ABCDEF01", "zns-mysql-0123", "ZNS-MYSQL", "zns-0123456g"} {
		if _, ours := AppliedToken(foreign, ""); ours {
			t.Errorf("label %q counts as ours", foreign)
		}
	}
}

func TestMkfsCommand(t *testing.T) {
	got, err := MkfsCommand(Btrfs, "/dev/nullb0", "", false)
	want := []string{"mkfs.btrfs", "-O", "zoned", "-d", "single", "-m", "single", "-L", "zns-mysql", "/dev/nullb0"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("btrfs: %q, %v", got, err)
	}
	got, err = MkfsCommand(F2FS, "/dev/nullb1", "t", true)
	if err != nil || !slices.Equal(got, []string{"mkfs.f2fs", "-m", "-l", Label("t"), "-f", "/dev/nullb1"}) {
		t.Errorf("f2fs forced: %q, %v", got, err)
	}
	for _, bad := range []string{"nullb0", "/dev/null b0", "/tmp/x"} {
		if _, err := MkfsCommand(Btrfs, bad, "", false); err == nil {
			t.Errorf("device path %q accepted", bad)
		}
	}
	got, err = MkfsCommand(Ext4, "/dev/vdb", "t", true)
	if err != nil || !slices.Equal(got, []string{"mkfs.ext4", "-L", Label("t"), "-E",
		"nodiscard,lazy_itable_init=0,lazy_journal_init=0", "-F", "/dev/vdb"}) {
		t.Errorf("ext4 forced: %q, %v", got, err)
	}
	got, err = MkfsCommand(XFS, "/dev/vdb", "", false)
	if err != nil || !slices.Equal(got, []string{"mkfs.xfs", "-K", "-L", "zns-mysql", "/dev/vdb"}) {
		t.Errorf("xfs: %q, %v", got, err)
	}
	if _, err := MkfsCommand("vfat", "/dev/nullb0", "", false); err == nil {
		t.Error("vfat accepted")
	}
}
