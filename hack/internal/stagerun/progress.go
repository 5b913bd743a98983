package stagerun

import (
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// Heartbeat is hack/lib/progress.sh's: wait() runs (a command, or a wait for a job) and meanwhile, every
// r.ProgressEvery, a line says it still runs and for how long, with hint, and with the last line of logfile
// when there is one. It returns wait's status.
func (r *Runner) Heartbeat(label, hint, logfile string, wait func() int) int {
	t0 := r.Now()
	tick, stopTick := r.Ticker(r.ProgressEvery)
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
					last = LastLogLine(logfile)
				}
				r.Logf("%s", ProgressLine(label, hint, int(at.Sub(t0)/time.Second), last))
			}
		}
	}()
	rc := wait()
	close(stop)
	<-stopped
	stopTick()
	return rc
}

// ProgressLine: "LABEL: still running, 2m30s elapsed (HINT); last: LINE".
func ProgressLine(label, hint string, elapsed int, last string) string {
	s := fmt.Sprintf("%s: still running, %s elapsed", label, Mmss(elapsed))
	if hint != "" {
		s += " (" + hint + ")"
	}
	if last != "" {
		s += "; last: " + last
	}
	return s
}

// Mmss is hack/lib/progress.sh's: "4m05s".
func Mmss(s int) string { return fmt.Sprintf("%dm%02ds", s/60, s%60) }

// LastLogLine is where a log is: its last line that is not blank (a carriage return ends a line too), cut to
// 140 bytes.
func LastLogLine(path string) string {
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

// TailLines is `tail -n N FILE`: its last n lines (all of them when shorter), "" when it cannot be read.
func TailLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return Tail(string(b), n)
}

// Tail is the last n lines of s, as `tail -n N` prints them.
func Tail(s string, n int) string {
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
