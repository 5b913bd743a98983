package zonedfs

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

func readCapture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/zoned-xfs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseXFSProgsVersionRealOutput(t *testing.T) {
	for file, want := range map[string]struct {
		v    Version
		full string
	}{
		"mkfs-V-6.1.txt": {Version{6, 1}, "6.1.0"},
		"mkfs-V-7.2.txt": {Version{7, 2}, "7.2.0"},
	} {
		v, full, err := ParseXFSProgsVersion(readCapture(t, file))
		if err != nil || v != want.v || full != want.full {
			t.Errorf("%s: %v %q %v, want %v %q", file, v, full, err, want.v, want.full)
		}
	}
	if _, _, err := ParseXFSProgsVersion("mkfs.xfs: invalid option -- 'V'\n"); err == nil {
		t.Error("an answer without a version was accepted")
	}
}

func TestParseKernelRelease(t *testing.T) {
	// versions.txt holds the guest's uname -r of the captures; the others are Debian's 6.1 and this host's.
	guest := strings.Fields(strings.SplitN(readCapture(t, "versions.txt"), "\n", 2)[0])[1]
	for rel, want := range map[string]Version{guest: {7, 3}, "6.1.0-50-amd64": {6, 1}, "6.18.44-fc-v595\n": {6, 18}, "6.15": {6, 15}} {
		if v, err := ParseKernelRelease(rel); err != nil || v != want {
			t.Errorf("%q: %v %v, want %v", rel, v, err, want)
		}
	}
	if _, err := ParseKernelRelease("Linux"); err == nil {
		t.Error("a release without a version was accepted")
	}
}

func TestJudgeZonedXFSSupportNamesBothVersions(t *testing.T) {
	old, current := readCapture(t, "mkfs-V-6.1.txt"), readCapture(t, "mkfs-V-7.2.txt")
	if ps := JudgeZonedXFSSupport("7.3.4+deb13-amd64", current); len(ps) != 0 {
		t.Errorf("7.3 kernel with xfsprogs 7.2: %v", ps)
	}
	for _, c := range []struct {
		kernel, progs string
		want          []string
	}{
		{"6.1.0-50-amd64", current, []string{"Linux 6.1.0-50-amd64 (too old)", "xfsprogs 7.2.0 (new enough)"}},
		{"7.3.4+deb13-amd64", old, []string{"Linux 7.3.4+deb13-amd64 (new enough)", "xfsprogs 6.1.0 (too old)"}},
		{"6.14.0", old, []string{"Linux 6.14.0 (too old)", "xfsprogs 6.1.0 (too old)"}},
		{"7.3.4+deb13-amd64", "", []string{"(new enough)", "no mkfs.xfs"}},
	} {
		ps := JudgeZonedXFSSupport(c.kernel, c.progs)
		if len(ps) != 1 || ps[0].Code != CodeZonedXFSUnsupported {
			t.Fatalf("%s / %q: %v", c.kernel, c.progs, ps)
		}
		for _, w := range append(c.want, ">= 6.15") {
			if !strings.Contains(ps[0].Message, w) {
				t.Errorf("%s / %q: %q lacks %q", c.kernel, c.progs, ps[0].Message, w)
			}
		}
	}
}

// The geometries of the captures: null_blk with 8 (fit) or 4 (too small: mkfs.xfs refused it) conventional
// zones of 64 MiB, an NVMe ZNS namespace with none, and the 512 MiB conventional namespace beside it.
func TestJudgeZonedXFS(t *testing.T) {
	nullb := zbd.Device{Name: "nullb0", Model: zbd.ModelHostManaged, NrZones: 32, ZoneSizeBytes: 64 << 20,
		Scheduler: "mq-deadline", CapacityBytes: 2 << 30}
	zns := zbd.Device{Name: "nvme0n1", Model: zbd.ModelHostManaged, NrZones: 40, ZoneSizeBytes: 64 << 20,
		MaxOpenZones: 14, MaxActiveZones: 14, Scheduler: "mq-deadline", CapacityBytes: 2560 << 20}
	meta := zbd.Device{Name: "nvme1n1", Model: zbd.ModelNone, CapacityBytes: 512 << 20}
	smallMeta, zonedMeta := meta, meta
	smallMeta.CapacityBytes = 256 << 20
	zonedMeta.Model = zbd.ModelHostManaged
	noneSched := nullb
	noneSched.Scheduler, noneSched.AvailableSchedulers = "none", []string{"none", "mq-deadline"}
	conventional := nullb
	conventional.Model = zbd.ModelNone
	for _, c := range []struct {
		name         string
		d            zbd.Device
		conventional int
		meta         *zbd.Device
		want         []string
	}{
		{"null_blk, 8 conventional zones", nullb, 8, nil, nil},
		{"null_blk, 4 conventional zones", nullb, 4, nil, []string{CodeTooSmallForXFS}},
		{"zone report not read yet", nullb, -1, nil, nil},
		{"ZNS alone", zns, 0, nil, []string{CodeNoConventionalZones}},
		{"ZNS with a metadata namespace", zns, 0, &meta, nil},
		{"ZNS with a small metadata device", zns, 0, &smallMeta, []string{CodeMetadataDeviceTooSmall}},
		{"ZNS with a zoned metadata device", zns, 0, &zonedMeta, []string{CodeMetadataDeviceZoned}},
		{"scheduler none: zone write plugging orders the writes", noneSched, 8, nil, nil},
		{"a conventional device", conventional, 0, nil, []string{zbd.CodeNotHostManaged}},
	} {
		if got := codes(JudgeZonedXFS(c.d, c.conventional, c.meta)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	ps := JudgeZonedXFS(zns, 0, nil)
	if !strings.Contains(ps[0].Message, "metadataDeviceName") {
		t.Errorf("the refusal does not say what to add: %s", ps[0].Message)
	}
}

// The commands the captures ran (exit-status.txt), with the project's label, no discard, and -f only when
// confirmed.
func TestZonedXFSMkfsCommand(t *testing.T) {
	alone, err := ZonedXFSMkfsCommand("/dev/nullb0", "", "t1", false)
	if err != nil || strings.Join(alone, " ") != "mkfs.xfs -K -L "+Label("t1")+" /dev/nullb0" {
		t.Errorf("alone: %q %v", alone, err)
	}
	paired, err := ZonedXFSMkfsCommand("/dev/nvme0n1", "/dev/nvme1n1", "", true)
	if err != nil || strings.Join(paired, " ") != "mkfs.xfs -K -L zns-mysql -f -r rtdev=/dev/nvme0n1 /dev/nvme1n1" {
		t.Errorf("paired: %q %v", paired, err)
	}
	for _, bad := range [][2]string{{"nullb0", ""}, {"/dev/nvme0n1", "/dev/a,b"}, {"/dev/x y", ""}} {
		if _, err := ZonedXFSMkfsCommand(bad[0], bad[1], "", false); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// Without rtdev= the kernel refuses the mount (b-mount-without-rtdev-dmesg.txt).
	if !strings.Contains(readCapture(t, "b-mount-without-rtdev-dmesg.txt"), "use rtdev=device option") {
		t.Fatal("the capture no longer shows why rtdev= is needed")
	}
	if got := ZonedXFSMountOptions("/dev/nvme0n1", "/dev/nvme1n1"); !slices.Equal(got, []string{"rtdev=/dev/nvme0n1"}) {
		t.Errorf("mount options: %q", got)
	}
	if got := ZonedXFSMountOptions("/dev/nullb0", ""); got != nil {
		t.Errorf("mount options without a metadata device: %q", got)
	}
}
