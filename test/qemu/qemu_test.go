package qemu

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// runScript runs a repo script and returns its exit status and stderr.
func runScript(t *testing.T, script string, args ...string) (code int, stderr string) {
	t.Helper()
	c := exec.Command(filepath.Join(repoRoot(t), script), args...)
	var e bytes.Buffer
	c.Stderr = &e
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), e.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, e.String()
}

// The script checks its arguments before it touches the kernel, so these
// run on any host, zoned or not, without side effects. What it does with a
// real kernel is checked inside the guest (operator/internal/qemuguest).
func TestNullblkScriptRefusesBadArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{nil, 2, "usage:"},
		{[]string{"--help"}, 2, "create [--count N]"},
		{[]string{"frobnicate"}, 1, "unknown command 'frobnicate'"},
		{[]string{"create", "--zone-size", "48"}, 1, "--zone-size must be a power of two"},
		{[]string{"create", "--zone-size", "0"}, 1, "--zone-size must be a power of two"},
		{[]string{"create", "--size", "100"}, 1, "--size 100 is not a multiple of --zone-size 64"},
		{[]string{"create", "--zone-capacity", "65"}, 1, "--zone-capacity 65 is larger than --zone-size 64"},
		{[]string{"create", "--size", "128", "--conv-zones", "2"}, 1, "--conv-zones 2 leaves no sequential zone"},
		{[]string{"create", "--max-open", "8", "--max-active", "4"}, 1, "--max-open 8 exceeds --max-active 4"},
		{[]string{"create", "--conventional", "--zone-size", "64"}, 1, "drop --zone-size"},
		{[]string{"create", "--discard", "--memory-backed"}, 1, "--discard needs --conventional and --memory-backed"},
		{[]string{"create", "--conventional", "--discard"}, 1, "--discard needs --conventional and --memory-backed"},
		{[]string{"create", "--blocksize", "1024"}, 1, "--blocksize must be 512 or 4096"},
		{[]string{"create", "--count", "0"}, 1, "--count must be at least 1"},
		{[]string{"create", "--size", "-5"}, 1, "--size needs a whole number, got '-5'"},
		{[]string{"create", "--bogus"}, 1, "unknown option '--bogus'"},
		{[]string{"destroy"}, 1, "name the devices, or --all"},
		{[]string{"list", "x"}, 1, "list takes no arguments"},
		{[]string{"check", "x"}, 1, "check takes no arguments"},
	} {
		code, stderr := runScript(t, "hack/nullblk-zoned.sh", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.says) {
			t.Errorf("nullblk-zoned.sh %s: exit %d, stderr %q; want exit %d saying %q",
				strings.Join(tc.args, " "), code, stderr, tc.code, tc.says)
		}
	}
}

// fakeGuest is enough of a guest directory for run.sh to get past its
// checks to the option errors, which it reports before booting.
func fakeGuest(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("run.sh checks for qemu-system-x86_64 first (Debian package qemu-system-x86)")
	}
	dir := t.TempDir()
	for _, f := range []string{"vmlinuz", "initramfs.cpio"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sysroot"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunShRefusesBadOptions(t *testing.T) {
	g := fakeGuest(t)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--guest-dir", g}, "no command"},
		{[]string{"--guest-dir", g, "--zns", "zone_size=64M,colour=red", "--", "true"}, "unknown key 'colour'"},
		{[]string{"--guest-dir", g, "--zns", "zone_size", "--", "true"}, "'zone_size' is not key=value"},
		{[]string{"--guest-dir", g, "--env", "FOO", "--", "true"}, "--env needs NAME=VALUE"},
		{[]string{"--guest-dir", g, "--share", "/nonexistent/zns", "--", "true"}, "not a directory"},
		{[]string{"--guest-dir", g, "--share", "/", "--", "true"}, "share a directory, not the host's root"},
		{[]string{"--guest-dir", g, "--mem", "lots", "--", "true"}, "take whole numbers"},
		{[]string{"--guest-dir", t.TempDir(), "--", "true"}, "holds no vmlinuz"},
		{[]string{"--frob", "--", "true"}, "unknown option '--frob'"},
		{[]string{"--guest-dir", g, "--hostfwd", "6443", "--", "true"}, "--hostfwd needs HOSTPORT:GUESTPORT"},
		{[]string{"--guest-dir", g, "--accel", "hvf", "--", "true"}, "--accel takes tcg or kvm"},
		{[]string{"--guest-dir", g, "--disk", "/nonexistent/zns.img", "--", "true"}, "is not a readable file"},
		{[]string{"--guest-dir", g, "--disk", "a,b.img,snapshot", "--", "true"}, "a file name without commas"},
		{[]string{"--guest-dir", g, "--disk", "", "--", "true"}, "--disk needs FILE"},
		{[]string{"--guest-dir", g, "--nvme", "size=1G,colour=red", "--", "true"}, "--nvme 'size=1G,colour=red': unknown key 'colour'"},
		{[]string{"--guest-dir", g, "--nvme", "ocp", "--", "true"}, "'ocp' is not key=value"},
		{[]string{"--guest-dir", g, "--nvme", "zone_size=64M", "--", "true"}, "unknown key 'zone_size' (size lbs ocp fdp)"},
		{[]string{"--guest-dir", g, "--nvme", "ocp=yes", "--", "true"}, "ocp takes on or off"},
		{[]string{"--guest-dir", g, "--nvme", "fdp=1", "--", "true"}, "fdp takes on or off"},
		{[]string{"--guest-dir", g, "--nvme", "lbs=1024", "--", "true"}, "lbs takes 512 or 4096"},
		{[]string{"--guest-dir", g, "--nvme", "size=lots", "--", "true"}, "size takes a whole number of bytes"},
		{[]string{"--guest-dir", g, "--nvme", "size=", "--", "true"}, "size takes a whole number of bytes"},
		{[]string{"--guest-dir", g, "--nvme", "", "--", "true"}, "--nvme needs a spec"},
		{[]string{"--guest-dir", g, "--zns", "default", "--nvme", "fdp=on", "--zns", "lbs", "--", "true"}, "--zns 'lbs': 'lbs' is not key=value"},
		{[]string{"--guest-dir", g, "--zns", "controller=previous", "--", "true"}, "controller=previous needs a --zns on a controller of its own before it"},
		{[]string{"--guest-dir", g, "--nvme", "default", "--zns", "controller=previous", "--", "true"}, "controller=previous needs a --zns"},
		{[]string{"--guest-dir", g, "--zns", "default", "--zns", "controller=shared", "--", "true"}, "controller takes own or previous"},
	} {
		code, stderr := runScript(t, "hack/qemu/run.sh", tc.args...)
		if code != ExitNoRun || !strings.Contains(stderr, tc.says) {
			t.Errorf("run.sh %s: exit %d, stderr %q; want exit %d saying %q",
				strings.Join(tc.args, " "), code, stderr, ExitNoRun, tc.says)
		}
	}
	// a QEMU without the OCP log or FDP (Debian bookworm's 7.2) is refused before the boot, with what to do
	if err := NVMeLogsSupported(); err != nil {
		t.Logf("this QEMU: %v", err)
		for _, spec := range []string{"default", "ocp=off,fdp=on"} {
			code, stderr := runScript(t, "hack/qemu/run.sh", "--guest-dir", g, "--nvme", spec, "--", "true")
			if code != ExitNoRun || !strings.Contains(stderr, "does not emulate") || !strings.Contains(stderr, "QEMU_VERSION") {
				t.Errorf("run.sh --nvme %s on a QEMU without OCP or FDP: exit %d, stderr %q", spec, code, stderr)
			}
		}
	}
}

