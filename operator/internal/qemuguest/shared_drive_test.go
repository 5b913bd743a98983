//go:build zns_guest

package qemuguest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
	"github.com/zns-mysql/zns-mysql/operator/internal/nvmelog"
)

// sharedDev is that namespace: the kernel names it after its controller, nvme0, and its NSID, 2.
const sharedDev = "nvme0n2"

// TestSharedDrive: two ZNS namespaces of one controller are two devices of one drive. The operator names a
// target's drive from the device's name (deviceid.ID.Drive); here the kernel's sysfs says which controller each
// namespace hangs from, and the drive's own counters, read through either namespace, count what was written
// to the other: a Benchmark's drive figures for a target on a shared drive include its neighbours' writes.
func TestSharedDrive(t *testing.T) {
	devices(t)
	for _, dev := range []string{nvmeDev, sharedDev} {
		if _, err := os.Stat("/dev/" + dev); err != nil {
			t.Fatalf("%s: %v (run.sh --zns %s)", dev, err, sharedNamespaceSpec)
		}
	}
	if a, b := controllerOf(t, nvmeDev), controllerOf(t, sharedDev); a != "nvme0" || b != a {
		t.Fatalf("sysfs: %s hangs from %q, %s from %q; want both from nvme0", nvmeDev, a, sharedDev, b)
	}
	for _, dev := range []string{nvmeDev, sharedDev} {
		if d := (deviceid.ID{Node: "n", Device: dev}).Drive(); d != "n/nvme0" {
			t.Errorf("deviceid: %s is drive %q, want n/nvme0", dev, d)
		}
	}
	if zoned, _ := os.ReadFile(filepath.Join(sysBlk, sharedDev, "queue", "zoned")); strings.TrimSpace(string(zoned)) != "host-managed" {
		t.Errorf("%s zoned %q, want host-managed", sharedDev, zoned)
	}
	if sectors, _ := os.ReadFile(filepath.Join(sysBlk, sharedDev, "queue", "chunk_sectors")); strings.TrimSpace(string(sectors)) != "32768" {
		t.Errorf("%s zone of %q sectors, want 16 MiB (32768)", sharedDev, sectors)
	}

	before := readNVMe(t, nvmeDev)
	// 48 direct writes of 64 KiB at the start of the second namespace's first zone, which nothing else writes
	args := []string{"if=/dev/urandom", "of=/dev/" + sharedDev, fmt.Sprintf("bs=%d", nvmeLogBlock), "count=48", "oflag=direct"}
	if out, err := exec.Command("dd", args...).CombinedOutput(); err != nil {
		t.Fatalf("dd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	after := readNVMe(t, nvmeDev)
	d, err := nvmelog.Delta(before, after)
	if err != nil {
		t.Fatal(err)
	}
	const written = 48 * nvmeLogBlock
	if diff := int64(d.HostBytes) - written; after.Controller.Serial != "zns0" || d.HostWriteCommands < 48 ||
		diff <= -nvmelog.DataUnitBytes || diff >= 2*nvmelog.DataUnitBytes {
		t.Errorf("read through %s (controller %s): %d host bytes in %d write commands after %d bytes in 48 writes to %s",
			nvmeDev, after.Controller.Serial, d.HostBytes, d.HostWriteCommands, written, sharedDev)
	}
	t.Logf("%d bytes written to %s: the drive's SMART log read through %s counts %d host bytes (+-%d), %d write commands",
		written, sharedDev, nvmeDev, d.HostBytes, d.HostBytesResolution, d.HostWriteCommands)
}

// controllerOf is the NVMe controller a namespace's block device hangs from in sysfs ("nvme0"): the device
// link of nvme0n2 is the controller's device, or, under NVMe multipath, the subsystem's, whose controller the
// path device nvme0c0n2 names.
func controllerOf(t *testing.T, dev string) string {
	t.Helper()
	link, err := filepath.EvalSymlinks(filepath.Join(sysBlk, dev, "device"))
	if err != nil {
		t.Fatalf("%s: %v", dev, err)
	}
	return filepath.Base(link)
}
