//go:build linux

package zbd

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The kernel answers BLKREPORTZONE on anything but a zoned block device with
// ENOTTY; a regular file is the nearest thing this machine has.
func TestReportZonesNotZoned(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReportZones(p, 0); !errors.Is(err, syscall.ENOTTY) {
		t.Errorf("err = %v, want ENOTTY", err)
	}
	if _, err := ReportZones(filepath.Join(t.TempDir(), "absent"), 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent: err = %v", err)
	}
}

// ZNS_TEST_ZONED_DEVICE names a real zoned device (e.g. /dev/nullb0) in the
// QEMU tier; the sysfs entry of the same name must agree with the report.
func TestReportZonesRealDevice(t *testing.T) {
	dev := os.Getenv("ZNS_TEST_ZONED_DEVICE")
	if dev == "" {
		t.Skip("needs a zoned block device: set ZNS_TEST_ZONED_DEVICE=/dev/<name>")
	}
	d, err := Inspect("/sys/block", filepath.Base(dev))
	if err != nil {
		t.Fatal(err)
	}
	zones, err := ReportZones(dev, 0)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(zones)) != d.NrZones {
		t.Errorf("report has %d zones, sysfs nr_zones %d", len(zones), d.NrZones)
	}
	for i, z := range zones {
		// Only the last zone may be smaller (a runt zone).
		lenOK := z.Len == d.ZoneSizeBytes || i == len(zones)-1 && z.Len < d.ZoneSizeBytes
		if z.Start != int64(i)*d.ZoneSizeBytes || !lenOK || z.Capacity <= 0 || z.Capacity > z.Len {
			t.Fatalf("zone %d = %+v, zone size %d", i, z, d.ZoneSizeBytes)
		}
	}
	if few, err := ReportZones(dev, 3); err != nil || len(few) != 3 {
		t.Errorf("max 3: %d zones, %v", len(few), err)
	}
	t.Logf("%s: %d zones, capacity %d, empty=%v", dev, len(zones), ZoneCapacity(zones), IsEmpty(zones))
}
