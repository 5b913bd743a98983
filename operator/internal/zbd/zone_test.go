package zbd

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rawZone is struct blk_zone as the kernel lays it out (64 bytes).
type rawZone struct {
	start, len, wp      uint64 // sectors
	typ, cond           uint8
	nonSeq, reset       uint8
	capacity            uint64 // sectors
	resvByte, tailBytes uint8  // filled into reserved space to prove it is ignored
}

// report builds a BLKREPORTZONE buffer the way the kernel fills it.
func report(flags uint32, zs ...rawZone) []byte {
	ne := binary.NativeEndian
	buf := make([]byte, 16+64*len(zs))
	ne.PutUint64(buf[0:], 0)
	ne.PutUint32(buf[8:], uint32(len(zs)))
	ne.PutUint32(buf[12:], flags)
	for i, z := range zs {
		b := buf[16+64*i:]
		ne.PutUint64(b[0:], z.start)
		ne.PutUint64(b[8:], z.len)
		ne.PutUint64(b[16:], z.wp)
		b[24], b[25], b[26], b[27] = z.typ, z.cond, z.nonSeq, z.reset
		for j := 28; j < 32; j++ {
			b[j] = z.resvByte
		}
		ne.PutUint64(b[32:], z.capacity)
		for j := 40; j < 64; j++ {
			b[j] = z.tailBytes
		}
	}
	return buf
}

const zs = 131072 // 64 MiB zone in sectors

func TestDecodeReportV2(t *testing.T) {
	buf := report(blkZoneRepCapacity,
		rawZone{start: 0, len: zs, wp: zs, typ: 1, cond: 0, capacity: zs, resvByte: 0xaa, tailBytes: 0x55},
		rawZone{start: zs, len: zs, wp: zs, typ: 2, cond: 1, capacity: 100000},
		rawZone{start: 2 * zs, len: zs, wp: 2*zs + 8, typ: 2, cond: 2, capacity: 100000, reset: 1},
		rawZone{start: 3 * zs, len: zs, wp: 4 * zs, typ: 3, cond: 0xE, nonSeq: 1, capacity: 100000},
	)
	got, err := DecodeReport(buf)
	if err != nil {
		t.Fatal(err)
	}
	const b = 512
	want := []Zone{
		{Start: 0, Len: zs * b, WritePointer: zs * b, Capacity: zs * b, Type: ZoneTypeConventional, Cond: ZoneCondNotWP},
		{Start: zs * b, Len: zs * b, WritePointer: zs * b, Capacity: 100000 * b, Type: ZoneTypeSeqWriteReq, Cond: ZoneCondEmpty},
		{Start: 2 * zs * b, Len: zs * b, WritePointer: (2*zs + 8) * b, Capacity: 100000 * b, Type: ZoneTypeSeqWriteReq, Cond: ZoneCondImpOpen, Reset: true},
		{Start: 3 * zs * b, Len: zs * b, WritePointer: 4 * zs * b, Capacity: 100000 * b, Type: ZoneTypeSeqWritePref, Cond: ZoneCondFull, NonSeq: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Without BLK_ZONE_REP_CAPACITY the capacity bytes are reserved space: the
// zone's capacity is its length.
func TestDecodeReportWithoutCapacityFlag(t *testing.T) {
	got, err := DecodeReport(report(0, rawZone{start: 0, len: zs, wp: 0, typ: 2, cond: 1, capacity: 12345}))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Capacity != zs*512 {
		t.Errorf("capacity = %d, want the zone length %d", got[0].Capacity, zs*512)
	}
}

func TestDecodeReportAllOnesWritePointer(t *testing.T) {
	got, err := DecodeReport(report(blkZoneRepCapacity, rawZone{start: 0, len: zs, wp: ^uint64(0), typ: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].WritePointer != -1 {
		t.Errorf("wp = %d, want -1", got[0].WritePointer)
	}
}

func TestDecodeReportTruncated(t *testing.T) {
	buf := report(blkZoneRepCapacity, rawZone{typ: 2, cond: 1}, rawZone{typ: 2, cond: 1})
	if _, err := DecodeReport(buf[:len(buf)-1]); err == nil {
		t.Error("accepted a buffer shorter than its header claims")
	}
	if _, err := DecodeReport(buf[:15]); err == nil {
		t.Error("accepted a buffer shorter than the header")
	}
	if got, err := DecodeReport(report(blkZoneRepCapacity)); err != nil || len(got) != 0 {
		t.Errorf("empty report: %v, %v", got, err)
	}
}

func TestIsEmpty(t *testing.T) {
	conv := Zone{Type: ZoneTypeConventional, Cond: ZoneCondNotWP}
	seq := func(c ZoneCond) Zone { return Zone{Type: ZoneTypeSeqWriteReq, Cond: c} }
	tests := []struct {
		name  string
		zones []Zone
		want  bool
	}{
		{"all empty", []Zone{seq(ZoneCondEmpty), seq(ZoneCondEmpty)}, true},
		{"conventional zones ignored", []Zone{conv, seq(ZoneCondEmpty)}, true},
		{"offline zone holds nothing", []Zone{seq(ZoneCondEmpty), seq(ZoneCondOffline)}, true},
		{"open", []Zone{seq(ZoneCondEmpty), seq(ZoneCondImpOpen)}, false},
		{"explicit open", []Zone{seq(ZoneCondExpOpen)}, false},
		{"closed", []Zone{seq(ZoneCondClosed)}, false},
		{"full", []Zone{seq(ZoneCondEmpty), seq(ZoneCondFull)}, false},
		{"read-only", []Zone{seq(ZoneCondReadOnly)}, false},
		{"seq-write-preferred written", []Zone{{Type: ZoneTypeSeqWritePref, Cond: ZoneCondClosed}}, false},
		{"no sequential zones", []Zone{conv}, false},
		{"no zones", nil, false},
	}
	for _, tt := range tests {
		if got := IsEmpty(tt.zones); got != tt.want {
			t.Errorf("%s: IsEmpty = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestZoneCapacity(t *testing.T) {
	zones := []Zone{{Type: ZoneTypeConventional, Capacity: 1 << 26}, {Type: ZoneTypeSeqWriteReq, Capacity: 50 << 20}}
	if got := ZoneCapacity(zones); got != 50<<20 {
		t.Errorf("ZoneCapacity = %d", got)
	}
	if got := ZoneCapacity(zones[:1]); got != 0 {
		t.Errorf("ZoneCapacity without sequential zones = %d", got)
	}
}

func TestStrings(t *testing.T) {
	if ZoneCondFull.String() != "full" || ZoneTypeSeqWriteReq.String() != "seq-write-required" || ZoneCond(9).String() != "cond-0x9" {
		t.Error("String()")
	}
}
