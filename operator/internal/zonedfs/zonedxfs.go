package zonedfs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// Zoned XFS (Linux 6.15, xfsprogs 6.15) keeps file data in the sequential zones of a host-managed device, as its
// realtime section, and its metadata and log in a data section that needs random writes: the device's own
// conventional zones, or a separate conventional device named with -r rtdev=. What is below was read off the
// captures in testdata/zoned-xfs (trixie-backports' 7.3.4 and sid's xfsprogs 7.2.0 in the QEMU guest).

// Problem codes of refusals specific to zoned XFS.
const (
	CodeZonedXFSUnsupported    = "ZonedXFSUnsupported"
	CodeTooSmallForXFS         = "TooSmallForXFS"
	CodeMetadataDeviceZoned    = "MetadataDeviceZoned"
	CodeMetadataDeviceTooSmall = "MetadataDeviceTooSmall"
)

// ZonedXFSMinVersion is the first kernel and the first xfsprogs release that know zoned XFS.
var ZonedXFSMinVersion = Version{6, 15}

// ZonedMkfsXFS is the name the project's images give a mkfs.xfs new enough for zoned XFS, beside the
// distribution's own (bookworm's 6.1, which makes the conventional XFS older kernels mount).
const ZonedMkfsXFS = "mkfs.xfs-zoned"

// XFSMinDataBytes is the smallest data section mkfs.xfs makes: on 256 MiB of conventional zones it said
// "Filesystem must be larger than 300MiB." (c-mkfs-small-conventional.txt).
const XFSMinDataBytes = 300 << 20

// Version is a kernel or xfsprogs release, major and minor.
type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }
func (v Version) AtLeast(w Version) bool {
	return v.Major > w.Major || v.Major == w.Major && v.Minor >= w.Minor
}

var leadingVersion = regexp.MustCompile(`^(\d+)\.(\d+)`)

// ParseKernelRelease reads the major and minor of a kernel release as uname -r prints it ("7.3.4+deb13-amd64",
// "6.1.0-50-amd64").
func ParseKernelRelease(release string) (Version, error) {
	m := leadingVersion.FindStringSubmatch(strings.TrimSpace(release))
	if m == nil {
		return Version{}, fmt.Errorf("kernel release %q does not start with major.minor", release)
	}
	return versionOf(m[1], m[2]), nil
}

var xfsprogsVersion = regexp.MustCompile(`(?m)^mkfs\.xfs version (\d+)\.(\d+)(\.\d+)?`)

// XFSProgsVersionCommand asks mkfs.xfs for its version ("mkfs.xfs version 6.1.0").
func XFSProgsVersionCommand() []string { return []string{"mkfs.xfs", "-V"} }

// ParseXFSProgsVersion reads mkfs.xfs -V; full is the version as printed, for messages.
func ParseXFSProgsVersion(out string) (v Version, full string, err error) {
	m := xfsprogsVersion.FindStringSubmatch(out)
	if m == nil {
		return Version{}, "", fmt.Errorf("mkfs.xfs -V printed %q, not \"mkfs.xfs version X.Y.Z\"", strings.TrimSpace(out))
	}
	return versionOf(m[1], m[2]), m[1] + "." + m[2] + m[3], nil
}

func versionOf(major, minor string) Version {
	a, _ := strconv.Atoi(major)
	b, _ := strconv.Atoi(minor)
	return Version{a, b}
}

// JudgeZonedXFSSupport refuses zoned XFS where the kernel or xfsprogs is older than 6.15, naming both: a person
// who upgrades one only to find the other too old has been told half the story. xfsprogsOut is what mkfs.xfs -V
// printed, "" when the image has no mkfs.xfs.
func JudgeZonedXFSSupport(kernelRelease, xfsprogsOut string) []zbd.Problem {
	k, kerr := ParseKernelRelease(kernelRelease)
	x, full, xerr := ParseXFSProgsVersion(xfsprogsOut)
	kernelOK, progsOK := kerr == nil && k.AtLeast(ZonedXFSMinVersion), xerr == nil && x.AtLeast(ZonedXFSMinVersion)
	if kernelOK && progsOK {
		return nil
	}
	verdict := func(ok bool) string {
		if ok {
			return "new enough"
		}
		return "too old"
	}
	progs := fmt.Sprintf("the image has xfsprogs %s (%s)", full, verdict(progsOK))
	switch {
	case xfsprogsOut == "":
		progs = "the image has no mkfs.xfs"
	case xerr != nil:
		progs = fmt.Sprintf("the image's mkfs.xfs -V printed %q", strings.TrimSpace(xfsprogsOut))
	}
	return []zbd.Problem{{Code: CodeZonedXFSUnsupported, Message: fmt.Sprintf(
		"zoned XFS needs Linux >= %s and xfsprogs >= %s; this node runs Linux %s (%s) and %s. Use btrfs or f2fs "+
			"on this device, or a node with a newer kernel and an image with newer xfsprogs (Debian: "+
			"trixie-backports' kernel, sid's xfsprogs).",
		ZonedXFSMinVersion, ZonedXFSMinVersion, strings.TrimSpace(kernelRelease), verdict(kernelOK), progs)}}
}

