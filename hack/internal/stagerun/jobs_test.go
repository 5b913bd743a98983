package stagerun

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

// TestJobOutputsAndStatus: a job's stderr goes to its log, its stdout to its own file when given one, and its
// status is bash's; one that cannot start ended at once, the reason in its log.
func TestJobOutputsAndStatus(t *testing.T) {
	r, _, _ := testRunner(t)
	log, out := filepath.Join(r.Root, "helm.log"), filepath.Join(r.Root, "helm.log.out")
	j, err := r.Start("helm", r.Cmd(nil, "sh", "-c", "echo building >&2; echo /bin/helm; exit 4"), log, out)
	if err != nil {
		t.Fatal(err)
	}
	if rc := j.Wait(); rc != 4 || j.Running() {
		t.Errorf("status %d (running %v), want 4", rc, j.Running())
	}
	if b, _ := os.ReadFile(log); string(b) != "building\n" {
		t.Errorf("log %q", b)
	}
	if b, _ := os.ReadFile(out); string(b) != "/bin/helm\n" {
		t.Errorf("stdout %q", b)
	}
	missing, err := r.Start("missing", r.Cmd(nil, "hack/none.sh"), filepath.Join(r.Root, "missing.log"), "")
	if err != nil {
		t.Fatal(err)
	}
	if rc := missing.Wait(); rc != 127 || !strings.Contains(LastLogLine(missing.Log), "hack/none.sh: ") {
		t.Errorf("status %d, log %q", rc, LastLogLine(missing.Log))
	}
}

// TestBackgroundJobsKilledAtExit: a job still running when the run ends is killed with its process group,
// children that ignore TERM included.
func TestBackgroundJobsKilledAtExit(t *testing.T) {
	r, _, _ := testRunner(t)
	childFile := filepath.Join(r.Root, "child.pid")
	start := func(name, script string) *Job {
		j, err := r.Start(name, r.Cmd(nil, "sh", "-c", script), filepath.Join(r.Root, name+".log"), "")
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	// both ignore TERM (an ignored signal stays ignored across exec): KILL after the grace ends them
	guest := start("qemu-guest", `trap "" TERM; sleep 300 & echo $! >`+childFile+`; wait`)
	images := start("images", "exec sleep 300")
	start("done", "true").Wait()
	var child int
	stageruntest.WaitFor(t, "the job's child", func() bool {
		b, _ := os.ReadFile(childFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return child > 0
	})
	pids := []int{guest.Pid, images.Pid, child}
	for _, pid := range pids {
		if !stageruntest.Alive(pid) {
			t.Fatalf("process %d is not running before the end", pid)
		}
	}
	r.Finish()
	for _, j := range []*Job{guest, images} {
		if j.Running() {
			t.Errorf("job %s still running", j.Name)
		}
	}
	if got := images.Wait(); got != 128+int(syscall.SIGTERM) {
		t.Errorf("images: status %d, want TERM's", got)
	}
	if got := guest.Wait(); got != 128+int(syscall.SIGKILL) {
		t.Errorf("qemu-guest ignored TERM: status %d, want KILL's", got)
	}
	for _, pid := range pids {
		stageruntest.WaitFor(t, "process "+strconv.Itoa(pid)+" to be gone", func() bool { return !stageruntest.Alive(pid) })
	}
}
