package main

import (
	"context"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
)

// driveWait bounds how long a phase waits for its drive sidecar: the sidecar starts before the runner and
// only reads a few log pages and opens a trace before it is ready, so a long wait means it is broken, and the
// phase's own figures matter more than the drive's.
const driveWait = 2 * time.Minute

// awaitDrive holds the phase until the drive sidecar has taken its first readings; without it the phase goes
// on, and the sidecar's report says the figures are missing.
func awaitDrive(ctx context.Context, dir string, sleep func(context.Context, time.Duration) error, logf func(string, ...any)) {
	start := time.Now()
	ready, err := drivereport.AwaitGate(ctx, dir, driveWait, time.Second, sleep)
	switch {
	case err != nil:
		logf("drive sidecar: %v; the phase starts without it", err)
	case !ready:
		logf("drive sidecar not ready after %s; the phase starts without it (its report will have no figures)", driveWait)
	default:
		logf("drive sidecar ready after %.1fs", time.Since(start).Seconds())
	}
}
