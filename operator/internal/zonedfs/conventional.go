package zonedfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// ParseConventional accepts the names of the file systems made on a
// conventional device.
func ParseConventional(s string) (Filesystem, error) {
	switch Filesystem(s) {
	case Ext4, XFS:
		return Filesystem(s), nil
	}
	return "", fmt.Errorf("file system %q: want %s or %s on a conventional device", s, Ext4, XFS)
}

// Problem codes of a conventional device's refusal.
const (
	CodeZonedDevice    = "ZonedDevice"
	CodeDeviceTooSmall = "DeviceTooSmall"
)

// MinConventionalBytes is the smallest conventional device taken for a
// database, for ext4 and xfs alike. mkfs.xfs (xfsprogs 5.19 and later)
// refuses a file system under 300 MB; and the file system is the datadir
// itself, where the my.cnf the operator generates puts an InnoDB redo log of
// at least 256 MiB beside the system and undo tablespaces and the binary
// logs, so that less than 512 MiB cannot start a database with room left.
const MinConventionalBytes = 512 << 20

// JudgeConventional lists every reason d cannot hold fs as a conventional
// device (empty: fit): it must not be zoned, and must be big enough.
func JudgeConventional(fs Filesystem, d zbd.Device) []zbd.Problem {
	var ps []zbd.Problem
	if d.Model != zbd.ModelNone {
		ps = append(ps, zbd.Problem{Code: CodeZonedDevice, Message: fmt.Sprintf(
			"%s is a zoned device (queue/zoned = %s); storage.device is for conventional devices, where %s and "+
				"preconditioning write anywhere. Use storage.zonedDevice for it (filesystem zenfs, btrfs or f2fs); "+
				"a zoned device has no FTL to precondition.", d.Name, d.Model, fs)})
	}
	if d.CapacityBytes < MinConventionalBytes {
		ps = append(ps, zbd.Problem{Code: CodeDeviceTooSmall, Message: fmt.Sprintf(
			"%s has %d MiB; a database on %s needs at least %d MiB of device (the datadir's InnoDB redo log alone "+
				"is at least 256 MiB, and mkfs.xfs refuses file systems under 300 MB). Use a larger device.",
			d.Name, d.CapacityBytes>>20, fs, MinConventionalBytes>>20)})
	}
	return ps
}

// EndBytes is how much of each end of a conventional device is read to tell
// an empty device from one holding data blkid does not know: file systems,
// partition tables and volume headers keep their superblocks at the start,
// and some (GPT's backup, md 0.90, LVM's metadata copies) at the end.
const EndBytes = 1 << 20

// ZeroEnds reports whether the first and last EndBytes of a device of size
// bytes read back as zeros. A conventional device has no write pointers to
// tell what was ever written, so this and blkid's probe are the test of
// emptiness: data blkid does not know is still data.
func ZeroEnds(dev io.ReaderAt, size int64) (bool, error) {
	if size <= 0 {
		return false, fmt.Errorf("device size %d: cannot read its ends", size)
	}
	spans := [][2]int64{{0, min(EndBytes, size)}}
	if size > EndBytes {
		start := max(size-EndBytes, EndBytes)
		spans = append(spans, [2]int64{start, size - start})
	}
	for _, s := range spans {
		buf := make([]byte, s[1])
		n, err := dev.ReadAt(buf, s[0])
		if err != nil && !(errors.Is(err, io.EOF) && int64(n) == s[1]) {
			return false, fmt.Errorf("reading %d bytes at %d: %w", s[1], s[0], err)
		}
		if !allZero(buf) {
			return false, nil
		}
	}
	return true, nil
}

var zeros = make([]byte, 64<<10)

func allZero(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), len(zeros))
		if !bytes.Equal(b[:n], zeros[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}
