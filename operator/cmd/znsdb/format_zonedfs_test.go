package main

import (
	"os"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// blkidNothing is blkid's real "no signature" status: exit 2.
func blkidNothing(*testing.T) reply { return reply{err: blkidNothingFoundErr} }

// blkidFound is the real probe of a zoned btrfs or f2fs (zonedfs/testdata), with a label line added when
// label is set, as blkid prints one.
func blkidFound(t *testing.T, fs, label string) reply {
	b, err := os.ReadFile("../../internal/zonedfs/testdata/blkid-" + fs + "-zoned.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if label != "" {
		out = strings.Replace(out, "UUID=", "LABEL="+label+"\nUUID=", 1)
	}
	return reply{stdout: out}
}

func zonedFSArgs(fs string, extra ...string) []string {
	return append([]string{"format", "--device", "nullb0", "--sys-block", sysBlock, "--filesystem", fs}, extra...)
}

// The runner's replies are keyed by the first argument: "-p" is blkid, "-O" mkfs.btrfs, "-m" mkfs.f2fs.
func TestZonedBtrfsFormatsAnEmptyDeviceAndKeepsItsOwn(t *testing.T) {
	r := &fakeRunner{replies: map[string]reply{"-p": blkidNothing(t), "-O": {}}}
	r.before = map[string]func(){"-O": func() { r.replies["-p"] = blkidFound(t, "btrfs", zonedfs.Label("")) }}
	devs := nullb0()
	res := runZnsdb(t, r, devs, nil, zonedFSArgs("btrfs")...)
	if res.code != exitOK {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	want := "blkid -p -o export /dev/nullb0\n" +
		"mkfs.btrfs -O zoned -d single -m single -L zns-mysql /dev/nullb0\n" +
		"blkid -p -o export /dev/nullb0"
	if got := r.allArgv(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
	fs := res.report.Filesystem
	if fs == nil || fs.Action != fsformat.ActionFormat || fs.Type != "btrfs" || fs.UUID == "" || fs.Label != "zns-mysql" {
		t.Fatalf("filesystem state %+v", fs)
	}
	if fs.Space != nil || fs.Found != "" || devs.resets != 0 {
		t.Errorf("space %+v, found %q, resets %d: want none", fs.Space, fs.Found, devs.resets)
	}

	// The next start finds it and keeps it: no mkfs.
	r.calls = nil
	again := runZnsdb(t, r, devs, nil, zonedFSArgs("btrfs")...)
	if again.code != exitOK || again.report.Filesystem.Action != fsformat.ActionKeep || strings.Contains(r.allArgv(), "mkfs") {
		t.Errorf("second start: exit %d, %+v, commands %s", again.code, again.report.Filesystem, r.allArgv())
	}
}

func TestZonedFSRefusesWhatIsNotItsOwn(t *testing.T) {
	cases := map[string]struct {
		devs  *fakeDevices
		probe func(*testing.T) reply
		says  string
	}{
		"ZenFS, which blkid cannot see": {
			nullb0().write(0, realSuperblock(t)), blkidNothing, "ZenFS"},
		"another file system": {
			nullb0().write(0, []byte("x")), func(t *testing.T) reply { return blkidFound(t, "f2fs", "") }, "f2fs"},
		"unknown written zones": {
			nullb0().write(5, []byte("x")), blkidNothing, "written zones"},
	}
	for name, c := range cases {
		r := &fakeRunner{replies: map[string]reply{"-p": c.probe(t), "-O": {}}}
		res := runZnsdb(t, r, c.devs, nil, zonedFSArgs("btrfs")...)
		fs := res.report.Filesystem
		if res.code != exitRefused || fs == nil || fs.Action != fsformat.ActionRefuse || !strings.Contains(fs.Reason, c.says) {
			t.Errorf("%s: exit %d, %+v", name, res.code, fs)
		}
		if strings.Contains(r.allArgv(), "mkfs") || c.devs.resets != 0 {
			t.Errorf("%s: formatted or reset without confirmation: %s (resets %d)", name, r.allArgv(), c.devs.resets)
		}
	}
}

func TestZonedFSReformatWithTokenResetsZonesFirst(t *testing.T) {
	devs := nullb0().write(0, realSuperblock(t))
	r := &fakeRunner{replies: map[string]reply{"-p": blkidNothing(t), "-O": {}}}
	var zonesAtMkfs []zbd.Zone
	r.before = map[string]func(){"-O": func() {
		zonesAtMkfs = append([]zbd.Zone(nil), devs.zones...)
		r.replies["-p"] = blkidFound(t, "btrfs", zonedfs.Label("2026-11-24"))
	}}
	res := runZnsdb(t, r, devs, map[string]string{tokenEnv: "2026-11-24"}, zonedFSArgs("btrfs")...)
	fs := res.report.Filesystem
	if res.code != exitOK || fs.Action != fsformat.ActionFormat || fs.ZonesReset != 1 || fs.Found != "zenfs" {
		t.Fatalf("exit %d (%s), %+v", res.code, res.stderr, fs)
	}
	if !zbd.IsEmpty(zonesAtMkfs) {
		t.Error("mkfs ran before the old zones were reset")
	}
	if !strings.Contains(r.allArgv(), "-L "+zonedfs.Label("2026-11-24")+" -f /dev/nullb0") {
		t.Errorf("mkfs does not record the token in the label and force: %s", r.allArgv())
	}
}

func TestZonedF2FSNeedsConventionalZones(t *testing.T) {
	r := &fakeRunner{replies: map[string]reply{"-p": blkidNothing(t), "-m": {}}}
	res := runZnsdb(t, r, nullb0(), nil, zonedFSArgs("f2fs")...)
	if res.code != exitRefused || len(res.report.Problems) != 1 || res.report.Problems[0].Code != zonedfs.CodeNoConventionalZones {
		t.Fatalf("exit %d, problems %+v", res.code, res.report.Problems)
	}
	if len(r.calls) != 0 {
		t.Errorf("commands ran for a refused device: %s", r.allArgv())
	}
}

func TestZonedFSBusyDeviceIsLeftAlone(t *testing.T) {
	devs := nullb0()
	devs.openErr = zbd.ErrBusy
	r := &fakeRunner{replies: map[string]reply{"-p": blkidNothing(t), "-O": {}}}
	res := runZnsdb(t, r, devs, nil, zonedFSArgs("btrfs")...)
	if res.code != exitRefused || len(res.report.Problems) != 1 || res.report.Problems[0].Code != zbd.CodeDeviceBusy {
		t.Fatalf("exit %d, problems %+v", res.code, res.report.Problems)
	}
	if len(r.calls) != 0 {
		t.Errorf("commands ran on a busy device: %s", r.allArgv())
	}
}
