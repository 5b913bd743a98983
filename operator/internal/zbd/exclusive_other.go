//go:build !linux

package zbd

import (
	"errors"
	"os"
)

// ErrBusy means another holder has the device open exclusively.
var ErrBusy = errors.New("device is busy")

// OpenExclusive needs Linux's O_EXCL semantics for block devices.
func OpenExclusive(devPath string, write bool) (*os.File, error) {
	return nil, errors.New("exclusive block device opens need Linux")
}

// ResetZones needs Linux's BLKRESETZONE ioctl.
func ResetZones(f *os.File, zones []Zone) (int, error) {
	return 0, errors.New("zone resets need Linux")
}
