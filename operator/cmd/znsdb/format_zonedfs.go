package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// formatZonedFS is format for a zoned btrfs or f2fs: the same preflight,
// busy check and policy as for ZenFS, with blkid to tell what the device
// holds and the ZenFS superblock reader to see the one file system blkid
// does not know. The applied reformat token is recorded in the file system's
// label (zonedfs.Label), so that no aux directory is needed and the kubelet
// can mount the device afterwards.
func formatZonedFS(ctx context.Context, f formatFlags, d deps) dbinit.Report {
	policy, token, err := f.settings(d.getenv)
	if err != nil {
		return dbinit.Report{Error: err.Error()}
	}
	want, _, _ := f.zonedFS()
	r, zones := preflight(f.deviceFlags, d.devices)
	if zones == nil {
		return r
	}
	state := &dbinit.FilesystemState{Type: string(want)}
	r.Filesystem = state
	// The ZenFS superblock read is also the busy check: it holds the device
	// exclusively, which fails while the device is mounted or open elsewhere.
	sb, err := f.superblock(zones, d)
	if errors.Is(err, zbd.ErrBusy) {
		r.Problems = append(r.Problems, zbd.BusyProblem(f.devPath(), err))
		return r
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	found, err := f.probe(ctx, d)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	state.Found, state.UUID, state.Label, state.HadZenFS = found.Type, found.UUID, found.Label, sb != nil
	dec := zonedfs.Decide(zonedfs.DecisionInput{
		Want: want, Policy: policy, Token: token, Found: found, HasZenFS: sb != nil, Empty: zbd.IsEmpty(zones),
	})
	state.Action, state.Reason = dec.Action, dec.Reason
	if dec.Action != dbinit.ActionFormat {
		return r
	}
	if dec.Force {
		// Confirmed by a new token. Resetting first also removes a ZenFS,
		// which mkfs would not see, and old zone contents that would
		// otherwise outlive the format in zones it does not touch.
		var ok bool
		if state.ZonesReset, ok = f.resetZonesInto(&r, zones, d); !ok {
			return r
		}
	}
	r.Error = f.makeFilesystem(ctx, want, token, dec.Force, state, d)
	return r
}

// makeFilesystem makes want on the device, labelled with the token, and checks with blkid that it is there with that
// label; it returns what went wrong, "" when nothing did, and records the new file system's UUID and label.
func (f formatFlags) makeFilesystem(ctx context.Context, want zonedfs.Filesystem, token string, force bool, state *dbinit.FilesystemState, d deps) string {
	cmd, err := zonedfs.MkfsCommand(want, f.devPath(), token, force)
	if err != nil {
		return err.Error()
	}
	if _, stderr, err := d.runner.Run(ctx, cmd[0], cmd[1:]...); err != nil {
		return fmt.Sprintf("%s failed: %v: %s", cmd[0], err, lastLines(stderr, 5))
	}
	made, err := f.probe(ctx, d)
	switch {
	case err != nil:
		return fmt.Sprintf("%s succeeded, but probing the result failed: %v", cmd[0], err)
	case made.Type != string(want) || made.Label != zonedfs.Label(token):
		return fmt.Sprintf("%s succeeded, but blkid finds %q labelled %q on %s, not %s labelled %q", cmd[0],
			made.Type, made.Label, f.devPath(), want, zonedfs.Label(token))
	}
	state.UUID, state.Label = made.UUID, made.Label
	return ""
}

// probe asks blkid what the device holds; no signature is not an error.
func (f formatFlags) probe(ctx context.Context, d deps) (zonedfs.Probe, error) {
	cmd := zonedfs.ProbeCommand(f.devPath())
	out, stderr, err := d.runner.Run(ctx, cmd[0], cmd[1:]...)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == zonedfs.BlkidNothingFound {
		return zonedfs.Probe{}, nil
	}
	if err != nil {
		return zonedfs.Probe{}, fmt.Errorf("blkid on %s failed: %v: %s", f.devPath(), err, lastLines(stderr, 3))
	}
	return zonedfs.ParseProbe(out)
}

// lastLines keeps the end of a tool's stderr for an error message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
