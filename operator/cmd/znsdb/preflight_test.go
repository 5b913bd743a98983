package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

func TestPreflightFitDevice(t *testing.T) {
	devs := nullb0()
	for i := range devs.zones {
		devs.zones[i].Capacity = 60 << 20
	}
	res := runZnsdb(t, &fakeRunner{}, devs, nil, "preflight", "--device", "nullb0", "--sys-block", sysBlock)
	if res.code != exitOK || res.stderr != "" {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	d := res.report.Device
	if d == nil || d.Name != "nullb0" || d.NrZones != 64 || d.ZoneCapacityBytes != 60<<20 || d.Scheduler != "mq-deadline" {
		t.Errorf("device %+v", d)
	}
	if len(res.report.Problems) != 0 || res.report.Filesystem != nil || res.report.Error != "" {
		t.Errorf("report %+v", res.report)
	}
}

func TestPreflightRefusals(t *testing.T) {
	tests := []struct {
		device string
		code   string
		// host-managed devices with problems still show their zones
		capacity int64
	}{
		{"nvme0n2", zbd.CodeWrongScheduler, 100 << 20},
		{"nullb1", zbd.CodeNotHostManaged, 0},
		{"sdb", zbd.CodeNotHostManaged, 0},
		{"nullb2", zbd.CodeTooFewZones, 64 << 20},
		{"nullb3", zbd.CodeTooFewOpenZones, 64 << 20},
		{"nvme0n1p1", zbd.CodePartition, 0},
		{"nullb9", zbd.CodeNoSuchDevice, 0},
	}
	for _, tt := range tests {
		t.Run(tt.device, func(t *testing.T) {
			d, err := zbd.Inspect(sysBlock, tt.device)
			devs := zonedDevice(tt.device, int(d.NrZones), d.ZoneSizeBytes)
			if err == nil && d.Model == zbd.ModelHostManaged {
				for i := range devs.zones {
					devs.zones[i].Capacity = tt.capacity
				}
			}
			res := runZnsdb(t, &fakeRunner{}, devs, nil, "preflight", "--device", tt.device, "--sys-block", sysBlock)
			if res.code != exitRefused {
				t.Errorf("exit %d, want %d", res.code, exitRefused)
			}
			if len(res.report.Problems) != 1 || res.report.Problems[0].Code != tt.code || res.report.Error != "" {
				t.Fatalf("report %+v, want one %s problem", res.report, tt.code)
			}
			if !strings.Contains(res.stderr, tt.code+": ") {
				t.Errorf("stderr %q does not name %s", res.stderr, tt.code)
			}
			if tt.capacity == 0 {
				if devs.reported != 0 {
					t.Errorf("zone report read %d times for a device that cannot have zones", devs.reported)
				}
				return
			}
			if got := res.report.Device.ZoneCapacityBytes; got != tt.capacity {
				t.Errorf("zone capacity %d, want %d", got, tt.capacity)
			}
		})
	}
}

func TestPreflightDeviceNode(t *testing.T) {
	devs := nullb0()
	devs.reportErr = &os.PathError{Op: "open", Path: "/dev/nullb0", Err: syscall.EACCES}
	res := runZnsdb(t, &fakeRunner{}, devs, nil, "preflight", "--device", "nullb0", "--sys-block", sysBlock)
	if res.code != exitRefused || len(res.report.Problems) != 1 || res.report.Problems[0].Code != zbd.CodeDeviceNotAccessible {
		t.Fatalf("exit %d, report %+v", res.code, res.report)
	}
	res = runZnsdb(t, &fakeRunner{}, nullb0(), nil, "preflight", "--device", "nullb0", "--sys-block", sysBlock, "--dev-dir", "/elsewhere")
	if res.code != exitRefused || len(res.report.Problems) != 1 || res.report.Problems[0].Code != zbd.CodeNoDeviceNode {
		t.Fatalf("exit %d, report %+v", res.code, res.report)
	}
}

func TestPreflightZoneCountMismatch(t *testing.T) {
	devs := nullb0()
	devs.zones = devs.zones[:40]
	res := runZnsdb(t, &fakeRunner{}, devs, nil, "preflight", "--device", "nullb0", "--sys-block", sysBlock)
	if res.code != exitRefused || !strings.Contains(res.report.Error, "lists 40 zones, sysfs says 64") {
		t.Fatalf("exit %d, report %+v", res.code, res.report)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"mkfs"}, {"preflight", "--no-such-flag"}, {"preflight", "extra"}} {
		if code := run(t.Context(), args, deps{stdout: &strings.Builder{}, stderr: &strings.Builder{}}); code != exitUsage {
			t.Errorf("run(%q) = %d, want %d", args, code, exitUsage)
		}
	}
	var out strings.Builder
	if code := run(t.Context(), []string{"help"}, deps{stdout: &out, stderr: &out}); code != exitOK || !strings.Contains(out.String(), "preflight") {
		t.Errorf("help: %d %q", code, out.String())
	}
	if code := run(t.Context(), []string{"format", "-h"}, deps{stdout: &out, stderr: &out}); code != exitOK || !strings.Contains(out.String(), "-aux-path") {
		t.Errorf("format -h: %d", code)
	}
}

