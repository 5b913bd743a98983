package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// Runner runs an external command and returns what it printed.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (stdout, stderr string, err error)
}

type execRunner struct{}

func (execRunner) Run(ctx context.Context, name string, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// Devices reads zoned block devices, and resets their zones.
type Devices interface {
	ReportZones(devPath string) ([]zbd.Zone, error)
	// Open opens the device exclusively for reading; it fails with
	// zbd.ErrBusy while another process holds it exclusively.
	Open(devPath string) (ReaderAtCloser, error)
	// OpenShared opens the device for reading without claiming it: it works
	// while another process holds it exclusively (a running mysqld).
	OpenShared(devPath string) (ReaderAtCloser, error)
	// ResetZones resets the written zones among zones, holding the device
	// exclusively (zbd.ErrBusy when it cannot), and says how many it reset.
	ResetZones(devPath string, zones []zbd.Zone) (int, error)
}

// ReaderAtCloser is an open device.
type ReaderAtCloser interface {
	io.ReaderAt
	io.Closer
}

type hostDevices struct{}

func (hostDevices) ReportZones(devPath string) ([]zbd.Zone, error) {
	return zbd.ReportZones(devPath, 0)
}

func (hostDevices) Open(devPath string) (ReaderAtCloser, error) {
	f, err := zbd.OpenExclusive(devPath, false)
	if err != nil {
		return nil, err // a nil *os.File must not become a non-nil interface
	}
	return f, nil
}

func (hostDevices) OpenShared(devPath string) (ReaderAtCloser, error) {
	f, err := os.Open(devPath)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (hostDevices) ResetZones(devPath string, zones []zbd.Zone) (int, error) {
	f, err := zbd.OpenExclusive(devPath, true)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return zbd.ResetZones(f, zones)
}
