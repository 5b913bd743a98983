package main

import (
	"context"
	"fmt"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
)

// driveWait bounds how long the format waits for the drive sidecar's first readings: they take a few log pages,
// so a long wait means the sidecar is broken, and the format matters more than the drive's figures of it.
const driveWait = 2 * time.Minute

// awaitDrive holds the format's first write until the drive sidecar has read the counters; without it the
// format goes on, and the sidecar's report says its figures are missing.
func awaitDrive(ctx context.Context, dir string, d deps) {
	sleep := func(ctx context.Context, t time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(t):
			return nil
		}
	}
	ready, err := drivereport.AwaitGate(ctx, dir, driveWait, time.Second, sleep)
	switch {
	case err != nil:
		fmt.Fprintf(d.stderr, "znsdb format: drive sidecar: %v; formatting without it\n", err)
	case !ready:
		fmt.Fprintf(d.stderr, "znsdb format: the drive sidecar was not ready after %s; formatting without it\n", driveWait)
	}
}
