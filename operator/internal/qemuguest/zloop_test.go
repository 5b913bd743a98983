//go:build zns_guest

package qemuguest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// zloopScript runs hack/zloop-zoned.sh (run.sh puts it on PATH in the guest).
func zloopScript(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	c := exec.Command("zloop-zoned.sh", args...)
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		return "", err.Error(), -1
	}
	return o.String(), e.String(), code
}

// kernelRelease is the guest kernel's release and its major and minor numbers.
func kernelRelease(t *testing.T) (rel string, major, minor int) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	rel = strings.TrimSpace(string(b))
	m := regexp.MustCompile(`^(\d+)\.(\d+)`).FindStringSubmatch(rel)
	if m == nil {
		t.Fatalf("kernel release %q has no major.minor", rel)
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return rel, major, minor
}

// requireZloop checks what hack/zloop-zoned.sh says on a kernel without zloop (exit 3, the kernel named,
// what is needed) and skips the test there, with one line saying why.
func requireZloop(t *testing.T) {
	t.Helper()
	rel, major, minor := kernelRelease(t)
	_, errOut, code := zloopScript("check")
	if code == 0 {
		return
	}
	if code != 3 {
		t.Fatalf("zloop-zoned.sh check: exit %d, want 0 or 3 (no zloop)\n%s", code, errOut)
	}
	for _, want := range []string{"kernel " + rel, "has no zloop", "Linux >= 6.15", "CONFIG_BLK_DEV_ZONED_LOOP"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("zloop-zoned.sh check on a kernel without zloop: message lacks %q:\n%s", want, errOut)
		}
	}
	if n := strings.Count(strings.TrimSpace(errOut), "\n"); n != 0 {
		t.Errorf("zloop-zoned.sh check: want one line, got %d:\n%s", n+1, errOut)
	}
	old := major < 6 || (major == 6 && minor < 15)
	if old != strings.Contains(errOut, "older than 6.15") {
		t.Errorf("zloop-zoned.sh check on %s: 'older than 6.15' said %v, want %v:\n%s", rel, !old, old, errOut)
	}
	if old {
		t.Skipf(kernelSkip+"zloop needs Linux >= 6.15; this guest runs %s (ZNS_QEMU_KERNEL=6.1: the default, current kernel is newer)", rel)
	}
	if why := os.Getenv(envZloopModuleError); why != "" {
		t.Skipf(kernelSkip+"zloop: kernel %s is built without CONFIG_BLK_DEV_ZONED_LOOP, and zloop.ko could not be built: %s", rel, why)
	}
	t.Skipf(kernelSkip+"zloop: kernel %s is built without CONFIG_BLK_DEV_ZONED_LOOP (Debian's kernels are; ZLOOP_MODULE=$(hack/qemu/build-zloop-module.sh) supplies it)", rel)
}

// zloopFixture are the zloop devices of the per-device cases (TestPreflightVerdicts, TestReportZones,
// TestZnsdbPreflight, TestZbdPackageTest), shaped like the null_blk devices of the same verdicts: zloop0 like
// nullb0 (fit for ZenFS, 32 zones of 64 MiB), zloop1 like nullb2 (too few zones).
var zloopFixture = []struct {
	name, args, codes string
	zones             int
}{
	{"zloop0", "--id 0 --capacity 2048 --zone-size 64", "", 32},
	{"zloop1", "--id 1 --capacity 1024 --zone-size 64", zbd.CodeTooFewZones, 16},
}

var (
	zloopOnce sync.Once
	zloopErr  error
)

// zloopDevices makes the zloop fixture once, through hack/zloop-zoned.sh, with its zone files in the guest's
// /tmp (tmpfs, hence buffered I/O); it skips, with the reason, where the kernel has no zloop.
func zloopDevices(t *testing.T) {
	t.Helper()
	inGuest(t)
	requireZloop(t)
	zloopOnce.Do(func() {
		for _, d := range zloopFixture {
			args := append([]string{"create"}, strings.Fields(d.args)...)
			args = append(args, "--base-dir", "/tmp/zloop-fixture", "--buffered-io")
			out, errOut, code := zloopScript(args...)
			if code != 0 || strings.TrimSpace(out) != "/dev/"+d.name {
				zloopErr = fmt.Errorf("zloop-zoned.sh %s: exit %d, stdout %q\n%s", strings.Join(args, " "), code, out, errOut)
				return
			}
		}
	})
	if zloopErr != nil {
		t.Fatal(zloopErr)
	}
}

