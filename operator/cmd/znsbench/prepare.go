package main

import (
	"context"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
)

// prepareAttempts bounds the prepares tried when sysbench could not reach the server. On a node under QEMU's
// emulation a server that had just answered the runner's own connection refused sysbench's a moment later
// (error 2002 (115): the connect timed out; zoned end to end, 2026-11-27), and that failed a whole Benchmark.
const prepareAttempts = 3

// prepareRetryPause is the pause before the second attempt; the third waits twice as long.
const prepareRetryPause = 5 * time.Second

// prepareFresh drops what an earlier prepare left, creates the database and prepares. A prepare whose
// sysbench could not connect is tried again from the drop: only a failure to connect, which is about the
// server's reachability and not the data, and only with --drop-existing, so that no attempt meets the tables
// of the one before it.
func (r *runner) prepareFresh(ctx context.Context) error {
	c := r.cfg
	// The device's figures are the last attempt's, as each attempt's first sample replaces the one before. The
	// measurement ends here, not in sysbench, while another attempt may follow: an observer exits at its /end.
	defer func() {
		r.holdDevice = false
		r.endDevice(ctx)
	}()
	for attempt := 1; ; attempt++ {
		var err error
		if c.dropExisting {
			err = r.dropSysbenchTables(ctx)
		}
		if err == nil && c.createDatabase {
			err = r.ensureDatabase(ctx)
		}
		if err != nil {
			return err
		}
		r.holdDevice = c.dropExisting && attempt < prepareAttempts
		err = r.sysbench(ctx)
		if err == nil || !c.dropExisting || attempt == prepareAttempts || ctx.Err() != nil {
			return err
		}
		reason, cause := failreason.Classify(failreason.Failure{Text: err.Error()})
		if reason != failreason.ConnectionFailed {
			return err
		}
		pause := prepareRetryPause * time.Duration(attempt)
		r.logf("prepare attempt %d of %d: sysbench could not connect (%s); dropping what it made and trying again in %s",
			attempt, prepareAttempts, cause, pause)
		if serr := r.sleep(ctx, pause); serr != nil {
			return err
		}
		r.tail = newLineRing(max(c.tailLines, 1))
		r.sum.PrepareAttempts = attempt + 1
	}
}
