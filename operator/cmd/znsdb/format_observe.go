package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/logtail"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// sighting is what format saw on a device it may write to.
type sighting struct {
	found fsformat.Observed
	// meta is what ZenFS's metadata zones hold (zenfs only): a foreign zone is named in a refusal.
	meta zenfs.Meta
	// zones is the zone report (zoned devices), capacity the size (conventional ones).
	zones    []zbd.Zone
	capacity int64
	// holder keeps a conventional device open exclusively until mkfs: while fio preconditions it, nothing can
	// mount it or make a file system on it (both open it exclusively; fio and blkid do not).
	holder io.Closer
}

func (s *sighting) release() {
	if s.holder != nil {
		s.holder.Close()
		s.holder = nil
	}
}

// observeZoned judges a zoned device and finds out what it holds. Every zoned backend reads ZenFS's metadata
// zones through an exclusive open, which is also the busy check (it fails while the device is mounted or open
// elsewhere), and asks blkid, which does not know ZenFS. ZenFS then asks zenfs ls-uuid too, so that a flaw in
// one reader never lets a file system be taken for free space, and reads the token recorded in its aux
// directory. zenfs is not run at all on a device with a foreign metadata zone
// (zenfs.Meta.Unsafe): it would take a word of those bytes as a size to allocate. ls-uuid failing is not an
// error: it fails for the whole host when any one device holds such data, and the superblock alone decides then.
func (f formatFlags) observeZoned(ctx context.Context, b fsformat.Backend, token string, d deps) (dbinit.Report, *sighting) {
	r, zones := preflight(ctx, f.deviceFlags, d)
	if zones == nil {
		return r, nil
	}
	state := &dbinit.FilesystemState{Type: b.Name()}
	r.Filesystem = state
	if isZenFS(b) {
		if note, err := dbinit.RecoverAux(f.auxPath); err != nil {
			r.Error = fmt.Sprintf("checking the aux directory %s: %v", f.auxPath, err)
			return r, nil
		} else if note != "" {
			fmt.Fprintf(d.stderr, "znsdb: %s\n", note)
		}
	}
	meta, err := f.readMeta(zones, d.devices.Open)
	if errors.Is(err, zbd.ErrBusy) {
		r.Problems = append(r.Problems, zbd.BusyProblem(f.devPath(), err))
		f.busyState(state, zones, d)
		return r, nil
	}
	if err != nil {
		r.Error = err.Error()
		return r, nil
	}
	s := &sighting{zones: zones, found: fsformat.Observed{Empty: zbd.IsEmpty(zones), ZenFS: meta.Superblock != nil}}
	if sb := meta.Superblock; sb != nil {
		state.UUID = sb.UUID
	}
	s.found.Probe, err = f.probe(ctx, d)
	switch {
	case errors.Is(err, exec.ErrNotFound) && isZenFS(b):
		// ZenFS's own readers decide without it, as they did before blkid was asked; it only names other file
		// systems in a refusal.
		fmt.Fprintf(d.stderr, "znsdb: no blkid in this image: %s is judged by its zones and ZenFS superblock alone\n", f.devPath())
	case err != nil:
		r.Error = err.Error()
		return r, nil
	}
	if f.metadataDevice != "" && !f.observeMetadataDevice(ctx, s, &r, d) {
		s.release()
		return r, nil
	}
	if s.found.Probe.Type != "" {
		state.UUID, state.Label = s.found.Probe.UUID, s.found.Probe.Label
	}
	if isZenFS(b) {
		s.meta, s.found.ForeignMeta = meta, meta.Unsafe()
		if meta.Unsafe() {
			fmt.Fprintf(d.stderr, "znsdb: zenfs ls-uuid not run on %s: %s\n", f.device, foreignNote(meta, f.device))
		} else if uuid, listed := f.lsUUID(ctx, d); listed {
			s.found.ZenFS, state.UUID = true, uuid
		}
		if s.found.RecordedToken, err = dbinit.ReadToken(f.auxPath); err != nil {
			r.Error = fmt.Sprintf("reading the recorded reformat token: %v", err)
			return r, nil
		}
	}
	state.Found = fsformat.Found(s.found)
	return r, s
}