// --sysfs-only is how the preflight Job of a zonedDevice runs: the device node is out of reach there, so the
// zone report must not be read, and the sysfs verdicts are the same as with it.
func TestPreflightSysfsOnly(t *testing.T) {
	devs := nullb0()
	devs.reportErr = &os.PathError{Op: "open", Path: "/dev/nullb0", Err: syscall.EPERM}
	res := runZnsdb(t, &fakeRunner{}, devs, nil, "preflight", "--device", "nullb0", "--sys-block", sysBlock, "--sysfs-only")
	if res.code != exitOK || len(res.report.Problems) != 0 || res.report.Error != "" {
		t.Fatalf("exit %d, report %+v", res.code, res.report)
	}
	if devs.reported != 0 {
		t.Errorf("zone report read %d times with --sysfs-only", devs.reported)
	}
	if d := res.report.Device; d == nil || d.NrZones != 64 || d.CapacityBytes != 4<<30 || d.ZoneCapacityBytes != 0 {
		t.Errorf("device %+v: want sysfs's 64 zones and 4 GiB, zone capacity unknown", d)
	}
	for _, dev := range []string{"nvme0n2", "nullb1", "nullb2", "nullb3"} {
		res := runZnsdb(t, &fakeRunner{}, zonedDevice(dev, 64, 64<<20), nil, "preflight", "--device", dev, "--sys-block", sysBlock, "--sysfs-only")
		if res.code != exitRefused || len(res.report.Problems) != 1 {
			t.Errorf("%s: exit %d, report %+v: the sysfs verdicts must hold without the zone report", dev, res.code, res.report)
		}
	}
}

// copyTree copies a recorded sysfs device tree so a test can change one file.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A device above the zone-limit floor but below the limit seen to work is
// accepted with a warning, in the report and on stderr.
func TestPreflightWarnsAboutFewOpenZones(t *testing.T) {
	sys := t.TempDir()
	copyTree(t, filepath.Join(sysBlock, "nullb0"), filepath.Join(sys, "nullb0"))
	for _, f := range []string{"max_open_zones", "max_active_zones"} {
		if err := os.WriteFile(filepath.Join(sys, "nullb0", "queue", f), []byte("8\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, extra := range [][]string{nil, {"--sysfs-only"}} {
		args := append([]string{"preflight", "--device", "nullb0", "--sys-block", sys}, extra...)
		res := runZnsdb(t, &fakeRunner{}, nullb0(), nil, args...)
		if res.code != exitOK || len(res.report.Problems) != 0 {
			t.Fatalf("%v: exit %d, problems %+v", extra, res.code, res.report.Problems)
		}
		w := res.report.Warnings
		if len(w) != 2 || w[0].Code != zbd.CodeFewOpenZones || w[1].Code != zbd.CodeFewActiveZones {
			t.Errorf("%v: warnings %+v", extra, w)
		}
		if !strings.Contains(res.stderr, "warning: FewOpenZones: nullb0 allows 8 open zones") {
			t.Errorf("%v: stderr %q", extra, res.stderr)
		}
	}
}
