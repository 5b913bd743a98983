//go:build !zns_guest

package qemuguest

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/test/qemu"
)

// zloopUnavailable says why the built guest's kernel cannot make zloop devices, without booting it: older
// than 6.15, or built without CONFIG_BLK_DEV_ZONED_LOOP and no ZLOOP_MODULE given. "" when it can.
func zloopUnavailable(t *testing.T, guestDir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(guestDir, "kernel-release"))
	if err != nil {
		t.Fatalf("the built guest has no kernel-release: %v", err)
	}
	rel := strings.TrimSpace(string(b))
	m := regexp.MustCompile(`^(\d+)\.(\d+)`).FindStringSubmatch(rel)
	if m == nil {
		t.Fatalf("kernel release %q has no major.minor", rel)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < 6 || (major == 6 && minor < 15) {
		return "zloop needs Linux >= 6.15; the guest runs " + rel + " (ZNS_QEMU_KERNEL=6.1: the default, current kernel is newer)"
	}
	if os.Getenv("ZLOOP_MODULE") != "" {
		return ""
	}
	cfg, err := os.ReadFile(filepath.Join(guestDir, "config"))
	if err != nil {
		t.Fatalf("the built guest has no config: %v", err)
	}
	if regexp.MustCompile(`(?m)^CONFIG_BLK_DEV_ZONED_LOOP=[ym]$`).Match(cfg) {
		return ""
	}
	if why := os.Getenv(envZloopModuleError); why != "" {
		return "zloop: kernel " + rel + " is built without CONFIG_BLK_DEV_ZONED_LOOP, and zloop.ko could not be built: " + why
	}
	return "zloop: kernel " + rel + " is built without CONFIG_BLK_DEV_ZONED_LOOP; ZLOOP_MODULE=$(hack/qemu/build-zloop-module.sh) supplies it"
}

// zloopGuestEnv copies ZLOOP_MODULE (a zloop.ko for a guest kernel built without zloop,
// hack/qemu/build-zloop-module.sh) into the share and returns the guest environment that names it there, with
// the reason make test could not build one when it could not.
func zloopGuestEnv(t *testing.T, share string) []string {
	t.Helper()
	var env []string
	if why := os.Getenv(envZloopModuleError); why != "" {
		env = append(env, envZloopModuleError+"="+why)
	}
	m := os.Getenv("ZLOOP_MODULE")
	if m == "" {
		return env
	}
	b, err := os.ReadFile(m)
	if err != nil {
		t.Fatalf("ZLOOP_MODULE: %v", err)
	}
	if err := os.WriteFile(filepath.Join(share, "zloop.ko"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return append(env, "ZLOOP_MODULE="+filepath.Join(share, "zloop.ko"))
}

var wptrRE = regexp.MustCompile(`wptr (0x[0-9a-f]+)`)

// wptrs are the write pointers of a blkzone report, in order.
func wptrs(t *testing.T, report string) []string {
	t.Helper()
	var ps []string
	for _, m := range wptrRE.FindAllStringSubmatch(report, -1) {
		ps = append(ps, m[1])
	}
	if len(ps) == 0 {
		t.Fatalf("no write pointers in:\n%s", report)
	}
	return ps
}

// TestZloopAcrossReboot: a zloop device's data and write pointers survive a power-off, which null_blk's do
// not. The first boot creates /dev/zloop0 with its zone files on the share (a host directory), writes 3 MiB
// into zone 2 and 1 MiB into zone 4 and powers off; the second boot, a new QEMU, creates it again over the
// same files and reads zone 2 back.
func TestZloopAcrossReboot(t *testing.T) {
	guestDir := qemu.Require(t)
	if why := zloopUnavailable(t, guestDir); why != "" {
		t.Skip(why)
	}
	share := t.TempDir()
	env := zloopGuestEnv(t, share)
	data := make([]byte, 3<<20)
	rand.New(rand.NewSource(28)).Read(data)
	if err := os.WriteFile(filepath.Join(share, "data"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// 9p gives no O_DIRECT to the zone files: buffered I/O on them
	create := "zloop-zoned.sh create --id 0 --capacity 512 --zone-size 32 --conv-zones 2 --base-dir " + share + "/zloop --buffered-io"
	report := "blkzone report -c 6 /dev/zloop0"
	opts := qemu.Options{Share: share, Env: env}

	out, code := qemu.Run(t, opts, "bash", "-c", "set -e; "+create+
		"; dd if=data of=/dev/zloop0 bs=1M seek=64 oflag=direct 2>/dev/null"+
		"; dd if=data of=/dev/zloop0 bs=1M seek=128 count=1 oflag=direct 2>/dev/null"+
		"; echo ---; "+report+"; echo ---; zloop-zoned.sh remove 0")
	if code != 0 {
		t.Fatalf("first boot: exit %d\n%s", code, out)
	}
	before := strings.Split(out, "---\n")
	if len(before) != 3 {
		t.Fatalf("first boot: no zone report in:\n%s", out)
	}
	t.Logf("first boot:\n%s", out)

	out, code = qemu.Run(t, opts, "bash", "-c", "set -e; "+create+
		"; echo ---; "+report+"; echo ---; dd if=/dev/zloop0 of=back bs=1M skip=64 count=3 2>/dev/null; zloop-zoned.sh remove 0")
	if code != 0 {
		t.Fatalf("second boot: exit %d\n%s", code, out)
	}
	after := strings.Split(out, "---\n")
	if len(after) != 3 {
		t.Fatalf("second boot: no zone report in:\n%s", out)
	}
	t.Logf("second boot:\n%s", out)
	if !strings.Contains(after[0], "re-added") {
		t.Errorf("second boot: create did not say it re-added the device over its zone files:\n%s", after[0])
	}

	wb, wa := wptrs(t, before[1]), wptrs(t, after[1])
	if strings.Join(wb, " ") != strings.Join(wa, " ") {
		t.Errorf("write pointers before the reboot %v, after %v", wb, wa)
	}
	// blkzone prints the write pointer relative to the zone's start, in sectors: 3 MiB and 1 MiB
	if len(wa) != 6 || wa[2] != "0x001800" || wa[4] != "0x000800" {
		t.Errorf("write pointers after the reboot %v, want zone 2's at 0x001800 and zone 4's at 0x000800", wa)
	}
	back, err := os.ReadFile(filepath.Join(share, "back"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, data) {
		t.Errorf("zone 2 read back after the reboot differs from what was written (%d bytes read)", len(back))
	}
}
