//go:build linux

package envtestreap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// reaperScript runs under /bin/sh, detached from the test binary so that it survives it.
// $1 is the test binary, the other arguments the processes to stop once it is gone.
// Each argument is PID:STARTTIME (field 22 of /proc/PID/stat): a PID is reused once its
// process is gone, which could make us kill a stranger (say another test run's etcd);
// the pair never is.
const reaperScript = `
alive() {
	read -r s </proc/"${1%:*}"/stat || return 1
	want=${1#*:}
	set -- ${s##*") "}  # stat fields 3 on; the name before them may hold spaces and ")"
	[ "$1" != Z ] && [ "${20}" = "$want" ]  # a zombie has already exited
}
any() { for p; do alive "$p" && return 0; done; return 1; }
signal() { sig=$1; shift; for p; do alive "$p" && kill -"$sig" "${p%:*}"; done; }
w=$1; shift
while alive "$w" && any "$@"; do sleep 1; done
signal TERM "$@"
i=0; while [ "$i" -lt 5 ] && any "$@"; do sleep 1; i=$((i + 1)); done
signal KILL "$@"
exit 0
`

// proc names one process for good (see reaperScript).
type proc struct {
	pid   int
	start string
}

func (p proc) String() string { return strconv.Itoa(p.pid) + ":" + p.start }

// procStat holds the fields of /proc/<pid>/stat this package needs.
type procStat struct {
	comm  string
	state string
	ppid  int
	start string
}

var (
	reapersMu sync.Mutex
	// Our own running reapers are children too; a second Guard must not target the first's.
	reapers = map[int]bool{}
)

// Guard starts a reaper for the processes this process has started and not yet waited for:
// right after env.Start() those are envtest's etcd and kube-apiserver. It never fails the
// caller; a problem is reported in one line on stderr and leaves things as they were.
func Guard() {
	if err := guard(); err != nil {
		fmt.Fprintf(os.Stderr, "envtestreap: no safety net for envtest's processes: %v\n", err)
	}
}

func guard() error {
	self, err := readProc(os.Getpid())
	if err != nil {
		return err
	}
	children, err := childrenOf(os.Getpid())
	if err != nil {
		return err
	}
	if len(children) == 0 {
		return errors.New("this process has no child processes")
	}
	cmd, err := startReaper(proc{os.Getpid(), self.start}, children)
	if err != nil {
		return err
	}
	pid := cmd.Process.Pid
	reapersMu.Lock()
	reapers[pid] = true
	reapersMu.Unlock()
	// A reaper that leaves early (env.Stop() already ran) must not stay a zombie of a long run.
	go func() {
		_ = cmd.Wait()
		reapersMu.Lock()
		delete(reapers, pid)
		reapersMu.Unlock()
	}()
	return nil
}

// childrenOf lists the live processes whose parent is ppid, leaving out our own reapers.
func childrenOf(ppid int) ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	reapersMu.Lock()
	defer reapersMu.Unlock()
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || reapers[pid] {
			continue
		}
		st, err := readProc(pid)
		if err != nil || st.ppid != ppid || st.state == "Z" {
			continue // gone since ReadDir, or not ours
		}
		out = append(out, proc{pid, st.start})
	}
	return out, nil
}

func readProc(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat parses a /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may itself contain spaces and ')', so the fields after it start after the last ')'.
func parseStat(b []byte) (procStat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("malformed /proc stat line %q", b)
	}
	f := strings.Fields(string(b[end+1:])) // f[0] is field 3
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("short /proc stat line %q", b)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("ppid in /proc stat line %q: %w", b, err)
	}
	if _, err := strconv.ParseUint(f[19], 10, 64); err != nil {
		return procStat{}, fmt.Errorf("start time in /proc stat line %q: %w", b, err)
	}
	return procStat{comm: string(b[open+1 : end]), state: f[0], ppid: ppid, start: f[19]}, nil
}

// startReaper starts the reaper for targets, to act once watched is gone.
func startReaper(watched proc, targets []proc) (*exec.Cmd, error) {
	args := []string{"-c", reaperScript, "envtestreap", watched.String()}
	for _, t := range targets {
		args = append(args, t.String())
	}
	cmd := exec.Command("/bin/sh", args...)
	// Its own session: no terminal signal or process-group kill aimed at the test run reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Not pinning the package directory, which may be a temporary one.
	cmd.Dir = "/"
	// Stdin, Stdout and Stderr stay nil, i.e. /dev/null: `go test` waits until every holder
	// of the test binary's output pipe has closed it, and the reaper must not be one.
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}
