package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// The zoned-XFS captures (zonedfs/testdata/zoned-xfs): what mkfs.xfs -V and blkid printed in the QEMU guest.
func xfsCapture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../internal/zonedfs/testdata/zoned-xfs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// byPath serves several fake devices, each at its own path: a zoned device and its metadata device.
type byPath map[string]*fakeDevices

func (b byPath) dev(p string) (*fakeDevices, error) {
	if d, ok := b[p]; ok {
		return d, nil
	}
	return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
}

func (b byPath) ReportZones(p string) ([]zbd.Zone, error) {
	d, err := b.dev(p)
	if err != nil {
		return nil, err
	}
	return d.ReportZones(p)
}

func (b byPath) Open(p string) (ReaderAtCloser, error) {
	d, err := b.dev(p)
	if err != nil {
		return nil, err
	}
	return d.Open(p)
}

func (b byPath) OpenShared(p string) (ReaderAtCloser, error) {
	d, err := b.dev(p)
	if err != nil {
		return nil, err
	}
	return d.OpenShared(p)
}

func (b byPath) ResetZones(p string, zones []zbd.Zone) (int, error) {
	d, err := b.dev(p)
	if err != nil {
		return 0, err
	}
	return d.ResetZones(p, zones)
}

// xfsMachine answers mkfs.xfs -V with a captured version, blkid per device with what that device holds, and
// mkfs.xfs by putting the captured XFS (with the label it was given) on the device blkid will find it on.
type xfsMachine struct {
	t       *testing.T
	version string
	found   map[string]string // device path -> blkid's output ("" nothing)
	// madeOn is the device mkfs's XFS shows on to blkid, madeProbe what blkid prints for it.
	madeOn, madeProbe string
	calls             []string
}

func (m *xfsMachine) Run(_ context.Context, name string, args ...string) (string, string, error) {
	m.calls = append(m.calls, strings.Join(append([]string{name}, args...), " "))
	switch {
	case strings.HasPrefix(name, "mkfs.xfs") && len(args) == 1 && args[0] == "-V":
		return m.version, "", nil
	case strings.HasPrefix(name, "mkfs.xfs"):
		label := args[2] // mkfs.xfs -K -L <label> ...
		m.found[m.madeOn] = strings.Replace(m.madeProbe, "UUID=", "LABEL="+label+"\nUUID=", 1)
		return "", "", nil
	case name == "blkid":
		if out := m.found[args[len(args)-1]]; out != "" {
			return out, "", nil
		}
		return "", "", blkidNothingFoundErr
	}
	return "", "unexpected command", errors.New("exit status 1")
}

func (m *xfsMachine) mkfs() []string {
	var out []string
	for _, c := range m.calls {
		if strings.HasPrefix(c, "mkfs.xfs") && !strings.HasSuffix(c, " -V") {
			out = append(out, c)
		}
	}
	return out
}

// pairedZNS is the NVMe ZNS namespace nvme0n2 of testdata's sysfs (32 zones of 128 MiB, none conventional) with
// the conventional namespace nvme0n1 for the metadata, as in case (b) of the captures.
func pairedZNS(t *testing.T) (byPath, *xfsMachine) {
	devs := byPath{"/dev/nvme0n2": zonedDevice("nvme0n2", 32, 128<<20), "/dev/nvme0n1": conventionalDevice("nvme0n1")}
	m := &xfsMachine{t: t, version: xfsCapture(t, "mkfs-V-7.2.txt"), found: map[string]string{},
		madeOn: "/dev/nvme0n1", madeProbe: xfsCapture(t, "b-blkid-meta.txt")}
	return devs, m
}

func pairedArgs(extra ...string) []string {
	return append([]string{"format", "--device", "nvme0n2", "--sys-block", sysBlock, "--filesystem", "xfs", "--zoned",
		"--metadata-device", "nvme0n1"}, extra...)
}

