package zonedfs

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

func TestJudgeConventional(t *testing.T) {
	fit := zbd.Device{Name: "nvme1n1", Model: zbd.ModelNone, CapacityBytes: 4 << 30, Scheduler: "none"}
	small := fit
	small.CapacityBytes = MinConventionalBytes - 4096
	zoned := fit
	zoned.Model = zbd.ModelHostManaged
	aware := fit
	aware.Model = zbd.ModelHostAware
	atMin := fit
	atMin.CapacityBytes = MinConventionalBytes
	for _, c := range []struct {
		name string
		dev  zbd.Device
		want []string
	}{
		{"fit", fit, nil},
		{"at the minimum", atMin, nil},
		{"too small", small, []string{CodeDeviceTooSmall}},
		{"host-managed", zoned, []string{CodeZonedDevice}},
		{"host-aware", aware, []string{CodeZonedDevice}},
	} {
		got := codes(JudgeConventional(XFS, c.dev))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: problems %v, want %v", c.name, got, c.want)
		}
	}
	for _, p := range JudgeConventional(Ext4, zoned) {
		if !strings.Contains(p.Message, "zonedDevice") {
			t.Errorf("the refusal of a zoned device does not point at zonedDevice: %s", p.Message)
		}
	}
	for _, p := range JudgeConventional(Ext4, small) {
		if !strings.Contains(p.Message, "511 MiB") || !strings.Contains(p.Message, "512 MiB") {
			t.Errorf("the size refusal does not give the size and the minimum: %s", p.Message)
		}
	}
}

// failingReader reads the device's start and fails at any other offset, as a device with a bad end does.
type failingReader struct{ r *bytes.Reader }

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off > 0 {
		return 0, errors.New("I/O error")
	}
	return f.r.ReadAt(p, off)
}

func TestZeroEnds(t *testing.T) {
	const size = 8 << 20
	dev := func(at ...int64) *bytes.Reader {
		b := make([]byte, size)
		for _, off := range at {
			b[off] = 1
		}
		return bytes.NewReader(b)
	}
	for _, c := range []struct {
		name string
		dev  *bytes.Reader
		size int64
		want bool
	}{
		{"all zeros", dev(), size, true},
		{"a byte in the first MiB", dev(4096), size, false},
		{"the first byte", dev(0), size, false},
		{"the last byte", dev(size - 1), size, false},
		{"a byte in the last MiB", dev(size - EndBytes), size, false},
		// data in the middle is what the ends cannot see: blkid's probe and the file system's own checks are
		// the rest of the test, and a precondition or format only ever runs with a token
		{"a byte in the middle only", dev(size / 2), size, true},
		{"a device smaller than both ends", bytes.NewReader(make([]byte, 1536<<10)), 1536 << 10, true},
		{"a tiny one with data at its end", bytes.NewReader(append(make([]byte, 4095), 7)), 4096, false},
	} {
		got, err := ZeroEnds(c.dev, c.size)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := ZeroEnds(failingReader{dev()}, size); err == nil {
		t.Error("a read error was not reported")
	}
	if _, err := ZeroEnds(dev(), 0); err == nil {
		t.Error("a device of no size was judged")
	}
}

func TestParseConventional(t *testing.T) {
	for _, ok := range []string{"ext4", "xfs"} {
		if fs, err := ParseConventional(ok); err != nil || string(fs) != ok || fs.Zoned() {
			t.Errorf("%s: %v, %v", ok, fs, err)
		}
	}
	for _, bad := range []string{"btrfs", "f2fs", "zenfs", "", "ext3"} {
		if _, err := ParseConventional(bad); err == nil {
			t.Errorf("%q accepted on a conventional device", bad)
		}
	}
}
