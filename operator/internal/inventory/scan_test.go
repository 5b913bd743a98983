package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// The recorded trees: zbd's (hand-written from the kernel's ABI, two captured) and the QEMU guest's (real).
const (
	zbdSys   = "../zbd/testdata/sys"
	guestSys = "../qemuguest/testdata/sys"
	ownSys   = "testdata/sys"
)

func names(devs []Device) map[string]v1alpha1.ZonedDeviceCandidate {
	out := map[string]v1alpha1.ZonedDeviceCandidate{}
	for _, d := range devs {
		out[d.Name] = d.Candidate
	}
	return out
}

func TestScanSelectsZonedAndNamedDevices(t *testing.T) {
	zoned, conv := v1alpha1.CandidateZoned, v1alpha1.CandidateConventional
	cases := []struct {
		name, sys  string
		candidates []string
		want       map[string]v1alpha1.ZonedDeviceCandidate
		problems   []string // a substring of each problem, in order
	}{
		{name: "guest, zoned only", sys: guestSys,
			want: map[string]v1alpha1.ZonedDeviceCandidate{"nullb0": zoned, "nullb2": zoned, "nullb3": zoned, "nvme0n1": zoned}},
		{name: "guest, a conventional candidate", sys: guestSys, candidates: []string{"nullb1"},
			want: map[string]v1alpha1.ZonedDeviceCandidate{"nullb0": zoned, "nullb1": conv, "nullb2": zoned, "nullb3": zoned, "nvme0n1": zoned}},
		{name: "zbd, host-aware counts as zoned", sys: zbdSys,
			want: map[string]v1alpha1.ZonedDeviceCandidate{"nullb0": zoned, "nullb2": zoned, "nullb3": zoned, "nvme0n2": zoned, "sdb": zoned}},
		{name: "zbd, a named RAM disk is published, a partition and a missing name are problems", sys: zbdSys,
			candidates: []string{"zram0", "nvme0n1p1", "sdz", "../etc"},
			want:       map[string]v1alpha1.ZonedDeviceCandidate{"nullb0": zoned, "nullb2": zoned, "nullb3": zoned, "nvme0n2": zoned, "sdb": zoned, "zram0": conv},
			problems:   []string{"nvme0n1p1 is a partition of nvme0n1", "sdz: no such block device", "invalid block device name"}},
		{name: "own, views of other devices are left out", sys: ownSys,
			want: map[string]v1alpha1.ZonedDeviceCandidate{"nullb0": zoned, "nvme0n2": zoned, "sdb": zoned}},
		{name: "own, unless named", sys: ownSys, candidates: []string{"dm-0", "loop0", "vdb", "nvme1n1"},
			want: map[string]v1alpha1.ZonedDeviceCandidate{"dm-0": zoned, "loop0": conv, "nullb0": zoned, "nvme0n2": zoned, "nvme1n1": conv, "sdb": zoned, "vdb": conv}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Scan(c.sys, c.candidates)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, names(res.Devices)); d != "" {
				t.Errorf("published devices (-want +got):\n%s", d)
			}
			if len(res.Problems) != len(c.problems) {
				t.Fatalf("problems %q, want %d matching %q", res.Problems, len(c.problems), c.problems)
			}
			for i, p := range c.problems {
				if !strings.Contains(res.Problems[i], p) {
					t.Errorf("problem %d is %q, want it to say %q", i, res.Problems[i], p)
				}
			}
		})
	}
}

// The geometry is zbd.Inspect's, read once: whatever the recorded tree holds, the scan reports the same.
func TestScanGeometryIsInspects(t *testing.T) {
	for _, sys := range []string{guestSys, zbdSys, ownSys} {
		res, err := Scan(sys, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Devices) == 0 {
			t.Fatalf("%s: nothing published", sys)
		}
		for _, d := range res.Devices {
			want, err := zbd.Inspect(filepath.Join(sys, "block"), d.Name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, d.Device); diff != "" {
				t.Errorf("%s %s geometry (-Inspect +Scan):\n%s", sys, d.Name, diff)
			}
			if want.NrZones == 0 || want.ZoneSizeBytes == 0 {
				t.Errorf("%s %s: a zoned device without zones in the recorded tree: %+v", sys, d.Name, want)
			}
		}
	}
}

func TestScanIdentity(t *testing.T) {
	res, err := Scan(ownSys, []string{"vdb", "nvme1n1"})
	if err != nil {
		t.Fatal(err)
	}
	read := func(dev, rel string) string {
		b, err := os.ReadFile(filepath.Join(ownSys, "block", dev, rel))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	got := map[string]Identity{}
	stable := map[string]string{}
	for _, d := range res.Devices {
		got[d.Name] = d.Identity
		stable[d.Name] = d.StableID()
	}
	want := map[string]Identity{
		"nvme0n2": {WWID: read("nvme0n2", "wwid"), Serial: read("nvme0n2", "device/serial"), Model: read("nvme0n2", "device/model"),
			Firmware: read("nvme0n2", "device/firmware_rev"), NamespaceID: 2},
		"nvme1n1": {WWID: read("nvme1n1", "wwid"), NamespaceID: 1},
		"sdb":     {WWID: read("sdb", "device/wwid"), Model: read("sdb", "device/model"), Firmware: read("sdb", "device/rev")},
		"vdb":     {Serial: read("vdb", "serial")},
		"nullb0":  {},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("identities (-want +got):\n%s", d)
	}
	// NVMe pads its strings; the published ones are trimmed.
	if m := got["nvme0n2"].Model; m != "QEMU NVMe Ctrl" {
		t.Errorf("model %q, want it trimmed", m)
	}
	wantStable := map[string]string{
		"nvme0n2": want["nvme0n2"].WWID, "nvme1n1": want["nvme1n1"].WWID, "sdb": want["sdb"].WWID,
		"vdb": "serial." + want["vdb"].Serial, "nullb0": "",
	}
	if d := cmp.Diff(wantStable, stable); d != "" {
		t.Errorf("stable ids (-want +got):\n%s", d)
	}
	if id := (Identity{Serial: "S1", NamespaceID: 3}).StableID(); id != "serial.S1-ns3" {
		t.Errorf("serial and namespace id give %q", id)
	}
}

func TestScanMissingSysfs(t *testing.T) {
	if _, err := Scan(t.TempDir(), nil); err == nil {
		t.Fatal("a directory without block/ scanned without error")
	}
}

func TestParseCandidates(t *testing.T) {
	got := ParseCandidates(" nvme1n1, /dev/sdb,,vdc ")
	if d := cmp.Diff([]string{"nvme1n1", "sdb", "vdc"}, got); d != "" {
		t.Error(d)
	}
	if got := ParseCandidates(""); got != nil {
		t.Errorf("empty annotation gives %q", got)
	}
}
