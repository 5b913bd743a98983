package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// kubeBins are the Kubernetes binaries of the node; hack/kubernetes.sh node builds them with etcd.
var kubeBins = []string{"kubeadm", "kubelet", "kubectl", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"}

// cached: the part is complete in the cache, and ZNS_KIND_REBUILD=2 does not ask for it again.
func (b *builder) cached(name string) bool {
	return b.cfg.Rebuild != 2 && isFile(filepath.Join(b.partsDir, name, ".complete"))
}

func (b *builder) partDir(name string) string { return filepath.Join(b.partsDir, name) }

// buildParts builds the parts the cache lacks, numbered n/8 in the log. The rootfs (network and disk bound)
// and the Kubernetes binaries (the longest build) build in the background beside the other parts: two go
// builds keep both cores busy through each other's serial stretches (big packages, links).
func (b *builder) buildParts() error {
	p := b.pins
	rootfsName, kubeName := rootfsPartName(p.DebianSuite, nodePackages), kubePartName(p.K8s)
	t0 := b.Now()
	var rootfs chan error
	if !b.cached(rootfsName) {
		rootfs = make(chan error, 1)
		go func() { rootfs <- b.part(1, rootfsName, b.buildRootfs) }()
		b.Logf("%s: building in the background (debootstrap: network and disk bound)", partLabel(1, rootfsName))
	}
	var kube *group
	if !b.cached(kubeName) {
		out, err := os.Create(filepath.Join(b.work, "kube-dir"))
		if err != nil {
			return err
		}
		c := b.Cmd(nil, "hack/kubernetes.sh", "node")
		c.Stdout = out
		kube, err = b.startGroup("hack/kubernetes.sh", c, false)
		out.Close()
		if err != nil {
			return err
		}
		b.Logf("%s: building in the background (hack/kubernetes.sh)", partLabel(2, kubeName))
	}
	// CoreDNS's version is kubeadm's constant, read from the source: kubeadm's image list does not exist while the
	// Kubernetes binaries build. It is checked against that list once they are built.
	k8sDir, _, err := b.modDownload("k8s.io/kubernetes@v" + p.K8s)
	if err != nil {
		return err
	}
	constants, _ := os.ReadFile(filepath.Join(k8sDir, "cmd/kubeadm/app/constants/constants.go"))
	if b.coredns, err = corednsVersion(string(constants)); err != nil {
		return fmt.Errorf("no CoreDNSVersion in kubeadm's constants.go of k8s.io/kubernetes v%s", p.K8s)
	}
	for i, part := range []struct {
		name  string
		build func(string) error
	}{
		{"containerd-" + p.Containerd, b.buildContainerd},
		{"runc-" + p.Runc, b.buildRunc},
		{"cni-plugins-" + p.CNI, b.goInstall(nil, cniInstall(p.CNI))},
		{"coredns-" + b.coredns, b.goInstall([]string{"coredns", "-version"}, corednsInstall(b.coredns))},
		{"local-path-provisioner-" + p.LPP, b.goInstall(nil, lppInstall(p.LPP))},
	} {
		if err := b.part(3+i, part.name, part.build); err != nil {
			return err
		}
	}
	if err := b.findBusybox(); err != nil {
		return err
	}
	if err := b.part(8, busyboxPartName(b.busyboxVersion), b.buildBusybox); err != nil {
		return err
	}
	if kube != nil {
		if b.Heartbeat("waiting for "+partLabel(2, kubeName), "hack/kubernetes.sh", "", func() int { return exitOf(kube.wait()) }) != 0 {
			return errors.New("building the Kubernetes binaries failed (see the output above); a rerun resumes from the Go build cache")
		}
		dir, _ := os.ReadFile(filepath.Join(b.work, "kube-dir"))
		b.kubeBins = stagerun.TrimNewlines(string(dir))
	}
	if err := b.part(2, kubeName, b.buildKubernetes); err != nil {
		return err
	}
	list, err := os.ReadFile(filepath.Join(b.partDir(kubeName), "images.txt"))
	if err != nil {
		return err
	}
	b.imageList = string(list)
	if err := checkImageList(b.imageList, b.coredns); err != nil {
		return err
	}
	if rootfs == nil {
		b.Logf("%s", cachedLine(partLabel(1, rootfsName)))
		return nil
	}
	// its failure was logged when it came; it is the build's now, the other parts being cached
	var rerr error
	b.Heartbeat("waiting for "+partLabel(1, rootfsName), "debootstrap", "", func() int { rerr = <-rootfs; return 0 })
	if rerr != nil {
		return rerr
	}
	b.Logf("%s", stepTimeLine("rootfs (wall, from start)", secs(b.Now().Sub(t0))))
	return nil
}

func exitOf(err error) int {
	if err != nil {
		return 1
	}
	return 0
}

// part makes the part name with build(scratch) unless the cache has it: in a scratch directory renamed into
// place once complete, so that an interrupted build leaves no part behind.
func (b *builder) part(n int, name string, build func(out string) error) error {
	label := partLabel(n, name)
	if b.cached(name) {
		b.Logf("%s", cachedLine(label))
		return nil
	}
	t0 := b.Now()
	b.Logf("%s: building", label)
	scratch, err := b.scratch.make(b.partsDir, ".build-"+name+".")
	if err != nil {
		return fmt.Errorf("cannot create a scratch directory in %s: %v", b.partsDir, err)
	}
	var berr error
	b.Heartbeat(label, "", "", func() int { berr = build(scratch); return 0 })
	if berr == nil {
		berr = os.WriteFile(filepath.Join(scratch, ".complete"), nil, 0o644)
	}
	if berr != nil {
		if b.groups.isStopping() {
			return berr // the build is being stopped, which is why; the cleanups remove the scratch directory
		}
		b.Logf("%v", berr)
		if b.Run(b.asRoot("rm", "-rf", scratch)) == 0 {
			b.scratch.done(scratch)
		}
		return fmt.Errorf("building part %s failed (see the output above)", name)
	}
	dir := b.partDir(name)
	if _, err := os.Lstat(dir); err == nil {
		// the old part may hold root's files (the rootfs while it was built)
		if err := b.run("replacing "+dir, b.asRoot("mv", dir, scratch+".old")); err != nil {
			return err
		}
		b.Run(b.asRoot("rm", "-rf", scratch+".old"))
	}
	if err := os.Rename(scratch, dir); err != nil {
		return err
	}
	b.scratch.done(scratch)
	b.Logf("%s", partTimeLine(label, secs(b.Now().Sub(t0))))
	return nil
}

// scratchDirs are the parts' scratch directories that exist: an interrupt removes them, and none is made
// once it has listed them (the build goes on beside the signal's handler until its next command holds it).
type scratchDirs struct {
	mu     sync.Mutex
	dirs   map[string]bool
	closed bool
}

func (s *scratchDirs) make(dir, pattern string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errors.New("the build is being stopped")
	}
	d, err := os.MkdirTemp(dir, pattern)
	if err == nil {
		if s.dirs == nil {
			s.dirs = map[string]bool{}
		}
		s.dirs[d] = true
	}
	return d, err
}