// observeConventional judges a conventional device and finds out what it holds: blkid's probe, and whether
// both ends read back as zeros (what no file system or partition table leaves). The device stays held until
// the sighting is released.
func (f formatFlags) observeConventional(ctx context.Context, b fsformat.Backend, d deps) (dbinit.Report, *sighting) {
	r, dev := preflightConventional(f.deviceFlags, zonedfs.Filesystem(b.Name()), d.devices, false)
	if dev == nil {
		return r, nil
	}
	state := &dbinit.FilesystemState{Type: b.Name()}
	r.Filesystem = state
	holder, err := d.devices.Open(f.devPath())
	if errors.Is(err, zbd.ErrBusy) {
		r.Problems = append(r.Problems, zbd.BusyProblem(f.devPath(), err))
		return r, nil
	}
	if err != nil {
		r.Error = fmt.Sprintf("opening %s: %v", f.devPath(), err)
		return r, nil
	}
	s := &sighting{capacity: dev.CapacityBytes, holder: holder}
	zero, err := zonedfs.ZeroEnds(holder, dev.CapacityBytes)
	if err != nil {
		s.release()
		r.Error = fmt.Sprintf("reading the ends of %s: %v", f.devPath(), err)
		return r, nil
	}
	found, err := f.probe(ctx, d)
	if err != nil {
		s.release()
		r.Error = err.Error()
		return r, nil
	}
	s.found = fsformat.Observed{Probe: found, Empty: zero}
	state.Found, state.UUID, state.Label = fsformat.Found(s.found), found.UUID, found.Label
	return r, s
}

// busyState records what a device held by another process holds, from a plain (not exclusive) read of its
// metadata zones: a running mysqld's ZenFS is still there, and the report says so.
func (f formatFlags) busyState(state *dbinit.FilesystemState, zones []zbd.Zone, d deps) {
	const busy = "nothing decided: the device is busy (another process holds it open exclusively)"
	meta, err := f.readMeta(zones, d.devices.OpenShared)
	switch {
	case err != nil:
		state.Reason = fmt.Sprintf("%s, and reading its metadata zones without an exclusive open failed too: %v", busy, err)
	case meta.Superblock != nil:
		state.Found, state.UUID = "zenfs", meta.Superblock.UUID
		state.Reason = fmt.Sprintf("%s; read without an exclusive open, it holds ZenFS %s", busy, meta.Superblock.UUID)
	case meta.Unsafe():
		state.Reason = fmt.Sprintf("%s; read without an exclusive open, it holds data that is not ZenFS: %s", busy,
			foreignNote(meta, f.device))
	case zbd.IsEmpty(zones):
		state.Reason = busy + "; read without an exclusive open, it is empty"
	default:
		state.Reason = busy + "; read without an exclusive open, its metadata zones hold no ZenFS superblock"
	}
}

// foreignNote names the metadata zones that hold foreign bytes and how to clear them, briefly: it goes into a
// reason of at most 400 bytes.
func foreignNote(meta zenfs.Meta, dev string) string {
	var zones []string
	for _, z := range meta.Foreign {
		zones = append(zones, fmt.Sprintf("sector %d (length word %#08x; `blkzone reset -o %d -c 1 /dev/%s` clears it)",
			z.Start/512, z.LengthWord, z.Start/512, dev))
	}
	return "foreign metadata zone at " + strings.Join(zones, ", at ") + "; zenfs not run on it"
}

