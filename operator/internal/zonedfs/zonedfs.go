// Package zonedfs is the format engine of the file systems the project makes
// on a whole device and the kubelet then mounts: btrfs and f2fs in zoned mode
// on a host-managed device, and ext4 and xfs on a conventional one
// (conventional.go). It knows what each needs of the device, how to make one
// safely, how to tell what a device already holds from blkid's probe, and
// one format decision for all of them (Decide), with the applied reformat
// token recorded in the file system's label. It computes only; znsdb runs the
// commands.
//
// The zoned limits below were read off Debian's 6.1 kernel and btrfs-progs
// 6.2 / f2fs-tools 1.15 in the project's QEMU guest (hack/qemu/run.sh
// --userland).
package zonedfs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// Filesystem is a file system the project makes on a whole device.
type Filesystem string

const (
	// Btrfs and F2FS are made in zoned mode, on host-managed devices.
	Btrfs Filesystem = "btrfs"
	F2FS  Filesystem = "f2fs"
	// Ext4 and XFS are made on conventional devices.
	Ext4 Filesystem = "ext4"
	XFS  Filesystem = "xfs"
)

// Zoned reports whether fs is made in zoned mode on a host-managed device.
func (fs Filesystem) Zoned() bool { return fs == Btrfs || fs == F2FS }

// Parse accepts the names of the zoned file systems.
func Parse(s string) (Filesystem, error) {
	switch Filesystem(s) {
	case Btrfs, F2FS:
		return Filesystem(s), nil
	}
	return "", fmt.Errorf("file system %q: want %s or %s", s, Btrfs, F2FS)
}

// Problem codes of refusals specific to a zoned file system.
const (
	CodeTooFewActiveZonesForBtrfs = "TooFewActiveZonesForBtrfs"
	CodeTooFewZonesForBtrfs       = "TooFewZonesForBtrfs"
	CodeNoConventionalZones       = "NoConventionalZones"
	CodeTooSmallForF2FS           = "TooSmallForF2FS"
)

// BtrfsMinActiveZones is BTRFS_MIN_ACTIVE_ZONES of Linux 6.1 (three superblock
// mirrors + 5): the mount refuses fewer, seen in the guest as "zoned:
// /dev/nullb2: max active zones 6 is too small, need at least 8 active zones".
// When a device has no active limit, the kernel uses its open limit instead.
const BtrfsMinActiveZones = 8

// BtrfsMinZones: the superblock log takes zones 0 and 1, and a single
// system, metadata and data block group a zone each; fewer zones than the
// active minimum cannot hold a working file system.
const BtrfsMinZones = BtrfsMinActiveZones

// F2FSMinSections: f2fs on a zoned device makes each zone a section and
// keeps whole sections free for its cleaner (overprovisioning plus reserved
// sections). On a 2 GiB null_blk device with 64 MiB zones (32 sections) it
// left 74 MiB of 2 GiB for files; F2FSMinSections asks for at least 64 zones,
// so that the reserve is at most about half of the device.
const F2FSMinSections = 64

// Judge lists every reason d cannot hold fs in zoned mode (empty: fit).
// conventional is the number of conventional zones from a zone report, or -1
// when no report was read (the preflight Job judges from sysfs alone); f2fs's
// need for them is then judged by the format step.
func Judge(fs Filesystem, d zbd.Device, conventional int) []zbd.Problem {
	if d.Model != zbd.ModelHostManaged {
		return []zbd.Problem{zbd.NotHostManaged(d)}
	}
	var ps []zbd.Problem
	if p, ok := zbd.JudgeScheduler(d); !ok {
		p.Message = strings.ReplaceAll(p.Message, "ZenFS requires", fmt.Sprintf("%s in zoned mode needs", fs))
		ps = append(ps, p)
	}
	switch fs {
	case Btrfs:
		if lim := activeLimit(d); lim != 0 && lim < BtrfsMinActiveZones {
			ps = append(ps, zbd.Problem{Code: CodeTooFewActiveZonesForBtrfs, Message: fmt.Sprintf(
				"%s allows %d active (or open) zones; btrfs in zoned mode refuses to mount with fewer than %d "+
					"(the kernel says \"max active zones %d is too small\"). Use zenfs, a device or namespace "+
					"with a limit of %d or more, or no limit (null_blk: zone_max_active, zone_max_open).",
				d.Name, lim, BtrfsMinActiveZones, lim, BtrfsMinActiveZones)})
		}
		if d.NrZones < BtrfsMinZones {
			ps = append(ps, zbd.Problem{Code: CodeTooFewZonesForBtrfs, Message: fmt.Sprintf(
				"%s has %d zones; btrfs in zoned mode needs at least %d (two for its superblock log, one per "+
					"block group). Use a larger device or a smaller zone size.", d.Name, d.NrZones, BtrfsMinZones)})
		}
	case F2FS:
		if conventional == 0 {
			ps = append(ps, zbd.Problem{Code: CodeNoConventionalZones, Message: fmt.Sprintf(
				"%s has no conventional zones; f2fs keeps its metadata (checkpoints, segment and node tables) "+
					"in conventional zones, which NVMe ZNS namespaces usually lack. Use btrfs or zenfs on this "+
					"device, or one with conventional zones (null_blk: zone_nr_conv).", d.Name)})
		}
		if d.NrZones < F2FSMinSections {
			ps = append(ps, zbd.Problem{Code: CodeTooSmallForF2FS, Message: fmt.Sprintf(
				"%s has %d zones; f2fs in zoned mode reserves whole zones for its cleaner (on 32 zones of 64 MiB "+
					"it left 74 MiB of 2 GiB free), so it needs at least %d. Use a larger device, a smaller zone "+
					"size, or btrfs.", d.Name, d.NrZones, F2FSMinSections)})
		}
	}
	return ps
}

