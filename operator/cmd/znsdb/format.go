package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/precondition"
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
	fs.StringVar(&f.policy, "policy", string(dbinit.PolicyIfNeeded), "format policy: IfNeeded or Never")
	fs.StringVar(&f.tokenFile, "reformat-token-file", "",
		"file holding the reformat token (default: the "+tokenEnv+" environment variable)")
	fs.IntVar(&f.finishThreshold, "finish-threshold", 10, "zenfs mkfs --finish_threshold, in percent")
	fs.StringVar(&f.zenfsBin, "zenfs", zenfs.DefaultBinary, "zenfs utility")
	f.plan.RegisterFlags(fs)
	fs.StringVar(&f.driveDir, "drive-dir", "", "directory shared with the drive sidecar: wait (bounded) until it has read the drive's counters before writing")
	if code, ok := parseFlags(fs, args, d); !ok {
		return code
	}
	if _, conventional := f.conventionalFS(); conventional {
		return finish(formatConventional(ctx, f, d), f.terminationLog, d)
	}
	if f.plan.Enabled {
		// Only a conventional device has an FTL to precondition, and only it takes writes anywhere.
		return finish(dbinit.Report{Error: "--precondition is for a conventional device (--filesystem ext4 or xfs): " +
			"a zoned device has no FTL to precondition"}, f.terminationLog, d)
	}
	if _, zoned, _ := f.zonedFS(); zoned {
		return finish(formatZonedFS(ctx, f, d), f.terminationLog, d)
	}
	return finish(format(ctx, f, d), f.terminationLog, d)
}

// format runs preflight, finds out what the device holds, applies the
// format policy and reports the resulting ZenFS space. Nothing on the device
// or in the aux directory changes before the device is known to be free
// (opened exclusively) and the policy allows it; a failed mkfs leaves the aux
// directory as it was.
func format(ctx context.Context, f formatFlags, d deps) dbinit.Report {
	policy, token, err := f.settings(d.getenv)
	if err != nil {
		return dbinit.Report{Error: err.Error()}
	}
	r, zones := preflight(f.deviceFlags, d.devices)
	if zones == nil {
		return r
	}
	if note, err := dbinit.RecoverAux(f.auxPath); err != nil {
		r.Error = fmt.Sprintf("checking the aux directory %s: %v", f.auxPath, err)
		return r
	} else if note != "" {
		fmt.Fprintf(d.stderr, "znsdb: %s\n", note)
	}
	state, meta, busy, err := f.detect(ctx, zones, d)
	r.ZenFS = state
	switch {
	case busy != nil:
		r.Problems = append(r.Problems, *busy)
		return r
	case err != nil:
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
		HasZenFS: state.Present, Empty: zbd.IsEmpty(zones), ForeignMeta: meta.Unsafe(),
	})
	state.Action, state.Reason = dec.Action, dec.Reason
	switch dec.Action {
	case dbinit.ActionRefuse:
		if meta.Unsafe() {
			state.Reason += "; " + foreignNote(meta, f.device)
		}
		return r
	case dbinit.ActionFormat:
		if dec.Force {
			// Confirmed by a new token: the old bytes go now, so that data
			// zenfs cannot parse (it aborts on some) does not stop mkfs.
			var ok bool
			if state.ZonesReset, ok = f.resetZonesInto(&r, zones, d); !ok {
				return r
			}
		}
		if err := f.mkfs(ctx, dec.Force, token, d); err != nil {
			setError(&r, err)
			return r
		}
		state.Present = true
		state.UUID = f.uuid(ctx, d)
	}
	if err := f.df(ctx, state, d); err != nil {
		setError(&r, err)
	}
	return r
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

func (f formatFlags) settings(getenv func(string) string) (dbinit.Policy, string, error) {
	_, zoned, err := f.zonedFS()
	if err != nil {
		return "", "", err
	}
	_, conventional := f.conventionalFS()
	zenFS := !zoned && !conventional
	if f.device == "" || (zenFS && f.auxPath == "") {
		return "", "", errors.New("format needs --device and --aux-path (--aux-path only for zenfs)")
	}
	policy, err := dbinit.ParsePolicy(f.policy)
	if err != nil {
		return "", "", err
	}
	if err := f.plan.Validate(); err != nil {
		return "", "", err
	}
	if zenFS {
		if err := zenfs.ValidateAuxPath(f.auxPath); err != nil {
			return "", "", err
		}
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
