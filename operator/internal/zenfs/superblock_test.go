package zenfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"slices"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// encodeSuperblock lays out a version-2 superblock as Superblock::EncodeTo
// does: magic, uuid[37], sequence, version, flags, block size, zone size (in
// blocks), zone count, finish threshold, aux path[256], zenfs version[64],
// reserved[123].
func encodeSuperblock(magic uint32, aux string) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	put := func(v uint32) { b.Write(le.AppendUint32(nil, v)) }
	fixed := func(s string, n int) { b.Write(append([]byte(s), make([]byte, n-len(s))...)) }
	put(magic)
	fixed("1b0f5c4e-2a6d-4c1e-9a3b-5f7d2e8c9a10", 37)
	put(1)     // sequence
	put(2)     // superblock version
	put(0)     // flags
	put(4096)  // block size
	put(16384) // zone size in blocks (64 MiB)
	put(64)    // zones
	put(10)    // finish threshold
	fixed(aux, 256)
	fixed("v2.1.0", 64)
	fixed("", 123)
	return b.Bytes()
}

// record wraps data as ZenMetaLog::AddRecord does, padded to a 4 KiB block.
func record(data []byte) []byte {
	le := binary.LittleEndian
	length := le.AppendUint32(nil, uint32(len(data)))
	crc := crc32.Update(0, castagnoliTable, length)
	crc = crc32.Update(crc, castagnoliTable, data)
	rec := le.AppendUint32(nil, mask(crc))
	rec = append(rec, length...)
	rec = append(rec, data...)
	return append(rec, make([]byte, 4096-len(rec))...)
}

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

func mask(crc uint32) uint32 { return (crc>>15 | crc<<17) + 0xa282ead8 }

func unmask(m uint32) uint32 { r := m - 0xa282ead8; return r>>17 | r<<15 }

// The CRC and mask must be RocksDB's crc32c: check against the vectors of
// RocksDB's crc32c_test and the unmask formula.
func TestCRCIsRocksDBs(t *testing.T) {
	if got := crc32.Checksum(make([]byte, 32), castagnoli); got != 0x8a9136aa {
		t.Errorf("crc32c(32 zero bytes) = %#x", got)
	}
	if got := crc32.Checksum(bytes.Repeat([]byte{0xff}, 32), castagnoli); got != 0x62a8ab43 {
		t.Errorf("crc32c(32 0xff bytes) = %#x", got)
	}
	for _, c := range []uint32{0, 0x8a9136aa, 0xffffffff} {
		if m := maskCRC(c); m == c || unmask(m) != c {
			t.Errorf("maskCRC(%#x) = %#x does not round-trip", c, m)
		}
	}
}

const zoneSize = 1 << 20 // small zones keep the fake device small

// device is a zoned device image: nZones zones, records written at zone
// starts.
func device(nZones int, writes map[int][]byte) *bytes.Reader {
	img := make([]byte, nZones*zoneSize)
	for zone, data := range writes {
		copy(img[zone*zoneSize:], data)
	}
	return bytes.NewReader(img)
}

func TestHasSuperblock(t *testing.T) {
	sb := record(encodeSuperblock(SuperblockMagic, "/var/lib/zenfs-aux/"))
	corrupt := bytes.Clone(sb)
	corrupt[100] ^= 1
	wrongMagic := record(encodeSuperblock(0x5a454e47, "/aux/"))
	notSuper := record([]byte("a record that is not a superblock"))
	tests := []struct {
		name   string
		writes map[int][]byte
		want   bool
	}{
		{"fresh mkfs, superblock in zone 0", map[int][]byte{0: sb}, true},
		{"after rolling, superblock in zone 2 only", map[int][]byte{2: sb}, true},
		{"outside the meta zones", map[int][]byte{3: sb}, false},
		{"blank device", nil, false},
		{"flipped bit", map[int][]byte{0: corrupt}, false},
		{"wrong magic", map[int][]byte{0: wrongMagic}, false},
		{"other record", map[int][]byte{1: notSuper}, false},
		{"other file system's data", map[int][]byte{0: bytes.Repeat([]byte("XFSB"), 1024)}, false},
	}
	for _, tt := range tests {
		got, err := HasSuperblock(device(8, tt.writes), zoneSize, MetaZoneCount)
		if err != nil || got != tt.want {
			t.Errorf("%s: HasSuperblock = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

func TestHasSuperblockShortDevice(t *testing.T) {
	// Two zones only, and the last record would run past the end.
	got, err := HasSuperblock(bytes.NewReader(make([]byte, zoneSize+100)), zoneSize, MetaZoneCount)
	if err != nil || got {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := HasSuperblock(device(1, nil), 0, 3); err == nil {
		t.Error("accepted zone size 0")
	}
}

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("input/output error") }

func TestHasSuperblockReadError(t *testing.T) {
	if _, err := HasSuperblock(failingReader{}, zoneSize, 3); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("err = %v, want the read error", err)
	}
}

func seqZone(i int, cond zbd.ZoneCond, written int64) zbd.Zone {
	start := int64(i) * zoneSize
	return zbd.Zone{Start: start, Len: zoneSize, Capacity: zoneSize, WritePointer: start + written,
		Type: zbd.ZoneTypeSeqWriteReq, Cond: cond}
}

func TestMetaZonesSkipsConventionalAndOffline(t *testing.T) {
	conv := zbd.Zone{Start: 0, Len: zoneSize, Type: zbd.ZoneTypeConventional, Cond: zbd.ZoneCondNotWP}
	zones := []zbd.Zone{conv, seqZone(1, zbd.ZoneCondEmpty, 0), seqZone(2, zbd.ZoneCondOffline, 0),
		seqZone(3, zbd.ZoneCondImpOpen, 4096), seqZone(4, zbd.ZoneCondEmpty, 0)}
	var starts []int64
	for _, z := range MetaZones(zones) {
		starts = append(starts, z.Start)
	}
	// ZenFS counts the offline zone among its three, and uses zones 1 and 3.
	if want := []int64{1 * zoneSize, 3 * zoneSize}; !slices.Equal(starts, want) {
		t.Errorf("meta zone starts %v, want %v", starts, want)
	}
}

func TestProbeSuperblockBehindConventionalZone(t *testing.T) {
	sb := record(encodeSuperblock(SuperblockMagic, "/aux/"))
	img := device(8, map[int][]byte{1: sb})
	conv := zbd.Zone{Start: 0, Len: zoneSize, Type: zbd.ZoneTypeConventional, Cond: zbd.ZoneCondNotWP}
	zones := []zbd.Zone{conv, seqZone(1, zbd.ZoneCondClosed, 8192), seqZone(2, zbd.ZoneCondEmpty, 0), seqZone(3, zbd.ZoneCondEmpty, 0)}
	if got, err := ProbeSuperblock(img, MetaZones(zones)); err != nil || !got {
		t.Errorf("ProbeSuperblock = %v, %v; want true", got, err)
	}
	// The same bytes behind a write pointer at the zone start are stale:
	// ZenFS does not read past the write pointer, nor does the probe.
	zones[1] = seqZone(1, zbd.ZoneCondEmpty, 0)
	if got, err := ProbeSuperblock(img, MetaZones(zones)); err != nil || got {
		t.Errorf("ProbeSuperblock over an empty zone = %v, %v; want false", got, err)
	}
}
