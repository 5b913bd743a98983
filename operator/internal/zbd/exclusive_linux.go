//go:build linux

package zbd

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// ErrBusy means another holder has the device open exclusively.
var ErrBusy = errors.New("device is busy")

// OpenExclusive opens a block device with O_EXCL. On a block device that
// flag (without O_CREAT) claims it: the kernel answers EBUSY while a
// filesystem is mounted on it or another process holds it the same way, as
// ZenFS does for every writable open (libzbd opens its read side O_RDONLY|
// O_EXCL: a running RocksDB, another zenfs mkfs) and keeps them out while the
// returned file is open. Plain readers (zenfs df, blkzone report) are not
// seen. write opens it read-write, which zone resets need.
func OpenExclusive(devPath string, write bool) (*os.File, error) {
	flags := os.O_RDONLY
	if write {
		flags = os.O_RDWR
	}
	f, err := os.OpenFile(devPath, flags|syscall.O_EXCL, 0)
	if errors.Is(err, syscall.EBUSY) {
		return nil, fmt.Errorf("%w: %v", ErrBusy, err)
	}
	return f, err
}

// blkResetZone is BLKRESETZONE, _IOW(0x12, 131, struct blk_zone_range).
const blkResetZone = 0x40101283

// ResetZones resets every written sequential zone of zones (the device's
// zone report) through f, which must be open for writing: the zone's data is
// gone and its write pointer is back at its start. Empty, offline and
// read-only zones, and conventional ones (which have no write pointer to
// reset), are left alone. It returns how many zones it reset.
func ResetZones(f *os.File, zones []Zone) (int, error) {
	n := 0
	for _, z := range zones {
		if !needsReset(z) {
			continue
		}
		// struct blk_zone_range { __u64 sector; __u64 nr_sectors; }
		var r [16]byte
		putUint64(r[0:8], uint64(z.Start/sectorSize))
		putUint64(r[8:16], uint64(z.Len/sectorSize))
		if err := ioctlPtr(f, blkResetZone, unsafe.Pointer(&r[0])); err != nil {
			return n, fmt.Errorf("BLKRESETZONE of the zone at byte %d of %s: %w", z.Start, f.Name(), err)
		}
		n++
	}
	return n, nil
}

func needsReset(z Zone) bool {
	if !z.Type.Sequential() {
		return false
	}
	switch z.Cond {
	case ZoneCondEmpty, ZoneCondOffline, ZoneCondReadOnly:
		return false
	}
	return true
}
