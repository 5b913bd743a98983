package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// zonedXFS: XFS asked for on a host-managed device.
func (f *deviceFlags) zonedXFS() bool {
	return f.zoned && f.filesystem == string(zonedfs.XFS)
}

// metaPath is where the metadata device's node is, "" without one.
func (f *deviceFlags) metaPath() string {
	if f.metadataDevice == "" {
		return ""
	}
	return filepath.Join(f.devDir, f.metadataDevice)
}

// metadataDeviceOf inspects the metadata device from sysfs: nil and no problems without one, nil and the
// problems when it is not a whole device of this node.
func (f *deviceFlags) metadataDeviceOf() (*zbd.Device, []zbd.Problem, error) {
	if f.metadataDevice == "" {
		return nil, nil, nil
	}
	dev, problems, err := zbd.Preflight(f.sysBlock, f.metadataDevice)
	if err != nil {
		return nil, nil, fmt.Errorf("inspecting the metadata device %s: %w", f.metadataDevice, err)
	}
	if dev == nil {
		for i := range problems {
			problems[i].Message = "metadata device: " + problems[i].Message
		}
		return nil, problems, nil
	}
	// zbd judged it for ZenFS; zonedfs judges it for what it is here.
	return dev, nil, nil
}

// judgeZoned lists what keeps d from holding fs in zoned mode.
func (f *deviceFlags) judgeZoned(fs zonedfs.Filesystem, d zbd.Device, conventional int, meta *zbd.Device) []zbd.Problem {
	if f.zonedXFS() {
		if f.metadataDevice != "" && meta == nil {
			// Named but not found: that is the problem to report, not the zoned device's lack of
			// conventional zones.
			conventional = -1
		}
		return zonedfs.JudgeZonedXFS(d, conventional, meta)
	}
	return zonedfs.Judge(fs, d, conventional)
}

// zonedMkfsXFS is the mkfs.xfs that makes zoned XFS: the project's images carry a newer one as mkfs.xfs-zoned
// (images/zoned-xfsprogs.sh) beside the distribution's, which makes conventional XFS; elsewhere, mkfs.xfs.
func zonedMkfsXFS(d deps) string {
	look := d.lookPath
	if look == nil {
		look = exec.LookPath
	}
	if _, err := look(zonedfs.ZonedMkfsXFS); err == nil {
		return zonedfs.ZonedMkfsXFS
	}
	return "mkfs.xfs"
}

// zonedXFSSupport refuses zoned XFS where the node's kernel or the image's xfsprogs is too old, naming both.
func zonedXFSSupport(ctx context.Context, d deps) []zbd.Problem {
	release, err := d.release()
	if err != nil {
		release = fmt.Sprintf("unknown (%v)", err)
	}
	cmd := zonedfs.XFSProgsVersionCommand()
	cmd[0] = zonedMkfsXFS(d)
	out, stderr, err := d.runner.Run(ctx, cmd[0], cmd[1:]...)
	switch {
	case errors.Is(err, exec.ErrNotFound):
		out = ""
	case err != nil:
		out = strings.TrimSpace(out + " " + stderr + " " + err.Error())
	}
	return zonedfs.JudgeZonedXFSSupport(release, out)
}

// kernelReleaseFile is uname -r: a container sees its node's kernel.
const kernelReleaseFile = "/proc/sys/kernel/osrelease"

func (d deps) release() (string, error) {
	if d.kernelRelease != nil {
		return d.kernelRelease()
	}
	b, err := os.ReadFile(kernelReleaseFile)
	return strings.TrimSpace(string(b)), err
}