// readMeta reads the first record of each metadata zone through a device opened with open: Devices.Open
// (exclusive, failing with zbd.ErrBusy) or Devices.OpenShared.
func (f formatFlags) readMeta(zones []zbd.Zone, open func(string) (ReaderAtCloser, error)) (zenfs.Meta, error) {
	dev, err := open(f.devPath())
	if errors.Is(err, zbd.ErrBusy) {
		return zenfs.Meta{}, err
	}
	if err != nil {
		return zenfs.Meta{}, fmt.Errorf("opening %s to look for ZenFS: %w", f.devPath(), err)
	}
	// Closed at once: zenfs and mkfs open the device exclusively too.
	defer dev.Close()
	meta, err := zenfs.ReadMeta(dev, zenfs.MetaZones(zones))
	if err != nil {
		return zenfs.Meta{}, fmt.Errorf("looking for a ZenFS superblock on %s: %w", f.devPath(), err)
	}
	return meta, nil
}

// lsUUID asks zenfs for the file system on the device.
func (f formatFlags) lsUUID(ctx context.Context, d deps) (string, bool) {
	out, stderr, err := d.zenfsRunner().Run(ctx, f.zenfsBin, zenfs.LsUUIDArgs()...)
	if err != nil {
		// ls-uuid reads every zoned device of the node: the one it failed on need not be this one.
		fmt.Fprintf(d.stderr, "znsdb: zenfs ls-uuid failed, the superblock read here decides: %s\n",
			zenfs.Classify("", stderr, err).Message)
		return "", false
	}
	fss, err := zenfs.ParseLsUUID(out)
	if err != nil {
		return "", false
	}
	fs, ok := zenfs.FindDevice(fss, f.device)
	return fs.UUID, ok
}

// probe asks blkid what the device holds; no signature is not an error.
func (f formatFlags) probe(ctx context.Context, d deps) (zonedfs.Probe, error) {
	return f.probeAt(ctx, f.devPath(), d)
}

func (f formatFlags) probeAt(ctx context.Context, devPath string, d deps) (zonedfs.Probe, error) {
	cmd := zonedfs.ProbeCommand(devPath)
	out, stderr, err := d.runner.Run(ctx, cmd[0], cmd[1:]...)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == zonedfs.BlkidNothingFound {
		return zonedfs.Probe{}, nil
	}
	if err != nil {
		return zonedfs.Probe{}, fmt.Errorf("blkid on %s failed: %w: %s", devPath, err, logtail.Last(stderr, 3))
	}
	return zonedfs.ParseProbe(out)
}

// observeMetadataDevice adds what zoned XFS's metadata device holds to what the zoned device was seen to hold:
// the device counts as empty only if both are, and the metadata device's XFS is the file system (its realtime
// zoned device has no signature). The metadata device stays held exclusively until mkfs, like a conventional
// device; ok is false when format must stop.
func (f formatFlags) observeMetadataDevice(ctx context.Context, s *sighting, r *dbinit.Report, d deps) (ok bool) {
	meta, problems, err := f.metadataDeviceOf()
	switch {
	case err != nil:
		r.Error = err.Error()
		return false
	case meta == nil:
		r.Problems = append(r.Problems, problems...)
		return false
	}
	holder, err := d.devices.Open(f.metaPath())
	if errors.Is(err, zbd.ErrBusy) {
		r.Problems = append(r.Problems, zbd.BusyProblem(f.metaPath(), err))
		return false
	}
	if err != nil {
		r.Error = fmt.Sprintf("opening the metadata device %s: %v", f.metaPath(), err)
		return false
	}
	s.holder = holder
	zero, err := zonedfs.ZeroEnds(holder, meta.CapacityBytes)
	if err != nil {
		r.Error = fmt.Sprintf("reading the ends of the metadata device %s: %v", f.metaPath(), err)
		return false
	}
	found, err := f.probeAt(ctx, f.metaPath(), d)
	if err != nil {
		r.Error = err.Error()
		return false
	}
	if s.found.Probe.Type == "" {
		s.found.Probe = found
	}
	s.found.Empty = s.found.Empty && zero && found.Type == ""
	return true
}
