package zenfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// On-disk layout, from fs/fs_zenfs.{h,cc} and fs/zbd_zenfs.cc:
//
// ZenFS keeps its metadata log in the first MetaZoneCount sequential-write-
// required zones of the device (offline ones count but are skipped). MkFS
// resets them and appends, at the start of one, a log record holding the
// superblock; rolling to another meta zone writes a fresh superblock there
// first and then resets the old zone. So a formatted device has, at the
// start of at least one meta zone:
//
//	offset 0  uint32 LE  masked CRC32C of (record length bytes + record)
//	offset 4  uint32 LE  record length, 512 for a superblock
//	offset 8  uint32 LE  superblock magic 0x5a454e46 ("ZENF")
//	...               rest of the 512-byte superblock
const (
	// MetaZoneCount is ZENFS_META_ZONES.
	MetaZoneCount = 3
	// SuperblockMagic is Superblock::MAGIC.
	SuperblockMagic = 0x5a454e46
	// superblockSize is Superblock::ENCODED_SIZE.
	superblockSize = 512
	// recordHeaderSize is ZenMetaLog's CRC and length prefix.
	recordHeaderSize = 8
	// crcMaskDelta is RocksDB's crc32c::kMaskDelta.
	crcMaskDelta = 0xa282ead8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MetaZones picks the zones ZenFS uses for metadata, as
// ZonedBlockDevice::Open does.
func MetaZones(zones []zbd.Zone) []zbd.Zone {
	var meta []zbd.Zone
	seen := 0
	for _, z := range zones {
		if seen == MetaZoneCount {
			break
		}
		if z.Type != zbd.ZoneTypeSeqWriteReq {
			continue
		}
		seen++
		if z.Cond != zbd.ZoneCondOffline {
			meta = append(meta, z)
		}
	}
	return meta
}

// ProbeSuperblock reports whether any written meta zone starts with a valid
// superblock record. Empty zones are not read: like ZenFS's log reader, it
// stops at the write pointer.
func ProbeSuperblock(r io.ReaderAt, metaZones []zbd.Zone) (bool, error) {
	sb, err := ReadSuperblock(r, metaZones)
	return sb != nil, err
}

// ReadSuperblock returns the superblock ZenFS would mount: of the written meta
// zones that start with a valid superblock record, the one with the highest
// sequence number (ZenFS::Mount picks the newest log the same way). nil means
// none was found. It reads 520 bytes per zone and trusts no length field, so
// data that makes the zenfs utility itself abort (a huge record length read
// as an allocation size) is simply not a superblock here.
func ReadSuperblock(r io.ReaderAt, metaZones []zbd.Zone) (*Superblock, error) {
	m, err := ReadMeta(r, metaZones)
	return m.Superblock, err
}

// Meta is what the written metadata zones of a device start with.
type Meta struct {
	// Superblock is the one ZenFS would mount (see ReadSuperblock); nil for none.
	Superblock *Superblock
	// Foreign are the written meta zones that do not start with a ZenFS
	// superblock record. ZenFS writes one at the start of every meta zone
	// before anything else (mkfs, and every roll of its log), so on a device
	// ZenFS alone wrote there are none.
	Foreign []ForeignZone
}

// ForeignZone is a written meta zone whose first bytes are not a ZenFS
// superblock record.
type ForeignZone struct {
	// Start is the zone's first byte on the device.
	Start int64
	// LengthWord is what ZenFS's log reader takes for the first record's
	// length (bytes 4-7): it allocates and zero-fills that many bytes before
	// it checks the record's CRC. The captured zenfs aborted (std::bad_alloc)
	// on words of 2 GiB and more in a 2 GiB guest, and grew to 2.8 GB
	// resident, until the OOM killer took it, in a 3 GiB one.
	LengthWord uint32
}

// Unsafe reports whether zenfs must not be run on the device: ls-uuid, df,
// list and a mkfs without a prior zone reset all read every written meta
// zone, foreign ones included.
func (m Meta) Unsafe() bool { return len(m.Foreign) > 0 }

// ReadMeta reads the first record of every written meta zone: the newest
// valid superblock, and the zones that start with anything else. Empty zones
// (write pointer at the start) are not read, as ZenFS's log reader stops at
// the write pointer.
func ReadMeta(r io.ReaderAt, metaZones []zbd.Zone) (Meta, error) {
	var m Meta
	buf := make([]byte, recordHeaderSize+superblockSize)
	for _, z := range metaZones {
		if z.WritePointer <= z.Start {
			continue
		}
		ok, err := readRecord(r, z.Start, buf)
		if err != nil {
			return Meta{}, err
		}
		if !ok {
			continue
		}
		if !isSuperblockRecord(buf) {
			m.Foreign = append(m.Foreign, ForeignZone{Start: z.Start, LengthWord: binary.LittleEndian.Uint32(buf[4:8])})
			continue
		}
		sb := decodeSuperblock(buf[recordHeaderSize:])
		if m.Superblock == nil || sb.Sequence > m.Superblock.Sequence {
			m.Superblock = &sb
		}
	}
	return m, nil
}

// HasSuperblock checks the first metaZones zones of a device of equal-sized
// zones that starts with sequential zones (no conventional zones in front),
// without a zone report.
func HasSuperblock(r io.ReaderAt, zoneSize int64, metaZones int) (bool, error) {
	if zoneSize <= 0 || metaZones <= 0 {
		return false, fmt.Errorf("zone size %d, meta zones %d: both must be positive", zoneSize, metaZones)
	}
	starts := make([]int64, metaZones)
	for i := range starts {
		starts[i] = int64(i) * zoneSize
	}
	return hasSuperblockAt(r, starts)
}

func hasSuperblockAt(r io.ReaderAt, starts []int64) (bool, error) {
	buf := make([]byte, recordHeaderSize+superblockSize)
	for _, off := range starts {
		ok, err := readRecord(r, off, buf)
		if err != nil {
			return false, err
		}
		if ok && isSuperblockRecord(buf) {
			return true, nil
		}
	}
	return false, nil
}

// readRecord fills buf from off; ok is false when the device ends before a
// whole record (nothing there).
func readRecord(r io.ReaderAt, off int64, buf []byte) (ok bool, err error) {
	n, err := r.ReadAt(buf, off)
	if n < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("reading meta zone at byte %d: %w", off, err)
	}
	return true, nil
}

