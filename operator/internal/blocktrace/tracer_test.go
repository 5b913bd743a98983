package blocktrace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestDevNumbers(t *testing.T) {
	for _, tc := range []struct {
		sysfs  string
		dev    Dev
		devT   uint32
		filter string
	}{
		// the guest's nvme0n1 and nullb12, with the filters the captures used
		{"259:0\n", Dev{259, 0}, 271581184, "dev == 271581184"},
		{"254:0\n", Dev{254, 0}, 266338304, "dev == 266338304"},
		{"8:17", Dev{8, 17}, 8<<20 | 17, "dev == 8388625"},
		{"4095:1048575", Dev{4095, 1048575}, ^uint32(0), "dev == 4294967295"},
	} {
		d, err := ParseDev(tc.sysfs)
		if err != nil || d != tc.dev || d.KernelDevT() != tc.devT || Filter(d) != tc.filter {
			t.Errorf("ParseDev(%q) = %v (%v): dev_t %d, filter %q; want %v, %d, %q", tc.sysfs, d, err, d.KernelDevT(), Filter(d),
				tc.dev, tc.devT, tc.filter)
		}
		if d.String() != strings.TrimSpace(tc.sysfs) {
			t.Errorf("%v.String() = %q", d, d.String())
		}
	}
	for _, bad := range []string{"", "259", "259:", ":0", "a:0", "259:0:1", "4096:0", "0:1048576", "-1:0"} {
		if d, err := ParseDev(bad); err == nil {
			t.Errorf("ParseDev(%q) = %v, want an error", bad, d)
		}
	}
}

func TestInstanceName(t *testing.T) {
	a, b := InstanceName("nvme0n1"), InstanceName("nvme0n1")
	re := regexp.MustCompile(`^zns-nvme0n1-` + strconv.Itoa(os.Getpid()) + `-[0-9a-f]{8}$`)
	if !re.MatchString(a) || !re.MatchString(b) || a == b {
		t.Errorf("names %q and %q: want zns-<device>-<pid>-<8 hex>, different each time", a, b)
	}
}

func TestDeviceNumber(t *testing.T) {
	sys := t.TempDir()
	if err := os.MkdirAll(filepath.Join(sys, "nvme0n1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sys, "nvme0n1", "dev"), []byte("259:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := DeviceNumber(sys, "nvme0n1"); err != nil || d != (Dev{259, 0}) {
		t.Errorf("DeviceNumber = %v, %v", d, err)
	}
	for _, tc := range []struct{ name, says string }{
		{"nvme0n1p1", "a partition? trace its disk"},
		{"", "not a kernel device name"},
		{"../nvme0n1", "not a kernel device name"},
		{"..", "not a kernel device name"},
	} {
		_, err := DeviceNumber(sys, tc.name)
		if !errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("DeviceNumber(%q) = %v, want ErrNoDevice saying %q", tc.name, err, tc.says)
		}
	}
}

func TestFindTracefs(t *testing.T) {
	empty, mounted, other := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{mounted, other} {
		if err := os.Mkdir(filepath.Join(d, "instances"), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := FindTracefs(empty, mounted, other); err != nil || got != mounted {
		t.Errorf("FindTracefs = %q, %v; want the first mounted, %s", got, err, mounted)
	}
	_, err := FindTracefs(empty, filepath.Join(empty, "nope"))
	if !errors.Is(err, ErrNoTracefs) {
		t.Fatalf("no tracefs: %v", err)
	}
	for _, says := range []string{empty, "mount -t tracefs nodev /sys/kernel/tracing", "hostPath"} {
		if !strings.Contains(err.Error(), says) {
			t.Errorf("%q does not say %q", err, says)
		}
	}
}

func TestDescribe(t *testing.T) {
	const p = "/sys/kernel/tracing/instances/zns-x"
	for _, errno := range []syscall.Errno{syscall.EACCES, syscall.EPERM} {
		err := describe("create the tracing instance", p, &fs.PathError{Op: "mkdir", Path: p, Err: errno})
		want := "blocktrace: not permitted to use tracefs: create the tracing instance " + p + ": " + errno.Error() + ": "
		if !errors.Is(err, ErrNotPermitted) || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "run as uid 0") {
			t.Errorf("%v: %v", errno, err)
		}
	}
	if err := describe("write \"1\" to", "/t/x", syscall.EINVAL); err.Error() != `blocktrace: write "1" to /t/x: invalid argument` {
		t.Errorf("other errors: %v", err)
	}
}

func TestParseStats(t *testing.T) {
	// testdata/cpu0-stats.txt: a 6.1 instance's per_cpu/cpu0/stats after 12 events
	b, err := os.ReadFile("testdata/cpu0-stats.txt")
	if err != nil {
		t.Fatal(err)
	}
	if o, d, err := parseStats(string(b)); o != 0 || d != 0 || err != nil {
		t.Errorf("parseStats = %d, %d, %v", o, d, err)
	}
	s := strings.Replace(strings.Replace(string(b), "overrun: 0", "overrun: 1800", 1), "dropped events: 0", "dropped events: 7", 1)
	if o, d, err := parseStats(s); o != 1800 || d != 7 || err != nil {
		t.Errorf("parseStats = %d, %d, %v; want 1800, 7", o, d, err)
	}
	if _, _, err := parseStats("entries: 0\noverrun: x\ndropped events: 0\n"); err == nil {
		t.Error("a bad overrun parsed")
	}
	if _, _, err := parseStats("entries: 0\n"); err == nil {
		t.Error("stats without overrun parsed")
	}
}
