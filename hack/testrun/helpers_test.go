package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

// The tests run the runner against a fake repository: the scripts it calls (hack/install-deps.sh,
// hack/qemu/build-guest.sh, hack/kind/cluster.sh, ...) and the tools on PATH (go, make, docker, losetup) are
// small shell scripts that log how they were called to $CALLS and do what the test's FAKE_* variables say.
// hack/testsummary is the real one. No Docker, kind or QEMU is needed.

// realTestsummary builds hack/testsummary once for the tests (into testsummaryDir); the fake `go build`
// copies it.
var realTestsummary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "testrun-test.")
	if err != nil {
		return "", err
	}
	testsummaryDir = dir
	bin := filepath.Join(dir, "testsummary")
	out, err := exec.Command("go", "build", "-o", bin, "../testsummary").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ../testsummary: %v\n%s", err, out)
	}
	return bin, nil
})

var testsummaryDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if testsummaryDir != "" {
		os.RemoveAll(testsummaryDir)
	}
	os.Exit(code)
}

// fakeScripts are the fake repository's scripts and tools, by path (bin/: the tools on PATH).
var fakeScripts = map[string]string{
	"hack/install-deps.sh": `echo "install-deps" >>"$CALLS"; exit "${FAKE_DEPS_EXIT:-0}"`,
	"hack/helm.sh":         `echo "helm" >>"$CALLS"; echo /fake/helm`,
	"hack/kubernetes.sh":   `echo "kubernetes $1" >>"$CALLS"; echo "/fake/assets-$1"`,
	"hack/qemu/build-guest.sh": `echo "build-guest" >>"$CALLS"
if [ "${FAKE_GUEST_EXIT:-0}" != 0 ]; then echo "build-guest: MISSING: qemu-system-x86_64 (Debian package qemu-system-x86)" >&2; exit "$FAKE_GUEST_EXIT"; fi
echo "building the guest" >&2; echo /fake/guest`,
	"hack/qemu/build-zloop-module.sh": `echo "build-zloop-module $*" >>"$CALLS"; echo "build-zloop-module: built" >&2; echo /fake/zloop.ko`,
	"hack/images/build.sh":            `echo "images $*" >>"$CALLS"; echo "built the images"`,
	"hack/kind/build-node-image.sh":   `echo "node-image" >>"$CALLS"; echo "built the node image"`,
	"hack/kind/cluster.sh": `echo "cluster $1 $ZNS_KIND_CLUSTER node=$ZNS_KIND_NODE workers=$ZNS_KIND_WORKERS" >>"$CALLS"
if [ "$1" = up ]; then [ "${FAKE_CLUSTER_UP:-0}" = 0 ] || { echo "kind: no cluster" >&2; exit 1; }; echo /fake/kind.kubeconfig; fi`,
	"hack/kind/load-images.sh": `echo "load-images $*" >>"$CALLS"; echo faketag`,
	"hack/qemu/zoned-node.sh": `echo "zoned-node $1 owner=$ZNS_NODE_OWNER" >>"$CALLS"
case "$1" in
up) [ "${FAKE_NODE_UP:-0}" = 0 ] || { echo "zoned-node: did not boot" >&2; exit 1; }; echo "node is up" ;;
env) echo "export ZNS_E2E=1 ZNS_E2E_KUBECONFIG=/fake/node.kubeconfig ZNS_E2E_ZONED_NODE=zns-guest ZNS_E2E_TIME_SCALE=4" ;;
esac`,
	"bin/docker":  `[ "$1" = info ] && [ "${FAKE_DOCKER:-}" = ok ]`,
	"bin/make":    `echo "make $*" >>"$CALLS"; exit "${FAKE_MAKE_EXIT:-0}"`,
	"bin/losetup": `echo "losetup $*" >>"$CALLS"; echo "losetup: cannot find an unused loop device" >&2; exit 1`,
	"bin/go": `case "$1" in
mod) echo "go $*" >>"$CALLS" ;;
env) echo "go $*" >>"$CALLS"; echo amd64 ;;
list) echo "go $*" >>"$CALLS"; printf '%s\n' example.com/a github.com/zns-mysql/zns-mysql/test/e2e example.com/b ;;
build) echo "go $*" >>"$CALLS"; cp "$REAL_TESTSUMMARY" "$3" ;;
test)
  shift
  echo "go-test $* | ZNS_E2E=${ZNS_E2E-unset} ZNS_E2E_ZONED_NODE=${ZNS_E2E_ZONED_NODE-unset} ZNS_E2E_KUBECONFIG=${ZNS_E2E_KUBECONFIG-unset} ZNS_HELM=${ZNS_HELM-unset} KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS-unset} ZLOOP_MODULE=${ZLOOP_MODULE-unset} ZNS_REQUIRE_E2E=${ZNS_REQUIRE_E2E-unset}" >>"$CALLS"
  n=$(wc -l <"$CALLS")
  printf '{"Action":"run","Package":"fake","Test":"Test%s"}\n{"Action":"pass","Package":"fake","Test":"Test%s","Elapsed":0}\n{"Action":"pass","Package":"fake","Elapsed":0}\n' "$n" "$n"
  exit "${FAKE_GO_TEST_EXIT:-0}" ;;
esac`,
}

// fake is a fake repository and the run's environment.
type fake struct {
	*stageruntest.Repo
	env stageruntest.Knobs // the run's knobs and FAKE_* settings
}

func newFake(t *testing.T) *fake {
	t.Helper()
	ts, err := realTestsummary()
	if err != nil {
		t.Fatal(err)
	}
	repo := stageruntest.NewRepo(t, fakeScripts, "bin")
	if err := os.WriteFile(filepath.Join(repo.Root, "versions.mk"), []byte("YCSB_VERSION := v1.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fake{Repo: repo, env: repo.Knobs()}
	f.env["REAL_TESTSUMMARY"] = ts
	return f
}

// runner is a runner on the fake repository, with the knobs of f.env, writing into out and errs.
func (f *fake) runner(t *testing.T) (*runner, *stageruntest.SyncBuffer, *stageruntest.SyncBuffer) {
	t.Helper()
	out, errs := stageruntest.Outputs()
	r := newRunner(stageruntest.Config(t, parseConfig, f.env), f.Root, f.env.List(), nil, out, errs)
	r.KillGrace = 200 * time.Millisecond
	return r, out, errs
}

// run is a whole run: its status, stdout and stderr.
func (f *fake) run(t *testing.T) (int, string, string) {
	t.Helper()
	r, out, errs := f.runner(t)
	code := r.main()
	r.Finish()
	return code, out.String(), errs.String()
}
