package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

// fakeScripts are the scripts up runs, as small shell scripts that log their calls; the fake run.sh plays the
// guest: it says it started and, unless FAKE_NEVER_READY, that the node is ready, then waits to be stopped.
var fakeScripts = map[string]string{
	"hack/qemu/build-guest.sh":      `echo build-guest >>"$CALLS"; mkdir -p "$ZNS_CACHE_DIR/guest"; echo 7.3.0-test >"$ZNS_CACHE_DIR/guest/kernel-release"; echo "$ZNS_CACHE_DIR/guest"`,
	"hack/kubernetes.sh":            `echo "kubernetes $1" >>"$CALLS"; mkdir -p "$ZNS_CACHE_DIR/kubernetes/bin"; echo kubectl >"$ZNS_CACHE_DIR/kubernetes/bin/kubectl"; echo "$ZNS_CACHE_DIR/kubernetes/bin"`,
	"hack/kind/load-images.sh":      `echo "load-images $*" >>"$CALLS"; echo images >"$2"; echo "zns.local/bench:c-1 zns.local/mariadb:c-1 zns.local/operator:c-1" >"$2.tags"; echo c-1`,
	"hack/kind/build-node-image.sh": `echo "node-image $ZNS_KIND_REBUILD" >>"$CALLS"`,
	"hack/qemu/image-disk.sh":       `echo "image-disk $1" >>"$CALLS"; echo disk >"$1"`,
	"hack/qemu/guest-node/node.sh":  `echo the guest init`,
	"hack/qemu/run.sh": `echo "run.sh $*" >>"$CALLS"
echo "Booting from ROM..zoned-node: start"
[ -n "$FAKE_GUEST_EXIT" ] && exit "$FAKE_GUEST_EXIT"
[ -n "$FAKE_NEVER_READY" ] || echo "zoned-node: ready after 1s"
echo "zoned-node: cpu since boot: apiserver 1"
exec sleep 300`,
	"bin/docker": `echo "docker $1" >>"$CALLS"; if [ "$1" = save ]; then echo saved >"$3"; else cat >/dev/null; fi`,
}

