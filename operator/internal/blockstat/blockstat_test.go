package blockstat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readStat(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseRealCapture(t *testing.T) {
	// testdata/vda-stat.txt: "cat /sys/block/vda/stat" on a 6.18 kernel.
	s, err := Parse(readStat(t, "vda-stat.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{Fields: 17,
		ReadIOs: 228856, ReadMerges: 20755, ReadSectors: 8139043, ReadTicksMS: 1155473,
		WriteIOs: 174061, WriteMerges: 183469, WriteSectors: 23460992, WriteTicksMS: 103390,
		InFlight: 0, IOTicksMS: 71648, TimeInQueueMS: 1273900,
		DiscardIOs: 34611, DiscardMerges: 2, DiscardSectors: 20837288, DiscardTicksMS: 12671,
		FlushIOs: 45319, FlushTicksMS: 2364}
	if s != want {
		t.Errorf("Parse =\n%+v\nwant\n%+v", s, want)
	}
	if s.WrittenBytes() != 23460992*512 || s.ReadBytes() != 8139043*512 {
		t.Errorf("bytes written %d read %d", s.WrittenBytes(), s.ReadBytes())
	}
	idle, err := Parse(readStat(t, "loop0-stat.txt"))
	if err != nil || idle.Fields != 17 || idle.WrittenBytes() != 0 {
		t.Errorf("idle loop0: %+v, %v", idle, err)
	}
}

func TestParseFieldCounts(t *testing.T) {
	// Older kernels print fewer fields: 11 before 4.18, 15 before 5.5
	// (Documentation/block/stat.rst). Derived from the real capture.
	fields := strings.Fields(readStat(t, "vda-stat.txt"))
	for _, n := range []int{11, 15} {
		s, err := Parse(strings.Join(fields[:n], " ") + "\n")
		if err != nil {
			t.Fatalf("%d fields: %v", n, err)
		}
		if s.Fields != n || s.WriteSectors != 23460992 || s.TimeInQueueMS != 1273900 {
			t.Errorf("%d fields: %+v", n, s)
		}
		if n == 11 && (s.DiscardIOs != 0 || s.FlushIOs != 0) {
			t.Errorf("11 fields: discard/flush not zero: %+v", s)
		}
		if n == 15 && (s.DiscardSectors != 20837288 || s.FlushIOs != 0) {
			t.Errorf("15 fields: %+v", s)
		}
	}
	for _, bad := range []string{"", "1 2 3", strings.Join(fields[:16], " "), strings.Replace(readStat(t, "vda-stat.txt"), "174061", "-1", 1)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestSampleAndDelta(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "nullb0")
	if err := os.Mkdir(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(content string) {
		if err := os.WriteFile(filepath.Join(dev, "stat"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := readStat(t, "vda-stat.txt")
	write(base)
	before, err := Sample(dir, "nullb0")
	if err != nil {
		t.Fatal(err)
	}
	// 2048 more sectors written in 16 more writes; io ticks wrapped at 2^32.
	after := strings.NewReplacer("23460992", "23463040", "174061", "174077", "71648", "4294967295").Replace(base)
	write(after)
	a, err := Sample(dir, "nullb0")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Delta(before, a)
	if err != nil {
		t.Fatal(err)
	}
	if d.WrittenBytes() != 2048*512 || d.WriteIOs != 16 || d.ReadIOs != 0 || d.IOTicksMS != 4294967295-71648 {
		t.Errorf("delta %+v", d)
	}
	wrapped := a
	wrapped.IOTicksMS = 10 // 2^32 - 1 -> 10: 11 ms later
	if d, err := Delta(a, wrapped); err != nil || d.IOTicksMS != 11 {
		t.Errorf("ticks wrap: %+v, %v", d, err)
	}
	reset := before
	reset.WriteSectors = 5
	if _, err := Delta(before, reset); !errors.Is(err, ErrCounterReset) {
		t.Errorf("sectors going backwards: %v", err)
	}
	short := before
	short.Fields = 15
	if _, err := Delta(before, short); err == nil {
		t.Error("different field counts accepted")
	}

	if _, err := Sample(dir, "nvme9n9"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent device: %v, want ErrNotExist", err)
	}
	for _, bad := range []string{"", "..", "../nullb0", "/dev/nullb0"} {
		if _, err := Sample(dir, bad); err == nil || errors.Is(err, os.ErrNotExist) {
			t.Errorf("Sample(%q): %v, want a name error", bad, err)
		}
	}
}

func TestSampleThisMachine(t *testing.T) {
	entries, err := os.ReadDir("/sys/block")
	if err != nil || len(entries) == 0 {
		t.Skip("needs /sys/block")
	}
	for _, e := range entries {
		if _, err := Sample("/sys/block", e.Name()); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
	}
}
