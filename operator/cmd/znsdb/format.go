package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/precondition"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// tokenEnv carries the reformat token when no token file is given.
const tokenEnv = "ZNS_REFORMAT_TOKEN"

type formatFlags struct {
	deviceFlags
	auxPath         string
	policy          string
	tokenFile       string
	finishThreshold int
	zenfsBin        string
	// plan is the precondition of a conventional device (--precondition).
	plan precondition.Plan
	// driveDir is the directory shared with the drive sidecar, whose first readings come before any write.
	driveDir string
}

func formatCmd(ctx context.Context, args []string, d deps) int {
	var f formatFlags
	fs := flag.NewFlagSet("format", flag.ContinueOnError)
	f.register(fs)
	fs.StringVar(&f.auxPath, "aux-path", "", "ZenFS aux directory for LOCK and LOG files, one per device (required for zenfs)")
	fs.StringVar(&f.policy, "policy", string(fsformat.PolicyIfNeeded), "format policy: IfNeeded or Never")
	fs.StringVar(&f.tokenFile, "reformat-token-file", "",
		"file holding the reformat token (default: the "+tokenEnv+" environment variable)")
	fs.IntVar(&f.finishThreshold, "finish-threshold", 10, "zenfs mkfs --finish_threshold, in percent")
	fs.StringVar(&f.zenfsBin, "zenfs", zenfs.DefaultBinary, "zenfs utility")
	f.plan.RegisterFlags(fs)
	fs.StringVar(&f.driveDir, "drive-dir", "", "directory shared with the drive sidecar: wait (bounded) until it has read the drive's counters before writing")
	if code, ok := parseFlags(fs, args, d); !ok {
		return code
	}
	return finish(format(ctx, f, d), f.terminationLog, d)
}

// format is the one format pipeline, for every file system: judge the device, hold it and find out what it
// holds (the backend's own detection), apply fsformat.Decide, and only then write: reset the zones or
// precondition when a new token confirmed it, make the file system, and check the result. Nothing on the device
// (or in ZenFS's aux directory) changes before the device is known to be free and the rule allows it.
func format(ctx context.Context, f formatFlags, d deps) dbinit.Report {
	b, policy, token, err := f.settings(d.getenv)
	if err != nil {
		return dbinit.Report{Error: err.Error()}
	}
	if f.plan.Enabled && b.Zoned() {
		// Only a conventional device has an FTL to precondition, and only it takes writes anywhere.
		return dbinit.Report{Error: "--precondition is for a conventional device (--filesystem ext4 or xfs): " +
			"a zoned device has no FTL to precondition"}
	}
	var sight *sighting
	var r dbinit.Report
	if b.Zoned() {
		r, sight = f.observeZoned(ctx, b, token, d)
	} else {
		r, sight = f.observeConventional(ctx, b, d)
	}
	if sight == nil {
		return r
	}
	defer sight.release()
	state := r.Filesystem
	dec := fsformat.Decide(fsformat.Input{Want: b, Policy: policy, Token: token, Found: sight.found,
		Precondition: f.plan.Enabled})
	state.Action, state.Reason = dec.Action, dec.Reason
	if dec.NotPreconditioned != "" {
		r.Precondition = &dbinit.PreconditionState{Note: dec.NotPreconditioned, RoundsAsked: f.plan.Rounds}
	}
	switch dec.Action {
	case fsformat.ActionRefuse:
		if sight.meta.Unsafe() {
			state.Reason += "; " + foreignNote(sight.meta, f.device)
		}
		return r
	case fsformat.ActionKeep:
		if isZenFS(b) {
			f.measureSpace(ctx, &r, d)
		}
		return r
	}
	if f.driveDir != "" {
		awaitDrive(ctx, f.driveDir, d)
	}
	force := dec.Force
	switch {
	case dec.Precondition:
		s, err := runPrecondition(ctx, f.plan, f.devPath(), sight.capacity, d)
		r.Precondition = &s
		if err != nil {
			r.Error = "the device was not formatted: " + s.Note
			return r
		}
		// fio's data is on the device now; mkfs must not ask about it.
		force = true
	case force && b.Zoned():
		// Confirmed by a new token. Resetting first also removes a ZenFS (which blkid, and so mkfs, does not
		// see), data zenfs cannot parse (it aborts on some), and old zone contents that would otherwise outlive
		// the format in zones it does not touch.
		var ok bool
		if state.ZonesReset, ok = f.resetZonesInto(&r, sight.zones, d); !ok {
			return r
		}
	}
	sight.release()
	f.makeFilesystem(ctx, b, token, force, &r, d)
	return r
}

// makeFilesystem runs the backend's mkfs and records the new file system in the report.
func (f formatFlags) makeFilesystem(ctx context.Context, b fsformat.Backend, token string, force bool, r *dbinit.Report, d deps) {
	if labelled, ok := b.(fsformat.Labelled); ok {
		r.Error = f.makeLabelled(ctx, labelled, token, force, r.Filesystem, d)
		return
	}
	if err := f.mkfsZenFS(ctx, force, token, d); err != nil {
		setError(r, err)
		return
	}
	r.Filesystem.UUID = f.uuid(ctx, d)
	f.measureSpace(ctx, r, d)
}

func isZenFS(b fsformat.Backend) bool {
	_, ok := b.(fsformat.ZenFS)
	return ok
}

// setError records err in the report, with its reason when zenfs's failure
// was classified.
func setError(r *dbinit.Report, err error) {
	r.Error = err.Error()
	var zf *zenfs.Failure
	if errors.As(err, &zf) {
		r.ErrorReason = string(zf.Reason)
	}
}

func (f formatFlags) settings(getenv func(string) string) (fsformat.Backend, fsformat.Policy, string, error) {
	b, err := fsformat.ForName(f.filesystem, f.zoned)
	if err != nil {
		return nil, "", "", err
	}
	if f.metadataDevice != "" && !f.zonedXFS() {
		return nil, "", "", errors.New("--metadata-device is for zoned XFS only (--filesystem xfs --zoned)")
	}
	if f.device == "" || (isZenFS(b) && f.auxPath == "") {
		return nil, "", "", errors.New("format needs --device and --aux-path (--aux-path only for zenfs)")
	}
	policy, err := fsformat.ParsePolicy(f.policy)
	if err != nil {
		return nil, "", "", err
	}
	if err := f.plan.Validate(); err != nil {
		return nil, "", "", err
	}
	if isZenFS(b) {
		if err := zenfs.ValidateAuxPath(f.auxPath); err != nil {
			return nil, "", "", err
		}
	}
	if f.finishThreshold < 0 || f.finishThreshold > 100 {
		return nil, "", "", fmt.Errorf("--finish-threshold %d is not a percentage", f.finishThreshold)
	}
	token := getenv(tokenEnv)
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		switch {
		case errors.Is(err, os.ErrNotExist):
			token = "" // an absent optional file (e.g. an unset key) means no token
		case err != nil:
			return nil, "", "", fmt.Errorf("reading the reformat token: %w", err)
		default:
			token = strings.TrimSuffix(string(b), "\n")
		}
	}
	if err := fsformat.ValidateToken(token); err != nil {
		return nil, "", "", err
	}
	return b, policy, token, nil
}
