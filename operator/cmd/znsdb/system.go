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

// Devices reads zoned block devices.
type Devices interface {
	ReportZones(devPath string) ([]zbd.Zone, error)
	Open(devPath string) (ReaderAtCloser, error)
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

func (hostDevices) Open(devPath string) (ReaderAtCloser, error) { return os.Open(devPath) }
