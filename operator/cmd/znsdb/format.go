package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
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
}

func formatCmd(ctx context.Context, args []string, d deps) int {
	var f formatFlags
	fs := flag.NewFlagSet("format", flag.ContinueOnError)
	f.register(fs)
	fs.StringVar(&f.auxPath, "aux-path", "", "ZenFS aux directory for LOCK and LOG files, one per device (required)")
	fs.StringVar(&f.policy, "policy", string(dbinit.PolicyIfNeeded), "format policy: IfNeeded or Never")
	fs.StringVar(&f.tokenFile, "reformat-token-file", "",
		"file holding the reformat token (default: the "+tokenEnv+" environment variable)")
	fs.IntVar(&f.finishThreshold, "finish-threshold", 10, "zenfs mkfs --finish_threshold, in percent")
	fs.StringVar(&f.zenfsBin, "zenfs", zenfs.DefaultBinary, "zenfs utility")
	if code, ok := parseFlags(fs, args, d); !ok {
		return code
	}
	return finish(format(ctx, f, d), f.terminationLog, d)
}

// format runs preflight, finds out what the device holds, applies the
// format policy and reports the resulting ZenFS space.
func format(ctx context.Context, f formatFlags, d deps) dbinit.Report {
	policy, token, err := f.settings(d.getenv)
	if err != nil {
		return dbinit.Report{Error: err.Error()}
	}
	r, zones := preflight(f.deviceFlags, d.devices)
	if zones == nil {
		return r
	}
	state, err := f.detect(ctx, zones, d)
	r.ZenFS = state
	if err != nil {
		r.Error = err.Error()
		return r
	}
	recorded, err := dbinit.ReadToken(f.auxPath)
	if err != nil {
		r.Error = fmt.Sprintf("reading the recorded reformat token: %v", err)
		return r
	}
	dec := dbinit.Decide(dbinit.DecisionInput{
		Policy: policy, RequestedToken: token, RecordedToken: recorded,
		HasZenFS: state.Present, Empty: zbd.IsEmpty(zones),
	})
	state.Action, state.Reason = dec.Action, dec.Reason
	switch dec.Action {
	case dbinit.ActionRefuse:
		return r
	case dbinit.ActionFormat:
		if err := f.mkfs(ctx, dec.Force, token, d); err != nil {
			r.Error = err.Error()
			return r
		}
		state.Present = true
		state.UUID, _ = f.lsUUID(ctx, d)
	}
	if err := f.df(ctx, state, d); err != nil {
		r.Error = err.Error()
	}
	return r
}

func (f formatFlags) settings(getenv func(string) string) (dbinit.Policy, string, error) {
	if f.device == "" || f.auxPath == "" {
		return "", "", errors.New("format needs --device and --aux-path")
	}
	policy, err := dbinit.ParsePolicy(f.policy)
	if err != nil {
		return "", "", err
	}
	if err := zenfs.ValidateAuxPath(f.auxPath); err != nil {
		return "", "", err
	}
	if f.finishThreshold < 0 || f.finishThreshold > 100 {
		return "", "", fmt.Errorf("--finish-threshold %d is not a percentage", f.finishThreshold)
	}
	token := getenv(tokenEnv)
	if f.tokenFile != "" {
		b, err := os.ReadFile(f.tokenFile)
		switch {
		case errors.Is(err, os.ErrNotExist):
			token = "" // an absent optional file (e.g. an unset key) means no token
		case err != nil:
			return "", "", fmt.Errorf("reading the reformat token: %w", err)
		default:
			token = strings.TrimSuffix(string(b), "\n")
		}
	}
	if err := dbinit.ValidateToken(token); err != nil {
		return "", "", err
	}
	return policy, token, nil
}

// detect looks for ZenFS twice: its superblock in the metadata zones, read
// directly, and zenfs ls-uuid. Either one finding it is enough, so a flaw in
// one never lets a file system be taken for free space. ls-uuid failing is
// not an error: the probe alone decides then.
func (f formatFlags) detect(ctx context.Context, zones []zbd.Zone, d deps) (*dbinit.ZenFSState, error) {
	state := &dbinit.ZenFSState{}
	dev, err := d.devices.Open(f.devPath())
	if err != nil {
		return state, fmt.Errorf("opening %s to look for ZenFS: %w", f.devPath(), err)
	}
	// Closed at once: zenfs mkfs opens the device exclusively.
	found, err := zenfs.ProbeSuperblock(dev, zenfs.MetaZones(zones))
	dev.Close()
	if err != nil {
		return state, fmt.Errorf("looking for a ZenFS superblock on %s: %w", f.devPath(), err)
	}
	uuid, listed := f.lsUUID(ctx, d)
	state.Present, state.UUID = found || listed, uuid
	return state, nil
}

func (f formatFlags) lsUUID(ctx context.Context, d deps) (string, bool) {
	out, _, err := d.runner.Run(ctx, f.zenfsBin, zenfs.LsUUIDArgs()...)
	if err != nil {
		return "", false
	}
	fss, err := zenfs.ParseLsUUID(out)
	if err != nil {
		return "", false
	}
	fs, ok := zenfs.FindDevice(fss, f.device)
	return fs.UUID, ok
}

// mkfs formats and then records the token: recorded only once the format
// succeeded, so a failed attempt is retried with the same token.
func (f formatFlags) mkfs(ctx context.Context, force bool, token string, d deps) error {
	args, err := zenfs.MkfsArgs(f.device, f.auxPath, f.finishThreshold, force)
	if err != nil {
		return err
	}
	if err := dbinit.PrepareAuxDir(f.auxPath); err != nil {
		return fmt.Errorf("preparing aux directory %s: %w", f.auxPath, err)
	}
	if _, stderr, err := d.runner.Run(ctx, f.zenfsBin, args...); err != nil {
		return commandError("zenfs mkfs", err, stderr)
	}
	if token == "" {
		return nil
	}
	if err := dbinit.WriteToken(f.auxPath, token); err != nil {
		return fmt.Errorf("formatted, but %w; the next start formats the new, empty file system again", err)
	}
	return nil
}

func (f formatFlags) df(ctx context.Context, state *dbinit.ZenFSState, d deps) error {
	args, err := zenfs.DfArgs(f.device)
	if err != nil {
		return err
	}
	out, stderr, err := d.runner.Run(ctx, f.zenfsBin, args...)
	if err != nil {
		return commandError("zenfs df", err, stderr)
	}
	df, err := zenfs.ParseDf(out)
	if err != nil {
		return err
	}
	state.FreeBytes, state.UsedBytes = &df.FreeBytes, &df.UsedBytes
	state.ReclaimableBytes, state.SpaceAmplificationPercent = &df.ReclaimableBytes, &df.SpaceAmplificationPercent
	return nil
}

func commandError(what string, err error, stderr string) error {
	if s := strings.TrimSpace(stderr); s != "" {
		return fmt.Errorf("%s failed (%v): %s", what, err, s)
	}
	return fmt.Errorf("%s failed: %v", what, err)
}
