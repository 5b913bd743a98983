package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// detect looks for ZenFS twice: its superblock in the metadata zones, read
// directly, and zenfs ls-uuid. Either one finding it is enough, so a flaw in
// one never lets a file system be taken for free space. The device is opened
// exclusively, which is also the busy check: while another process (a
// RocksDB, a zenfs mkfs) holds it, busy is returned with what a plain read
// of the metadata zones finds (it needs no exclusive open), and nothing else
// happens. zenfs is not run at all on a device with a foreign metadata zone
// (zenfs.Meta.Unsafe): it would take a word of those bytes as a size to
// allocate. ls-uuid failing is not an error: it fails for the whole host
// when any one device holds such data, and the superblock alone decides then.
func (f formatFlags) detect(ctx context.Context, zones []zbd.Zone, d deps) (*dbinit.ZenFSState, zenfs.Meta, *zbd.Problem, error) {
	state := &dbinit.ZenFSState{}
	meta, err := f.readMeta(zones, d.devices.Open)
	if errors.Is(err, zbd.ErrBusy) {
		p := zbd.BusyProblem(f.devPath(), err)
		f.busyState(state, zones, d)
		return state, zenfs.Meta{}, &p, nil
	}
	if err != nil {
		return state, meta, nil, err
	}
	if sb := meta.Superblock; sb != nil {
		state.Present, state.UUID = true, sb.UUID
	}
	if meta.Unsafe() {
		fmt.Fprintf(d.stderr, "znsdb: zenfs ls-uuid not run on %s: %s\n", f.device, foreignNote(meta, f.device))
		return state, meta, nil, nil
	}
	if uuid, listed := f.lsUUID(ctx, d); listed {
		state.Present, state.UUID = true, uuid
	}
	return state, meta, nil, nil
}

