package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// job is a command running in the background in a process group of its own, its output in a file, tracked by
// its process: waited with progress lines, killed with its group when the run ends or is interrupted first.
type job struct {
	name, log string // log: the file its stderr (and its stdout, unless given another) goes to
	pid       int
	done      chan struct{} // closed once it ended and was reaped
	status    int           // bash's status of it, once done
}

// jobs are the run's background jobs by name.
type jobs struct {
	mu   sync.Mutex
	list []*job
}

// start starts c in the background, stdin /dev/null as bash gives a background job, its stdout into stdout
// (the log when empty) and its stderr into log, both emptied first. A command that cannot start is a job that
// ended at once with bash's status for it, the reason in its log.
func (js *jobs) start(name string, c *exec.Cmd, log, stdout string) (*job, error) {
	j := &job{name: name, log: log, done: make(chan struct{})}
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
		j.status = startFailure(err)
		close(j.done)
	} else {
		j.pid = c.Process.Pid
		go func() {
			j.status = exitStatus(c.Wait())
			close(j.done)
		}()
	}
	js.mu.Lock()
	js.list = append(js.list, j)
	js.mu.Unlock()
	return j, nil
}

// wait is bash's `wait PID`: the job's status once it ended.
func (j *job) wait() int {
	<-j.done
	return j.status
}

func (j *job) running() bool {
	select {
	case <-j.done:
		return false
	default:
		return true
	}
}

// killAll ends every job still running, with its process group: TERM, then KILL after grace.
func (js *jobs) killAll(grace time.Duration) {
	js.mu.Lock()
	var live []*job
	for _, j := range js.list {
		if j.running() {
			live = append(live, j)
		}
	}
	js.mu.Unlock()
	for _, j := range live {
		_ = syscall.Kill(-j.pid, syscall.SIGTERM)
	}
	deadline := time.After(grace)
	for _, j := range live {
		select {
		case <-j.done:
		case <-deadline:
		}
		// what of its group ignored TERM (or outlived its leader)
		_ = syscall.Kill(-j.pid, syscall.SIGKILL)
		<-j.done
	}
}

// heartbeat is hack/lib/progress.sh's: wait() runs (a command, or a wait for a job) and meanwhile, every
// r.cfg.ProgressEvery, a line says it still runs and for how long, with hint, and with the last line of
// logfile when there is one. It returns wait's status.
func (r *runner) heartbeat(label, hint, logfile string, wait func() int) int {
	t0 := r.now()
	tick, stopTick := r.ticker(r.cfg.ProgressEvery)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case at := <-tick:
				last := ""
				if logfile != "" {
					last = lastLogLine(logfile)
				}
				r.logf("%s", progressLine(label, hint, int(at.Sub(t0)/time.Second), last))
			}
		}
	}()
	rc := wait()
	close(stop)
	<-stopped
	stopTick()
	return rc
}

// progressLine: "LABEL: still running, 2m30s elapsed (HINT); last: LINE".
func progressLine(label, hint string, elapsed int, last string) string {
	s := fmt.Sprintf("%s: still running, %s elapsed", label, mmss(elapsed))
	if hint != "" {
		s += " (" + hint + ")"
	}
	if last != "" {
		s += "; last: " + last
	}
	return s
}

// lastLogLine is where a log is: its last line that is not blank (a carriage return ends a line too), cut to
// 140 bytes.
func lastLogLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4096)
	if st, err := f.Stat(); err == nil && st.Size() > 4096 {
		_, _ = f.Seek(st.Size()-4096, 0)
	}
	n, _ := f.Read(buf)
	lines := strings.Split(strings.ReplaceAll(string(buf[:n]), "\r", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return cut(lines[i], 140)
		}
	}
	return ""
}

// cut shortens s to at most n bytes, on a character's boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tailLines is `tail -n N FILE`: its last n lines (all of them when shorter), "" when it cannot be read.
func tailLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := string(b)
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, "\n")
	if strings.HasSuffix(s, "\n") {
		out += "\n"
	}
	return out
}