// done: the directory was renamed into place or removed.
func (s *scratchDirs) done(d string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.dirs, d)
}

// closeAndList is what the cleanup removes: every directory made, and none after.
func (s *scratchDirs) closeAndList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var out []string
	for d := range s.dirs {
		out = append(out, d)
	}
	return out
}

// modDownload downloads a module version (checksum-verified) and returns its directory and VCS commit.
func (b *builder) modDownload(mod string) (dir, hash string, err error) {
	var out, errs bytes.Buffer
	c := b.Cmd(nil, "go", "mod", "download", "-json", mod)
	c.Stdout, c.Stderr = &out, &errs
	b.Heartbeat("go mod download "+mod, "", "", func() int { return b.Run(c) })
	dir, hash = parseModInfo(out.Bytes())
	if st, serr := os.Stat(dir); dir == "" || serr != nil || !st.IsDir() {
		io.WriteString(b.Out.Stderr(), errs.String()+out.String())
		return "", "", fmt.Errorf("go mod download %s failed (above)", mod)
	}
	return dir, hash, nil
}

// trimRootfs makes debootstrap's tree what kind's base image is: no package caches, no services but ours, no
// kmsg in journald, /sbin/init. Shell: the tree is root's.
const trimRootfs = `r=$1
rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/var/log/*.log "$r"/debootstrap
find "$r"/lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete
rm -f "$r"/lib/systemd/system/multi-user.target.wants/* "$r"/etc/systemd/system/*.wants/* \
  "$r"/lib/systemd/system/local-fs.target.wants/* "$r"/lib/systemd/system/sockets.target.wants/*udev* \
  "$r"/lib/systemd/system/sockets.target.wants/*initctl* "$r"/lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >>"$r"/etc/systemd/journald.conf
ln -sf /usr/lib/systemd/systemd "$r"/sbin/init
: >"$r"/etc/machine-id
`

