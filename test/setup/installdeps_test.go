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

// fakeDebian is a PATH with dpkg-query, apt-get and apt-cache that keep their package database in a file,
// and an /etc of its own (ZNS_ETC: apt sources, os-release of bookworm), so that hack/install-deps.sh runs
// its whole install path without touching the machine. apt-get records, for each call, whether
// policy-rc.d existed at that moment. apt-cache madison offers qemu-system-x86 at versions.mk's
// QEMU_VERSION, or at $FAKE_QEMU_OFFERED.
type fakeDebian struct {
	dir, bin, installed, aptLog, policy, etc string
}

// qemuPin is versions.mk's QEMU_VERSION.
func qemuPin(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "versions.mk"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "QEMU_VERSION" && f[1] == ":=" {
			return f[2]
		}
	}
	t.Fatal("versions.mk has no QEMU_VERSION")
	return ""
}

func newFakeDebian(t *testing.T) *fakeDebian {
	t.Helper()
	dir := t.TempDir()
	f := &fakeDebian{dir: dir, bin: filepath.Join(dir, "bin"), installed: filepath.Join(dir, "installed"),
		aptLog: filepath.Join(dir, "apt.log"), policy: filepath.Join(dir, "policy-rc.d"), etc: filepath.Join(dir, "etc")}
	for _, d := range []string{f.bin, filepath.Join(f.etc, "apt", "sources.list.d")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.etc, "os-release"), []byte("ID=debian\nVERSION_CODENAME=bookworm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(f.bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// a line of the database is a package, or package=version
	write("dpkg-query", `pkg=$(eval echo \${$#})
line=$(grep -E "^$pkg(=|\$)" "`+f.installed+`" 2>/dev/null | tail -n 1)
[ -n "$line" ] || exit 1
v=""
case "$line" in *=*) v=${line#*=} ;; esac
case "$*" in *Version*) printf 'install ok installed %s' "$v" ;; *) printf 'install ok installed' ;; esac
`)
	write("apt-cache", `[ "$1 $2" = "madison qemu-system-x86" ] || exit 100
echo " qemu-system-x86 | ${FAKE_QEMU_OFFERED:-`+qemuPin(t)+`} | http://deb.debian.org/debian bookworm-backports/main amd64 Packages"
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
	cmd.Env = append(os.Environ(), "PATH="+f.bin+":"+os.Getenv("PATH"), "ZNS_POLICY_RC_D="+f.policy, "ZNS_ETC="+f.etc)
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
	// one install of the packages, one of QEMU from backports, both in the first run
	if n := strings.Count(f.aptCalls(t), "install -y"); n != 2 || f.aptCalls(t) != calls {
		t.Errorf("apt-get install ran %d times over two runs, want 2, all in the first:\n%s", n, f.aptCalls(t))
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
	cmd.Env = append(os.Environ(), "PATH="+g.bin+":"+os.Getenv("PATH"), "ZNS_POLICY_RC_D="+g.policy, "ZNS_ETC="+g.etc)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	demo := g.aptCalls(t)
	if strings.Contains(demo, "mariadb-server") || !strings.Contains(demo, "debootstrap") {
		t.Errorf("make demo needs the build tools, not a host MariaDB; apt-get was asked: %s", demo)
	}
	cmd = exec.Command("bash", filepath.Join(repoRoot(t), "hack", "install-deps.sh"), "everything")
	cmd.Env = append(os.Environ(), "PATH="+g.bin+":"+os.Getenv("PATH"), "ZNS_POLICY_RC_D="+g.policy, "ZNS_ETC="+g.etc)
	out2, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out2), "what to do: hack/install-deps.sh [all|demo]") {
		t.Errorf("an unknown set must be refused with the usage: %v\n%s", err, out2)
	}
}

// QEMU comes from bookworm-backports at versions.mk's pin: the suite is added in a file of its own (once),
// the three packages are installed at that version, and a stale pin fails saying what apt offers.
func TestInstallDepsQEMUFromBackports(t *testing.T) {
	pin := qemuPin(t)
	f := newFakeDebian(t)
	// bookworm's own QEMU is there: it is not the pinned one
	if err := os.WriteFile(f.installed, []byte("qemu-system-x86=1:7.2+dfsg-7+deb12u18+b3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := f.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	src := filepath.Join(f.etc, "apt", "sources.list.d", "bookworm-backports.sources")
	b, err := os.ReadFile(src)
	if err != nil || !strings.Contains(string(b), "Suites: bookworm-backports") || !strings.Contains(out, "added the bookworm-backports suite") {
		t.Errorf("the backports source: %v\n%s\noutput:\n%s", err, b, out)
	}
	want := "install -y -qq --no-install-recommends --target-release=bookworm-backports qemu-system-x86=" + pin +
		" qemu-system-common=" + pin + " qemu-system-data=" + pin
	if calls := f.aptCalls(t); !strings.Contains(calls, want) {
		t.Errorf("apt-get was not asked for %q:\n%s", want, calls)
	}
	if out, err := f.run(t); err != nil || !strings.Contains(out, "all Debian packages present") {
		t.Errorf("second run: %v\n%s", err, out)
	}

	// a machine that names bookworm-backports already gets no second source
	g := newFakeDebian(t)
	own := filepath.Join(g.etc, "apt", "sources.list.d", "backports.list")
	if err := os.WriteFile(own, []byte("deb http://deb.debian.org/debian bookworm-backports main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := g.run(t); err != nil || strings.Contains(out, "added the bookworm-backports suite") {
		t.Errorf("with backports already configured: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(g.etc, "apt", "sources.list.d", "bookworm-backports.sources")); !os.IsNotExist(err) {
		t.Errorf("a second backports source was written (%v)", err)
	}

	// backports moved on: say what apt offers and what to change
	h := newFakeDebian(t)
	out, err = h.run(t, "FAKE_QEMU_OFFERED=1:10.0.9+ds-1~bpo12+1")
	if err == nil {
		t.Fatalf("a pin apt does not offer was installed:\n%s", out)
	}
	for _, want := range []string{"apt offers no qemu-system-x86 " + pin, "it offers: 1:10.0.9+ds-1~bpo12+1",
		"what to do: set QEMU_VERSION in versions.mk"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