// JudgeZonedXFS lists every reason d cannot hold zoned XFS (empty: fit). conventional is the number of
// conventional zones from a zone report, -1 when none was read (the format step judges them then). meta is the
// separate metadata device, nil when the data section goes on d's conventional zones.
func JudgeZonedXFS(d zbd.Device, conventional int, meta *zbd.Device) []zbd.Problem {
	if d.Model != zbd.ModelHostManaged {
		return []zbd.Problem{zbd.NotHostManaged(d)}
	}
	// No scheduler check: every kernel with zoned XFS (6.15) orders zone writes itself (zone write plugging,
	// 6.10), whatever the I/O scheduler.
	var ps []zbd.Problem
	if meta != nil {
		return append(ps, judgeMetadataDevice(*meta)...)
	}
	switch conventionalBytes := int64(conventional) * d.ZoneSizeBytes; {
	case conventional == 0:
		ps = append(ps, zbd.Problem{Code: CodeNoConventionalZones, Message: fmt.Sprintf(
			"%s has no conventional zones; zoned XFS keeps its metadata and log in a section that needs random "+
				"writes (mkfs.xfs says \"Data devices requires conventional zones.\"), and NVMe ZNS namespaces have "+
				"none. Add storage.zonedDevice.metadataDeviceName: a conventional device of at least %d MiB on the "+
				"same node (a conventional NVMe namespace, say).", d.Name, XFSMinDataBytes>>20)})
	case conventional > 0 && conventionalBytes < XFSMinDataBytes:
		ps = append(ps, zbd.Problem{Code: CodeTooSmallForXFS, Message: fmt.Sprintf(
			"%s has %d MiB of conventional zones; mkfs.xfs makes no data section under %d MiB (\"Filesystem must be "+
				"larger than 300MiB.\"). Use a device with more conventional zones (null_blk: zone_nr_conv), or add "+
				"storage.zonedDevice.metadataDeviceName, a conventional device of at least %d MiB.",
			d.Name, conventionalBytes>>20, XFSMinDataBytes>>20, XFSMinDataBytes>>20)})
	}
	return ps
}

func judgeMetadataDevice(m zbd.Device) []zbd.Problem {
	var ps []zbd.Problem
	if m.Model != zbd.ModelNone {
		ps = append(ps, zbd.Problem{Code: CodeMetadataDeviceZoned, Message: fmt.Sprintf(
			"the metadata device %s is zoned (queue/zoned = %s); zoned XFS's metadata and log need random writes: "+
				"name a conventional device.", m.Name, m.Model)})
	}
	if m.CapacityBytes < XFSMinDataBytes {
		ps = append(ps, zbd.Problem{Code: CodeMetadataDeviceTooSmall, Message: fmt.Sprintf(
			"the metadata device %s has %d MiB; mkfs.xfs makes no data section under %d MiB. Name a larger one.",
			m.Name, m.CapacityBytes>>20, XFSMinDataBytes>>20)})
	}
	return ps
}

// ZonedXFSMkfsCommand makes zoned XFS over the zoned device devPath: alone (its conventional zones take the data
// section), or with metaPath as the data device and devPath as the realtime device. mkfs.xfs resets the zones
// itself; -K keeps it from discarding the metadata device, as for a conventional XFS.
func ZonedXFSMkfsCommand(devPath, metaPath, token string, force bool) ([]string, error) {
	for _, p := range []string{devPath, metaPath} {
		if p != "" && (!strings.HasPrefix(p, "/dev/") || strings.ContainsAny(p, " \t\n,")) {
			return nil, fmt.Errorf("device path %q is not a /dev node", p)
		}
	}
	cmd := []string{"mkfs.xfs", "-K", "-L", Label(token)}
	if force {
		cmd = append(cmd, "-f")
	}
	if metaPath == "" {
		return append(cmd, devPath), nil
	}
	return append(cmd, "-r", "rtdev="+devPath, metaPath), nil
}

// ZonedXFSMountOptions are the options a zoned XFS with a separate metadata device is mounted with: without
// rtdev= the mount fails (the kernel says "Filesystem has a realtime volume, use rtdev=device option").
func ZonedXFSMountOptions(devPath, metaPath string) []string {
	if metaPath == "" {
		return nil
	}
	return []string{"rtdev=" + devPath}
}
