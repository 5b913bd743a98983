package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/logtail"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// makeLabelled makes a blkid-visible file system on the device, labelled with the token, and checks with blkid
// that it is there with that label; it returns what went wrong, "" when nothing did, and records the new file
// system's UUID and label.
func (f formatFlags) makeLabelled(ctx context.Context, b fsformat.Labelled, token string, force bool, state *dbinit.FilesystemState, d deps) string {
	var cmd []string
	var err error
	if b.ZonedMode {
		cmd, err = zonedfs.ZonedXFSMkfsCommand(f.devPath(), f.metaPath(), token, force)
		if err == nil {
			cmd[0] = zonedMkfsXFS(d)
		}
	} else {
		cmd, err = zonedfs.MkfsCommand(b.FS, f.devPath(), token, force)
	}
	if err != nil {
		return err.Error()
	}
	if _, stderr, err := d.runner.Run(ctx, cmd[0], cmd[1:]...); err != nil {
		return fmt.Sprintf("%s failed: %v: %s", cmd[0], err, logtail.Last(stderr, 5))
	}
	// A zoned XFS with a metadata device is seen on that device; its realtime device carries no signature.
	at := f.devPath()
	if f.metaPath() != "" {
		at = f.metaPath()
	}
	made, err := f.probeAt(ctx, at, d)
	switch {
	case err != nil:
		return fmt.Sprintf("%s succeeded, but probing the result failed: %v", cmd[0], err)
	case made.Type != b.Name() || made.Label != zonedfs.Label(token):
		return fmt.Sprintf("%s succeeded, but blkid finds %q labelled %q on %s, not %s labelled %q", cmd[0],
			made.Type, made.Label, at, b.Name(), zonedfs.Label(token))
	}
	state.UUID, state.Label = made.UUID, made.Label
	return ""
}

// mkfsZenFS formats with the aux directory swapped: zenfs mkfs gets an empty one, the previous one comes back
// if mkfs fails (the old file system is then still on the device and needs it), and goes once mkfs succeeded.
// The token is recorded only after a successful format, so a failed attempt is retried with the same token.
func (f formatFlags) mkfsZenFS(ctx context.Context, force bool, token string, d deps) error {
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

// uuid finds the UUID of the ZenFS mkfs just made: ls-uuid, else the superblock itself (from a fresh zone
// report: mkfs moved the write pointers).
func (f formatFlags) uuid(ctx context.Context, d deps) string {
	if uuid, ok := f.lsUUID(ctx, d); ok {
		return uuid
	}
	zones, err := d.devices.ReportZones(f.devPath())
	if err != nil {
		return ""
	}
	if meta, err := f.readMeta(zones, d.devices.Open); err == nil && meta.Superblock != nil {
		return meta.Superblock.UUID
	}
	return ""
}

// measureSpace records ZenFS's space (zenfs df) in the report; a failure is the report's error.
func (f formatFlags) measureSpace(ctx context.Context, r *dbinit.Report, d deps) {
	args, err := zenfs.DfArgs(f.device)
	if err != nil {
		setError(r, err)
		return
	}
	out, stderr, err := d.zenfsRunner().Run(ctx, f.zenfsBin, args...)
	if err != nil {
		failure := zenfs.Classify(f.device, stderr, err)
		failure.Message = "zenfs df failed: " + failure.Message
		setError(r, failure)
		return
	}
	df, err := zenfs.ParseDf(out)
	if err != nil {
		setError(r, err)
		return
	}
	r.Filesystem.Space = &dbinit.Space{At: d.clock(), FreeBytes: df.FreeBytes, UsedBytes: df.UsedBytes,
		ReclaimableBytes: df.ReclaimableBytes, SpaceAmplificationPercent: df.SpaceAmplificationPercent}
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
