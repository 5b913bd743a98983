// Package blockstat reads a block device's I/O counters from
// /sys/block/<dev>/stat (kernel Documentation/block/stat.rst), so that the
// benchmark can report how many bytes reached the device during a run.
package blockstat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SectorBytes is the unit of the sector fields. The kernel counts them in
// 512-byte units whatever the device's logical block size (a 4Kn NVMe
// namespace still advances write sectors by 8 per 4 KiB).
const SectorBytes = 512

// Stat is one sample of the counters. Fields holds how many the kernel
// printed: 11 (before 4.18), 15 (discards, 4.18+) or 17 (flushes, 5.5+);
// the later groups stay zero on older kernels.
type Stat struct {
	Fields int

	ReadIOs, ReadMerges, ReadSectors, ReadTicksMS     uint64
	WriteIOs, WriteMerges, WriteSectors, WriteTicksMS uint64
	// InFlight is a gauge, not a counter.
	InFlight, IOTicksMS, TimeInQueueMS                        uint64
	DiscardIOs, DiscardMerges, DiscardSectors, DiscardTicksMS uint64
	FlushIOs, FlushTicksMS                                    uint64
}

// WrittenBytes is the data written, from the write sectors field.
func (s Stat) WrittenBytes() uint64 { return s.WriteSectors * SectorBytes }

// ReadBytes is the data read.
func (s Stat) ReadBytes() uint64 { return s.ReadSectors * SectorBytes }

// Parse reads the content of a stat file.
func Parse(content string) (Stat, error) {
	f := strings.Fields(content)
	var s Stat
	switch len(f) {
	case 11, 15, 17:
	default:
		return s, fmt.Errorf("blockstat: %d fields, want 11, 15 or 17: %q", len(f), strings.TrimSpace(content))
	}
	vals := make([]uint64, 17)
	for i, x := range f {
		v, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return s, fmt.Errorf("blockstat: field %d: %v", i+1, err)
		}
		vals[i] = v
	}
	s = Stat{
		Fields:  len(f),
		ReadIOs: vals[0], ReadMerges: vals[1], ReadSectors: vals[2], ReadTicksMS: vals[3],
		WriteIOs: vals[4], WriteMerges: vals[5], WriteSectors: vals[6], WriteTicksMS: vals[7],
		InFlight: vals[8], IOTicksMS: vals[9], TimeInQueueMS: vals[10],
		DiscardIOs: vals[11], DiscardMerges: vals[12], DiscardSectors: vals[13], DiscardTicksMS: vals[14],
		FlushIOs: vals[15], FlushTicksMS: vals[16],
	}
	return s, nil
}

// Sample reads <sysBlockDir>/<dev>/stat. dev is a kernel name ("nvme0n2",
// "nullb0"), not a path. A device that is not there yields an error for
// which errors.Is(err, os.ErrNotExist) holds, so callers can tell "not
// visible on this node" from a broken file.
func Sample(sysBlockDir, dev string) (Stat, error) {
	if dev == "" || dev == "." || dev == ".." || strings.ContainsAny(dev, "/\x00") {
		return Stat{}, fmt.Errorf("blockstat: %q is not a kernel device name", dev)
	}
	b, err := os.ReadFile(filepath.Join(sysBlockDir, dev, "stat"))
	if err != nil {
		return Stat{}, fmt.Errorf("blockstat: %w", err)
	}
	return Parse(string(b))
}

// ErrCounterReset: a counter went backwards between samples, which happens
// when the device was removed and re-created (a null_blk device rebuilt
// through configfs) and makes the difference meaningless.
var ErrCounterReset = errors.New("blockstat: counters went backwards (device re-created between samples?)")

// Delta returns after - before for the counters; InFlight is after's value.
// The *MS fields are printed by the kernel as 32-bit unsigned ints (they
// wrap after ~49.7 days of busy time) and are subtracted modulo 2^32; the
// I/O and sector counters are 64-bit, and one going backwards is an error.
func Delta(before, after Stat) (Stat, error) {
	if before.Fields != after.Fields {
		return Stat{}, fmt.Errorf("blockstat: samples have %d and %d fields", before.Fields, after.Fields)
	}
	b, a := before.counters(), after.counters()
	d := make([]uint64, len(a))
	for i := range a {
		switch {
		case isTicks[i]:
			d[i] = uint64(uint32(a[i] - b[i]))
		case a[i] < b[i]:
			return Stat{}, ErrCounterReset
		default:
			d[i] = a[i] - b[i]
		}
	}
	out := fromCounters(d)
	out.Fields = after.Fields
	out.InFlight = after.InFlight
	return out, nil
}

// isTicks marks the millisecond fields in counters() order.
var isTicks = []bool{false, false, false, true, false, false, false, true, true, true, false, false, false, true, false, true}

func (s Stat) counters() []uint64 {
	return []uint64{s.ReadIOs, s.ReadMerges, s.ReadSectors, s.ReadTicksMS,
		s.WriteIOs, s.WriteMerges, s.WriteSectors, s.WriteTicksMS,
		s.IOTicksMS, s.TimeInQueueMS,
		s.DiscardIOs, s.DiscardMerges, s.DiscardSectors, s.DiscardTicksMS,
		s.FlushIOs, s.FlushTicksMS}
}

func fromCounters(c []uint64) Stat {
	return Stat{ReadIOs: c[0], ReadMerges: c[1], ReadSectors: c[2], ReadTicksMS: c[3],
		WriteIOs: c[4], WriteMerges: c[5], WriteSectors: c[6], WriteTicksMS: c[7],
		IOTicksMS: c[8], TimeInQueueMS: c[9],
		DiscardIOs: c[10], DiscardMerges: c[11], DiscardSectors: c[12], DiscardTicksMS: c[13],
		FlushIOs: c[14], FlushTicksMS: c[15]}
}
