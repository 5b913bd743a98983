package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

const zonedPattern = "^(TestZonedFioBenchmark|TestZonedFilesystemFlow)$"

// banners are the stage numbers announced, in order, in out.
func banners(out string) []int {
	var got []int
	for _, l := range strings.Split(out, "\n") {
		if n, ok := strings.CutPrefix(l, "==> ["); ok {
			k, _, _ := strings.Cut(n, "/")
			i, _ := strconv.Atoi(k)
			got = append(got, i)
		}
	}
	return got
}

func stageLog(t *testing.T, f *fake) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.Cache, "last-test-stages.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestRunWithoutDockerOrGuest: no Docker Engine and a QEMU guest that cannot be built here (exit 3): every
// stage runs, the e2e suite and the zoned node's tests run without a cluster and report themselves skipped.
func TestRunWithoutDockerOrGuest(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_GUEST_EXIT"] = "3"
	code, out, errs := f.run(t)
	if code != 0 {
		t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	// stages 1 to 5 on stderr, 6 to 8 through testsummary on stdout
	if got := append(banners(errs), banners(out)...); !reflect.DeepEqual(got, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("banners %v", got)
	}
	stageruntest.Contains(t, "stderr", errs,
		"\n==> [4/8] builds: Kubernetes (envtest), helm, the QEMU guest (0m",
		"build-guest: MISSING: qemu-system-x86_64 (Debian package qemu-system-x86)\n"+
			"test: the QEMU guest cannot be built here (above); its tests will say what they need\n",
		"test: no usable Docker Engine: the images are not built; their tests and the e2e suite will skip and say so\n",
		"stage timings (")
	stageruntest.Contains(t, "stdout", out,
		"test: no e2e cluster: no usable Docker Engine (docker info failed); the suite reports itself skipped\n",
		"test: no zoned node: the QEMU guest cannot be built here (stage 5 said why); its tests report themselves skipped\n",
		"3 passed, 0 failed, 0 skipped")
	if !strings.HasPrefix(stageruntest.LastLine(errs), "test: total 0m") {
		t.Errorf("stderr ends %q", stageruntest.LastLine(errs))
	}
	want := []string{
		"go-test -json -count=1 -timeout 45m example.com/a example.com/b | ZNS_E2E=unset ZNS_E2E_ZONED_NODE=unset ZNS_E2E_KUBECONFIG=unset ZNS_HELM=/fake/helm KUBEBUILDER_ASSETS=/fake/assets-envtest ZLOOP_MODULE=unset ZNS_REQUIRE_E2E=unset",
		"go-test -json -count=1 -timeout 40m -skip " + zonedPattern + " ./test/e2e/ | ZNS_E2E=unset ZNS_E2E_ZONED_NODE=unset ZNS_E2E_KUBECONFIG=unset ZNS_HELM=/fake/helm KUBEBUILDER_ASSETS=unset ZLOOP_MODULE=unset ZNS_REQUIRE_E2E=unset",
		"go-test -json -count=1 -run " + zonedPattern + " ./test/e2e/ | ZNS_E2E=unset ZNS_E2E_ZONED_NODE=unset ZNS_E2E_KUBECONFIG=unset ZNS_HELM=unset KUBEBUILDER_ASSETS=unset ZLOOP_MODULE=unset ZNS_REQUIRE_E2E=unset",
	}
	if got := f.CallLines(t, "go-test"); !reflect.DeepEqual(got, want) {
		t.Errorf("go test calls:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := f.CallLines(t, "kubernetes"); !reflect.DeepEqual(got, []string{"kubernetes envtest"}) {
		t.Errorf("kubernetes.sh: %v", got)
	}
	for _, p := range []string{"cluster", "zoned-node", "images", "node-image", "build-zloop-module"} {
		if got := f.CallLines(t, p+" "); len(got) != 0 {
			t.Errorf("ran %v", got)
		}
	}
	if got := stageLog(t, f); len(got) != 8 || !strings.HasPrefix(got[7], "8\tzoned end to end: a Kubernetes node with zoned devices under QEMU\t") {
		t.Errorf("stage log %q", got)
	}
	json, err := os.ReadFile(filepath.Join(f.Cache, "last-test.json"))
	if err != nil || !strings.Contains(string(json), `"Action":"pass"`) || !strings.Contains(string(json), "==> [6/8]") {
		t.Errorf("last-test.json: %v\n%s", err, json)
	}
}

// TestRunOwnClusterAndZonedNode: with Docker, the run builds the images and the node image, brings up its
// own cluster for stage 7 and deletes it before stage 8 boots the zoned node, whose settings the zoned tests
// get; each is taken down once.
func TestRunOwnClusterAndZonedNode(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_DOCKER"] = "ok"
	f.env["ZNS_TEST_BUDGET_MIN"] = "88"
	ycsb := filepath.Join(f.Cache, "tools", "go-ycsb-v1.0.1-linux-amd64", "go-ycsb")
	if err := os.MkdirAll(filepath.Dir(ycsb), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ycsb, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	r, stdout, stderr := f.runner(t)
	r.loopDir = t.TempDir()
	code := r.main()
	r.Finish()
	out, errs := stdout.String(), stderr.String()
	if code != 0 {
		t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	stageruntest.Contains(t, "stderr", errs,
		"\n==> [4/8] builds: Kubernetes (envtest and the kind node image), helm, the QEMU guest, the images (0m",
		"test: qemu-guest: /fake/guest\n",
		"test: images: done\n", "test: node-image: done\n",
		"test: go-ycsb: "+ycsb+" (the bench image's): TestYCSBRealServer runs it\n",
		"test: zloop-module: /fake/zloop.ko: the QEMU tier's zloop tests load it (ZLOOP_MODULE)\n")
	stageruntest.Contains(t, "stdout", out, "test: deleting the test cluster zns-test\n", "test: stage 8's tests get 4500s (ZONED_E2E_TIMEOUT 75m; 88 min budget, 0m")
	stageruntest.Contains(t, "stdout", out, "test: zoned-node: booting beside stage 7 at nice 10 (log: "+filepath.Join(f.Cache, "last-test-logs", "zoned-node.log")+")\n",
		"test: zoned-node: up; QEMU keeps nice 10 (open "+filepath.Join(f.Cache, "zoned-node", "pid")+": no such file or directory)\n")
	owner := "owner=" + strconv.Itoa(os.Getpid())
	want := []string{
		"kubernetes node",
		"go-test -json -count=1 -timeout 45m example.com/a example.com/b | ZNS_E2E=unset ZNS_E2E_ZONED_NODE=unset ZNS_E2E_KUBECONFIG=unset ZNS_HELM=/fake/helm KUBEBUILDER_ASSETS=/fake/assets-node ZLOOP_MODULE=/fake/zloop.ko ZNS_REQUIRE_E2E=unset",
		"cluster up zns-test node=offline workers=2",
		"load-images bench mariadb operator",
		// the zoned node boots beside the kind tier's tests (its up, in the background, is checked below)
		"zoned-node down " + owner,
		"go-test -json -count=1 -timeout 40m -skip " + zonedPattern + " ./test/e2e/ | ZNS_E2E=1 ZNS_E2E_ZONED_NODE=unset ZNS_E2E_KUBECONFIG=/fake/kind.kubeconfig ZNS_HELM=/fake/helm KUBEBUILDER_ASSETS=unset ZLOOP_MODULE=/fake/zloop.ko ZNS_REQUIRE_E2E=unset",
		// the kind node would take CPU from the emulated one
		"cluster down zns-test node=offline workers=2",
		"zoned-node env " + owner,
		"go-test -json -count=1 -timeout 4500s -run " + zonedPattern + " ./test/e2e/ | ZNS_E2E=1 ZNS_E2E_ZONED_NODE=zns-guest ZNS_E2E_KUBECONFIG=/fake/node.kubeconfig ZNS_HELM=/fake/helm KUBEBUILDER_ASSETS=unset ZLOOP_MODULE=/fake/zloop.ko ZNS_REQUIRE_E2E=unset",
		"zoned-node down " + owner,
	}
	var got []string
	for _, l := range f.CallLines(t, "") {
		for _, p := range []string{"kubernetes", "go-test", "cluster", "load-images", "zoned-node"} {
			if strings.HasPrefix(l, p+" ") {
				got = append(got, l)
			}
		}
	}
	// the boot beside stage 7 runs in the background: its up comes after the down before it and before stage 8
	up := slices.Index(got, "zoned-node up "+owner)
	if down, env := slices.Index(got, "zoned-node down "+owner), slices.Index(got, "zoned-node env "+owner); up < down || up > env {
		t.Errorf("zoned-node up at %d, want between its down (%d) and stage 8's env (%d)", up, down, env)
	} else {
		got = slices.Delete(got, up, up+1)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := f.CallLines(t, "build-guest"); len(got) != 2 {
		t.Errorf("build-guest.sh ran %d times, want 2 (the build, then its directory for zloop)", len(got))
	}
	if got := f.CallLines(t, "build-zloop-module"); !reflect.DeepEqual(got, []string{"build-zloop-module --for-guest /fake/guest"}) {
		t.Errorf("build-zloop-module.sh: %v", got)
	}
	if os.Geteuid() == 0 {
		stageruntest.Contains(t, "stdout", out, "test: no loop device (losetup: cannot find an unused loop device): the e2e tests that need one will skip and say so\n")
		if n := strings.Count(out, "test: no loop device"); n != 1 {
			t.Errorf("%d lines say there is no loop device, want 1: the others are not tried", n)
		}
		if left, _ := os.ReadDir(r.loopDir); len(left) != 0 {
			t.Errorf("the loop device's file is left: %v", left)
		}
	}
}

// TestRunFailureInTheTestStagesStillSummarizes: a stage of 6 to 8 that fails stops the stages, but the
// summary, the timings and the total are printed; the cleanups run once.
func TestRunFailureInTheTestStagesStillSummarizes(t *testing.T) {
	for _, tc := range []struct {
		name, knob string
		stage      int
		message    string
		calls      map[string]int
		last       string
	}{
		// booted beside stage 7, failed; booted again in stage 8, failed again
		{"zoned node down", "FAKE_NODE_UP", 8,
			"test: ERROR in stage 8. the zoned node did not come up (above; its log: CACHE/zoned-node/guest.log); hack/qemu/zoned-node.sh up alone tries again, ZNS_E2E=0 make test skips it\n",
			map[string]int{"cluster down": 1, "zoned-node down": 3, "zoned-node up": 2, "zoned-node env": 0}, "test: total "},
		{"cluster down", "FAKE_CLUSTER_UP", 7,
			"test: ERROR in stage 7. the test cluster did not come up (above); hack/kind/cluster.sh status shows it, ZNS_E2E=0 make test skips this tier\n",
			map[string]int{"cluster up": 1, "cluster down": 1, "load-images": 0, "zoned-node": 0}, "test: deleting the test cluster zns-test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.env["FAKE_DOCKER"] = "ok"
			f.env[tc.knob] = "1"
			code, out, errs := f.run(t)
			if code != 1 {
				t.Errorf("status %d, want 1", code)
			}
			stageruntest.Contains(t, "stdout", out, strings.ReplaceAll(tc.message, "CACHE", f.Cache), "passed, 0 failed")
			stageruntest.Contains(t, "stderr", errs, "stage timings (")
			if got := banners(out); got[len(got)-1] != tc.stage {
				t.Errorf("banners %v: the last should be the failed stage's", got)
			}
			// the total, then what the cleanups say (bash's EXIT trap came after it too)
			if !strings.HasPrefix(stageruntest.LastLine(errs), tc.last) || !strings.Contains(errs, "\ntest: total ") {
				t.Errorf("stderr ends %q, want %q after the total", stageruntest.LastLine(errs), tc.last)
			}
			for prefix, n := range tc.calls {
				if got := f.CallLines(t, prefix); len(got) != n {
					t.Errorf("%q: %d calls, want %d: %v", prefix, len(got), n, got)
				}
			}
		})
	}
}

// TestRunStopsAtAFailedStage: a failure before the tests stops the run with its stage's message and status 1,
// the later stages do not begin.
func TestRunStopsAtAFailedStage(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_MAKE_EXIT"] = "2"
	code, out, errs := f.run(t)
	if code != 1 || out != "" {
		t.Errorf("status %d, stdout %q", code, out)
	}
	if !strings.HasSuffix(errs, "\n\ntest: ERROR in stage 3. fix what is shown above: 'make generate' rewrites the generated files, 'gofmt -w operator test hack' formats, 'make lint-shell' reruns shellcheck on the shell scripts, 'make lint' reruns it and staticcheck\n") {
		t.Errorf("stderr:\n%s", errs)
	}
	if got := banners(errs); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("banners %v", got)
	}
	if got := stageLog(t, f); len(got) != 3 {
		t.Errorf("stage log %q", got)
	}
	if got := f.CallLines(t, "build-guest"); len(got) != 0 {
		t.Errorf("stage 4 began: %v", got)
	}
}

// TestRunGuestBuildFailureStopsStage5: a guest build that fails otherwise than for a missing prerequisite
// stops the run, showing its log's end.
func TestRunGuestBuildFailureStopsStage5(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_GUEST_EXIT"] = "1"
	code, _, errs := f.run(t)
	if code != 1 {
		t.Errorf("status %d", code)
	}
	stageruntest.Contains(t, "stderr", errs, "build-guest: MISSING: qemu-system-x86_64 (Debian package qemu-system-x86)\n\ntest: ERROR in stage 5. building the QEMU guest failed (above; hack/qemu/build-guest.sh alone shows it again)\n")
}

// TestRunRequireE2EWithoutDocker: ZNS_REQUIRE_E2E=1 and no Docker Engine: stage 0 fails at once, naming it.
func TestRunRequireE2EWithoutDocker(t *testing.T) {
	f := newFake(t)
	f.env["ZNS_REQUIRE_E2E"] = "1"
	code, out, errs := f.run(t)
	if want := "\ntest: ERROR in stage 0. ZNS_REQUIRE_E2E=1 but no usable Docker Engine (docker info failed): start the Docker Engine\n"; code != 1 || errs != want || out != "" {
		t.Errorf("got %d, %q, %q; want 1 and %q", code, out, errs, want)
	}
	if got := f.CallLines(t, ""); len(got) != 0 {
		t.Errorf("ran %v", got)
	}
}

// TestRunRequireQEMUWithoutGuest: ZNS_REQUIRE_QEMU=1 and no guest: stage 8 fails instead of skipping.
func TestRunRequireQEMUWithoutGuest(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_GUEST_EXIT"] = "3"
	f.env["ZNS_REQUIRE_QEMU"] = "1"
	code, out, _ := f.run(t)
	if code != 1 {
		t.Errorf("status %d", code)
	}
	stageruntest.Contains(t, "stdout", out, "\ntest: ERROR in stage 8. ZNS_REQUIRE_QEMU=1 but the QEMU guest cannot be built here (stage 5 said why)\n")
	if got := f.CallLines(t, "go-test"); len(got) != 2 {
		t.Errorf("go test ran %d times, want 2 (stages 6 and 7)", len(got))
	}
}

// TestRunGoTestFailureFailsTheRun: a go test that exits non-zero makes the run's status non-zero even when
// testsummary saw no failed test.
func TestRunGoTestFailureFailsTheRun(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_GUEST_EXIT"] = "3"
	f.env["FAKE_GO_TEST_EXIT"] = "2"
	if code, out, _ := f.run(t); code != 2 || !strings.Contains(out, "3 passed, 0 failed") {
		t.Errorf("status %d, want go test's 2; stdout:\n%s", code, out)
	}
}

// TestInterruptSaysWhatItUndoes: SIGTERM runs the cleanups once and says so (stagerun's tests cover the
// commands and jobs it stops); the run's status is 128+15.
func TestInterruptSaysWhatItUndoes(t *testing.T) {
	f := newFake(t)
	r, _, errs := f.runner(t)
	cleaned := 0
	r.Cleanups.Add("count", func() { cleaned++ })
	if code := r.Interrupt(syscall.SIGTERM); code != 143 {
		t.Errorf("status %d", code)
	}
	r.Finish()
	if cleaned != 1 {
		t.Errorf("the cleanup ran %d times", cleaned)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "test: terminated: killing the background jobs, then undoing what the run set up\n")
}

// TestRunNodeBesideOff: with ZNS_TEST_NODE_BESIDE=0 the zoned node boots in stage 8, once the kind cluster is gone.
func TestRunNodeBesideOff(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_DOCKER"] = "ok"
	f.env["ZNS_TEST_NODE_BESIDE"] = "0"
	code, out, errs := f.run(t)
	if code != 0 {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var got []string
	for _, l := range f.CallLines(t, "") {
		if strings.HasPrefix(l, "cluster down") || strings.HasPrefix(l, "zoned-node up") {
			got = append(got, strings.Fields(l)[0]+" "+strings.Fields(l)[1])
		}
	}
	if want := []string{"cluster down", "zoned-node up"}; !reflect.DeepEqual(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	if strings.Contains(out, "booting beside stage 7") {
		t.Error("the run says it boots the node beside stage 7")
	}
}

// TestRunIsPureGo: the run's commands build without cgo, as the Kubernetes binaries and the images' Go binaries
// are built, unless CGO_ENABLED was given.
func TestRunIsPureGo(t *testing.T) {
	for given, want := range map[string]string{"": "0", "1": "1"} {
		f := newFake(t)
		if given != "" {
			f.env["CGO_ENABLED"] = given
		}
		r, _, _ := f.runner(t)
		if err := r.prepare(); err != nil {
			t.Fatal(err)
		}
		if got := r.Env.Get("CGO_ENABLED"); got != want {
			t.Errorf("CGO_ENABLED=%q given: the run's commands get %q, want %q", given, got, want)
		}
		r.Finish()
	}
}

// TestReniceProcessGroup: every process of the group the PID file names gets the niceness, children included
// (QEMU is a child of run.sh's process).
func TestReniceProcessGroup(t *testing.T) {
	c := exec.Command("sh", "-c", "sleep 30 & sleep 30 & wait")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := c.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL); _ = c.Wait() })
	pidFile := filepath.Join(t.TempDir(), "pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pgid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var members []int
	stageruntest.WaitFor(t, "the two children started", func() bool {
		members = members[:0]
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			if pid, err := strconv.Atoi(p.Name()); err == nil && processGroup(pid) == pgid {
				members = append(members, pid)
			}
		}
		return len(members) == 3
	})
	if err := reniceProcess(pidFile, 7); err != nil {
		t.Fatal(err)
	}
	for _, pid := range members {
		// getpriority's raw value is 20 - nice
		if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, pid); err != nil || 20-prio != 7 {
			t.Errorf("process %d of the group: nice %d (%v), want 7", pid, 20-prio, err)
		}
	}
	if err := reniceProcess(filepath.Join(t.TempDir(), "none"), 0); err == nil {
		t.Error("no error for a missing PID file")
	}
}
