package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
	"github.com/zns-mysql/zns-mysql/test/e2e"
)

// The zoned node of stage 8: booted beside stage 7 when it can be, else in stage 8.

// nodeNice is the niceness of the zoned node's boot beside stage 7: QEMU then runs on the CPU the kind tier
// leaves idle (its tests wait on pods most of the time) and gives way whenever a kind node or a test wants it.
const nodeNice = 10

// bootNodeBeside starts the zoned node's boot in the background, at nice nodeNice, when stage 8 will use the node.
// Under emulation the boot is about two minutes of CPU on both cores, which stage 8 then no longer waits for.
// Nothing hangs on it: stage 8 boots the node again when this boot failed.
func (r *runner) bootNodeBeside() {
	if r.cfg.NodeLate || zonedSkipWhy(r.qemuRC, r.dockerOK, r.cfg) != "" {
		return
	}
	r.nodeDown()
	// a fresh node: what an earlier run left on its devices and volumes would be in the tests' way
	if r.Run(r.Cmd(nil, "hack/qemu/zoned-node.sh", "down")) != 0 {
		return // stage 8 says whose node it is
	}
	c := r.Cmd(nil, "nice", "-n", strconv.Itoa(nodeNice), "hack/qemu/zoned-node.sh", "up")
	j, err := r.Start("zoned-node", c, filepath.Join(r.logs, "zoned-node.log"), os.DevNull)
	if err != nil {
		r.Logf("zoned-node: cannot start its boot beside stage 7 (%v); stage 8 boots it", err)
		return
	}
	r.bg["zoned-node"] = j
	r.Logf("zoned-node: booting beside stage 7 at nice %d (log: %s)", nodeNice, j.Log)
}

// nodeDown registers, once, the cleanup that stops the zoned node, and returns it.
func (r *runner) nodeDown() *stagerun.CleanupFunc {
	if r.node == nil {
		r.node = r.Cleanups.Add("the zoned node", func() {
			r.RunCleanup(r.Cmd(nil, "hack/qemu/zoned-node.sh", "down"))
		})
	}
	return r.node
}

// nodeBootedBeside waits for the boot bootNodeBeside started, if it did: true when the node is up. A boot that
// failed is shown (its log's end) and left for stage 8 to try again.
func (r *runner) nodeBootedBeside() bool {
	j := r.bg["zoned-node"]
	if j == nil {
		return false
	}
	rc := r.Heartbeat("zoned-node", "its boot beside stage 7", j.Log, j.Wait)
	if rc != 0 {
		io.WriteString(r.Out.Stderr(), stagerun.TailLines(j.Log, 20))
		r.Logf("zoned-node: its boot beside stage 7 failed (exit %d; above, the end of %s); booting it again", rc, j.Log)
		return false
	}
	if err := reniceProcess(filepath.Join(r.cfg.CacheRoot, "zoned-node", "pid"), 0); err != nil {
		r.Logf("zoned-node: up; QEMU keeps nice %d (%v)", nodeNice, err)
	} else {
		r.Logf("zoned-node: up, booted beside stage 7; QEMU back at nice 0")
	}
	return true
}

// zonedE2E is stage 8: this kernel has no zoned devices and a kind node shares it, so it boots a Kubernetes
// node in the QEMU guest (unless it booted beside stage 7), runs the e2e tests that need it there, and stops it.
// Where it cannot run, the tests run without it and report themselves skipped with what they need (with
// ZNS_REQUIRE_QEMU=1 the stage fails instead). It returns go test's status.
func (r *runner) zonedE2E() (int, error) {
	if why := zonedSkipWhy(r.qemuRC, r.dockerOK, r.cfg); why != "" {
		if r.cfg.RequireQEMU {
			return 0, fail(8, "ZNS_REQUIRE_QEMU=1 but "+why)
		}
		r.Logf("no zoned node: %s; its tests report themselves skipped", why)
		c := r.goTest(nil, "-run", e2e.ZonedNodePattern(), "./test/e2e/")
		c.Env = r.Env.List(nil, "ZNS_E2E", "ZNS_REQUIRE_E2E", "ZNS_E2E_ZONED_NODE")
		return r.Run(c), nil
	}
	node := r.nodeDown()
	if !r.nodeBootedBeside() {
		if r.Run(r.Cmd(nil, "hack/qemu/zoned-node.sh", "down")) != 0 {
			return 0, fail(8, "the zoned node is another run's (above)")
		}
		up := r.Cmd(nil, "hack/qemu/zoned-node.sh", "up")
		up.Stdout = nil
		if r.Run(up) != 0 {
			return 0, fail(8, "the zoned node did not come up (above; its log: "+r.cfg.CacheRoot+"/zoned-node/guest.log); hack/qemu/zoned-node.sh up alone tries again, ZNS_E2E=0 make test skips it")
		}
	}
	env := r.zonedNodeEnv()
	timeout, note := stage8Timeout(r.cfg, r.stages.Elapsed())
	if note != "" {
		r.Logf("%s", note)
	}
	rc := r.Run(r.goTest(append(env, "ZNS_HELM="+r.helm), "-timeout", timeout, "-run", e2e.ZonedNodePattern(), "./test/e2e/"))
	node.RunOne()
	return rc, nil
}

// zonedNodeEnv is what `eval "$(hack/qemu/zoned-node.sh env)"` exports (ZNS_E2E_KUBECONFIG at the node,
// ZNS_E2E_ZONED_NODE, the time scale, ...), evaluated by bash as before, as NAME=VALUE.
func (r *runner) zonedNodeEnv() []string {
	env, _ := r.EvalExports("hack/qemu/zoned-node.sh", "env")
	return env
}

// reniceProcess sets the niceness of every thread of every process in the process group that the PID in the
// file leads (hack/qemu/zoned-node.sh's: run.sh, hack/qemurun and QEMU; niceness is per thread on Linux, and
// QEMU's vCPUs are threads of their own). Lowering it needs root.
func reniceProcess(pidFile string, nice int) error {
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		return err
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pgid <= 0 {
		return fmt.Errorf("%s holds no PID: %q", pidFile, raw)
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	var errs []error
	found := 0
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || processGroup(pid) != pgid {
			continue
		}
		found++
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("thread %d of %d: %w", tid, pid, err))
			}
		}
	}
	if found == 0 {
		return fmt.Errorf("no process in group %d", pgid)
	}
	return errors.Join(errs...)
}

// processGroup is the process group of pid from /proc/PID/stat, 0 when it cannot be read. The fields after the
// command's name, which may hold spaces and parentheses, begin after its last ')': state, ppid, pgrp.
func processGroup(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 3 {
		return 0
	}
	g, _ := strconv.Atoi(f[2])
	return g
}
