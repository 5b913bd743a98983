package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

func TestE2EModeFor(t *testing.T) {
	for _, tc := range []struct {
		c        Config
		dockerOK bool
		mode     e2eMode
		why      string
		failure  string
	}{
		{Config{}, true, e2eOwn, "", ""},
		{Config{E2EKubeconfig: "/k"}, false, e2eGiven, "", ""},
		{Config{E2EOff: true, E2EKubeconfig: "/k", RequireE2E: true}, true, e2eNone, "ZNS_E2E=0", ""},
		{Config{}, false, e2eNone, "no usable Docker Engine (docker info failed)", ""},
		{Config{RequireE2E: true}, false, e2eNone, "no usable Docker Engine (docker info failed)",
			"ERROR in stage 0. ZNS_REQUIRE_E2E=1 but no usable Docker Engine (docker info failed): start the Docker Engine"},
	} {
		mode, why, err := e2eModeFor(tc.c, tc.dockerOK)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if mode != tc.mode || why != tc.why || got != tc.failure {
			t.Errorf("%+v, docker %v: got %s %q %q; want %s %q %q", tc.c, tc.dockerOK, mode, why, got, tc.mode, tc.why, tc.failure)
		}
	}
}

func TestWhatStage4Builds(t *testing.T) {
	for _, tc := range []struct {
		mode       e2eMode
		dockerOK   bool
		name, kube string
	}{
		{e2eOwn, true, "builds: Kubernetes (envtest and the kind node image), helm, the QEMU guest, the images", "node"},
		{e2eGiven, true, "builds: Kubernetes (envtest), helm, the QEMU guest, the images", "envtest"},
		{e2eNone, false, "builds: Kubernetes (envtest), helm, the QEMU guest", "envtest"},
	} {
		if got := buildsName(tc.mode, tc.dockerOK); got != tc.name {
			t.Errorf("%s, docker %v: %q", tc.mode, tc.dockerOK, got)
		}
		if got := kubeSet(tc.mode); got != tc.kube {
			t.Errorf("%s: kubernetes.sh %s, want %s", tc.mode, got, tc.kube)
		}
	}
}

func TestGuestOutcome(t *testing.T) {
	log := filepath.Join(t.TempDir(), "qemu-guest.log")
	body := ""
	for i := 1; i <= 45; i++ {
		body += "line " + string(rune('A'+i%26)) + "\n"
	}
	body += "/cache/qemu-guest/current\n"
	if err := os.WriteFile(log, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if show, msg, err := guestOutcome(0, log); show != "" || msg != "qemu-guest: /cache/qemu-guest/current" || err != nil {
		t.Errorf("0: %q %q %v", show, msg, err)
	}
	// exit 3: a prerequisite is missing; the guest tier skips, saying what it needs
	if show, msg, err := guestOutcome(3, log); show != stagerun.TailLines(log, 5) || msg != "the QEMU guest cannot be built here (above); its tests will say what they need" || err != nil {
		t.Errorf("3: %q %q %v", show, msg, err)
	}
	show, _, err := guestOutcome(1, log)
	var f *Failure
	if show != stagerun.TailLines(log, 40) || !errors.As(err, &f) || f.Stage != 5 {
		t.Errorf("1: %q %v", show, err)
	}
}

func TestZonedSkipWhy(t *testing.T) {
	for _, tc := range []struct {
		qemuRC   int
		dockerOK bool
		c        Config
		want     string
	}{
		{0, true, Config{}, ""},
		{3, true, Config{}, "the QEMU guest cannot be built here (stage 5 said why)"},
		{0, false, Config{}, "no usable Docker Engine for the images"},
		// test.sh read ZNS_E2E after stage 7 had unset it, so ZNS_E2E=0 did not keep the zoned node off
		{0, true, Config{E2EOff: true}, "ZNS_E2E=0"},
	} {
		if got := zonedSkipWhy(tc.qemuRC, tc.dockerOK, tc.c); got != tc.want {
			t.Errorf("%d %v %+v: %q, want %q", tc.qemuRC, tc.dockerOK, tc.c, got, tc.want)
		}
	}
}

func TestStage8FailsWithRequireQEMU(t *testing.T) {
	f := newFake(t)
	f.env["ZNS_REQUIRE_QEMU"] = "1"
	r, _, _ := f.runner(t)
	r.qemuRC, r.dockerOK = 3, true
	rc, err := r.zonedE2E()
	var fl *Failure
	if rc != 0 || !errors.As(err, &fl) || fl.Stage != 8 || fl.ToDo != "ZNS_REQUIRE_QEMU=1 but the QEMU guest cannot be built here (stage 5 said why)" {
		t.Errorf("got %d, %v", rc, err)
	}
	if got := f.CallLines(t, ""); len(got) != 0 {
		t.Errorf("ran %v", got)
	}
}

func TestZloopMessages(t *testing.T) {
	log := "build-zloop-module: downloading linux-source\n" +
		"build-zloop-module: MISSING: gcc-14 (the log's last lines above): fix what it says and run again (finished steps are kept)\n" +
		"build-zloop-module: make: still running, 1m00s elapsed\n"
	if got := zloopWhy(log); got != "gcc-14" {
		t.Errorf("zloopWhy: %q", got)
	}
	if got := zloopError(2, log, "/l/zloop-module.log"); got != "hack/qemu/build-zloop-module.sh exited 2: gcc-14 (its log: /l/zloop-module.log)" {
		t.Errorf("zloopError: %q", got)
	}
	if got := zloopError(1, "oops\n", "/l"); got != "hack/qemu/build-zloop-module.sh exited 1: no message (its log: /l)" {
		t.Errorf("zloopError without a message: %q", got)
	}
	if got := zloopWhy("build-zloop-module: ERROR: first\nbuild-zloop-module: ERROR: the kernel headers are missing\n"); got != "the kernel headers are missing" {
		t.Errorf("the last ERROR: %q", got)
	}
	said := "build-zloop-module: building\nbuild-zloop-module: the guest's kernel has zloop built in: no module needed\nbuild-zloop-module: x: still running, 0m30s elapsed\n"
	if got := zloopSaid(said); got != "the guest's kernel has zloop built in: no module needed" {
		t.Errorf("zloopSaid: %q", got)
	}
}

func TestReadPin(t *testing.T) {
	mk := "# pins\nYCSB_VERSION := v1.0.0\n  YCSB_VERSION?=v1.0.1 # the newer\nYCSB_VERSION_X := no\nKIND_VERSION = v0.27.0\n"
	for name, want := range map[string]string{"YCSB_VERSION": "v1.0.1", "KIND_VERSION": "v0.27.0"} {
		if got, err := readPin(mk, name); got != want || err != nil {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	if _, err := readPin(mk, "GO_VERSION"); err == nil || err.Error() != "versions.mk has no 'GO_VERSION := <value>' line" {
		t.Errorf("a missing pin: %v", err)
	}
	if got := ycsbBin("/c", "v1.0.1", "arm64"); got != "/c/tools/go-ycsb-v1.0.1-linux-arm64/go-ycsb" {
		t.Errorf("ycsbBin: %q", got)
	}
}

func TestWithoutPackage(t *testing.T) {
	got := withoutPackage("a\n"+e2ePackage+"\n"+e2ePackage+"/sub\nb", e2ePackage)
	if want := []string{"a", e2ePackage + "/sub", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
