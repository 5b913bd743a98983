package qemu

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestZonedNodeOwner: the zoned node is one per machine, and a second make test once stopped the first one's node
// in the middle of its tests. With ZNS_NODE_OWNER set, down and up refuse a node whose owner is another live run,
// saying whose it is, and leave it running; the owner itself, or a person without ZNS_NODE_OWNER, stops it.
// A sleeping process in a group of its own stands in for QEMU (down stops the node's process group).
func TestZonedNodeOwner(t *testing.T) {
	cache := t.TempDir()
	state := filepath.Join(cache, "zoned-node")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	node := exec.Command("sleep", "600")
	node.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	owner := exec.Command("sleep", "600")
	for _, c := range []*exec.Cmd{node, owner} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill() })
	}
	// reaped at once, so that down sees it end (a zombie still answers kill -0)
	ended := make(chan struct{})
	go func() { _ = node.Wait(); close(ended) }()
	t.Cleanup(func() { _ = owner.Wait() })
	files := map[string]string{
		"pid":   fmt.Sprintf("%d\n", node.Process.Pid),
		"ready": "",
		"owner": fmt.Sprintf("%d make test in /tmp/first\n", owner.Process.Pid),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(state, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(env []string, args ...string) (int, string) {
		t.Helper()
		c := exec.Command(filepath.Join(repoRoot(t), "hack/qemu/zoned-node.sh"), args...)
		c.Env = append(os.Environ(), append([]string{"ZNS_CACHE_DIR=" + cache, "ZNS_NODE_OWNER=", "ZNS_NODE_OWNER_WHAT="}, env...)...)
		var e bytes.Buffer
		c.Stderr = &e
		err := c.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), e.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, e.String()
	}
	alive := func() bool {
		select {
		case <-ended:
			return false
		default:
			return true
		}
	}
	second := []string{"ZNS_NODE_OWNER=1", "ZNS_NODE_OWNER_WHAT=make test in /tmp/second"}
	for _, cmd := range []string{"down", "up"} {
		code, stderr := run(second, cmd)
		want := fmt.Sprintf("another run uses it (pid %d, make test in /tmp/first)", owner.Process.Pid)
		if code == 0 || !strings.Contains(stderr, want) || !alive() {
			t.Errorf("%s from a second run: exit %d, node alive %v, stderr %q; want a refusal saying %q", cmd, code, alive(), stderr, want)
		}
	}
	// the owner gone, its node is anyone's: a second run's down stops it
	_ = owner.Process.Kill()
	_, _ = owner.Process.Wait()
	if code, stderr := run(second, "down"); code != 0 || strings.Contains(stderr, "another run") {
		t.Errorf("down after the owner ended: exit %d, stderr %q", code, stderr)
	}
	select {
	case <-ended:
	case <-time.After(45 * time.Second): // down waits up to 30 s before SIGKILL
		t.Error("down left the node's process running")
	}
	for _, name := range []string{"pid", "ready", "owner"} {
		if _, err := os.Stat(filepath.Join(state, name)); !os.IsNotExist(err) {
			t.Errorf("down left %s (%v)", name, err)
		}
	}
}
