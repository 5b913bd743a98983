package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// environ is the environment of the commands a run starts: the runner's own at the start, with what the
// stages export and unset (bash's export and unset), in one place instead of the process's.
type environ struct {
	mu sync.Mutex
	m  map[string]string
}

func newEnviron(list []string) *environ {
	e := &environ{m: map[string]string{}}
	for _, kv := range list {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e.m[k] = v
		}
	}
	return e
}

func (e *environ) Get(k string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m[k]
}

func (e *environ) Set(kv ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := 0; i+1 < len(kv); i += 2 {
		e.m[kv[i]] = kv[i+1]
	}
}

func (e *environ) Unset(ks ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range ks {
		delete(e.m, k)
	}
}

// List is the environment as exec takes it, with extra (NAME=VALUE, as bash's `NAME=VALUE cmd`) over it and
// the names in unset left out.
func (e *environ) List(extra []string, unset ...string) []string {
	e.mu.Lock()
	m := make(map[string]string, len(e.m)+len(extra))
	for k, v := range e.m {
		m[k] = v
	}
	e.mu.Unlock()
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for _, k := range unset {
		delete(m, k)
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// outputs are where the runner and the commands it starts write: the terminal's stdout and stderr, or during
// stages 6 to 8 the pipe into testsummary (bash's `{ ... } 2>&1 | tee | testsummary`).
type outputs struct {
	mu       sync.Mutex
	out, err io.Writer
}

func (o *outputs) get() (io.Writer, io.Writer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out, o.err
}

func (o *outputs) set(out, err io.Writer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.out, o.err = out, err
}

func (o *outputs) stderr() io.Writer { _, e := o.get(); return e }

// procs tracks the foreground commands by their process, so that an interrupt reaches them, and holds the run
// once it is interrupted: no command starts after that but the cleanups'.
type procs struct {
	mu      sync.Mutex
	stopped bool
	running map[int]*os.Process
}

// gate blocks for good once the run is interrupted: the signal handler cleans up and exits meanwhile.
func (p *procs) gate() {
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	if stopped {
		select {}
	}
}

// stop holds every later command and sends sig to the running ones.
func (p *procs) stop(sig os.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for _, proc := range p.running {
		_ = proc.Signal(sig)
	}
}

// cmd is a command as the runner starts it: in the repository, with the run's environment (and extra over it),
// the terminal's stdin, and the outputs of the moment. A relative name with a slash is the repository's.
func (r *runner) cmd(extra []string, name string, args ...string) *exec.Cmd {
	if strings.Contains(name, "/") && !filepath.IsAbs(name) {
		name = filepath.Join(r.root, name)
	}
	c := exec.Command(name, args...)
	c.Dir = r.root
	c.Env = r.env.List(extra)
	if r.stdin != nil {
		c.Stdin = r.stdin
	}
	c.Stdout, c.Stderr = r.out.get()
	return c
}

// run runs c in the foreground and returns its exit status as bash gives it: 128+N when signal N ended it,
// 127 when it could not start (its reason on stderr). A run being interrupted holds here. An interrupt
// sends its signal on to c.
func (r *runner) run(c *exec.Cmd) int {
	return r.runAs(c, false)
}

// runAs with cleanup is run for a cleanup's command: it runs even when the run is being interrupted, and the
// runner does not pass the signal on to it.
func (r *runner) runAs(c *exec.Cmd, cleanup bool) int {
	r.procs.mu.Lock()
	if r.procs.stopped && !cleanup {
		r.procs.mu.Unlock()
		select {}
	}
	err := c.Start()
	if err != nil {
		r.procs.mu.Unlock()
		r.logf("%s: %v", c.Args[0], err)
		return startFailure(err)
	}
	if cleanup { // an interrupt lets it finish: it undoes what the run set up
		r.procs.mu.Unlock()
		return exitStatus(c.Wait())
	}
	pid := c.Process.Pid
	if r.procs.running == nil {
		r.procs.running = map[int]*os.Process{}
	}
	r.procs.running[pid] = c.Process
	r.procs.mu.Unlock()
	err = c.Wait()
	r.procs.mu.Lock()
	delete(r.procs.running, pid)
	r.procs.mu.Unlock()
	return exitStatus(err)
}

// output is bash's $(cmd): c's stdout without its trailing newlines, and its status.
func (r *runner) output(c *exec.Cmd) (string, int) {
	var b bytes.Buffer
	c.Stdout = &b
	rc := r.run(c)
	return trimNewlines(b.String()), rc
}

// trimNewlines is what bash's $(...) takes off its output.
func trimNewlines(s string) string { return strings.TrimRight(s, "\n") }

// exitStatus is the status bash reports for a command that ended with err.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return startFailure(err)
}

// startFailure is bash's status for a command that did not start: 127 not found, 126 not executable.
func startFailure(err error) int {
	if errors.Is(err, os.ErrPermission) {
		return 126
	}
	return 127
}

// logf is hack/lib/tool-common.sh's log: "test: ..." on the stderr of the moment.
func (r *runner) logf(format string, a ...any) {
	fmt.Fprintf(r.out.stderr(), "test: "+format+"\n", a...)
}
