//go:build zns_guest

package qemuguest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/blocktrace"
)

// btChildEnv makes TestBlocktracePrivileges the child it starts: it names
// the tracefs path the child uses.
const btChildEnv = "ZNS_BLOCKTRACE_CHILD"

type btChildResult struct {
	UID          int
	CapEff       string // /proc/self/status
	Err          string // Start or Stop's, "" when both succeeded
	NotPermitted bool   // errors.Is(err, blocktrace.ErrNotPermitted)
}

// TestBlocktracePrivileges answers what a pod needs: it starts itself
// again (a) as uid 0 with no capability at all, on tracefs bind-mounted at
// another path, as a hostPath volume of /sys/kernel/tracing would be, and
// (b) as uid 65534, and has each start and stop a capture of nvme0n1.
func TestBlocktracePrivileges(t *testing.T) {
	inGuest(t)
	if tracefs := os.Getenv(btChildEnv); tracefs != "" {
		btChildMain(tracefs)
		return
	}
	hostPath := "/run/bt-hostpath-tracing"
	if err := os.MkdirAll(hostPath, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(btTracefs(t), hostPath, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("mount --bind %s %s: %v", blocktrace.DefaultTracefs, hostPath, err)
	}
	t.Cleanup(func() { syscall.Unmount(hostPath, 0) })
	// the share is the host's 0700 temporary directory: nobody cannot run
	// the binary from there
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/tmp", "bt-child-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "qemuguest.test")
	btCopy(t, self, bin)

	t.Run("uid0-no-capabilities", func(t *testing.T) {
		r := btChild(t, bin, hostPath, nil, true)
		if r.UID != 0 || strings.Trim(r.CapEff, "0") != "" {
			t.Fatalf("the child runs as uid %d with capabilities %s, want uid 0 with none", r.UID, r.CapEff)
		}
		if r.Err != "" {
			t.Errorf("uid 0 without capabilities, tracefs at %s: %s", hostPath, r.Err)
		}
	})
	t.Run("uid65534", func(t *testing.T) {
		r := btChild(t, bin, blocktrace.DefaultTracefs, &syscall.Credential{Uid: 65534, Gid: 65534}, false)
		if r.UID != 65534 || !r.NotPermitted || !strings.Contains(r.Err, "run as uid 0") {
			t.Errorf("uid %d: %q (not permitted: %v), want ErrNotPermitted saying to run as uid 0", r.UID, r.Err, r.NotPermitted)
		}
	})
}

func btCopy(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// btChild runs the child and reads its result. dropCaps empties the
// capability bounding set of the thread that starts it, so that uid 0
// gains no capability at exec.
func btChild(t *testing.T, bin, tracefs string, cred *syscall.Credential, dropCaps bool) btChildResult {
	t.Helper()
	last, err := strconv.Atoi(readFirstLine(t, "/proc/sys/kernel/cap_last_cap"))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	done := make(chan struct{})
	go func() {
		defer close(done)
		if dropCaps {
			// never unlocked: the thread exits with this goroutine
			runtime.LockOSThread()
			for c := 0; c <= last; c++ {
				const prCapbsetDrop = 24
				if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, uintptr(c), 0); e != 0 {
					err = fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %v", c, e)
					return
				}
			}
		}
		c := exec.Command(bin, "-test.run", "^TestBlocktracePrivileges$", "-test.v")
		c.Env = append(os.Environ(), btChildEnv+"="+tracefs)
		c.Dir = "/"
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, err = c.CombinedOutput()
	}()
	<-done
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if js, ok := strings.CutPrefix(line, "bt-child: "); ok {
			var r btChildResult
			if err := json.Unmarshal([]byte(js), &r); err != nil {
				t.Fatal(err)
			}
			t.Logf("child: %s", js)
			return r
		}
	}
	t.Fatalf("the child printed no result:\n%s", out)
	return btChildResult{}
}

// btChildMain is the child's side: one capture, no workload.
func btChildMain(tracefs string) {
	r := btChildResult{UID: os.Getuid()}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
				r.CapEff = strings.TrimSpace(v)
			}
		}
	}
	tr, err := blocktrace.Start(blocktrace.Options{Device: nvmeDev, Tracefs: tracefs}, nil)
	if err == nil {
		_, err = tr.Stop()
	}
	if err != nil {
		r.Err, r.NotPermitted = err.Error(), errors.Is(err, blocktrace.ErrNotPermitted)
	}
	js, _ := json.Marshal(r)
	fmt.Printf("bt-child: %s\n", js)
}
