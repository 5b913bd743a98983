package zonedmetrics

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// RunZones keeps the zone figures (znsdb_zones, znsdb_zone_capacity_bytes)
// fresh until ctx ends: a report now, then at most one per interval, never
// two at once (they run in this goroutine, one after the other).
//
// report reads the whole zone report of the device (zbd.ReportZones on
// /dev/<device>). If it fails before any success because the device node
// cannot be opened read-only (it is absent: a pod of a btrfs or f2fs
// database sees only sysfs; or not readable), the zone-report figures are
// off: RunZones logs it once and returns, and no zone-report metric is
// served. Any later failure keeps the last figures and counts an error.
func (c *Collector) RunZones(ctx context.Context, interval time.Duration, report func(context.Context) ([]zbd.Zone, error)) {
	c.enable(SourceZones)
	c.loop(ctx, interval, func(ctx context.Context) bool {
		start, at := time.Now(), c.now()
		zones, err := report(ctx)
		took := time.Since(start)
		if err != nil && !c.everSucceeded(SourceZones) && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)) {
			c.disable(SourceZones)
			c.logf("zones: the device node cannot be opened read-only, so no zone report is read "+
				"(zone states and capacity are left out of /metrics): %v", err)
			return true
		}
		var counts ZoneCounts
		if err == nil {
			counts = CountZones(zones)
		}
		c.record(ctx, SourceZones, at, took, err, func() { c.zones = &counts })
		return false
	})
}

// RunZenFS keeps the ZenFS space figures (znsdb_zenfs_*) fresh until ctx
// ends: df now, then at most once per interval, never two at once. Each run
// gets a context that ends after timeout; a run that overruns it counts as a
// failure. df runs `zenfs df` and parses what it prints.
func (c *Collector) RunZenFS(ctx context.Context, interval, timeout time.Duration, df func(context.Context) (zenfs.Df, error)) {
	c.enable(SourceZenFS)
	c.loop(ctx, interval, func(ctx context.Context) bool {
		start, at := time.Now(), c.now()
		dfCtx, cancel := context.WithTimeout(ctx, timeout)
		space, err := df(dfCtx)
		took := time.Since(start)
		if err != nil && errors.Is(dfCtx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("zenfs df did not finish within %s: %w", timeout, err)
		}
		cancel()
		c.record(ctx, SourceZenFS, at, took, err, func() { c.df = &space })
		return false
	})
}

// loop calls attempt now, then again no sooner than interval after the
// previous attempt started, until ctx ends or attempt says stop. An attempt
// that takes longer than interval is followed by the next one at once:
// starts stay at least interval apart, and attempts never overlap.
func (c *Collector) loop(ctx context.Context, interval time.Duration, attempt func(context.Context) (stop bool)) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		// select picks at random when both are ready: never start a run
		// once ctx has ended.
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		if attempt(ctx) {
			return
		}
		timer.Reset(max(0, interval-time.Since(start)))
	}
}

func (c *Collector) enable(src Source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state[index(src)].enabled = true
}

func (c *Collector) disable(src Source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state[index(src)] = sourceState{}
}

func (c *Collector) everSucceeded(src Source) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.state[index(src)].lastSuccess.IsZero()
}

// record keeps the result of one attempt that started at at: apply stores
// the new figures (under the lock) when err is nil; on a failure the last
// figures stay, the error counter rises, and one line is logged. A failure
// caused by ctx ending (shutdown) is not a failure of the source.
func (c *Collector) record(ctx context.Context, src Source, at time.Time, took time.Duration, err error, apply func()) {
	if err != nil && ctx.Err() != nil {
		return
	}
	c.mu.Lock()
	s := &c.state[index(src)]
	s.attempted, s.lastTook = true, took
	var recovered int
	var kept time.Time
	if err == nil {
		apply()
		s.lastSuccess = at
		recovered, s.failing = s.failing, 0
	} else {
		s.errors++
		s.failing++
		kept = s.lastSuccess
	}
	c.mu.Unlock()

	switch {
	case err != nil && kept.IsZero():
		c.logf("%s: refresh failed after %s (no figures yet): %v", src, took.Round(time.Microsecond), err)
	case err != nil:
		c.logf("%s: refresh failed after %s (still serving the figures of %s): %v",
			src, took.Round(time.Microsecond), kept.UTC().Format(time.RFC3339), err)
	case recovered > 0:
		c.logf("%s: refreshed again after %d failed attempts", src, recovered)
	}
}

func index(src Source) int {
	for i, s := range sources {
		if s == src {
			return i
		}
	}
	panic("zonedmetrics: unknown source " + string(src))
}
