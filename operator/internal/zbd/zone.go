package zbd

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ZoneType is blk_zone.type (enum blk_zone_type in linux/blkzoned.h).
type ZoneType uint8

// Zone types.
const (
	ZoneTypeConventional ZoneType = 0x1
	ZoneTypeSeqWriteReq  ZoneType = 0x2
	ZoneTypeSeqWritePref ZoneType = 0x3
)

func (t ZoneType) String() string {
	switch t {
	case ZoneTypeConventional:
		return "conventional"
	case ZoneTypeSeqWriteReq:
		return "seq-write-required"
	case ZoneTypeSeqWritePref:
		return "seq-write-preferred"
	}
	return fmt.Sprintf("type-%#x", uint8(t))
}

// Sequential reports whether the zone has a write pointer.
func (t ZoneType) Sequential() bool {
	return t == ZoneTypeSeqWriteReq || t == ZoneTypeSeqWritePref
}

// ZoneCond is blk_zone.cond (enum blk_zone_cond).
type ZoneCond uint8

// Zone conditions.
const (
	ZoneCondNotWP    ZoneCond = 0x0
	ZoneCondEmpty    ZoneCond = 0x1
	ZoneCondImpOpen  ZoneCond = 0x2
	ZoneCondExpOpen  ZoneCond = 0x3
	ZoneCondClosed   ZoneCond = 0x4
	ZoneCondReadOnly ZoneCond = 0xD
	ZoneCondFull     ZoneCond = 0xE
	ZoneCondOffline  ZoneCond = 0xF
)

func (c ZoneCond) String() string {
	switch c {
	case ZoneCondNotWP:
		return "not-write-pointer"
	case ZoneCondEmpty:
		return "empty"
	case ZoneCondImpOpen:
		return "implicit-open"
	case ZoneCondExpOpen:
		return "explicit-open"
	case ZoneCondClosed:
		return "closed"
	case ZoneCondReadOnly:
		return "read-only"
	case ZoneCondFull:
		return "full"
	case ZoneCondOffline:
		return "offline"
	}
	return fmt.Sprintf("cond-%#x", uint8(c))
}

// Zone is one zone descriptor, in bytes.
type Zone struct {
	Start int64
	Len   int64
	// WritePointer is -1 when the device reports none it can express (some
	// drivers report all ones for conventional zones).
	WritePointer int64
	// Capacity is the writable part of the zone; equal to Len on kernels
	// whose report lacks the capacity field.
	Capacity int64
	Type     ZoneType
	Cond     ZoneCond
	NonSeq   bool
	Reset    bool
}

// Layout of struct blk_zone_report and struct blk_zone (linux/blkzoned.h).
const (
	reportHeaderSize = 16 // __u64 sector; __u32 nr_zones; __u32 flags
	zoneDescSize     = 64 // start, len, wp; type, cond, non_seq, reset, resv[4]; capacity; reserved[24]

	// blkZoneRepCapacity is BLK_ZONE_REP_CAPACITY: the descriptors carry
	// the capacity field (kernel 5.9 and later).
	blkZoneRepCapacity = 1 << 0
)

// DecodeReport decodes a BLKREPORTZONE buffer: the header the kernel filled in
// followed by its zone descriptors, in host byte order.
func DecodeReport(buf []byte) ([]Zone, error) {
	if len(buf) < reportHeaderSize {
		return nil, fmt.Errorf("zone report: %d bytes, shorter than its %d-byte header", len(buf), reportHeaderSize)
	}
	ne := binary.NativeEndian
	n := int(ne.Uint32(buf[8:12]))
	flags := ne.Uint32(buf[12:16])
	if need := reportHeaderSize + n*zoneDescSize; n < 0 || len(buf) < need {
		return nil, fmt.Errorf("zone report: header says %d zones (%d bytes), buffer has %d", n, need, len(buf))
	}
	zones := make([]Zone, n)
	for i := range zones {
		b := buf[reportHeaderSize+i*zoneDescSize:][:zoneDescSize]
		z := Zone{
			Start:        sectorsToBytes(ne.Uint64(b[0:8])),
			Len:          sectorsToBytes(ne.Uint64(b[8:16])),
			WritePointer: sectorsToBytes(ne.Uint64(b[16:24])),
			Type:         ZoneType(b[24]),
			Cond:         ZoneCond(b[25]),
			NonSeq:       b[26] != 0,
			Reset:        b[27] != 0,
		}
		if flags&blkZoneRepCapacity != 0 {
			z.Capacity = sectorsToBytes(ne.Uint64(b[32:40]))
		} else {
			z.Capacity = z.Len
		}
		zones[i] = z
	}
	return zones, nil
}

func sectorsToBytes(s uint64) int64 {
	if s > math.MaxInt64/sectorSize {
		return -1
	}
	return int64(s) * sectorSize
}

// IsEmpty reports whether no sequential zone holds data: each is EMPTY, or
// OFFLINE (unreadable, and skipped by ZenFS). Conventional zones are not
// counted: nothing records whether they were written, and ZenFS does not
// use them. A report without sequential zones is not called empty, so a
// caller never formats on a report that proves nothing.
func IsEmpty(zones []Zone) bool {
	seen := false
	for _, z := range zones {
		if !z.Type.Sequential() {
			continue
		}
		seen = true
		if z.Cond != ZoneCondEmpty && z.Cond != ZoneCondOffline {
			return false
		}
	}
	return seen
}

// ZoneCapacity returns the capacity of the first sequential zone, which is
// what a ZNS namespace or null_blk device uses for every zone; 0 if none.
func ZoneCapacity(zones []Zone) int64 {
	for _, z := range zones {
		if z.Type.Sequential() {
			return z.Capacity
		}
	}
	return 0
}
