package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuUsage is what the kernel charged to the runner's own process (Self) and to the children it has waited for
// (sysbench, its --version probe, fio): getrusage(RUSAGE_SELF) and getrusage(RUSAGE_CHILDREN). The runner's cost
// is Self alone; a wait4 on the runner from outside would add its children to it.
type cpuUsage struct {
	SelfUser, SelfSys, ChildUser, ChildSys time.Duration
}

// Self is the runner's own CPU time.
func (u cpuUsage) Self() time.Duration { return u.SelfUser + u.SelfSys }

// Children is the CPU time of the children waited for.
func (u cpuUsage) Children() time.Duration { return u.ChildUser + u.ChildSys }

func readCPU() (cpuUsage, error) {
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		return cpuUsage{}, err
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		return cpuUsage{}, err
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return cpuUsage{SelfUser: tv(self.Utime), SelfSys: tv(self.Stime), ChildUser: tv(children.Utime), ChildSys: tv(children.Stime)}, nil
}

// cpuLinePrefix starts the line the runner logs about its own cost, after "znsbench: ".
const cpuLinePrefix = "cpu "

// cpuLine is the runner's cost over wall (its lifetime so far) as key=value fields: its own user and system
// time, the share of one core that makes (self / wall), and what its children used, for scale.
func cpuLine(u cpuUsage, wall time.Duration) string {
	pct := 0.0
	if wall > 0 {
		pct = float64(u.Self()) / float64(wall) * 100
	}
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
	}
	return fmt.Sprintf("%sself_user_ms=%s self_sys_ms=%s wall_ms=%s self_pct_of_core=%.4f children_user_ms=%s children_sys_ms=%s",
		cpuLinePrefix, ms(u.SelfUser), ms(u.SelfSys), ms(wall), pct, ms(u.ChildUser), ms(u.ChildSys))
}

// cpuReport is a parsed cpu line.
type cpuReport struct {
	Usage cpuUsage
	Wall  time.Duration
}

// parseCPULine finds the runner's cpu line in its stderr.
func parseCPULine(stderr string) (cpuReport, error) {
	for _, line := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, "znsbench: "+cpuLinePrefix)
		if !ok {
			continue
		}
		var rep cpuReport
		fields := map[string]*time.Duration{"self_user_ms": &rep.Usage.SelfUser, "self_sys_ms": &rep.Usage.SelfSys,
			"wall_ms": &rep.Wall, "children_user_ms": &rep.Usage.ChildUser, "children_sys_ms": &rep.Usage.ChildSys}
		seen := 0
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			dst, ok := fields[k]
			if !ok {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return cpuReport{}, fmt.Errorf("cpu line %q: %s: %v", line, k, err)
			}
			*dst = time.Duration(f * float64(time.Millisecond))
			seen++
		}
		if seen != len(fields) {
			return cpuReport{}, fmt.Errorf("cpu line %q: %d of %d fields", line, seen, len(fields))
		}
		return rep, nil
	}
	return cpuReport{}, fmt.Errorf("no %q line in the runner's stderr", "znsbench: "+cpuLinePrefix)
}

// logCPU logs the runner's own cost since started; a failing getrusage is only logged.
func (r *runner) logCPU(started time.Time) {
	u, err := readCPU()
	if err != nil {
		r.logf("cpu not measured: %v", err)
		return
	}
	r.logf("%s", cpuLine(u, r.now().Sub(started)))
}
