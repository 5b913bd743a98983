// Package setup tests the scripts that set a machine up for `make demo` and `make test` (hack/*.sh): that
// they are idempotent, leave the machine as they found it, and never fail without saying which step failed
// and what to do.
package setup

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// fakeDebian is a PATH with dpkg-query and apt-get that keep their package database in a file, so that
// hack/install-deps.sh runs its whole install path without touching the machine. apt-get records, for
// each call, whether policy-rc.d existed at that moment.
type fakeDebian struct {
	dir, bin, installed, aptLog, policy string
}

func newFakeDebian(t *testing.T) *fakeDebian {
	t.Helper()
	dir := t.TempDir()
	f := &fakeDebian{dir: dir, bin: filepath.Join(dir, "bin"), installed: filepath.Join(dir, "installed"),
		aptLog: filepath.Join(dir, "apt.log"), policy: filepath.Join(dir, "policy-rc.d")}
	if err := os.Mkdir(f.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(f.bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("dpkg-query", `pkg=$(eval echo \${$#})
grep -qx "$pkg" "`+f.installed+`" 2>/dev/null && printf 'install ok installed' && exit 0
exit 1
`)
	write("apt-get", `if [ -e "`+f.policy+`" ]; then p=policy-present; else p=policy-absent; fi
echo "$* [$p]" >>"`+f.aptLog+`"
[ -n "$FAKE_APT_FAIL" ] && [ "$1" != update ] && { echo "E: Unable to locate package $FAKE_APT_FAIL"; exit 100; }
[ "$1" = install ] || exit 0
for a in "$@"; do case "$a" in -*|install) ;; *) echo "$a" >>"`+f.installed+`" ;; esac; done
`)
	write("id", `[ "$1" = -u ] && { echo 0; exit 0; }; exec /usr/bin/id "$@"`)
	return f
}

func (f *fakeDebian) run(t *testing.T, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "hack", "install-deps.sh"))
	cmd.Env = append(os.Environ(), "PATH="+f.bin+":"+os.Getenv("PATH"), "ZNS_POLICY_RC_D="+f.policy)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (f *fakeDebian) aptCalls(t *testing.T) string {
	b, err := os.ReadFile(f.aptLog)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// The bug a new user met first: with a policy-rc.d already there (Docker's Debian images ship one),
// the cleanup trap returned 1 and the script failed after a successful install.
func TestInstallDepsTwiceWithAPreexistingPolicy(t *testing.T) {
	f := newFakeDebian(t)
	policy := "#!/bin/sh\n# the machine's own\nexit 101\n"
	if err := os.WriteFile(f.policy, []byte(policy), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := f.run(t)
	if err != nil {
		t.Fatalf("first run failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, "install-deps: installing ") || !strings.Contains(out, "install-deps: done") {
		t.Errorf("first run did not say what it installed:\n%s", out)
	}
	calls := f.aptCalls(t)
	if !strings.Contains(calls, "install -y") || !strings.Contains(calls, "mariadb-plugin-rocksdb") {
		t.Errorf("apt-get install of the packages never ran; calls:\n%s", calls)
	}
	out, err = f.run(t)
	if err != nil {
		t.Fatalf("second run failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, "all Debian packages present") {
		t.Errorf("second run should find everything installed:\n%s", out)
	}
	if n := strings.Count(f.aptCalls(t), "install -y"); n != 1 {
		t.Errorf("apt-get install ran %d times over two runs, want 1", n)
	}
	if b, err := os.ReadFile(f.policy); err != nil || string(b) != policy {
		t.Errorf("the machine's policy-rc.d changed: %q, %v", b, err)
	}
}

func TestInstallDepsKeepsServicesDownAndCleansUp(t *testing.T) {
	f := newFakeDebian(t)
	out, err := f.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(f.aptCalls(t)), "\n") {
		if !strings.HasSuffix(l, "[policy-present]") {
			t.Errorf("apt-get ran without a policy-rc.d stopping package scripts from starting MariaDB: %s", l)
		}
	}
	if _, err := os.Stat(f.policy); !os.IsNotExist(err) {
		t.Errorf("the policy-rc.d the script created is still there (%v)", err)
	}
}

func TestInstallDepsFailureSaysWhatToDo(t *testing.T) {
	f := newFakeDebian(t)
	out, err := f.run(t, "FAKE_APT_FAIL=sysbench")
	if err == nil {
		t.Fatalf("apt-get failed, the script did not:\n%s", out)
	}
	for _, want := range []string{
		"E: Unable to locate package sysbench", // apt's own words, shown
		"install-deps: ERROR: apt-get install failed",
		"install-deps: what to do: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(f.policy); !os.IsNotExist(err) {
		t.Errorf("a failed install left its policy-rc.d behind (%v)", err)
	}
}

func TestInstallDepsDemoSetIsSmaller(t *testing.T) {
	f := newFakeDebian(t)
	out, err := f.run(t)
	_ = out
	if err != nil {
		t.Fatal(err)
	}
	g := newFakeDebian(t)
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "hack", "install-deps.sh"), "demo")
	cmd.Env = append(os.Environ(), "PATH="+g.bin+":"+os.Getenv("PATH"), "ZNS_POLICY_RC_D="+g.policy)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	demo := g.aptCalls(t)
	if strings.Contains(demo, "mariadb-server") || !strings.Contains(demo, "debootstrap") {
		t.Errorf("make demo needs the build tools, not a host MariaDB; apt-get was asked: %s", demo)
	}
	cmd = exec.Command("bash", filepath.Join(repoRoot(t), "hack", "install-deps.sh"), "everything")
	cmd.Env = append(os.Environ(), "PATH="+g.bin+":"+os.Getenv("PATH"), "ZNS_POLICY_RC_D="+g.policy)
	out2, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out2), "what to do: hack/install-deps.sh [all|demo]") {
		t.Errorf("an unknown set must be refused with the usage: %v\n%s", err, out2)
	}
}
