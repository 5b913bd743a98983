package stagerun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Runner is one run of a runner program: where it runs its commands and with what, where it writes, what it
// started (foreground commands, background jobs) and what it must undo. The program keeps its own state
// beside it (testrun's and demorun's runners embed it).
type Runner struct {
	Prefix         string // what begins the runner's own lines: "test", "demo"
	Root           string // the repository: the commands run there
	Env            *Env
	Stdin          *os.File
	Stdout, Stderr io.Writer // the terminal's
	Out            Outputs   // the runner's and its commands' outputs of the moment
	Procs          Procs
	Jobs           Jobs
	Cleanups       Cleanups
	Now            func() time.Time
	Ticker         func(time.Duration) (<-chan time.Time, func())
	LookPath       func(string) (string, error) // bash's command -v: exec.LookPath, or a test's
	ProgressEvery  time.Duration                // between two "still running" lines
	KillGrace      time.Duration                // how long a background job's process group has between TERM and KILL
	// InterruptNote is what the run says it does when SIGINT or SIGTERM stops it.
	InterruptNote string
}

// New is a Runner in the repository root, with environ (os.Environ's form) for its commands, writing to stdout
// and stderr, on the real clock, with progress lines every 30 s.
func New(prefix, root string, environ []string, stdin *os.File, stdout, stderr io.Writer) *Runner {
	r := &Runner{Prefix: prefix, Root: root, Env: NewEnv(environ), Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Now: time.Now, LookPath: exec.LookPath, ProgressEvery: 30 * time.Second, KillGrace: 5 * time.Second,
		InterruptNote: "killing the background jobs, then undoing what the run set up"}
	r.Ticker = func(d time.Duration) (<-chan time.Time, func()) {
		t := time.NewTicker(d)
		return t.C, t.Stop
	}
	r.Out.Set(stdout, stderr)
	return r
}

// Outputs are where the runner and the commands it starts write: the terminal's stdout and stderr, or for a
// while somewhere else (testrun's stages 6 to 8: the pipe into testsummary).
type Outputs struct {
	mu       sync.Mutex
	out, err io.Writer
}

// Get is stdout and stderr of the moment.
func (o *Outputs) Get() (io.Writer, io.Writer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out, o.err
}

// Set makes out and err the outputs from now on.
func (o *Outputs) Set(out, err io.Writer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.out, o.err = out, err
}

// Stderr is the stderr of the moment.
func (o *Outputs) Stderr() io.Writer { _, e := o.Get(); return e }

// Procs tracks the foreground commands by their process, so that an interrupt reaches them, and holds the run
// once it is interrupted: no command starts after that but the cleanups'.
type Procs struct {
	mu      sync.Mutex
	stopped bool
	running map[int]*os.Process
}

// Gate blocks for good once the run is interrupted: the signal handler cleans up and exits meanwhile.
func (p *Procs) Gate() {
	if p.Stopped() {
		select {}
	}
}

// Stopped: the run is being interrupted.
func (p *Procs) Stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// Running is how many foreground commands run now.
func (p *Procs) Running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.running)
}

// Stop holds every later command and sends sig to the running ones.
func (p *Procs) Stop(sig os.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for _, proc := range p.running {
		_ = proc.Signal(sig)
	}
}

// awaitExit waits until the foreground commands have ended, for at most grace, then kills those left and waits
// a little more: the cleanups after an interrupt must not remove what a command is still writing into.
func (p *Procs) awaitExit(grace time.Duration) {
	poll := func(d time.Duration) {
		for deadline := time.Now().Add(d); p.Running() > 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		}
	}
	poll(grace)
	p.mu.Lock()
	for _, proc := range p.running {
		_ = proc.Kill()
	}
	p.mu.Unlock()
	poll(time.Second)
}

// Cmd is a command as the runner starts it: in the repository, with the run's environment (and extra over it),
// the terminal's stdin, and the outputs of the moment. A relative name with a slash is the repository's.
func (r *Runner) Cmd(extra []string, name string, args ...string) *exec.Cmd {
	if strings.Contains(name, "/") && !filepath.IsAbs(name) {
		name = filepath.Join(r.Root, name)
	}
	c := exec.Command(name, args...)
	c.Dir = r.Root
	c.Env = r.Env.List(extra)
	if r.Stdin != nil {
		c.Stdin = r.Stdin
	}
	c.Stdout, c.Stderr = r.Out.Get()
	return c
}

// Run runs c in the foreground and returns its exit status as bash gives it: 128+N when signal N ended it,
// 127 when it could not start (its reason on stderr). A run being interrupted holds here. An interrupt
// sends its signal on to c.
func (r *Runner) Run(c *exec.Cmd) int {
	return r.run(c, false)
}

// RunCleanup is Run for a cleanup's command: it runs even when the run is being interrupted, and the runner
// does not pass the signal on to it.
func (r *Runner) RunCleanup(c *exec.Cmd) int {
	return r.run(c, true)
}

func (r *Runner) run(c *exec.Cmd, cleanup bool) int {
	r.Procs.mu.Lock()
	if r.Procs.stopped && !cleanup {
		r.Procs.mu.Unlock()
		select {}
	}
	err := c.Start()
	if err != nil {
		r.Procs.mu.Unlock()
		r.Logf("%s: %v", c.Args[0], err)
		return StartFailure(err)
	}
	if cleanup { // an interrupt lets it finish: it undoes what the run set up
		r.Procs.mu.Unlock()
		return ExitStatus(c.Wait())
	}
	pid := c.Process.Pid
	if r.Procs.running == nil {
		r.Procs.running = map[int]*os.Process{}
	}
	r.Procs.running[pid] = c.Process
	r.Procs.mu.Unlock()
	err = c.Wait()
	r.Procs.mu.Lock()
	delete(r.Procs.running, pid)
	r.Procs.mu.Unlock()
	return ExitStatus(err)
}

// Output is bash's $(cmd): c's stdout without its trailing newlines, and its status.
func (r *Runner) Output(c *exec.Cmd) (string, int) {
	var b bytes.Buffer
	c.Stdout = &b
	rc := r.Run(c)
	return TrimNewlines(b.String()), rc
}

// TrimNewlines is what bash's $(...) takes off its output.
func TrimNewlines(s string) string { return strings.TrimRight(s, "\n") }

// ExitStatus is the status bash reports for a command that ended with err.
func ExitStatus(err error) int {
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
	return StartFailure(err)
}

// StartFailure is bash's status for a command that did not start: 127 not found, 126 not executable.
func StartFailure(err error) int {
	if errors.Is(err, os.ErrPermission) {
		return 126
	}
	return 127
}

// Logf is hack/lib/tool-common.sh's log: "PREFIX: ..." on the stderr of the moment.
func (r *Runner) Logf(format string, a ...any) {
	fmt.Fprintf(r.Out.Stderr(), r.Prefix+": "+format+"\n", a...)
}

// DockerUsable: a docker command, and `docker info` succeeds.
func (r *Runner) DockerUsable() bool {
	if _, err := r.LookPath("docker"); err != nil {
		return false
	}
	c := r.Cmd(nil, "docker", "info")
	c.Stdout, c.Stderr = nil, nil
	return r.Run(c) == 0
}

// Executable is bash's [[ -x PATH ]].
func Executable(path string) bool { return syscall.Access(path, 1) == nil } // 1: X_OK

// BlockDevice is bash's [[ -b PATH ]].
func BlockDevice(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode()&os.ModeDevice != 0 && st.Mode()&os.ModeCharDevice == 0
}
