package zenfs

import (
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
	var starts []int64
	for _, z := range metaZones {
		if z.WritePointer > z.Start {
			starts = append(starts, z.Start)
		}
	}
	return hasSuperblockAt(r, starts)
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
		n, err := r.ReadAt(buf, off)
		if n < len(buf) {
			if err == nil || errors.Is(err, io.EOF) {
				continue // the device ends before a whole record: nothing there
			}
			return false, fmt.Errorf("reading meta zone at byte %d: %w", off, err)
		}
		if isSuperblockRecord(buf) {
			return true, nil
		}
	}
	return false, nil
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
