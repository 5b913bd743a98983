package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

// TestFailedPartSaysWhichAndStopsTheBackgroundBuilds: a part that fails names itself; the background builds
// (here under sudo: a non-root builder) are stopped with their process groups; nothing half-built stays, and
// the next run resumes from the parts that were complete.
func TestFailedPartSaysWhichAndStopsTheBackgroundBuilds(t *testing.T) {
	repo := fakeRepo(t)
	b, out, errs := fakeBuilder(t, repo, map[string]string{"FAKE_GO_FAIL": "opencontainers/runc", "FAKE_KUBE_SLEEP": "300", "FAKE_DEBOOTSTRAP_SLEEP": "300"})
	b.euid = 1000
	rc := make(chan int, 1)
	go func() { rc <- b.main() }()
	var pids []int
	for _, f := range []string{"kube.pid", "debootstrap.pid"} {
		pids = append(pids, waitPid(t, filepath.Join(repo.Root, f)))
	}
	if code := <-rc; code != 1 || out.String() != "" {
		t.Fatalf("status %d, stdout %q", code, out)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "go: build failed: opencontainers/runc\n",
		"build-node-image: ERROR: building part runc-v1.2.9 failed (see the output above)\n")
	if strings.Count(errs.String(), "ERROR") != 1 {
		t.Errorf("more than one error:\n%s", errs)
	}
	for _, pid := range pids {
		if stageruntest.Alive(pid) {
			t.Errorf("pid %d of a background build still runs", pid)
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	calls := strings.Join(repo.CallLines(t, ""), "\n")
	for _, want := range []string{"sudo debootstrap ", "sudo kill -15 -- -" + strconv.Itoa(pids[1])} {
		if !strings.Contains(calls, want) {
			t.Errorf("no call %q in\n%s", want, calls)
		}
	}
	if left := append(glob(repo, ".work.*"), glob(repo, "parts/.build-*")...); len(left) > 0 {
		t.Errorf("scratch directories left: %q", left)
	}
	if _, err := os.Stat(filepath.Join(repo.Cache, "kind/parts/runc-v1.2.9")); !os.IsNotExist(err) {
		t.Errorf("a failed part is in the cache (%v)", err)
	}
	_, again := coldBuild(t, repo, map[string]string{"ZNS_KIND_SAVE": "0"})
	stageruntest.Contains(t, "stderr", again, strings.TrimSpace(cachedLine(partLabel(3, "containerd-v2.0.14")))+"\n",
		"build-node-image: part 4/8 runc-v1.2.9: building\n")
}

// TestFailedStepSaysWhichAndRemovesTheContainer: a step that fails names itself and what to do; the build
// container and its image go.
func TestFailedStepSaysWhichAndRemovesTheContainer(t *testing.T) {
	repo := fakeRepo(t)
	b, out, errs := fakeBuilder(t, repo, map[string]string{"FAKE_IMPORT_FAIL": "1", "ZNS_KIND_SAVE": "0"})
	if rc := build(t, b); rc != 1 || out.String() != "" {
		t.Fatalf("status %d, stdout %q", rc, out)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "build-node-image: ctr import of coredns.tar failed\n",
		"build-node-image: ERROR: step 'ctr import images' failed: the output above says why; fix that and run again (finished parts are cached)\n")
	if left, _ := filepath.Glob(filepath.Join(repo.Root, "docker/containers/*")); len(left) > 0 {
		t.Errorf("containers left: %q", left)
	}
	if dockerImage(repo, "zns-mysql/kind-node-build:"+b.recipe) != "" || dockerImage(repo, image) != "" {
		t.Error("an image is left")
	}
	if left := glob(repo, ".work.*"); len(left) > 0 {
		t.Errorf("scratch directory left: %q", left)
	}
}

// TestKubeadmsEtcdMustBeThePin: a Kubernetes version whose kubeadm deploys another etcd than versions.mk pins
// fails its part, saying what to set.
func TestKubeadmsEtcdMustBeThePin(t *testing.T) {
	repo := fakeRepo(t)
	b, _, errs := fakeBuilder(t, repo, map[string]string{"FAKE_ETCD_TAG": "3.6.9-0"})
	if rc := build(t, b); rc != 1 {
		t.Fatalf("status %d", rc)
	}
	stageruntest.Contains(t, "stderr", errs.String(),
		"build-node-image: kubeadm v1.36.3 deploys etcd 3.6.9-0, but versions.mk pins ETCD_VERSION 3.6.8: set it to 3.6.9\n",
		"build-node-image: ERROR: building part kubernetes-v1.36.3 failed (see the output above)\n")
}

// TestBusyboxFromAptOnAColdMachine: without busybox-static installed, its candidate is downloaded (never
// installed); its version, with an epoch, a tilde and a plus, names the part and the helper image.
func TestBusyboxFromAptOnAColdMachine(t *testing.T) {
	repo := fakeRepo(t)
	coldBuild(t, repo, map[string]string{"FAKE_BUSYBOX_STATUS": "", "ZNS_KIND_SAVE": "0"})
	if !isFile(filepath.Join(repo.Cache, "kind/parts/busybox-1_1.36.1-9_bpo12_1/busybox")) {
		t.Error("no busybox part of apt's version")
	}
	if len(repo.CallLines(t, "apt-get download busybox-static=1:1.36.1-9~bpo12+1")) != 1 {
		t.Error("busybox-static was not downloaded")
	}
	if !strings.Contains(read(t, filepath.Join(repo.Root, "docker/refs")), "zns-mysql.local/local-path-helper:busybox-1_1.36.1-9_bpo12_1\n") {
		t.Error("the helper image is not named by apt's version")
	}
	if left, _ := filepath.Glob(filepath.Join(repo.Cache, "kind/parts/busybox-*/*.deb")); len(left) > 0 {
		t.Errorf("the package is left: %q", left)
	}
}

// TestKilledRunsLeftovers: the scratch directories and temporary tarballs of killed runs go once the lock is
// held.
func TestKilledRunsLeftovers(t *testing.T) {
	repo := fakeRepo(t)
	for _, d := range []string{"kind/parts/.build-runc-v1.2.9.123/x", "kind/.work.abc/images", "kind/node/v1.36.3"} {
		if err := os.MkdirAll(filepath.Join(repo.Cache, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stale := filepath.Join(repo.Cache, "kind/node/v1.36.3/.node-image.456")
	if err := os.WriteFile(stale, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	coldBuild(t, repo, map[string]string{"ZNS_KIND_SAVE": "0"})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a killed save's tarball is left (%v)", err)
	}
}

// TestConcurrentBuildsSerialise: a build waits, saying so, while another run holds the cache's lock.
func TestConcurrentBuildsSerialise(t *testing.T) {
	repo := fakeRepo(t)
	if err := os.MkdirAll(filepath.Join(repo.Cache, "kind"), 0o755); err != nil {
		t.Fatal(err)
	}
	other, err := os.OpenFile(filepath.Join(repo.Cache, "kind/.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	b, out, errs := fakeBuilder(t, repo, map[string]string{"ZNS_KIND_SAVE": "0"})
	rc := make(chan int, 1)
	go func() { rc <- b.main() }()
	stageruntest.WaitFor(t, "the wait's progress", func() bool {
		return strings.Contains(errs.String(), "build-node-image: waiting for the cache's lock: still running, 0m00s elapsed (another build, or the save of one)\n")
	})
	stageruntest.Contains(t, "stderr", errs.String(), "build-node-image: another run holds "+filepath.Join(repo.Cache, "kind/.lock")+"; waiting\n")
	if len(repo.CallLines(t, "debootstrap")) > 0 {
		t.Error("the build started while the other held the lock")
	}
	other.Close()
	if code := <-rc; code != 0 || out.String() != image+"\n" {
		t.Fatalf("status %d, stdout %q\n%s", code, out, errs)
	}
}

// TestRootWithoutSudoRefused: a builder that is not root needs passwordless sudo, and says so.
func TestRootWithoutSudoRefused(t *testing.T) {
	repo := fakeRepo(t)
	b, _, errs := fakeBuilder(t, repo, map[string]string{"FAKE_SUDO_RC": "1"})
	b.euid = 1000
	if rc := build(t, b); rc != 1 {
		t.Fatalf("status %d", rc)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "build-node-image: ERROR: not root and no passwordless sudo: debootstrap and the node rootfs need root\n")
}

// TestHostChecks: what the host lacks is named before anything is built.
func TestHostChecks(t *testing.T) {
	repo := fakeRepo(t)
	b, _, errs := fakeBuilder(t, repo, map[string]string{"FAKE_DOCKER_DOWN": "1"})
	if rc := build(t, b); rc != 1 || !strings.Contains(errs.String(), "ERROR: cannot talk to the Docker Engine (docker info failed)\n") {
		t.Errorf("docker down: %d\n%s", rc, errs)
	}
	b, _, errs = fakeBuilder(t, repo, nil)
	b.LookPath = func(name string) (string, error) {
		if name == "debootstrap" || name == "gcc" {
			return "", exec.ErrNotFound
		}
		return exec.LookPath(name)
	}
	if rc := build(t, b); rc != 1 || !strings.Contains(errs.String(), "ERROR: missing tools: gcc debootstrap (Debian: apt-get install golang debootstrap gcc libc6-dev)\n") {
		t.Errorf("missing tools: %d\n%s", rc, errs)
	}
	b, _, errs = fakeBuilder(t, repo, nil)
	b.seccompHeader = filepath.Join(repo.Root, "no/seccomp.h")
	if rc := build(t, b); rc != 1 || !strings.Contains(errs.String(), "ERROR: runc needs libseccomp's headers and static library: apt-get install libseccomp-dev\n") {
		t.Errorf("no libseccomp: %d\n%s", rc, errs)
	}
	if len(repo.CallLines(t, "debootstrap")) > 0 {
		t.Error("a build started")
	}
}

func TestRunRefusesBadCommandsAndKnobs(t *testing.T) {
	out, errs := stageruntest.Outputs()
	if rc := run([]string{"--help"}, func(string) string { return "" }, out, errs); rc != 0 || !strings.Contains(out.String(), "ZNS_KIND_REBUILD") {
		t.Errorf("--help: %d", rc)
	}
	if rc := run([]string{"build"}, func(string) string { return "" }, out, errs); rc != 2 || !strings.Contains(errs.String(), "hack/kind/build-node-image.sh") {
		t.Errorf("an argument: %d", rc)
	}
	env := map[string]string{"ZNS_CACHE_DIR": t.TempDir(), "ZNS_KIND_REBUILD": "yes"}
	if rc := run(nil, func(k string) string { return env[k] }, out, errs); rc != 2 || !strings.Contains(errs.String(), "build-node-image: ERROR: ZNS_KIND_REBUILD=yes: give 0, 1") {
		t.Errorf("bad knob: %d\n%s", rc, errs)
	}
}

// runProgram starts the test binary as the program, in repo, with env.
func runProgram(t *testing.T, repo *stageruntest.Repo, env map[string]string, extra ...*os.File) (*exec.Cmd, *stageruntest.SyncBuffer) {
	t.Helper()
	k := knobs(repo, env)
	k["ZNS_PROGRESS_EVERY"] = "0.05"
	c := exec.Command(os.Args[0])
	c.Dir, c.Env, c.ExtraFiles = repo.Root, k.List(), extra
	errs := &stageruntest.SyncBuffer{}
	c.Stderr = errs
	return c, errs
}

// TestSignalStopsTheBuild: SIGTERM stops the background builds with their process groups, removes the scratch
// directories, and the status is bash's for TERM.
func TestSignalStopsTheBuild(t *testing.T) {
	repo := fakeRepo(t)
	c, errs := runProgram(t, repo, map[string]string{"FAKE_KUBE_SLEEP": "300", "FAKE_DEBOOTSTRAP_SLEEP": "300"})
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range []string{"kube.pid", "debootstrap.pid"} {
		pids = append(pids, waitPid(t, filepath.Join(repo.Root, f)))
	}
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if rc := stagerun.ExitStatus(c.Wait()); rc != 143 {
		t.Errorf("status %d, want 143\n%s", rc, errs)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "build-node-image: terminated: stopping the background builds, then removing the build container and the scratch directory\n")
	if strings.Contains(errs.String(), "ERROR") {
		t.Errorf("an interrupt is no error:\n%s", errs)
	}
	for _, pid := range pids {
		stageruntest.WaitFor(t, "the background builds gone", func() bool { return !stageruntest.Alive(pid) })
	}
	if left := append(glob(repo, ".work.*"), glob(repo, "parts/.build-*")...); len(left) > 0 {
		t.Errorf("scratch directories left: %q", left)
	}
}

// TestSaveKeepsNoOneWaiting: the background save outlives the run holding the cache's lock, but none of the
// run's outputs: a caller that reads stdout to its end (or a descriptor it passed, as hack/kind/cluster.sh's
// fd 3) is not kept waiting for it, as the bash builder's callers were. SIGTERM to the save removes its
// temporary file and frees the lock.
func TestSaveKeepsNoOneWaiting(t *testing.T) {
	repo := fakeRepo(t)
	first, _ := coldBuild(t, repo, map[string]string{"ZNS_KIND_SAVE": "0"})
	r3, w3, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c, errs := runProgram(t, repo, map[string]string{"FAKE_SAVE_SLEEP": "300"}, w3)
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w3.Close()
	done := make(chan string)
	go func() {
		out, _ := io.ReadAll(stdout)
		_, _ = io.ReadAll(r3)
		done <- string(out)
	}()
	select {
	case out := <-done:
		if out != image+"\n" {
			t.Errorf("stdout %q", out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the caller still waits for the run's outputs")
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "build-node-image: cached in docker: "+image+" (recipe "+first.recipe+")\n",
		"build-node-image: saving "+image+" into ")
	saveFile := filepath.Join(repo.Root, "docker/save.pid")
	pid := waitPid(t, saveFile) // never 0: kill(0) would signal this test's own process group
	if lockFree(t, repo) {
		t.Error("the save does not hold the cache's lock")
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stageruntest.WaitFor(t, "the lock free", func() bool { return lockFree(t, repo) })
	if tmp := glob(repo, "node/v1.36.3/.node-image.*"); len(tmp) > 0 {
		t.Errorf("the killed save left %q", tmp)
	}
}

// TestFailedRootfsSaysWhy: debootstrap's failure shows the end of its log and names the rootfs part; the other
// parts, built meanwhile, stay cached.
func TestFailedRootfsSaysWhy(t *testing.T) {
	repo := fakeRepo(t)
	b, _, errs := fakeBuilder(t, repo, map[string]string{"FAKE_DEBOOTSTRAP_FAIL": "1"})
	if rc := build(t, b); rc != 1 {
		t.Fatalf("status %d", rc)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "E: Couldn't download packages: systemd\n",
		"build-node-image: ERROR: building part "+rootfsPart+" failed (see the output above)\n")
	for _, p := range allParts[1:] {
		if !isFile(filepath.Join(repo.Cache, "kind/parts", p, ".complete")) {
			t.Errorf("part %s is not cached", p)
		}
	}
	if left := append(glob(repo, ".work.*"), glob(repo, "parts/.build-*")...); len(left) > 0 {
		t.Errorf("scratch directories left: %q", left)
	}
}

// waitPid is the pid a fake background build writes into path: the file exists before the shell has written
// it (`echo $$ >file`), so the wait is for a number, not for the file.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	stageruntest.WaitFor(t, "a pid in "+filepath.Base(path), func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}