// buildRootfs: debootstrap, trimmed, as rootfs.tar (numeric owners). Every command runs in a process group of
// its own: stopping the build stops debootstrap's dpkg and downloads too.
func (b *builder) buildRootfs(out string) error {
	r, logPath := filepath.Join(out, "rootfs"), filepath.Join(out, "debootstrap.log")
	b.Logf("debootstrap %s from %s (log: %s while it runs)", b.pins.DebianSuite, b.cfg.DebianMirror, logPath)
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	c := b.asRoot("debootstrap", "--variant=minbase", "--components=main", "--include="+strings.Join(nodePackages, ","),
		b.pins.DebianSuite, r, b.cfg.DebianMirror)
	c.Stdout, c.Stderr = logf, logf
	err = b.runGroup("debootstrap", c, true)
	logf.Close()
	if err != nil {
		io.WriteString(b.Out.Stderr(), stagerun.TailLines(logPath, 30)+stagerun.TailLines(filepath.Join(r, "debootstrap/debootstrap.log"), 30))
		return err
	}
	if err := b.runGroup("trimming the rootfs", b.asRoot("sh", "-euc", trimRootfs, "sh", r), true); err != nil {
		return err
	}
	tarball := filepath.Join(out, "rootfs.tar")
	if err := b.runGroup("tar of the rootfs", b.asRoot("tar", "-C", r, "--numeric-owner", "-cf", tarball, "."), true); err != nil {
		return err
	}
	owner := strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	_ = b.runGroup("chown", b.asRoot("chown", owner, tarball), true)
	if err := b.runGroup("removing the rootfs tree", b.asRoot("rm", "-rf", r), true); err != nil {
		return err
	}
	return os.Remove(logPath)
}

// buildKubernetes: hack/kubernetes.sh's binaries (the directory envtest uses too: one build for both), kubeadm's
// image list, and pause as build/pause/Makefile builds it (CFLAGS = -Os -Wall -Werror -static
// -DVERSION=v$(TAG)-$(REV)).
func (b *builder) buildKubernetes(out string) error {
	for _, bin := range append(kubeBins, "etcd") {
		// a hard link where the cache is one file system: 600 MB not copied
		if err := linkOrCopy(filepath.Join(b.kubeBins, bin), filepath.Join(out, bin)); err != nil {
			return err
		}
	}
	list, err := os.Create(filepath.Join(out, "images.txt"))
	if err != nil {
		return err
	}
	c := b.Cmd(nil, filepath.Join(out, "kubeadm"), "config", "images", "list", "--kubernetes-version", "v"+b.pins.K8s)
	c.Stdout = list
	err = b.run("kubeadm config images list", c)
	list.Close()
	if err != nil {
		return err
	}
	images, _ := os.ReadFile(filepath.Join(out, "images.txt"))
	pause, err := checkKubeadmImages(string(images), b.pins.K8s, b.pins.Etcd)
	if err != nil {
		return err
	}
	moddir, _, err := b.modDownload("k8s.io/kubernetes@v" + b.pins.K8s)
	if err != nil {
		return err
	}
	if err := b.run("gcc of pause", b.Cmd(nil, "gcc", "-Os", "-Wall", "-Werror", "-static", "-DVERSION=v"+pause+"-zns-mysql",
		"-o", filepath.Join(out, "pause"), filepath.Join(moddir, "build/pause/linux/pause.c"))); err != nil {
		return err
	}
	strip := b.Cmd(nil, "strip", filepath.Join(out, "pause"))
	strip.Stderr = nil
	b.Run(strip)
	return nil
}