// TestZloopScript: hack/zloop-zoned.sh makes a zoned device out of zone files, data written to it stays in
// them, and a device removed and created again over the same files comes back with its data and write
// pointers, which is what a reboot does to it (null_blk loses everything there).
func TestZloopScript(t *testing.T) {
	inGuest(t)
	requireZloop(t)

	base := t.TempDir()
	geometry := []string{"--capacity", "512", "--zone-size", "32", "--conv-zones", "2", "--base-dir", base, "--buffered-io"}
	create := func() string {
		t.Helper()
		out, errOut, code := zloopScript(append([]string{"create", "--id", "7"}, geometry...)...)
		if code != 0 {
			t.Fatalf("zloop-zoned.sh create: exit %d\n%s", code, errOut)
		}
		t.Log(strings.TrimSpace(errOut))
		return strings.TrimSpace(out)
	}
	dev := create()
	if dev != "/dev/zloop7" {
		t.Fatalf("create printed %q, want /dev/zloop7", dev)
	}
	t.Cleanup(func() { zloopScript("remove", "--delete-files", "--base-dir", base, "7") })

	info, err := zbd.Inspect(sysBlk, "zloop7")
	if err != nil {
		t.Fatal(err)
	}
	if info.Model != zbd.ModelHostManaged || info.NrZones != 16 || info.ZoneSizeBytes != 32*mib || info.Scheduler != "mq-deadline" {
		t.Errorf("zloop7: %+v, want host-managed, 16 zones of 32 MiB, mq-deadline", info)
	}
	if out, _, code := zloopScript("list"); code != 0 || !strings.Contains(out, "/dev/zloop7") {
		t.Errorf("list: exit %d, %q; want /dev/zloop7 in it", code, out)
	}
	// the zone files: two conventional of the zone size, fourteen sequential of length 0
	if cnv, _ := filepath.Glob(filepath.Join(base, "7", "cnv-*")); len(cnv) != 2 {
		t.Errorf("conventional zone files: %v, want 2", cnv)
	}

	// 1 MiB at the start of the first sequential zone (zone 2)
	data := bytes.Repeat([]byte("zloop keeps this "), (1<<20)/17+1)[:1<<20]
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 2*32*mib); err != nil {
		t.Fatalf("write to zone 2: %v", err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	seq2 := filepath.Join(base, "7", "seq-000002")
	if st, err := os.Stat(seq2); err != nil || st.Size() != 1<<20 {
		t.Fatalf("zone file %s after a 1 MiB write: %v, %v; want 1 MiB (its length is the write pointer)", seq2, st, err)
	}

	if _, errOut, code := zloopScript("remove", "7"); code != 0 {
		t.Fatalf("remove: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(dev); err == nil {
		t.Fatalf("%s still there after remove", dev)
	}
	create()
	zones, err := zbd.ReportZones(dev, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(zones) != 4 || zones[2].WritePointer != zones[2].Start+1<<20 {
		t.Errorf("zones after re-create: %+v; want zone 2's write pointer 1 MiB past its start", zones)
	}
	b := make([]byte, len(data))
	f, err = os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(b, 2*32*mib); err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(b) != sha256.Sum256(data) {
		t.Errorf("zone 2's data changed across remove and create")
	}

	// another geometry over the same files is refused, and says so
	if _, errOut, code := zloopScript("remove", "7"); code != 0 {
		t.Fatalf("remove: exit %d\n%s", code, errOut)
	}
	_, errOut, code := zloopScript("create", "--id", "7", "--capacity", "512", "--zone-size", "64", "--base-dir", base, "--buffered-io")
	if code == 0 || !strings.Contains(errOut, "zone files of an earlier device") {
		t.Errorf("create with another zone size over the old files: exit %d, want a refusal naming the files:\n%s", code, errOut)
	}
	create()
}