// isSuperblockRecord reports whether b begins with a ZenFS metadata log
// record that holds a superblock with an intact checksum.
func isSuperblockRecord(b []byte) bool {
	if len(b) < recordHeaderSize+superblockSize {
		return false
	}
	le := binary.LittleEndian
	if le.Uint32(b[4:8]) != superblockSize || le.Uint32(b[8:12]) != SuperblockMagic {
		return false
	}
	// ZenMetaLog::AddRecord: CRC32C over the length's bytes, then the record.
	crc := crc32.Update(0, castagnoli, b[4:8])
	crc = crc32.Update(crc, castagnoli, b[recordHeaderSize:recordHeaderSize+superblockSize])
	return le.Uint32(b[0:4]) == maskCRC(crc)
}

// maskCRC is RocksDB's crc32c::Mask, which ZenFS applies before storing.
func maskCRC(crc uint32) uint32 {
	return (crc>>15 | crc<<17) + crcMaskDelta
}

// Superblock is the decoded ZenFS superblock (Superblock::DecodeFrom in
// fs/fs_zenfs.cc); the same fields `zenfs fs-info` prints.
type Superblock struct {
	UUID            string
	Sequence        uint32
	Version         uint32
	Flags           uint32
	BlockSize       uint32
	ZoneSizeBlocks  uint32
	NrZones         uint32
	FinishThreshold uint32
	// AuxPath is stored with a trailing "/" (zenfs mkfs appends one).
	AuxPath      string
	ZenFSVersion string
}

// Offsets inside the 512-byte superblock: magic (4), uuid (37), seven uint32
// fields, aux path (256), zenfs version (64), reserved (123).
const (
	sbUUIDOff    = 4
	sbUUIDLen    = 37
	sbFieldsOff  = sbUUIDOff + sbUUIDLen
	sbAuxOff     = sbFieldsOff + 7*4
	sbAuxLen     = 256
	sbVersionOff = sbAuxOff + sbAuxLen
	sbVersionLen = 64
)

// decodeSuperblock decodes the 512 bytes after the record header; the caller
// has checked the magic and the CRC.
func decodeSuperblock(b []byte) Superblock {
	le := binary.LittleEndian
	field := func(i int) uint32 { return le.Uint32(b[sbFieldsOff+4*i:]) }
	return Superblock{
		UUID:            cString(b[sbUUIDOff : sbUUIDOff+sbUUIDLen]),
		Sequence:        field(0),
		Version:         field(1),
		Flags:           field(2),
		BlockSize:       field(3),
		ZoneSizeBlocks:  field(4),
		NrZones:         field(5),
		FinishThreshold: field(6),
		AuxPath:         cString(b[sbAuxOff : sbAuxOff+sbAuxLen]),
		ZenFSVersion:    cString(b[sbVersionOff : sbVersionOff+sbVersionLen]),
	}
}

// cString is the NUL-terminated string at the start of a fixed-size field.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
