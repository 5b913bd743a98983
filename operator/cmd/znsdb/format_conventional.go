package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// preflightConventional judges a conventional device for ext4 or xfs from
// sysfs: not zoned, a whole device, big enough. openCheck also opens the
// device, to prove the pod can reach it (format opens it itself). The device
// is returned when it is fit.
func preflightConventional(f deviceFlags, fs zonedfs.Filesystem, devs Devices, openCheck bool) (dbinit.Report, *zbd.Device) {
	var r dbinit.Report
	dev, problems, err := zbd.Preflight(f.sysBlock, f.device)
	if err != nil {
		r.Error = fmt.Sprintf("inspecting %s: %v", f.device, err)
		return r, nil
	}
	if dev == nil {
		// zbd words these for ZenFS; a partition is refused here for reasons of its own.
		for i, p := range problems {
			if p.Code == zbd.CodePartition {
				problems[i].Message = fmt.Sprintf("%s is a partition; storage.device takes a whole device: "+
					"preconditioning writes every block of it and the file system fills it. Name the whole device.", f.device)
			}
		}
		r.Problems = problems
		return r, nil
	}
	r.Device = dev
	if r.Problems = zonedfs.JudgeConventional(fs, *dev); len(r.Problems) > 0 {
		return r, nil
	}
	if openCheck {
		h, err := devs.Open(f.devPath())
		switch {
		case errors.Is(err, zbd.ErrBusy):
			r.Problems = append(r.Problems, zbd.BusyProblem(f.devPath(), err))
			return r, nil
		case err != nil:
			r.Problems = append(r.Problems, zbd.AccessProblem(f.devPath(), err))
			return r, nil
		}
		h.Close()
	}
	return r, dev
}

// formatConventional makes ext4 or xfs on a conventional device, with the
// same rule as every format (zonedfs.Decide): an empty device is formatted,
// the file system zns-mysql made is kept, anything else needs a new reformat
// token. When a precondition is asked for and a new token confirms the
// format, fio writes the whole device first. The token is recorded in the
// label by mkfs, which runs only after a complete precondition: an
// interrupted one leaves fio's data and no label, so the next run, with the
// same token, starts it over.
func formatConventional(ctx context.Context, f formatFlags, d deps) dbinit.Report {
	policy, token, err := f.settings(d.getenv)
	if err != nil {
		return dbinit.Report{Error: err.Error()}
	}
	want, _ := f.conventionalFS()
	r, dev := preflightConventional(f.deviceFlags, want, d.devices, false)
	if dev == nil {
		return r
	}
	state := &dbinit.FilesystemState{Type: string(want)}
	r.Filesystem = state
	// Held exclusively until mkfs: the busy check, and while fio writes the
	// device nothing can mount it or make a file system on it (both open it
	// exclusively; fio and blkid do not).
	holder, err := d.devices.Open(f.devPath())
	if errors.Is(err, zbd.ErrBusy) {
		r.Problems = append(r.Problems, zbd.BusyProblem(f.devPath(), err))
		return r
	}
	if err != nil {
		r.Error = fmt.Sprintf("opening %s: %v", f.devPath(), err)
		return r
	}
	released := false
	release := func() {
		if !released {
			holder.Close()
			released = true
		}
	}
	defer release()
	zero, err := zonedfs.ZeroEnds(holder, dev.CapacityBytes)
	if err != nil {
		r.Error = fmt.Sprintf("reading the ends of %s: %v", f.devPath(), err)
		return r
	}
	found, err := f.probe(ctx, d)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	state.Found, state.UUID, state.Label = found.Type, found.UUID, found.Label
	dec := zonedfs.Decide(zonedfs.DecisionInput{
		Want: want, Policy: policy, Token: token, Found: found, Empty: found.Type == "" && zero,
		Precondition: f.plan.Enabled,
	})
	state.Action, state.Reason = dec.Action, dec.Reason
	if dec.NotPreconditioned != "" {
		r.Precondition = &dbinit.PreconditionState{Note: dec.NotPreconditioned, RoundsAsked: f.plan.Rounds}
	}
	if dec.Action != dbinit.ActionFormat {
		return r
	}
	force := dec.Force
	if f.driveDir != "" {
		awaitDrive(ctx, f.driveDir, d)
	}
	if dec.Precondition {
		s, err := runPrecondition(ctx, f.plan, f.devPath(), dev.CapacityBytes, d)
		r.Precondition = &s
		if err != nil {
			r.Error = "the device was not formatted: " + s.Note
			return r
		}
		// fio's data is on the device now; mkfs must not ask about it.
		force = true
	}
	release()
	r.Error = f.makeFilesystem(ctx, want, token, force, state, d)
	return r
}
