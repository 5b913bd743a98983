//go:build !zns_guest

package qemuguest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
	"github.com/zns-mysql/zns-mysql/test/qemu"
)

// zonedStacks are the stacks TestZonedFilesystems runs: MyRocks and InnoDB, btrfs and f2fs in zoned mode,
// null_blk and emulated NVMe ZNS, a conventional ext4 baseline; and f2fs on the NVMe namespace, which has no
// conventional zones, to be refused before btrfs takes that device.
var zonedStacks = []string{
	"rocks-btrfs=rocksdb:btrfs:nullb0",
	"inno-f2fs=innodb:f2fs:nullb2",
	"inno-ext4=innodb:ext4:nullb4",
	"nvme-f2fs=innodb:f2fs:nvme0n1",
	"nvme-btrfs=rocksdb:btrfs:nvme0n1",
	"inno-zxfs=innodb:zxfs:nullb6",
	"nvme-zxfs=rocksdb:zxfs:nvme1n1+nvme2n1",
}

// TestZonedFilesystems runs `make demo-zoned`'s path for real: in the QEMU guest, znsdb formats btrfs, f2fs and
// XFS in zoned mode on null_blk zoned devices and emulated NVMe ZNS namespaces (zoned XFS on a null_blk's
// conventional zones, and on a ZNS namespace with a conventional namespace for its metadata, with sid's
// xfsprogs), the kernel mounts them, the host's MariaDB runs MyRocks and InnoDB on them, sysbench prepares and
// runs, and the runner counts the devices' written bytes per transaction, next to ext4 on a conventional
// null_blk. Zoned XFS needs a kernel >= 6.15: on an older guest (ZNS_QEMU_KERNEL=6.1) its format step must
// refuse, naming the versions.
func TestZonedFilesystems(t *testing.T) {
	qemu.Require(t)
	for _, tool := range []string{"mariadbd", "mariadb-install-db", "sysbench", "mkfs.btrfs", "mkfs.f2fs", "blkid"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := "zoned file systems in the QEMU guest need " + tool + " on the host (hack/install-deps.sh)"
			if os.Getenv(qemu.RequireEnv) == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	root, err := qemu.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "hack", "demo-zoned.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"ZONED_STACKS="+strings.Join(zonedStacks, " "), "ZONED_NVME=1", "ZONED_XFS=1", "ZONED_RESULTS="+results,
		"ZONED_TIMEOUT=1800", "ZONED_MEM_MIB=5120",
		"DEMO_SECONDS=10", "DEMO_TABLES=1", "DEMO_TABLE_SIZE=2000", "DEMO_THREADS=2")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("hack/demo-zoned.sh took %s", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("hack/demo-zoned.sh: %v\n%s", err, out)
	}
	t.Logf("%s", lastLinesOf(string(out), 16))

	refused := formatReport(t, results, "nvme-f2fs")
	if !slices.ContainsFunc(refused.Problems, func(p zbd.Problem) bool { return p.Code == zonedfs.CodeNoConventionalZones }) {
		t.Errorf("f2fs on the NVMe ZNS namespace: problems %+v, want %s", refused.Problems, zonedfs.CodeNoConventionalZones)
	}
	if _, err := os.Stat(filepath.Join(results, "nvme-f2fs.json")); err == nil {
		t.Error("a refused stack ran")
	}
	oldKernel := zonedXFSRefused(t, results)
	for _, stack := range zonedStacks {
		name, spec, _ := strings.Cut(stack, "=")
		if name == "nvme-f2fs" || oldKernel && strings.HasSuffix(name, "-zxfs") {
			continue
		}
		fs := strings.Split(spec, ":")[1]
		if fs == "btrfs" || fs == "f2fs" || fs == "zxfs" {
			r := formatReport(t, results, name)
			f := r.Filesystem
			// The UUID comes from blkid's real output through zonedfs.ParseProbe.
			if f == nil || f.Type != strings.TrimPrefix(fs, "z") || f.Action != fsformat.ActionFormat || f.UUID == "" || f.Label != zonedfs.Label("") {
				t.Errorf("%s: format report %+v", name, f)
			}
		}
		var sum benchresult.Summary
		b, err := os.ReadFile(filepath.Join(results, name+".json"))
		if err != nil {
			t.Errorf("%s: no run summary: %v", name, err)
			continue
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !sum.OK || sum.TPS <= 0 || sum.Transactions <= 0 {
			t.Errorf("%s: run ok=%v TPS %.1f transactions %d (%s)", name, sum.OK, sum.TPS, sum.Transactions, sum.Error)
		}
		if sum.DeviceWrittenBytes <= 0 || sum.BytesPerTransaction <= 0 {
			t.Errorf("%s: device written %d bytes, %.0f per transaction: the runner did not see the device's writes",
				name, sum.DeviceWrittenBytes, sum.BytesPerTransaction)
		}
		if dev := strings.Split(spec, ":")[2]; sum.Device != dev {
			t.Errorf("%s: written bytes counted on %q, want %q", name, sum.Device, dev)
		}
		t.Logf("%s: %.1f TPS (emulated), %.1f KiB written to %s per transaction", name, sum.TPS, sum.BytesPerTransaction/1024, sum.Device)
	}
}

// zonedXFSRefused reports whether the guest's kernel is too old for zoned XFS, and then checks that the format
// step refused both zoned-XFS stacks, naming the kernel's and xfsprogs' versions.
func zonedXFSRefused(t *testing.T, results string) bool {
	t.Helper()
	r := formatReport(t, results, "inno-zxfs")
	if r.Filesystem != nil && r.Filesystem.Action == fsformat.ActionFormat {
		return false
	}
	for _, name := range []string{"inno-zxfs", "nvme-zxfs"} {
		r := formatReport(t, results, name)
		if len(r.Problems) != 1 || r.Problems[0].Code != zonedfs.CodeZonedXFSUnsupported ||
			!strings.Contains(r.Problems[0].Message, "(too old)") || !strings.Contains(r.Problems[0].Message, "xfsprogs 7.2") {
			t.Errorf("%s: zoned XFS neither made nor refused for the kernel: %+v", name, r)
		}
	}
	if len(r.Problems) > 0 {
		t.Logf("zoned XFS refused on this guest's kernel: %s", r.Problems[0].Message)
	}
	return true
}

func formatReport(t *testing.T, dir, name string) dbinit.Report {
	t.Helper()
	var r dbinit.Report
	b, err := os.ReadFile(filepath.Join(dir, name+"-format.json"))
	if err != nil {
		t.Fatalf("%s: no format report: %v", name, err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func lastLinesOf(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
