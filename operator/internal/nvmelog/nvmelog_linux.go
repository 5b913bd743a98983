//go:build linux

package nvmelog

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// ioctls of include/uapi/linux/nvme_ioctl.h.
const (
	nvmeIoctlID       = 0x4E40     // _IO('N', 0x40): the namespace id of a namespace's block device
	nvmeIoctlAdminCmd = 0xC0484E41 // _IOWR('N', 0x41, struct nvme_admin_cmd)
)

// passthruCmd is struct nvme_passthru_cmd (nvme_admin_cmd is the same).
type passthruCmd struct {
	Opcode      uint8
	Flags       uint8
	Rsvd1       uint16
	NSID        uint32
	CDW2, CDW3  uint32
	Metadata    uint64
	Addr        uint64
	MetadataLen uint32
	DataLen     uint32
	CDW10       uint32
	CDW11       uint32
	CDW12       uint32
	CDW13       uint32
	CDW14       uint32
	CDW15       uint32
	TimeoutMS   uint32
	Result      uint32
}

// the ioctl number encodes the size: 72 bytes
var _ [72]byte = [unsafe.Sizeof(passthruCmd{})]byte{}

// Read takes a Snapshot of <devDir>/<name> (devDir is /dev outside tests):
// a namespace's block device (nvme0n1) or a controller's character device
// (nvme0). The device is opened read-only and without O_EXCL, so a database
// may hold it. The error, an *Error, is for the device as a whole: missing
// (ErrNoDevice), not NVMe (ErrNotNVMe), or the caller may not send admin
// commands (ErrPermission); a log that could not be read is only absent from
// the Snapshot.
func Read(devDir, name string) (*Snapshot, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return nil, fmt.Errorf("nvmelog: %q is not a kernel device name", name)
	}
	path := filepath.Join(devDir, name)
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV):
		return nil, &Error{Device: name, Kind: ErrNoDevice, Detail: fmt.Sprintf("cannot open %s: %v", path, err)}
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		return nil, &Error{Device: name, Kind: ErrPermission, Detail: fmt.Sprintf("cannot open %s (%v): reading drive logs "+
			"needs read access to the device, and then CAP_SYS_ADMIN: Linux admits admin commands without it only "+
			"for some Identify pages (nvme_cmd_allowed)", path, err)}
	case err != nil:
		return nil, &Error{Device: name, Kind: err, Detail: fmt.Sprintf("cannot open %s: %v", path, err)}
	}
	defer syscall.Close(fd)

	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &Error{Device: name, Kind: err, Detail: fmt.Sprintf("fstat %s: %v", path, err)}
	}
	notNVMe := &Error{Device: name, Kind: ErrNotNVMe, Detail: "no drive counters: " + name + " is not an NVMe device"}
	var nsid uint32
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		r, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), nvmeIoctlID, 0)
		if errno != 0 {
			// ENOTTY from null_blk, virtio_blk, dm; EINVAL from loop
			return nil, notNVMe
		}
		nsid = uint32(r)
	case syscall.S_IFCHR:
		// a controller; a character device of another driver fails Identify with ENOTTY
	default:
		return nil, notNVMe
	}
	return collect(name, nsid, func(c command) (uint32, error) { return adminCmd(fd, c) }, time.Now())
}

// adminCmd sends c through NVME_IOCTL_ADMIN_CMD. The ioctl returns 0, a
// negative errno, or the NVMe status of a command the controller failed.
func adminCmd(fd int, c command) (uint32, error) {
	p := passthruCmd{Opcode: c.opcode, NSID: c.nsid, CDW10: c.cdw10, CDW11: c.cdw11}
	if len(c.data) > 0 {
		p.Addr = uint64(uintptr(unsafe.Pointer(&c.data[0])))
		p.DataLen = uint32(len(c.data))
	}
	r, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), nvmeIoctlAdminCmd, uintptr(unsafe.Pointer(&p)))
	runtime.KeepAlive(c.data)
	switch {
	case errno != 0:
		return 0, errno
	case r != 0:
		return 0, &StatusError{Status: uint16(r)}
	}
	return p.Result, nil
}
