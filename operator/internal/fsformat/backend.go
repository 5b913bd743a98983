// Package fsformat is the project's one format engine: one decision for
// every file system it makes on a whole device (Decide), and the backends
// that differ only in what they are: ZenFS, btrfs, f2fs and XFS in zoned mode,
// ext4 and xfs on a conventional device. A backend knows how to recognise
// its own file system in what a device was seen to hold, where it records
// the reformat token it was made with, and how to name it; the decision, the
// policy and the token's meaning are the same for all. It computes only:
// znsdb observes the device and runs the commands.
package fsformat

import (
	"fmt"

	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// Observed is what a device was seen to hold before anything was written.
type Observed struct {
	// Probe is blkid's answer; it does not know ZenFS.
	Probe zonedfs.Probe
	// ZenFS: a ZenFS superblock is in a metadata zone (or zenfs ls-uuid lists the device).
	ZenFS bool
	// ForeignMeta: a written ZenFS metadata zone starts with bytes that are not a ZenFS superblock
	// (zenfs.Meta.Unsafe). Beside a ZenFS it makes the file system unusable as it is: zenfs and MyRocks read
	// every written metadata zone when they mount, and take a word of those bytes as a size to allocate.
	ForeignMeta bool
	// Empty: no sequential zone holds data (zoned), or both ends read back as zeros (conventional). Only what
	// blkid and the ZenFS reader also find nothing on counts as an empty device.
	Empty bool
	// RecordedToken is the token ZenFS's aux directory records as applied ("" for none); the other
	// file systems record theirs in their label.
	RecordedToken string
}

// Backend is one file system the engine can make.
type Backend interface {
	// Name is the file system's name in the API (zenfs, btrfs, f2fs, ext4, xfs).
	Name() string
	// Zoned: made on a host-managed device, all of it in zoned mode.
	Zoned() bool
	// Holds reports whether the device holds this backend's file system, one the project keeps: a zoned one
	// whoever made it (it was made for this), a conventional one only if zns-mysql made it, since any data
	// disk may hold an ext4 or xfs.
	Holds(o Observed) bool
	// MadeWith reports whether the file system on the device records token as the one it was made with.
	MadeWith(o Observed, token string) bool
}

// ForName is the backend of a file system name. zoned says the device is host-managed, which only xfs
// leaves open: zenfs, btrfs and f2fs are always made in zoned mode, ext4 never.
func ForName(name string, zoned bool) (Backend, error) {
	switch name {
	case "zenfs":
		return ZenFS{}, nil
	case string(zonedfs.Btrfs), string(zonedfs.F2FS):
		return Labelled{FS: zonedfs.Filesystem(name)}, nil
	case string(zonedfs.Ext4):
		if zoned {
			return nil, fmt.Errorf("file system ext4 has no zoned mode: want zenfs, btrfs, f2fs or xfs on a zoned device")
		}
		return Labelled{FS: zonedfs.Ext4}, nil
	case string(zonedfs.XFS):
		return Labelled{FS: zonedfs.XFS, ZonedMode: zoned}, nil
	}
	return nil, fmt.Errorf("file system %q: want zenfs, btrfs, f2fs, ext4 or xfs", name)
}

// ZenFS is MyRocks's file system in zones. blkid cannot see it: its superblock is read directly, and the
// applied token is a file in its aux directory, which exists beside it on the data volume.
type ZenFS struct{}

func (ZenFS) Name() string          { return "zenfs" }
func (ZenFS) Zoned() bool           { return true }
func (ZenFS) Holds(o Observed) bool { return o.ZenFS }
func (ZenFS) MadeWith(o Observed, token string) bool {
	return token != "" && o.RecordedToken == token
}

// Labelled is a file system blkid knows (btrfs, f2fs, ext4, xfs); the applied token is hashed into its label
// (zonedfs.Label), so a restart tells an applied token from a new one without mounting.
type Labelled struct {
	FS zonedfs.Filesystem
	// ZonedMode is XFS made on a host-managed device (zoned XFS); btrfs and f2fs are zoned by their name.
	// blkid sees a zoned XFS on the device that holds its data section: the zoned device when its own
	// conventional zones hold it, else the separate metadata device (the realtime zoned device carries no
	// signature), and that is the device znsdb probes for it.
	ZonedMode bool
}

func (l Labelled) Name() string { return string(l.FS) }
func (l Labelled) Zoned() bool  { return l.FS.Zoned() || l.ZonedMode }

func (l Labelled) Holds(o Observed) bool {
	if o.Probe.Type != string(l.FS) {
		return false
	}
	_, ours := zonedfs.AppliedToken(o.Probe.Label, "")
	return ours || l.Zoned()
}

func (l Labelled) MadeWith(o Observed, token string) bool {
	if token == "" || o.Probe.Type != string(l.FS) {
		return false
	}
	applied, _ := zonedfs.AppliedToken(o.Probe.Label, token)
	return applied
}

// Describe names what the device holds, for a person, as seen by a backend that wants b.
func Describe(b Backend, o Observed) string {
	switch {
	case o.ZenFS:
		return "a ZenFS file system"
	case o.Probe.Type != "":
		s := o.Probe.Type
		if o.Probe.Label != "" {
			s += fmt.Sprintf(" (label %q)", o.Probe.Label)
		}
		if _, ours := zonedfs.AppliedToken(o.Probe.Label, ""); !ours && !b.Zoned() {
			s += " not made by zns-mysql"
		}
		return s
	case o.ForeignMeta:
		return "data that is not ZenFS in a ZenFS metadata zone"
	case o.Empty:
		return "nothing"
	case b.Zoned():
		return "data of no kind blkid knows (written zones)"
	}
	return "data of no kind blkid knows (non-zero bytes in its first or last MiB)"
}

// Found is the short name of what the device holds, for a status: the file system type, "zenfs", or "" for
// no file system.
func Found(o Observed) string {
	if o.ZenFS {
		return "zenfs"
	}
	return o.Probe.Type
}