func newKernel() (string, error) { return "7.3.4+deb13-amd64", nil }

func TestZonedXFSWithMetadataDeviceFormatsThenKeeps(t *testing.T) {
	devs, m := pairedZNS(t)
	d := deps{runner: m, devices: devs, kernelRelease: newKernel}
	res := runZnsdbOn(t, d, pairedArgs()...)
	fs := res.report.Filesystem
	if res.code != exitOK || fs == nil || fs.Action != fsformat.ActionFormat || fs.Type != "xfs" {
		t.Fatalf("exit %d (%s): %+v, problems %+v", res.code, res.stderr, fs, res.report.Problems)
	}
	want := "mkfs.xfs -K -L zns-mysql -r rtdev=/dev/nvme0n2 /dev/nvme0n1"
	if got := m.mkfs(); len(got) != 1 || got[0] != want {
		t.Errorf("mkfs: %q, want %q", got, want)
	}
	if fs.UUID != "38b5400a-09ea-4d48-93c4-263c6ebb55ee" || fs.Label != "zns-mysql" {
		t.Errorf("the new file system is not the metadata device's XFS: %+v", fs)
	}
	if devs["/dev/nvme0n1"].opened != 1 || devs["/dev/nvme0n1"].closed != 1 {
		t.Errorf("metadata device opened %d, closed %d: want held once, released before mkfs",
			devs["/dev/nvme0n1"].opened, devs["/dev/nvme0n1"].closed)
	}

	// mkfs.xfs left the zones empty and the realtime device has no signature: the metadata device's XFS is
	// what tells the next start that the pair holds its file system.
	m.calls = nil
	again := runZnsdbOn(t, d, pairedArgs()...)
	if again.code != exitOK || again.report.Filesystem.Action != fsformat.ActionKeep || len(m.mkfs()) != 0 {
		t.Errorf("second start: exit %d, %+v, mkfs %q", again.code, again.report.Filesystem, m.mkfs())
	}
}

func TestZonedXFSOnConventionalZones(t *testing.T) {
	devs := nullb0()
	for i := range 8 {
		devs.zones[i].Type = zbd.ZoneTypeConventional
		devs.zones[i].Cond = zbd.ZoneCondNotWP
	}
	m := &xfsMachine{t: t, version: xfsCapture(t, "mkfs-V-7.2.txt"), found: map[string]string{},
		madeOn: "/dev/nullb0", madeProbe: xfsCapture(t, "a-blkid.txt")}
	res := runZnsdbOn(t, deps{runner: m, devices: devs, kernelRelease: newKernel},
		"format", "--device", "nullb0", "--sys-block", sysBlock, "--filesystem", "xfs", "--zoned")
	if res.code != exitOK || res.report.Filesystem.UUID != "662edbae-1347-43fa-90e5-7bb49f347f3b" {
		t.Fatalf("exit %d (%s): %+v, problems %+v", res.code, res.stderr, res.report.Filesystem, res.report.Problems)
	}
	if got := m.mkfs(); len(got) != 1 || got[0] != "mkfs.xfs -K -L zns-mysql /dev/nullb0" {
		t.Errorf("mkfs: %q", got)
	}
}