// fakeNode is a node on a fake repository whose cache holds the kind node image's parts.
func fakeNode(t *testing.T, env map[string]string) (*node, *stageruntest.Repo, *stageruntest.SyncBuffer, *stageruntest.SyncBuffer) {
	t.Helper()
	repo := stageruntest.NewRepo(t, fakeScripts, "bin")
	for _, part := range []string{"containerd-v2.0.14/containerd", "coredns-v1.14.2/coredns", "kubernetes-v1.36.3/pause"} {
		p := filepath.Join(repo.Cache, "kind", "parts", part)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	knobs := repo.Knobs()
	for k, v := range env {
		knobs[k] = v
	}
	knobs["ZNS_NODE_ACCEL"] = "tcg"
	if _, ok := knobs["ZNS_NODE_CONTROL_PLANE"]; !ok {
		// the fake run.sh plays a guest with its own control plane; TestUpWithTheControlPlaneOnTheHost the host's
		knobs["ZNS_NODE_CONTROL_PLANE"] = "guest"
	}
	cfg := stageruntest.Config(t, parseConfig, knobs)
	if err := os.MkdirAll(filepath.Join(cfg.CacheRoot, "zoned-node"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errs := stageruntest.Outputs()
	n := newNode(cfg, repo.Root, knobs.List(), out, errs)
	n.sleep = func(time.Duration) { time.Sleep(20 * time.Millisecond) }
	// never this test binary: run as serve, it would run the tests again
	n.self = func() (string, error) { return "", errors.New("no zonednode binary in this test") }
	n.ProgressEvery = 50 * time.Millisecond
	t.Cleanup(func() {
		if p := n.pid(); p > 0 {
			_ = syscall.Kill(-p, syscall.SIGKILL)
		}
	})
	return n, repo, out, errs
}

// TestUpEnvDown: up prepares the share, boots run.sh in a process group of its own, waits for the guest's
// "ready" and prints the kubeconfig; env gives the suite's settings; down stops the whole group by its leader.
func TestUpEnvDown(t *testing.T) {
	n, repo, out, errs := fakeNode(t, map[string]string{"ZNS_NODE_OWNER": strconv.Itoa(os.Getpid()), "ZNS_NODE_OWNER_WHAT": "a test"})
	if err := n.up(); err != nil {
		t.Fatalf("up: %v\n%s", err, errs)
	}
	if got := out.String(); got != n.kubeconfig+"\n" {
		t.Errorf("up printed %q, want the kubeconfig's path alone", got)
	}
	kc, _ := os.ReadFile(n.kubeconfig)
	token, _ := os.ReadFile(filepath.Join(n.share, "token"))
	if len(token) != 48 || !strings.Contains(string(kc), `token: "`+string(token)+`"`) || !strings.Contains(string(kc), "https://127.0.0.1:16") {
		t.Errorf("kubeconfig:\n%s\ntoken %q", kc, token)
	}
	if st, err := os.Stat(n.kubeconfig); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v (%v), want 0600: it holds the token", st.Mode(), err)
	}
	pid := n.pid()
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("run.sh (pid %d) in process group %d (%v), want a group of its own", pid, pgid, err)
	}
	for _, f := range []string{"images.tar", "pause.tar", "node.sh", "image-disk"} {
		if _, err := os.Stat(filepath.Join(n.share, f)); err != nil {
			t.Errorf("the share lacks %s: %v", f, err)
		}
	}
	if list, _ := os.ReadFile(filepath.Join(n.share, "images.list")); string(list) != "zns.local/bench:c-1\nzns.local/mariadb:c-1\nzns.local/operator:c-1\n" {
		t.Errorf("images.list %q", list)
	}
	// the cache lies under /tmp, which the guest has its own of: the binaries and parts are linked into the share
	if paths := n.read("paths"); paths != filepath.Join(n.share, "assets")+"\n"+filepath.Join(n.share, "parts") {
		t.Errorf("paths %q, want the share's links", paths)
	} else if _, err := os.Stat(filepath.Join(n.share, "parts", "kubernetes-v1.36.3", "pause")); err != nil {
		t.Errorf("parts not linked: %v", err)
	}
	if got := n.read("owner"); got != strconv.Itoa(os.Getpid())+" a test" {
		t.Errorf("owner %q", got)
	}
	calls := strings.Join(repo.CallLines(t, ""), "\n")
	for _, want := range []string{"build-guest", "kubernetes node", "load-images --save", "image-disk " + n.imagesDir, "run.sh --userland --accel tcg"} {
		if !strings.Contains(calls, want) {
			t.Errorf("no call %q in\n%s", want, calls)
		}
	}
	stageruntest.Contains(t, "stderr", errs.String(), "zoned-node: images imported on the host into ", "zoned-node: node Ready with the images after 0m00s (zoned-node: ready after 1s)\n")

	out2, _ := stageruntest.Outputs()
	n.result = out2
	if err := n.env(); err != nil || !strings.Contains(out2.String(), "ZNS_E2E_KUBECONFIG="+n.kubeconfig+" ZNS_E2E_TAG=c-1 ZNS_E2E_ZONED_NODE=zns-guest ZNS_E2E_TIME_SCALE=4") {
		t.Errorf("env: %q, %v", out2.String(), err)
	}

	// a later up of the same owner finds it up
	if err := n.up(); err != nil || !strings.Contains(errs.String(), "already up (tcg)") {
		t.Errorf("second up: %v", err)
	}
	if err := n.down(); err != nil {
		t.Fatal(err)
	}
	stageruntest.WaitFor(t, "the guest's process group gone", func() bool { return syscall.Kill(-pid, 0) != nil })
	for _, f := range []string{"pid", "ready", "owner"} {
		if _, err := os.Stat(n.path(f)); !os.IsNotExist(err) {
			t.Errorf("%s left after down (%v)", f, err)
		}
	}
	stageruntest.Contains(t, "stderr", errs.String(), "zoned-node: cpu since boot: apiserver 1\n", "zoned-node: stopping the node (QEMU process group "+strconv.Itoa(pid)+")\n")
	if err := n.env(); err == nil {
		t.Error("env of a node that is down")
	}
}

// TestAnotherOwnersNode: while the run that brought the node up lives, another run neither stops nor takes it.
func TestAnotherOwnersNode(t *testing.T) {
	n, _, _, errs := fakeNode(t, map[string]string{"ZNS_NODE_OWNER": strconv.Itoa(os.Getpid()), "ZNS_NODE_OWNER_WHAT": "make test in /x"})
	if err := n.up(); err != nil {
		t.Fatalf("up: %v\n%s", err, errs)
	}
	other := *n
	other.cfg.Owner = strconv.Itoa(os.Getppid())
	other.guestDone = nil // another process: it knows the guest by its pid file only
	for what, act := range map[string]func() error{"stop": other.down, "take over": other.up} {
		if err := act(); err == nil || !strings.Contains(err.Error(), "cannot "+what+" the zoned node: another run uses it (pid "+strconv.Itoa(os.Getpid())+", make test in /x)") {
			t.Errorf("%s: %v", what, err)
		}
	}
	if !n.running() {
		t.Error("the refused down stopped the node")
	}
	if err := n.down(); err != nil {
		t.Error(err)
	}
}

// TestGuestThatStops: a guest that ends before it is ready fails up with the end of its log.
func TestGuestThatStops(t *testing.T) {
	n, _, _, errs := fakeNode(t, map[string]string{"FAKE_GUEST_EXIT": "3"})
	err := n.up()
	if err == nil || !strings.Contains(err.Error(), "the guest stopped before the node was ready") {
		t.Fatalf("up: %v", err)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "  | Booting from ROM..zoned-node: start\n")
}

// TestBootTimeout: a node not ready in time is stopped, and up says which knob gives it more.
func TestBootTimeout(t *testing.T) {
	n, _, _, errs := fakeNode(t, map[string]string{"FAKE_NEVER_READY": "1", "ZNS_NODE_BOOT_TIMEOUT": "1"})
	err := n.up()
	if err == nil || !strings.Contains(err.Error(), "the node was not ready within 1s (ZNS_NODE_BOOT_TIMEOUT)") {
		t.Fatalf("up: %v", err)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "zoned-node: still booting, 0m0", ": zoned-node: cpu since boot: apiserver 1\n", "zoned-node: stopping the node")
	if n.running() {
		t.Error("the node still runs after the timeout")
	}
}

// TestImageDiskOfAnEarlierBoot: the same images boot from the disk an earlier boot made, copy-on-write.
func TestImageDiskOfAnEarlierBoot(t *testing.T) {
	n, repo, _, errs := fakeNode(t, nil)
	if err := n.up(); err != nil {
		t.Fatalf("up: %v\n%s", err, errs)
	}
	if err := n.down(); err != nil {
		t.Fatal(err)
	}
	if err := n.up(); err != nil {
		t.Fatalf("second up: %v\n%s", err, errs)
	}
	if n := len(repo.CallLines(t, "image-disk")); n != 1 {
		t.Errorf("the host made the image disk %d times, want once", n)
	}
	if disk := n.read("disk"); !strings.HasSuffix(disk, ".img,snapshot") {
		t.Errorf("disk %q, want the earlier boot's, copy-on-write", disk)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "zoned-node: images from the image disk of an earlier boot (")
}

func TestRunRefusesBadCommandsAndKnobs(t *testing.T) {
	out, errs := stageruntest.Outputs()
	if rc := run([]string{"reboot"}, func(string) string { return "" }, out, errs); rc != 2 || !strings.Contains(errs.String(), "zoned-node.sh up") {
		t.Errorf("unknown command: %d", rc)
	}
	if rc := run([]string{"--help"}, func(string) string { return "" }, out, errs); rc != 0 || !strings.Contains(out.String(), "ZNS_NODE_BOOT_TIMEOUT") {
		t.Errorf("--help: %d", rc)
	}
	env := map[string]string{"ZNS_CACHE_DIR": t.TempDir(), "ZNS_NODE_MEM": "0"}
	if rc := run([]string{"status"}, func(k string) string { return env[k] }, out, errs); rc != 2 || !strings.Contains(errs.String(), "ZNS_NODE_MEM=0") {
		t.Errorf("bad knob: %d\n%s", rc, errs)
	}
}

// TestUpWithTheControlPlaneOnTheHost: up hands the boot to serve (this package built for real), which leads the
// process group with run.sh and the control plane's daemons; the guest finds the marker, its kubeconfig at
// 10.0.2.100 and the CA in the share; down stops the whole group.
func TestUpWithTheControlPlaneOnTheHost(t *testing.T) {
	goBin, err := exec.LookPath("go") // before the fake repository's PATH
	if err != nil {
		t.Fatal(err)
	}
	n, repo, _, errs := fakeNode(t, map[string]string{"ZNS_NODE_CONTROL_PLANE": "host"})
	bin := filepath.Join(t.TempDir(), "zonednode")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	n.self = func() (string, error) { return bin, nil }
	assets := filepath.Join(repo.Cache, "kubernetes", "bin")
	if err := os.MkdirAll(assets, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"etcd", "kube-apiserver"} {
		script := "#!/bin/sh\necho \"" + d + " $$ $*\" >>\"$CALLS\"\nexec sleep 300\n"
		if err := os.WriteFile(filepath.Join(assets, d), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.up(); err != nil {
		t.Fatalf("up: %v\n%s", err, errs)
	}
	pid := n.pid()
	if args, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); !strings.HasPrefix(string(args), bin+"\x00serve\x00") {
		t.Errorf("the group's leader runs %q, want serve", args)
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("serve (pid %d) in process group %d (%v), want a group of its own", pid, pgid, err)
	}
	kc, _ := os.ReadFile(filepath.Join(n.share, "kc.yaml"))
	marker, _ := os.ReadFile(filepath.Join(n.share, "control-plane"))
	if !strings.Contains(string(kc), "https://10.0.2.100:") || string(marker) != "host\n" {
		t.Errorf("the share's kc.yaml %q, control-plane %q", kc, marker)
	}
	if _, err := os.Stat(filepath.Join(n.share, "ca.crt")); err != nil {
		t.Error(err)
	}
	var daemons []int
	stageruntest.WaitFor(t, "etcd and the API server started", func() bool {
		daemons = nil
		for _, l := range repo.CallLines(t, "") {
			var name string
			var p int
			if _, err := fmt.Sscan(l, &name, &p); err == nil && (name == "etcd" || name == "kube-apiserver") {
				daemons = append(daemons, p)
			}
		}
		return len(daemons) == 2
	})
	calls := strings.Join(repo.CallLines(t, ""), "\n")
	for _, want := range []string{"--guestfwd 10.0.2.100:", bin + " pipe 127.0.0.1:", "--advertise-address 10.0.2.100"} {
		if !strings.Contains(calls, want) {
			t.Errorf("no %q in the calls:\n%s", want, calls)
		}
	}
	if err := n.down(); err != nil {
		t.Fatal(err)
	}
	stageruntest.WaitFor(t, "the node's process group gone", func() bool { return syscall.Kill(-pid, 0) != nil })
	for _, p := range daemons {
		if syscall.Kill(p, 0) == nil {
			t.Errorf("daemon %d outlived down", p)
		}
	}
}
