package main

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// node is the zoned node of this machine: its state under the cache, and the runner of the commands it runs.
type node struct {
	*stagerun.Runner
	cfg                                 Config
	state, share, kubeconfig, imagesDir string
	result                              io.Writer // stdout: the kubeconfig's path, the export line
	sleep                               func(time.Duration)
	guest                               *exec.Cmd     // the boot this process started, if any
	guestDone                           chan struct{} // closed once that boot's process ended and was reaped
	cp                                  controlPlane  // the host's control plane of this boot
	self                                func() (string, error)
}

func newNode(cfg Config, root string, environ []string, stdout, stderr io.Writer) *node {
	r := stagerun.New("zoned-node", root, environ, nil, stderr, stderr)
	r.ProgressEvery = cfg.ProgressEvery
	state := filepath.Join(cfg.CacheRoot, "zoned-node")
	return &node{Runner: r, cfg: cfg, state: state, share: filepath.Join(state, "share"),
		kubeconfig: filepath.Join(state, "kubeconfig"), imagesDir: filepath.Join(cfg.CacheRoot, "zoned-node-images"),
		result: stdout, sleep: time.Sleep, self: selfPath}
}

func (n *node) path(name string) string { return filepath.Join(n.state, name) }

// read is a state file's content without its trailing newlines, "" when it is missing.
func (n *node) read(name string) string {
	b, _ := os.ReadFile(n.path(name))
	return stagerun.TrimNewlines(string(b))
}

func (n *node) write(name, content string) error {
	return os.WriteFile(n.path(name), []byte(content), 0o644)
}

// pid is the QEMU process group's leader, 0 when none is recorded.
func (n *node) pid() int {
	p, err := strconv.Atoi(n.read("pid"))
	if err != nil || p <= 0 {
		return 0
	}
	return p
}

// running: the recorded guest process is alive. One this process started is reaped when it ends (a zombie would
// still answer signal 0).
func (n *node) running() bool {
	if n.guestDone != nil {
		select {
		case <-n.guestDone:
			return false
		default:
			return true
		}
	}
	p := n.pid()
	return p > 0 && syscall.Kill(p, 0) == nil
}

func (n *node) ready() bool { _, err := os.Stat(n.path("ready")); return err == nil }

// foreignOwner is the run other than this one's owner that uses the running node, "" when there is none.
func (n *node) foreignOwner() string {
	if n.cfg.Owner == "" || !n.running() {
		return ""
	}
	pid, what, _ := strings.Cut(n.read("owner"), " ")
	if pid == "" || pid == n.cfg.Owner {
		return ""
	}
	if p, err := strconv.Atoi(pid); err != nil || syscall.Kill(p, 0) != nil {
		return ""
	}
	return fmt.Sprintf("pid %s, %s", pid, stagerun.OrDefault(what, "its owner"))
}

func (n *node) refuseForeign(what string) error {
	if o := n.foreignOwner(); o != "" {
		return fmt.Errorf("cannot %s the zoned node: another run uses it (%s); wait until it ends, or stop the node by hand with hack/qemu/zoned-node.sh down", what, o)
	}
	return nil
}