func TestZonedXFSRefusals(t *testing.T) {
	oldKernel := func() (string, error) { return "6.1.0-50-amd64", nil }
	cases := map[string]struct {
		args    []string
		kernel  func() (string, error)
		version string
		setup   func(byPath, *xfsMachine)
		code    string // a problem's code, or "" for a refused decision
		says    []string
	}{
		"old kernel and old xfsprogs": {pairedArgs(), oldKernel, "mkfs-V-6.1.txt", nil,
			zonedfs.CodeZonedXFSUnsupported, []string{"Linux 6.1.0-50-amd64 (too old)", "xfsprogs 6.1.0 (too old)"}},
		"new kernel, old xfsprogs": {pairedArgs(), newKernel, "mkfs-V-6.1.txt", nil,
			zonedfs.CodeZonedXFSUnsupported, []string{"(new enough)", "xfsprogs 6.1.0 (too old)"}},
		"ZNS without a metadata device": {[]string{"format", "--device", "nvme0n2", "--sys-block", sysBlock,
			"--filesystem", "xfs", "--zoned"}, newKernel, "mkfs-V-7.2.txt", nil,
			zonedfs.CodeNoConventionalZones, []string{"metadataDeviceName"}},
		"a metadata device that is zoned": {[]string{"format", "--device", "nvme0n2", "--sys-block", sysBlock,
			"--filesystem", "xfs", "--zoned", "--metadata-device", "nullb0"}, newKernel, "mkfs-V-7.2.txt", nil,
			zonedfs.CodeMetadataDeviceZoned, []string{"nullb0"}},
		"a metadata device that does not exist": {[]string{"format", "--device", "nvme0n2", "--sys-block", sysBlock,
			"--filesystem", "xfs", "--zoned", "--metadata-device", "nvme9n1"}, newKernel, "mkfs-V-7.2.txt", nil,
			zbd.CodeNoSuchDevice, []string{"metadata device: "}},
		"the metadata device holds someone's ext4": {pairedArgs(), newKernel, "mkfs-V-7.2.txt",
			func(devs byPath, m *xfsMachine) {
				m.found["/dev/nvme0n1"] = "TYPE=ext4\nLABEL=home\nUSAGE=filesystem\n"
				devs["/dev/nvme0n1"].data[0] = []byte("ext4")
			}, "", []string{"ext4", `"home"`}},
		"the realtime device has written zones": {pairedArgs(), newKernel, "mkfs-V-7.2.txt",
			func(devs byPath, _ *xfsMachine) { devs["/dev/nvme0n2"].write(3, []byte("x")) }, "", []string{"written zones"}},
		"the metadata device is busy": {pairedArgs(), newKernel, "mkfs-V-7.2.txt",
			func(devs byPath, _ *xfsMachine) { devs["/dev/nvme0n1"].openErr = zbd.ErrBusy }, zbd.CodeDeviceBusy,
			[]string{"/dev/nvme0n1"}},
	}
	for name, c := range cases {
		devs, m := pairedZNS(t)
		m.version = xfsCapture(t, c.version)
		if c.setup != nil {
			c.setup(devs, m)
		}
		res := runZnsdbOn(t, deps{runner: m, devices: devs, kernelRelease: c.kernel}, c.args...)
		if res.code != exitRefused {
			t.Errorf("%s: exit %d, want refused", name, res.code)
		}
		var text string
		if c.code != "" {
			var codes []string
			for _, p := range res.report.Problems {
				codes = append(codes, p.Code)
				text += p.Message
			}
			if len(codes) != 1 || codes[0] != c.code {
				t.Errorf("%s: problems %v, want [%s]", name, codes, c.code)
			}
		} else if fs := res.report.Filesystem; fs == nil || fs.Action != fsformat.ActionRefuse {
			t.Errorf("%s: %+v, want refused", name, fs)
		} else {
			text = fs.Reason
		}
		for _, w := range c.says {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q does not say %q", name, text, w)
			}
		}
		if got := m.mkfs(); len(got) != 0 || devs["/dev/nvme0n2"].resets != 0 {
			t.Errorf("%s: written to: mkfs %q, resets %d", name, got, devs["/dev/nvme0n2"].resets)
		}
	}
}

