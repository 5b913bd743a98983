package main

import (
	"context"
	"fmt"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/logtail"
	"github.com/zns-mysql/zns-mysql/operator/internal/precondition"
)

// runPrecondition writes the whole device as plan says, one fio job per
// pass and per round, and records each one's figures. Progress goes to
// stderr as it happens (a long precondition is otherwise silent for hours);
// the state comes back complete, or with why it stopped and err set. It
// keeps nothing across runs: a precondition that did not finish is started
// over by the next format, never resumed.
func runPrecondition(ctx context.Context, plan precondition.Plan, devPath string, capacity int64, d deps) (dbinit.PreconditionState, error) {
	logf := func(format string, a ...any) { fmt.Fprintf(d.stderr, "znsdb: precondition: "+format+"\n", a...) }
	rec := precondition.Start(plan, capacity, d.clock())
	logf("writing all %d bytes of %s, DESTROYING its contents: %d sequential pass(es) of %d-byte writes, then up to "+
		"%d round(s) of %d s of random 4 KiB writes", capacity, devPath, plan.Passes, plan.BlockSize, plan.Rounds, plan.RoundSeconds)
	for i := 1; i <= plan.Passes; i++ {
		rep, err := runFio(ctx, plan.PassJob(devPath), d)
		var f dbinit.PassFigures
		if err == nil {
			f, err = rec.AddPass(rep)
		}
		if err != nil {
			return rec.Fail(d.clock(), fmt.Errorf("pass %d of %d: %w", i, plan.Passes, err)), err
		}
		logf("pass %d/%d done: %d bytes in %.1f s (%.1f MB/s)", i, plan.Passes, f.Bytes, f.Seconds, f.MBps)
	}
	for i := 1; i <= plan.Rounds; i++ {
		rep, err := runFio(ctx, plan.RoundJob(devPath), d)
		var (
			f    dbinit.RoundFigures
			done bool
		)
		if err == nil {
			f, done, err = rec.AddRound(rep)
		}
		if err != nil {
			return rec.Fail(d.clock(), fmt.Errorf("round %d of %d: %w", i, plan.Rounds, err)), err
		}
		logf("round %d/%d done: %.1f write IOPS, %d bytes in %.1f s", i, plan.Rounds, f.WriteIOPS, f.Bytes, f.Seconds)
		if done {
			break
		}
	}
	s := rec.Finish(d.clock())
	logf("complete: %s", precondition.Summary(s))
	return s, nil
}

// runFio runs one job and parses its JSON report.
func runFio(ctx context.Context, job fio.Job, d deps) (*fio.Report, error) {
	cmd, err := job.Command()
	if err != nil {
		return nil, err
	}
	out, stderr, err := d.runner.Run(ctx, cmd[0], cmd[1:]...)
	if err != nil {
		return nil, fmt.Errorf("fio %s: %v: %s", job.Name, err, logtail.Last(stderr, 3))
	}
	rep, err := fio.Parse([]byte(out))
	if err != nil {
		return nil, fmt.Errorf("fio %s: %w", job.Name, err)
	}
	return rep, nil
}