// down stops the guest: TERM to QEMU's process group, KILL 30 s later.
func (n *node) down() error {
	if err := n.refuseForeign("stop"); err != nil {
		return err
	}
	if n.running() {
		pid := n.pid()
		if log, err := os.ReadFile(n.path("guest.log")); err == nil {
			// the guest's own account of where its CPU went (hack/qemu/guest-node/node.sh), every 5 minutes
			if cpu := lastLineWith(string(log), "zoned-node: cpu since boot"); cpu != "" {
				n.Logf("%s", strings.TrimPrefix(cpu, "zoned-node: "))
			}
			// and serve's of the control plane on the host
			if cpu := lastLineWith(string(log), "zoned-node host: control plane cpu"); cpu != "" {
				n.Logf("%s", strings.TrimPrefix(cpu, "zoned-node host: "))
			}
		}
		n.Logf("stopping the node (QEMU process group %d)", pid)
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		for range 30 {
			if !n.running() {
				break
			}
			n.sleep(time.Second)
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	for _, f := range []string{"pid", "ready", "owner"} {
		if err := os.Remove(n.path(f)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// lastLineWith is the last line of s that holds what, from there on; "" when none does.
func lastLineWith(s, what string) string {
	i := strings.LastIndex(s, what)
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(s[i:], "\n")
	return strings.TrimRight(line, "\r")
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on, for the API server's forward.
func freePort() (int, error) {
	for p := 16443; p <= 16543; p++ {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), time.Second)
		if err != nil {
			return p, nil
		}
		c.Close()
	}
	return 0, errors.New("no free port in 16443-16543 for the API server's forward")
}

// accel is the boot's accelerator (chooseAccel) on this machine.
func (n *node) accel() string {
	usable := syscall.Access("/dev/kvm", 6) == nil // R_OK|W_OK
	dir := func(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }
	pvm := dir("/sys/module/kvm_pvm") && !dir("/sys/module/kvm_intel") && !dir("/sys/module/kvm_amd")
	a, note := chooseAccel(n.cfg.Accel, usable, pvm)
	if note != "" {
		n.Logf("%s", note)
	}
	return a
}

// output runs a command of the repository with progress lines and returns its stdout; failed says what to do.
func (n *node) output(label, hint, failed string, name string, args ...string) (string, error) {
	var out string
	rc := n.Heartbeat(label, hint, "", func() int {
		var code int
		out, code = n.Output(n.Cmd(nil, name, args...))
		return code
	})
	if rc != 0 {
		return "", errors.New(failed)
	}
	return out, nil
}

// paths is what prepare hands the boot.
type paths struct{ guestDir, assets, parts, tag string }

// prepare makes everything the guest reads, in the share (the guest caches the share: it is not changed while
// the guest runs).
func (n *node) prepare() (paths, error) {
	var p paths
	var err error
	if p.guestDir, err = n.output("QEMU guest", "hack/qemu/build-guest.sh",
		"building the QEMU guest failed (above); hack/qemu/build-guest.sh alone shows it again", "hack/qemu/build-guest.sh"); err != nil {
		return p, err
	}
	if p.assets, err = n.output("Kubernetes binaries", "hack/kubernetes.sh node; 8-12 min the first time",
		"building the Kubernetes binaries failed (above); a rerun resumes from the Go build cache", "hack/kubernetes.sh", "node"); err != nil {
		return p, err
	}
	p.parts = filepath.Join(n.cfg.CacheRoot, "kind", "parts")
	if first(p.parts, "containerd-v*/containerd") == "" || first(p.parts, "coredns-v*/coredns") == "" || first(p.parts, "kubernetes-*/pause") == "" {
		// ZNS_KIND_REBUILD=1: the kind node image can be in Docker while this cache lacks its parts (another cache
		// directory built it, or this one was emptied), and its fast path would then build none of them.
		c := n.Cmd([]string{"ZNS_KIND_REBUILD=1"}, "hack/kind/build-node-image.sh")
		c.Stdout = io.Discard
		if n.Heartbeat("node parts", "hack/kind/build-node-image.sh builds containerd, runc, CNI, CoreDNS, pause", "",
			func() int { return n.Run(c) }) != 0 {
			return p, errors.New("building the node's parts failed (above); ZNS_KIND_REBUILD=1 hack/kind/build-node-image.sh alone shows it again")
		}
	}
	if err := os.MkdirAll(n.share, 0o755); err != nil {
		return p, err
	}
	if p.tag, err = n.output("images", "hack/kind/load-images.sh --save", "building or saving the images failed (above); hack/images/build.sh bench mariadb operator shows it again",
		"hack/kind/load-images.sh", "--save", n.path("images.tar"), "bench", "mariadb", "operator"); err != nil {
		return p, err
	}
	pause := first(p.parts, "kubernetes-*/pause")
	if pause == "" {
		return p, fmt.Errorf("no pause binary under %s/kubernetes-*: run hack/kind/build-node-image.sh", p.parts)
	}
	if err := n.pauseImage(pause); err != nil {
		return p, err
	}
	if err := n.fillShare(); err != nil {
		return p, err
	}
	if err := n.imageDisk(p.tag, p.parts); err != nil {
		return p, err
	}
	if err := n.write("tag", p.tag+"\n"); err != nil {
		return p, err
	}
	if err := n.write("guest-dir", p.guestDir+"\n"); err != nil {
		return p, err
	}
	if p.assets, err = n.visible(p.assets, "assets"); err != nil {
		return p, err
	}
	if p.parts, err = n.visible(p.parts, "parts"); err != nil {
		return p, err
	}
	return p, n.write("paths", p.assets+"\n"+p.parts+"\n")
}

// first is the first path under dir that pattern matches, "" when none does.
func first(dir, pattern string) string {
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// pauseImage makes the sandbox image, the pause binary the node image built as an image of its own (no
// registry), when it is missing or older than the binary.
func (n *node) pauseImage(pause string) error {
	tarPath := n.path("pause.tar")
	bin, err := os.Stat(pause)
	if err != nil {
		return err
	}
	if st, err := os.Stat(tarPath); err == nil && st.Size() > 0 && !bin.ModTime().After(st.ModTime()) {
		return nil
	}
	body, err := os.ReadFile(pause)
	if err != nil {
		return err
	}
	var root bytes.Buffer
	tw := tar.NewWriter(&root)
	if err := tw.WriteHeader(&tar.Header{Name: "pause", Mode: 0o755, Size: int64(len(body)), ModTime: bin.ModTime()}); err != nil {
		return err
	}
	if _, err := tw.Write(body); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	imp := n.Cmd(nil, "docker", "import", "--change", `ENTRYPOINT ["/pause"]`, "-", "zns.local/pause:1")
	imp.Stdin, imp.Stdout = &root, io.Discard
	if n.Run(imp) != 0 {
		return errors.New("docker import of the pause image failed (above)")
	}
	if n.Run(n.Cmd(nil, "docker", "save", "-o", tarPath, "zns.local/pause:1")) != 0 {
		return errors.New("docker save of the pause image failed (above)")
	}
	return nil
}

// fillShare puts the images, node.sh and a bearer token for this node's life (known to the API server as
// system:masters, and to the kubeconfig) in a new share.
func (n *node) fillShare() error {
	if err := os.RemoveAll(n.share); err != nil {
		return err
	}
	if err := os.MkdirAll(n.share, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"images.tar", "pause.tar"} {
		// hard links: the share is one directory the guest sees; the images are not copied
		if err := os.Link(n.path(f), filepath.Join(n.share, f)); err != nil {
			if err := copyFile(n.path(f), filepath.Join(n.share, f), 0o644); err != nil {
				return err
			}
		}
	}
	tags := strings.Join(strings.Fields(n.read("images.tar.tags")), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(n.share, "images.list"), []byte(tags), 0o644); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(n.Root, "hack/qemu/guest-node/node.sh"), filepath.Join(n.share, "node.sh"), 0o755); err != nil {
		return err
	}
	token := make([]byte, 24)
	if _, err := rand.Read(token); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(n.share, "token"), []byte(hex.EncodeToString(token)), 0o600)
}

func copyFile(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, mode)
}

// visible is dir, or a hard-linked copy of it in the share when the guest cannot see it (guestVisible): a cache
// under /tmp is empty there. The share is mounted at its host path wherever it is, and lies in the same cache, so
// the links cost nothing (a copy when they cannot be made).
func (n *node) visible(dir, name string) (string, error) {
	if guestVisible(dir) {
		return dir, nil
	}
	dst := filepath.Join(n.share, name)
	if err := os.RemoveAll(dst); err != nil {
		return "", err
	}
	if n.Run(n.Cmd(nil, "cp", "-al", dir, dst)) != 0 && n.Run(n.Cmd(nil, "cp", "-a", dir, dst)) != 0 {
		return "", fmt.Errorf("cannot copy %s into the guest's share %s", dir, n.share)
	}
	n.Logf("%s lies where the guest has its own directory: its %s are linked into the share", dir, name)
	return dst, nil
}