func TestZonedXFSReformatWithToken(t *testing.T) {
	devs, m := pairedZNS(t)
	m.found["/dev/nvme0n1"] = strings.Replace(xfsCapture(t, "b-blkid-meta.txt"), "UUID=", "LABEL=zns-mysql\nUUID=", 1)
	devs["/dev/nvme0n2"].write(0, []byte("data"))
	d := deps{runner: m, devices: devs, kernelRelease: newKernel,
		getenv: func(k string) string { return map[string]string{tokenEnv: "t2"}[k] }}
	res := runZnsdbOn(t, d, pairedArgs()...)
	fs := res.report.Filesystem
	if res.code != exitOK || fs.Action != fsformat.ActionFormat || fs.ZonesReset != 1 || fs.Label != zonedfs.Label("t2") {
		t.Fatalf("exit %d (%s): %+v", res.code, res.stderr, fs)
	}
	if got := m.mkfs(); len(got) != 1 || !strings.Contains(got[0], "-L "+zonedfs.Label("t2")+" -f -r rtdev=/dev/nvme0n2 /dev/nvme0n1") {
		t.Errorf("mkfs: %q", got)
	}
}

func TestMetadataDeviceOnlyForZonedXFS(t *testing.T) {
	res := runZnsdb(t, &fakeRunner{}, nullb0(), nil, "format", "--device", "nullb0", "--sys-block", sysBlock,
		"--filesystem", "btrfs", "--metadata-device", "nvme0n1")
	if res.code != exitRefused || !strings.Contains(res.report.Error, "zoned XFS only") {
		t.Errorf("exit %d, error %q", res.code, res.report.Error)
	}
}

// The preflight Job judges from sysfs alone, and already names both versions: nothing that writes is made for a
// node or image that cannot hold zoned XFS.
func TestPreflightZonedXFSVersions(t *testing.T) {
	m := &xfsMachine{t: t, version: xfsCapture(t, "mkfs-V-6.1.txt"), found: map[string]string{}}
	oldKernel := func() (string, error) { return "6.1.0-50-amd64", nil }
	res := runZnsdbOn(t, deps{runner: m, devices: byPath{}, kernelRelease: oldKernel}, "preflight", "--device", "nvme0n2",
		"--sys-block", sysBlock, "--sysfs-only", "--filesystem", "xfs", "--zoned", "--metadata-device", "nvme0n1")
	if res.code != exitRefused || len(res.report.Problems) != 1 || res.report.Problems[0].Code != zonedfs.CodeZonedXFSUnsupported ||
		!strings.Contains(res.report.Problems[0].Message, "Linux 6.1.0-50-amd64 (too old) and the image has xfsprogs 6.1.0 (too old)") {
		t.Errorf("exit %d, problems %+v", res.code, res.report.Problems)
	}
	m.version = xfsCapture(t, "mkfs-V-7.2.txt")
	ok := runZnsdbOn(t, deps{runner: m, devices: byPath{}, kernelRelease: newKernel}, "preflight", "--device", "nvme0n2",
		"--sys-block", sysBlock, "--sysfs-only", "--filesystem", "xfs", "--zoned", "--metadata-device", "nvme0n1")
	if ok.code != exitOK || len(ok.report.Problems) != 0 {
		t.Errorf("a fit pair: exit %d, problems %+v", ok.code, ok.report.Problems)
	}
}

// The project's images carry a newer mkfs.xfs as mkfs.xfs-zoned beside the distribution's (which makes the
// conventional XFS that older kernels mount): zoned XFS asks that one for its version and makes the file system
// with it.
func TestZonedXFSUsesTheImagesNewerMkfs(t *testing.T) {
	devs, m := pairedZNS(t)
	look := func(name string) (string, error) {
		if name == zonedfs.ZonedMkfsXFS {
			return "/usr/local/sbin/" + name, nil
		}
		return "", errors.New("not found")
	}
	res := runZnsdbOn(t, deps{runner: m, devices: devs, kernelRelease: newKernel, lookPath: look}, pairedArgs()...)
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if m.calls[0] != "mkfs.xfs-zoned -V" || len(m.mkfs()) != 1 || !strings.HasPrefix(m.mkfs()[0], "mkfs.xfs-zoned -K ") {
		t.Errorf("commands %q: want mkfs.xfs-zoned for the version and the format", m.calls)
	}
}