// buildContainerd builds containerd, ctr and the runc shim from a writable copy of the module's source without
// its (empty) vendor/, as the main module: its go.mod's exclude directives only apply there (`go install pkg@v`
// refuses modules that have them).
func (b *builder) buildContainerd(out string) error {
	mod := "github.com/containerd/containerd/v2@" + b.pins.Containerd
	dir, hash, err := b.modDownload(mod)
	if err != nil {
		return err
	}
	src := filepath.Join(out, ".src")
	if err := os.CopyFS(src, os.DirFS(dir)); err != nil {
		return fmt.Errorf("copying %s: %v", dir, err)
	}
	if err := os.RemoveAll(filepath.Join(src, "vendor")); err != nil {
		return err
	}
	c := b.Cmd([]string{"CGO_ENABLED=0"}, "go", containerdBuild(out, b.pins.Containerd, hash)...)
	c.Dir = src
	if err := b.run("go build of containerd", c); err != nil {
		return err
	}
	if err := os.RemoveAll(src); err != nil {
		return err
	}
	return b.run("containerd --version", b.Cmd(nil, filepath.Join(out, "containerd"), "--version"))
}

func (b *builder) buildRunc(out string) error {
	_, hash, err := b.modDownload("github.com/opencontainers/runc@" + b.pins.Runc)
	if err != nil {
		return err
	}
	if err := b.run("go install of runc", b.Cmd([]string{"CGO_ENABLED=1", "GOBIN=" + out}, "go", runcInstall(b.pins.Runc, hash)...)); err != nil {
		return err
	}
	return b.run("runc --version", b.Cmd(nil, filepath.Join(out, "runc"), "--version"))
}

// goInstall is a part built by go install args (pure Go) into the part, then check run (its binary and
// arguments), if any.
func (b *builder) goInstall(check []string, args []string) func(string) error {
	return func(out string) error {
		if err := b.run("go install "+args[len(args)-1], b.Cmd([]string{"CGO_ENABLED=0", "GOBIN=" + out}, "go", args...)); err != nil {
			return err
		}
		if check == nil {
			return nil
		}
		return b.run(check[0]+" "+check[1], b.Cmd(nil, filepath.Join(out, check[0]), check[1:]...))
	}
}

// findBusybox chooses the busybox of the helper and kube-proxy images: Debian's busybox-static, the installed
// package's binary if there is one (hack/install-deps.sh installs it), else its candidate version fetched with
// apt-get download (never installed).
func (b *builder) findBusybox() error {
	q := b.Cmd(nil, "dpkg-query", "-W", "-f=${Status} ${Version}", "busybox-static")
	q.Stderr = nil
	status, _ := b.Output(q)
	if v := busyboxInstalled(status); v != "" && stagerun.Executable(b.hostBusybox) {
		b.busyboxVersion, b.busyboxOfHost = v, true
		return nil
	}
	show := b.Cmd(nil, "apt-cache", "show", "--no-all-versions", "busybox-static")
	show.Stderr = nil
	out, _ := b.Output(show)
	if b.busyboxVersion = aptCandidate(out); b.busyboxVersion == "" {
		return errors.New("busybox-static is neither installed nor known to apt-cache (apt-get update?)")
	}
	return nil
}

func (b *builder) buildBusybox(out string) error {
	bin := filepath.Join(out, "busybox")
	if b.busyboxOfHost {
		if err := copyFile(b.hostBusybox, bin); err != nil {
			return err
		}
	} else {
		c := b.Cmd(nil, "apt-get", "download", "busybox-static="+b.busyboxVersion)
		c.Dir = out
		if err := b.run("apt-get download busybox-static", c); err != nil {
			return err
		}
		debs, _ := filepath.Glob(filepath.Join(out, "busybox-static_*.deb"))
		if len(debs) == 0 {
			return errors.New("apt-get download left no busybox-static_*.deb")
		}
		if err := b.run("dpkg-deb -x", b.Cmd(nil, "dpkg-deb", "-x", debs[0], filepath.Join(out, "x"))); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(out, "x/bin/busybox"), bin); err != nil {
			return err
		}
		if err := errors.Join(os.RemoveAll(filepath.Join(out, "x")), os.Remove(debs[0])); err != nil {
			return err
		}
	}
	// static, or it would not run in the images
	ldd := b.Cmd(nil, "ldd", bin)
	ldd.Stdout, ldd.Stderr = nil, nil
	if b.Run(ldd) == 0 {
		return fmt.Errorf("%s is not statically linked", bin)
	}
	return b.run("busybox true", b.Cmd(nil, bin, "true"))
}

// linkOrCopy hard-links from to to, or copies it where they are on different file systems.
func linkOrCopy(from, to string) error {
	if os.Link(from, to) == nil {
		return nil
	}
	return copyFile(from, to)
}

// copyFile copies a regular file with its permission bits (less the umask, as cp does).
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
