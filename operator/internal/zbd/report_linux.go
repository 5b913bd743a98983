//go:build linux

package zbd

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// blkReportZone is BLKREPORTZONE, _IOWR(0x12, 130, struct blk_zone_report).
const blkReportZone = 0xc0101282

// reportBatch bounds one ioctl's buffer (64 KiB of descriptors).
const reportBatch = 1024

// ReportZones reads up to max zone descriptors (all when max <= 0) of the
// block device at devPath, from the first zone on. Reading zones needs only
// read access to the device node.
func ReportZones(devPath string, max int) ([]Zone, error) {
	f, err := os.Open(devPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	var zones []Zone
	var sector uint64
	buf := make([]byte, reportHeaderSize+reportBatch*zoneDescSize)
	for max <= 0 || len(zones) < max {
		n := reportBatch
		if max > 0 {
			n = min(n, max-len(zones))
		}
		clear(buf[:reportHeaderSize])
		binary.NativeEndian.PutUint64(buf[0:8], sector)
		binary.NativeEndian.PutUint32(buf[8:12], uint32(n))
		if err := ioctl(f, blkReportZone, buf); err != nil {
			return nil, fmt.Errorf("BLKREPORTZONE on %s at sector %d: %w", devPath, sector, err)
		}
		batch, err := DecodeReport(buf)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", devPath, err)
		}
		if len(batch) == 0 {
			break
		}
		zones = append(zones, batch...)
		last := batch[len(batch)-1]
		sector = uint64(last.Start+last.Len) / sectorSize
	}
	return zones, nil
}

func ioctl(f *os.File, req uintptr, buf []byte) error {
	return ioctlPtr(f, req, unsafe.Pointer(&buf[0]))
}

func ioctlPtr(f *os.File, req uintptr, arg unsafe.Pointer) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

func putUint64(b []byte, v uint64) { binary.NativeEndian.PutUint64(b, v) }
