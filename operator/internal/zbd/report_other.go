//go:build !linux

package zbd

import "errors"

// ReportZones needs Linux's BLKREPORTZONE ioctl.
func ReportZones(devPath string, max int) ([]Zone, error) {
	return nil, errors.New("zone reports need Linux")
}