func TestArgs(t *testing.T) {
	got, err := Args("/cache/guest", Options{
		Share: "/tmp/s", NullBlk: []string{"--size 512"}, ZNS: []string{"default", "zone_size=32M"}, NVMe: []string{"fdp=on"},
		Disks: []string{"/tmp/d.img,snapshot"}, Env: []string{"A=1"}, MemoryMiB: 2048, Timeout: 90 * time.Second, Userland: true,
	}, "sh", "-c", "echo hi")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(repoRoot(t), "hack/qemu/run.sh"), "--guest-dir", "/cache/guest", "--timeout", "90",
		"--share", "/tmp/s", "--nullblk", "--size 512", "--zns", "default", "--zns", "zone_size=32M", "--nvme", "fdp=on",
		"--disk", "/tmp/d.img,snapshot", "--env", "A=1", "--mem", "2048", "--userland", "--", "sh", "-c", "echo hi"}
	if !slices.Equal(got, want) {
		t.Errorf("Args =\n%q\nwant\n%q", got, want)
	}
	if _, err := Args("/g", Options{Env: []string{"A"}}, "true"); err == nil {
		t.Error("env without = accepted")
	}
	if _, err := Args("/g", Options{}); err == nil {
		t.Error("no command accepted")
	}
}

// The guest is built once and then reused from the cache: a second build
// is the fast path and names the same directory, which holds what the
// in-guest tests rely on.
func TestBuildGuestCached(t *testing.T) {
	dir := Require(t)
	start := time.Now()
	c := exec.Command(filepath.Join(repoRoot(t), "hack/qemu/build-guest.sh"))
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if strings.TrimSpace(string(out)) != dir || stderr.Len() != 0 {
		t.Errorf("second build: stdout %q (want %q), stderr %q (want nothing: cached)", out, dir, stderr.String())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the cached path took %v", d)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		t.Fatal(err)
	}
	wants := []string{"./init", "./bin/busybox", "/null_blk.ko", "/nvme.ko", "/nvme-core.ko", "/configfs.ko",
		"/9pnet_virtio.ko", "/9p.ko", "modules.dep", "./etc/ld.so.cache", "9p:sysroot/usr/bin/fio",
		"9p:sysroot/usr/sbin/blkzone"}
	// modules only where the kernel builds them as modules: 7.x has virtio_pci built in and its CRC
	// helpers are a built-in library (6.1: modules that nvme-core looks up by name)
	config, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	for opt, mod := range map[string]string{"CONFIG_VIRTIO_PCI": "/virtio_pci.ko", "CONFIG_CRYPTO_CRC64_ROCKSOFT": "/crc64_rocksoft_generic.ko"} {
		if bytes.Contains(config, []byte("\n"+opt+"=m\n")) {
			wants = append(wants, mod)
		}
	}
	for _, want := range wants {
		if !bytes.Contains(manifest, []byte(want)) {
			t.Errorf("the guest lacks %s", want)
		}
	}
}

// Run itself (output, exit status, the share at the same path, --env,
// --nullblk) is exercised by operator/internal/qemuguest's TestGuestSuite,
// which needs all of it; a boot of its own here would double the tier's time.

func TestRunTimeout(t *testing.T) {
	dir := Require(t)
	start := time.Now()
	res, err := run(dir, Options{Timeout: 2 * time.Second}, "sleep", "600")
	if err != nil {
		t.Fatal(err)
	}
	if res.exit != ExitTimeout || !strings.Contains(res.log, "timed out after 2s") {
		t.Errorf("exit %d, log %q; want %d and a timeout message", res.exit, res.log, ExitTimeout)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("a 2 s timeout took %v", d)
	}
}