// activeLimit is the limit the kernel's zoned file systems go by: the active
// one, or the open one when there is no active limit.
func activeLimit(d zbd.Device) int64 {
	if d.MaxActiveZones != 0 {
		return d.MaxActiveZones
	}
	return d.MaxOpenZones
}

// ConventionalZones counts the conventional zones of a zone report.
func ConventionalZones(zones []zbd.Zone) int {
	n := 0
	for _, z := range zones {
		if !z.Type.Sequential() {
			n++
		}
	}
	return n
}

// The label of a file system made by zns-mysql records the reformat token it
// was made with, hashed, so that a restart can tell an applied token from a
// new one without mounting. It must fit every file system's label: XFS keeps
// at most 12 bytes, ext4 16 (btrfs and f2fs far more). Hence "zns-" and 8 hex
// digits of the token's SHA-256 (32 bits: what tells one token from the next
// on one device, not a secret), and "zns-mysql" when no token was given.
// The strict shape tells ours from a label a person chose; "zns-mysql-" and
// 12 hex digits is what earlier versions wrote on btrfs and f2fs, still read.
const (
	labelPrefix = "zns-"
	// labelNoToken is the label of a file system made without a token.
	labelNoToken = "zns-mysql"
	// MaxLabelLen is the longest label any of the file systems keeps (XFS).
	MaxLabelLen = 12
)

var (
	ourLabel    = regexp.MustCompile(`^zns-[0-9a-f]{8}$`)
	legacyLabel = regexp.MustCompile(`^zns-mysql-[0-9a-f]{12}$`)
)

// Label is the label of a file system made with token ("" for none).
func Label(token string) string {
	if token == "" {
		return labelNoToken
	}
	return labelPrefix + tokenHash(token)[:8]
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// AppliedToken reports whether label records token, and whether the label is
// one zns-mysql writes at all.
func AppliedToken(label, token string) (applied, ours bool) {
	ours = label == labelNoToken || ourLabel.MatchString(label) || legacyLabel.MatchString(label)
	applied = ours && (label == Label(token) || token != "" && label == labelNoToken+"-"+tokenHash(token)[:12])
	return applied, ours
}

// MkfsCommand is the command that makes fs on /dev/<device>, labelled with
// the token. force lets mkfs replace what it finds (only after the user
// confirmed with a new token, and the zones were reset or the device was
// preconditioned).
func MkfsCommand(fs Filesystem, devPath, token string, force bool) ([]string, error) {
	if !strings.HasPrefix(devPath, "/dev/") || strings.ContainsAny(devPath, " \t\n") {
		return nil, fmt.Errorf("device path %q is not a /dev node", devPath)
	}
	var cmd []string
	switch fs {
	case Btrfs:
		// single profiles: DUP metadata would need two zones active for every
		// metadata write, and one device has nothing to mirror to.
		cmd = []string{"mkfs.btrfs", "-O", "zoned", "-d", "single", "-m", "single", "-L", Label(token)}
	case F2FS:
		cmd = []string{"mkfs.f2fs", "-m", "-l", Label(token)}
	case Ext4:
		// No discard: it would hand every block back to the drive's FTL and undo
		// a precondition (the drive would look fresh again). Inode tables and the
		// journal are written now, not by a kernel thread after the mount, whose
		// writes would count as the benchmark's.
		cmd = []string{"mkfs.ext4", "-L", Label(token), "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0"}
		if force {
			cmd = append(cmd, "-F")
		}
		return append(cmd, devPath), nil
	case XFS:
		// -K: no discard, as for ext4.
		cmd = []string{"mkfs.xfs", "-K", "-L", Label(token)}
	default:
		return nil, fmt.Errorf("no mkfs for %q", fs)
	}
	if force {
		cmd = append(cmd, "-f")
	}
	return append(cmd, devPath), nil
}
