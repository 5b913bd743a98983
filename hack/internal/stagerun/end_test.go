package stagerun

import (
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

// TestCleanupsRunOnceLastFirst: a cleanup run early (the cluster after stage 7) does not run again at the end;
// the others run once, the last added first, however often the end comes (an interrupt, then the exit).
func TestCleanupsRunOnceLastFirst(t *testing.T) {
	var cs Cleanups
	var ran []string
	add := func(name string) *CleanupFunc { return cs.Add(name, func() { ran = append(ran, name) }) }
	add("loop file")
	add("loop device")
	cluster := add("cluster")
	add("zoned node")
	cluster.RunOne()
	cluster.RunOne()
	cs.RunAll()
	cs.RunAll()
	if want := []string{"cluster", "zoned node", "loop device", "loop file"}; !reflect.DeepEqual(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
}

// TestInterrupt: SIGTERM reaches the command running, kills the background jobs, runs the cleanups once, says
// so on the terminal even when the outputs were elsewhere, and the run's status is 128+15.
func TestInterrupt(t *testing.T) {
	r, _, errs := testRunner(t)
	r.InterruptNote = "killing the background builds"
	cleaned := 0
	r.Cleanups.Add("count", func() { cleaned++ })
	images, err := r.Start("images", r.Cmd(nil, "sleep", "300"), filepath.Join(r.Root, "images.log"), "")
	if err != nil {
		t.Fatal(err)
	}
	var elsewhere stageruntest.SyncBuffer
	r.Out.Set(&elsewhere, &elsewhere)
	fg := make(chan int)
	go func() { fg <- r.Run(r.Cmd(nil, "sleep", "300")) }()
	stageruntest.WaitFor(t, "the foreground command", func() bool { return r.Procs.Running() == 1 })
	if code := r.Interrupt(syscall.SIGTERM); code != 143 {
		t.Errorf("status %d", code)
	}
	if rc := <-fg; rc != 143 {
		t.Errorf("the foreground command: %d, want TERM's", rc)
	}
	if images.Running() || images.Wait() != 143 {
		t.Errorf("the background job: running %v, status %d", images.Running(), images.Wait())
	}
	r.Finish()
	if cleaned != 1 {
		t.Errorf("the cleanup ran %d times", cleaned)
	}
	if want := "test: terminated: killing the background builds\n"; errs.String() != want {
		t.Errorf("stderr %q, want %q", errs.String(), want)
	}
	if !r.Procs.Stopped() {
		t.Error("commands may still start")
	}
	// a cleanup's command still runs
	if rc := r.RunCleanup(r.Cmd(nil, "true")); rc != 0 {
		t.Errorf("a cleanup's command: %d", rc)
	}
}

func TestEnvChanges(t *testing.T) {
	base := []string{"HOME=/h", "ZNS_E2E=1", "ZNS_E2E_KUBECONFIG=/kind"}
	after := "HOME=/h\x00ZNS_E2E=1\x00ZNS_E2E_KUBECONFIG=/node\x00ZNS_E2E_ZONED_NODE=zns-guest\x00SHLVL=1\x00_=/usr/bin/env\x00PWD=/r\x00" +
		"BASH_FUNC_f%%=() { :; }\x00MULTI=a\nb\x00"
	want := []string{"ZNS_E2E_KUBECONFIG=/node", "ZNS_E2E_ZONED_NODE=zns-guest", "MULTI=a\nb"}
	if got := EnvChanges(base, after); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestEvalExports: the export lines a script prints, evaluated by bash (its quoting included); nothing when the
// script fails, with its status.
func TestEvalExports(t *testing.T) {
	r, _, _ := testRunner(t)
	script := filepath.Join(r.Root, "hack", "env.sh")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "#!/bin/sh\n[ \"$1\" = env ] || exit 5\necho \"export ZNS_E2E=1 ZNS_E2E_KUBECONFIG=/a\\\\ b ZNS_E2E_TIME_SCALE=4\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	got, rc := r.EvalExports("hack/env.sh", "env")
	if want := []string{"ZNS_E2E=1", "ZNS_E2E_KUBECONFIG=/a b", "ZNS_E2E_TIME_SCALE=4"}; rc != 0 || !sameSet(got, want) {
		t.Errorf("got %q, %d; want %q", got, rc, want)
	}
	if got, rc := r.EvalExports("hack/env.sh", "other"); rc != 5 || got != nil {
		t.Errorf("a failed script: %q, %d", got, rc)
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}
