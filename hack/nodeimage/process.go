package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// The builder runs its commands in one of two ways. Foreground commands stay in the builder's process group, so
// that a signal to the group (a terminal's ^C, hack/testrun stopping its job) reaches them as it reaches the
// builder, and the Runner passes a signal sent to the builder alone on to them. The background builds (the
// rootfs's commands, hack/kubernetes.sh) run in process groups of their own, recorded by their ids: stopping
// one stops what it started too (debootstrap's dpkg, the go builds of hack/kubernetes.sh).

// groups are the process groups of the background builds that still run.
type groups struct {
	mu       sync.Mutex
	stopping bool
	live     map[int]*group
}

// group is one command in a process group of its own; its id is the command's pid.
type group struct {
	name string
	pid  int
	root bool          // under sudo: its members are root's, which only root may signal
	done chan struct{} // closed once it ended and was reaped
	err  error
}

// startGroup starts c in a process group of its own and records it; asRoot says it runs under sudo. Once the
// build is being stopped nothing starts: the caller blocks until the process exits (the signal's handler, or
// main's failure, ends it).
func (b *builder) startGroup(name string, c *exec.Cmd, asRoot bool) (*group, error) {
	b.groups.mu.Lock()
	if b.groups.stopping {
		b.groups.mu.Unlock()
		select {}
	}
	defer b.groups.mu.Unlock()
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("%s: %v", c.Args[0], err)
	}
	g := &group{name: name, pid: c.Process.Pid, root: asRoot && len(b.sudo) > 0, done: make(chan struct{})}
	if b.groups.live == nil {
		b.groups.live = map[int]*group{}
	}
	b.groups.live[g.pid] = g
	go func() {
		err := c.Wait()
		if err != nil {
			err = fmt.Errorf("%s: exit status %d", name, stagerun.ExitStatus(err))
		}
		g.err = err
		b.groups.mu.Lock()
		delete(b.groups.live, g.pid)
		b.groups.mu.Unlock()
		close(g.done)
	}()
	return g, nil
}

// wait is the group leader's end: nil when it succeeded. It never loses an end that came before the wait (the
// bash builder's `wait PID` did, and waited 25 minutes on a rootfs that was complete).
func (g *group) wait() error {
	<-g.done
	return g.err
}

// runGroup runs c in a process group of its own until it ends.
func (b *builder) runGroup(name string, c *exec.Cmd, asRoot bool) error {
	g, err := b.startGroup(name, c, asRoot)
	if err != nil {
		return err
	}
	return g.wait()
}

func (gs *groups) isStopping() bool {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.stopping
}

// stopGroups ends every background build with its process group: TERM, then KILL after the grace time. Nothing
// starts in a group of its own after it.
func (b *builder) stopGroups() {
	b.groups.mu.Lock()
	b.groups.stopping = true
	live := make([]*group, 0, len(b.groups.live))
	for _, g := range b.groups.live {
		live = append(live, g)
	}
	b.groups.mu.Unlock()
	for _, g := range live {
		b.killGroup(g, syscall.SIGTERM)
	}
	deadline := time.After(b.KillGrace)
	for _, g := range live {
		select {
		case <-g.done:
		case <-deadline:
		}
		// what of its group ignored TERM, or outlived its leader
		b.killGroup(g, syscall.SIGKILL)
	}
}

func (b *builder) killGroup(g *group, sig syscall.Signal) {
	if !g.root {
		_ = syscall.Kill(-g.pid, sig)
		return
	}
	c := b.Cmd(nil, b.sudo[0], append(b.sudo[1:], "kill", "-"+strconv.Itoa(int(sig)), "--", "-"+strconv.Itoa(g.pid))...)
	c.Stdout, c.Stderr = nil, nil
	b.RunCleanup(c)
}

// asRoot is a command run as root: under sudo unless the builder is root.
func (b *builder) asRoot(name string, args ...string) *exec.Cmd {
	if len(b.sudo) == 0 {
		return b.Cmd(nil, name, args...)
	}
	return b.Cmd(nil, b.sudo[0], append(append(b.sudo[1:len(b.sudo):len(b.sudo)], name), args...)...)
}

// chooseSudo: nothing when root, else sudo -n, which must work without a password.
func (b *builder) chooseSudo() error {
	if b.euid == 0 {
		b.sudo = nil
		return nil
	}
	if _, err := b.LookPath("sudo"); err == nil {
		c := b.Cmd(nil, "sudo", "-n", "true")
		c.Stdout, c.Stderr = nil, nil
		if b.Run(c) == 0 {
			b.sudo = []string{"sudo", "-n"}
			return nil
		}
	}
	return errors.New("not root and no passwordless sudo: debootstrap and the node rootfs need root")
}

// handleSignals: the first SIGINT or SIGTERM stops the foreground commands and the background groups, undoes
// what the build made (cleanups), and exits with bash's status for it.
func (b *builder) handleSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := (<-ch).(syscall.Signal)
		os.Exit(b.Interrupt(sig))
	}()
}

// lockCache takes the cache's lock, waiting (with progress lines) while another run holds it: a build, or the
// background save of one. The lock is the open file's: it holds until the last process that has the file open
// (the background save inherits it) closes it.
func (b *builder) lockCache() error {
	path := filepath.Join(b.kindDir, ".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("cannot open %s: %v", path, err)
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		b.Logf("another run holds %s; waiting", path)
		b.Heartbeat("waiting for the cache's lock", "another build, or the save of one", "", func() int {
			for syscall.Flock(int(f.Fd()), syscall.LOCK_EX) == syscall.EINTR {
			}
			return 0
		})
	}
	b.lock = f
	return nil
}

// tryLockCache takes the cache's lock if no one holds it.
func (b *builder) tryLockCache() bool {
	f, err := os.OpenFile(filepath.Join(b.kindDir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return false
	}
	b.lock = f
	return true
}

// unlockCache closes the builder's own descriptor of the lock: a save started meanwhile still holds it.
func (b *builder) unlockCache() {
	if b.lock != nil {
		b.lock.Close()
		b.lock = nil
	}
}

// closeInheritedFiles marks the descriptors the builder inherited beyond stdin, stdout and stderr close-on-exec.
// The background save outlives the builder: a descriptor it inherited by accident (hack/kind/cluster.sh's fd 3,
// its own stdout, which its caller reads to the end) would keep that caller waiting for the save, as the bash
// builder's did.
func closeInheritedFiles() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
