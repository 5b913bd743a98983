// Package stageruntest is what the tests of the runners built on stagerun (hack/testrun, hack/demorun) share:
// a fake repository whose scripts and tools are small shell scripts that log how they were called, an output
// buffer the runner's goroutines may write at once, and waits for what another process does.
package stageruntest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Repo is a fake repository in a temporary directory: each script is "#!/bin/sh" and a body that logs its
// call to $CALLS (Calls) and does what the test's FAKE_* variables say. Cache is the run's ZNS_CACHE_DIR.
type Repo struct {
	Root, Calls, Cache string
}

// NewRepo writes scripts (bodies by path in the repository) and puts the repository's toolDir first on the
// test process's PATH (exec finds the fake tools by it), before /usr/bin and /bin.
func NewRepo(t testing.TB, scripts map[string]string, toolDir string) *Repo {
	t.Helper()
	root := t.TempDir()
	for path, body := range scripts {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", filepath.Join(root, toolDir)+":/usr/bin:/bin")
	return &Repo{Root: root, Calls: filepath.Join(root, "calls"), Cache: filepath.Join(root, "cache")}
}

// Knobs are the environment of a run in the repository: its cache, where the scripts log their calls, the
// test process's PATH (the fake tools first) and a home of its own.
func (r *Repo) Knobs() Knobs {
	return Knobs{"ZNS_CACHE_DIR": r.Cache, "CALLS": r.Calls, "PATH": os.Getenv("PATH"), "HOME": r.Root}
}

// CallLines are the fake scripts' calls, one a line, those that start with prefix.
func (r *Repo) CallLines(t testing.TB, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(r.Calls)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(l, prefix) && l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Knobs are a run's environment in a test: the runner's knobs, the FAKE_* settings and what the fake scripts
// need (CALLS, PATH, HOME).
type Knobs map[string]string

// Getenv is os.Getenv's, for a runner's parseConfig.
func (k Knobs) Getenv(name string) string { return k[name] }

// List is the environment in os.Environ's form.
func (k Knobs) List() []string {
	var list []string
	for n, v := range k {
		list = append(list, n+"="+v)
	}
	return list
}

// Config is a runner's configuration parsed from k by parse (its parseConfig); a refusal fails the test.
func Config[C any](t testing.TB, parse func(getenv func(string) string) (C, error), k Knobs) C {
	t.Helper()
	c, err := parse(k.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Outputs are a runner's stdout and stderr in a test.
func Outputs() (*SyncBuffer, *SyncBuffer) { return &SyncBuffer{}, &SyncBuffer{} }

// SyncBuffer is a bytes.Buffer the runner's goroutines and the commands' copiers may write at once.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitFor polls cond for up to 20 s: for what another process does, never to assert a duration.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// Contains reports each of wants that s (named what) lacks.
func Contains(t testing.TB, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q; it is:\n%s", what, w, s)
		}
	}
}

// LastLine is s's last line.
func LastLine(s string) string {
	l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return l[len(l)-1]
}

// Alive: the process exists and is no zombie (an orphan's zombie waits for whoever reaps orphans here).
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
