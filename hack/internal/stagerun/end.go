package stagerun

import (
	"bytes"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

// Cleanups are what the run set up and must undo (a kind cluster, a loop device, the zoned node), as Go funcs:
// each runs once, the last added first, when the run ends (success or failure) or is interrupted, or earlier
// when a stage is done with what it undoes.
type Cleanups struct {
	mu   sync.Mutex
	list []*CleanupFunc
}

// CleanupFunc is one cleanup.
type CleanupFunc struct {
	name string
	once sync.Once
	fn   func()
}

// Add registers fn, named for the reader of the code, and returns it for an earlier run (RunOne).
func (cs *Cleanups) Add(name string, fn func()) *CleanupFunc {
	c := &CleanupFunc{name: name, fn: fn}
	cs.mu.Lock()
	cs.list = append(cs.list, c)
	cs.mu.Unlock()
	return c
}

// RunOne runs c now, unless it already ran (or runs: then it waits for it).
func (c *CleanupFunc) RunOne() { c.once.Do(c.fn) }

// RunAll runs every cleanup that has not run, the last added first.
func (cs *Cleanups) RunAll() {
	cs.mu.Lock()
	list := append([]*CleanupFunc(nil), cs.list...)
	cs.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		list[i].RunOne()
	}
}

// Finish is the end of every run, as bash's EXIT trap was: the background jobs still running are killed with
// their process groups, then the cleanups run.
func (r *Runner) Finish() {
	r.Jobs.killAll(r.KillGrace)
	r.Cleanups.RunAll()
}

// Interrupt is the run's answer to SIGINT or SIGTERM: nothing more starts, the foreground commands get the
// signal and end (killed after KillGrace), the background jobs are killed, the cleanups run (on the terminal:
// where the outputs went for a while may be gone), and the exit status is bash's for a run the signal ended.
func (r *Runner) Interrupt(sig syscall.Signal) int {
	r.Procs.Stop(sig)
	r.Out.Set(r.Stdout, r.Stderr)
	r.Logf("%v: %s", sig, r.InterruptNote)
	r.Procs.awaitExit(r.KillGrace)
	r.Finish()
	return 128 + int(sig)
}

// HandleSignals runs Interrupt on the first SIGINT or SIGTERM, then exits.
func (r *Runner) HandleSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := (<-ch).(syscall.Signal)
		os.Exit(r.Interrupt(sig))
	}()
}

// EvalExports is bash's `eval "$(SCRIPT ARGS...)"` for a script that prints export lines (hack/qemu/zoned-node.sh
// env): what it exports, evaluated by bash as before, as NAME=VALUE, and the script's status (nothing is
// exported when it failed).
func (r *Runner) EvalExports(script string, args ...string) ([]string, int) {
	var out bytes.Buffer
	c := r.Cmd(nil, "bash", append([]string{"-c", `exports=$("$@") || exit; eval "$exports"; env -0`, "bash", script}, args...)...)
	c.Stdout = &out
	rc := r.Run(c)
	if rc != 0 {
		return nil, rc
	}
	return EnvChanges(c.Env, out.String()), 0
}

// EnvChanges is what an eval changed: the NAME=VALUE of env -0's output (after) that base does not have, but
// what bash sets of itself.
func EnvChanges(base []string, after string) []string {
	had := map[string]bool{}
	for _, kv := range base {
		had[kv] = true
	}
	var out []string
	for _, kv := range strings.Split(after, "\x00") {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || had[kv] || strings.HasPrefix(k, "BASH_FUNC_") {
			continue
		}
		switch k {
		case "SHLVL", "_", "PWD", "OLDPWD":
			continue
		}
		out = append(out, kv)
	}
	return out
}
