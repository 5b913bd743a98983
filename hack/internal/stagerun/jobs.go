package stagerun

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Job is a command running in the background in a process group of its own, its output in a file, tracked by
// its process: waited with progress lines, killed with its group when the run ends or is interrupted first.
type Job struct {
	Name, Log string // Log: the file its stderr (and its stdout, unless given another) goes to
	Pid       int
	done      chan struct{} // closed once it ended and was reaped
	status    int           // bash's status of it, once done
}

// Jobs are the run's background jobs.
type Jobs struct {
	mu   sync.Mutex
	list []*Job
}

// Start starts c in the background, stdin /dev/null as bash gives a background job, its stdout into stdout
// (the log when empty) and its stderr into log, both emptied first. A command that cannot start is a job that
// ended at once with bash's status for it, the reason in its log.
func (r *Runner) Start(name string, c *exec.Cmd, log, stdout string) (*Job, error) {
	j := &Job{Name: name, Log: log, done: make(chan struct{})}
	lf, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	c.Stdin, c.Stdout, c.Stderr = nil, lf, lf
	if stdout != "" {
		of, err := os.Create(stdout)
		if err != nil {
			return nil, err
		}
		defer of.Close()
		c.Stdout = of
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		fmt.Fprintf(lf, "%s: %v\n", c.Args[0], err)
		j.status = StartFailure(err)
		close(j.done)
	} else {
		j.Pid = c.Process.Pid
		go func() {
			j.status = ExitStatus(c.Wait())
			close(j.done)
		}()
	}
	r.Jobs.mu.Lock()
	r.Jobs.list = append(r.Jobs.list, j)
	r.Jobs.mu.Unlock()
	return j, nil
}

// Wait is bash's `wait PID`: the job's status once it ended.
func (j *Job) Wait() int {
	<-j.done
	return j.status
}

// Running: the job has not ended yet.
func (j *Job) Running() bool {
	select {
	case <-j.done:
		return false
	default:
		return true
	}
}

// killAll ends every job still running, with its process group: TERM, then KILL after grace.
func (js *Jobs) killAll(grace time.Duration) {
	js.mu.Lock()
	var live []*Job
	for _, j := range js.list {
		if j.Running() {
			live = append(live, j)
		}
	}
	js.mu.Unlock()
	for _, j := range live {
		_ = syscall.Kill(-j.Pid, syscall.SIGTERM)
	}
	deadline := time.After(grace)
	for _, j := range live {
		select {
		case <-j.done:
		case <-deadline:
		}
		// what of its group ignored TERM (or outlived its leader)
		_ = syscall.Kill(-j.Pid, syscall.SIGKILL)
		<-j.done
	}
}