// busyState records what a device held by another process holds, from a
// plain (not exclusive) read of its metadata zones: a running mysqld's ZenFS
// is still there, and the report says so.
func (f formatFlags) busyState(state *dbinit.ZenFSState, zones []zbd.Zone, d deps) {
	const busy = "nothing decided: the device is busy (another process holds it open exclusively)"
	meta, err := f.readMeta(zones, d.devices.OpenShared)
	switch {
	case err != nil:
		state.Reason = fmt.Sprintf("%s, and reading its metadata zones without an exclusive open failed too: %v", busy, err)
	case meta.Superblock != nil:
		state.Present, state.UUID = true, meta.Superblock.UUID
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

// foreignNote names the metadata zones that hold foreign bytes and how to
// clear them, briefly: it goes into a reason of at most 400 bytes.
func foreignNote(meta zenfs.Meta, dev string) string {
	var zones []string
	for _, z := range meta.Foreign {
		zones = append(zones, fmt.Sprintf("sector %d (length word %#08x; `blkzone reset -o %d -c 1 /dev/%s` clears it)",
			z.Start/512, z.LengthWord, z.Start/512, dev))
	}
	return "foreign metadata zone at " + strings.Join(zones, ", at ") + "; zenfs not run on it"
}

// superblock reads the ZenFS superblock of the device (nil for none),
// holding the device exclusively while it reads.
func (f formatFlags) superblock(zones []zbd.Zone, d deps) (*zenfs.Superblock, error) {
	meta, err := f.readMeta(zones, d.devices.Open)
	return meta.Superblock, err
}

// readMeta reads the first record of each metadata zone through a device
// opened with open: Devices.Open (exclusive, failing with zbd.ErrBusy) or
// Devices.OpenShared.
func (f formatFlags) readMeta(zones []zbd.Zone, open func(string) (ReaderAtCloser, error)) (zenfs.Meta, error) {
	dev, err := open(f.devPath())
	if errors.Is(err, zbd.ErrBusy) {
		return zenfs.Meta{}, err
	}
	if err != nil {
		return zenfs.Meta{}, fmt.Errorf("opening %s to look for ZenFS: %w", f.devPath(), err)
	}
	// Closed at once: zenfs opens the device exclusively too.
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
		// ls-uuid reads every zoned device of the node: the one it failed
		// on need not be this one.
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

// uuid finds the UUID of the file system mkfs just made: ls-uuid, else the
// superblock itself (from a fresh zone report: mkfs moved the write pointers).
func (f formatFlags) uuid(ctx context.Context, d deps) string {
	if uuid, ok := f.lsUUID(ctx, d); ok {
		return uuid
	}
	zones, err := d.devices.ReportZones(f.devPath())
	if err != nil {
		return ""
	}
	if sb, err := f.superblock(zones, d); err == nil && sb != nil {
		return sb.UUID
	}
	return ""
}

// resetZonesInto resets the written zones and records a busy device or a
// failure in r; ok is false when formatting must stop.
func (f formatFlags) resetZonesInto(r *dbinit.Report, zones []zbd.Zone, d deps) (n int, ok bool) {
	n, busy, err := f.resetZones(zones, d)
	switch {
	case busy != nil:
		r.Problems = append(r.Problems, *busy)
	case err != nil:
		r.Error = err.Error()
	default:
		return n, true
	}
	return n, false
}

// resetZones resets every written zone before a confirmed reformat and
// checks that the device is empty afterwards.
func (f formatFlags) resetZones(zones []zbd.Zone, d deps) (int, *zbd.Problem, error) {
	n, err := d.devices.ResetZones(f.devPath(), zones)
	if errors.Is(err, zbd.ErrBusy) {
		p := zbd.BusyProblem(f.devPath(), err)
		return 0, &p, nil
	}
	if errors.Is(err, os.ErrPermission) {
		return n, nil, fmt.Errorf("resetting the zones of %s before formatting: %w (zone management without "+
			"CAP_SYS_ADMIN needs kernel 5.14 or later, and the device opened for writing)", f.devPath(), err)
	}
	if err != nil {
		return n, nil, fmt.Errorf("resetting the zones of %s before formatting: %w", f.devPath(), err)
	}
	after, err := d.devices.ReportZones(f.devPath())
	if err != nil {
		return n, nil, fmt.Errorf("reading the zones of %s after resetting them: %w", f.devPath(), err)
	}
	if !zbd.IsEmpty(after) {
		return n, nil, fmt.Errorf("%s still has written zones after resetting %d of them", f.devPath(), n)
	}
	return n, nil, nil
}

// mkfs formats with the aux directory swapped: zenfs mkfs gets an empty one,
// the previous one comes back if mkfs fails (the old file system is then
// still on the device and needs it), and goes once mkfs succeeded. The token
// is recorded only after a successful format, so a failed attempt is retried
// with the same token.
func (f formatFlags) mkfs(ctx context.Context, force bool, token string, d deps) error {
	args, err := zenfs.MkfsArgs(f.device, f.auxPath, f.finishThreshold, force)
	if err != nil {
		return err
	}
	swap, err := dbinit.BeginAuxSwap(f.auxPath)
	if err != nil {
		return fmt.Errorf("the device was not formatted: %w", err)
	}
	if _, stderr, err := d.zenfsRunner().Run(ctx, f.zenfsBin, args...); err != nil {
		failure := zenfs.Classify(f.device, stderr, err)
		failure.Message = "zenfs mkfs failed: " + failure.Message
		if aerr := swap.Abort(); aerr != nil {
			failure.Message += fmt.Sprintf(" (and the previous aux directory could not be put back: %v)", aerr)
		}
		return failure
	}
	var tokenErr error
	if token != "" {
		tokenErr = dbinit.WriteToken(f.auxPath, token)
	}
	if err := swap.Commit(); err != nil {
		return fmt.Errorf("formatted, but %w", err)
	}
	if tokenErr != nil {
		return fmt.Errorf("formatted, but %w; the next start formats the new, empty file system again", tokenErr)
	}
	return nil
}

func (f formatFlags) df(ctx context.Context, state *dbinit.ZenFSState, d deps) error {
	args, err := zenfs.DfArgs(f.device)
	if err != nil {
		return err
	}
	out, stderr, err := d.zenfsRunner().Run(ctx, f.zenfsBin, args...)
	if err != nil {
		failure := zenfs.Classify(f.device, stderr, err)
		failure.Message = "zenfs df failed: " + failure.Message
		return failure
	}
	df, err := zenfs.ParseDf(out)
	if err != nil {
		return err
	}
	state.FreeBytes, state.UsedBytes = &df.FreeBytes, &df.UsedBytes
	state.ReclaimableBytes, state.SpaceAmplificationPercent = &df.ReclaimableBytes, &df.SpaceAmplificationPercent
	return nil
}
