package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// cleanups is what the run set up and must undo (its kind cluster, the loop device and its file, the zoned
// node), as Go funcs: each runs once, the last added first, when the run ends (success or failure) or is
// interrupted, or earlier when a stage is done with what it undoes (the cluster after stage 7).
type cleanups struct {
	mu   sync.Mutex
	list []*cleanupFunc
}

type cleanupFunc struct {
	name string
	once sync.Once
	fn   func()
}

// add registers fn, named for the reader of the code, and returns it for an earlier run (runOne).
func (cs *cleanups) add(name string, fn func()) *cleanupFunc {
	c := &cleanupFunc{name: name, fn: fn}
	cs.mu.Lock()
	cs.list = append(cs.list, c)
	cs.mu.Unlock()
	return c
}

// runOne runs c now, unless it already ran (or runs: then it waits for it).
func (c *cleanupFunc) runOne() { c.once.Do(c.fn) }

// runAll runs every cleanup that has not run, the last added first.
func (cs *cleanups) runAll() {
	cs.mu.Lock()
	list := append([]*cleanupFunc(nil), cs.list...)
	cs.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		list[i].runOne()
	}
}

// finish is the end of every run, as bash's EXIT trap was: the background jobs still running are killed with
// their process groups, then the cleanups run.
func (r *runner) finish() {
	r.jobs.killAll(r.killGrace)
	r.cleanups.runAll()
}

// interrupt is the run's answer to SIGINT or SIGTERM: no stage goes on, the foreground commands get the
// signal, the background jobs are killed, the cleanups run (on the terminal: the pipe into testsummary may
// be gone), and the exit status is bash's for a run the signal ended.
func (r *runner) interrupt(sig syscall.Signal) int {
	r.procs.stop(sig)
	r.out.set(r.stdout, r.stderr)
	r.logf("%v: killing the background jobs, then undoing what the run set up", sig)
	r.finish()
	return 128 + int(sig)
}

// handleSignals runs interrupt on the first SIGINT or SIGTERM, then exits.
func (r *runner) handleSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := (<-ch).(syscall.Signal)
		os.Exit(r.interrupt(sig))
	}()
}
