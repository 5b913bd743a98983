package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/podannotate"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// spaceFlags make the readiness probe also refresh the ZenFS space, at most
// once per interval: the probe runs every few seconds, zenfs df reads the
// whole metadata log, so most probes only look at the state file's time.
type spaceFlags struct {
	device    string
	zenfsBin  string
	stateFile string
	interval  time.Duration
	timeout   time.Duration
}

// spaceState is what the state file keeps between probes.
type spaceState struct {
	// AttemptAt is when a probe last started zenfs df. It is written before
	// df runs, so a probe that overlaps a slow one does not start another.
	AttemptAt time.Time `json:"attemptAt"`
}

// refreshSpace runs zenfs df when the last attempt is older than the
// interval, and publishes the result (or df's failure) on the pod. It
// reports whether df ran.
func refreshSpace(ctx context.Context, f spaceFlags, d deps) (bool, error) {
	args, err := zenfs.DfArgs(f.device)
	if err != nil {
		return false, err
	}
	now := d.clock()
	var st spaceState
	if b, err := os.ReadFile(f.stateFile); err == nil {
		// A state that does not parse is treated as none: df runs.
		_ = json.Unmarshal(b, &st)
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	// A time in the future (the clock went back) does not hold df off.
	if !st.AttemptAt.IsZero() && !now.Before(st.AttemptAt) && now.Sub(st.AttemptAt) < f.interval {
		return false, nil
	}
	if err := writeState(f.stateFile, spaceState{AttemptAt: now}); err != nil {
		return false, err
	}

	dfCtx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	space := dbinit.Space{At: now}
	out, stderr, runErr := d.zenfsRunner().Run(dfCtx, f.zenfsBin, args...)
	if runErr == nil {
		df, perr := zenfs.ParseDf(out)
		if perr != nil {
			space.Error = perr.Error()
		} else {
			space.FreeBytes, space.UsedBytes = df.FreeBytes, df.UsedBytes
			space.ReclaimableBytes, space.SpaceAmplificationPercent = df.ReclaimableBytes, df.SpaceAmplificationPercent
		}
	} else {
		failure := zenfs.Classify(f.device, stderr, runErr)
		if dfCtx.Err() != nil {
			// The helper killed it: not the OOM killer the SIGKILL would suggest.
			failure.Reason, failure.Message = zenfs.ReasonTimedOut, fmt.Sprintf("zenfs df did not finish within %s", f.timeout)
		}
		space.Error, space.ErrorReason = "zenfs df failed: "+failure.Message, string(failure.Reason)
	}
	value, err := space.Encode()
	if err != nil {
		return true, err
	}
	if err := d.annotator().Annotate(ctx, v1alpha1.AnnotationZenFSSpace, value); err != nil {
		return true, fmt.Errorf("publishing the ZenFS space: %w", err)
	}
	if space.Error != "" {
		return true, errors.New(space.Error)
	}
	return true, nil
}

// writeState replaces the state file in one rename.
func writeState(path string, st spaceState) error { return writeJSON(path, st) }

// Annotator sets an annotation on the pod the helper runs in.
type Annotator interface {
	Annotate(ctx context.Context, key, value string) error
}

// inClusterAnnotator builds the API client on first use, so a helper run
// outside a pod fails only when it has something to publish.
type inClusterAnnotator struct{ getenv func(string) string }

func (a inClusterAnnotator) Annotate(ctx context.Context, key, value string) error {
	c, err := podannotate.InCluster(a.getenv, podannotate.ServiceAccountDir)
	if err != nil {
		return err
	}
	return c.Annotate(ctx, key, value)
}
