package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// assemble makes the image from the parts: the node rootfs (Debian, kind's base files, our binaries, configs
// and manifests) imported into docker, the component images imported into its containerd in a build container,
// then committed.
func (b *builder) assemble() error {
	for _, s := range []struct {
		name string
		fn   func() error
	}{
		{"resolve sigs.k8s.io/kind", b.resolveKind},
		{"extract rootfs", b.extractRootfs},
		{"component images (archives)", b.buildImages},
		{"assemble node rootfs", b.assembleRootfs},
		{"docker import", b.importBase},
		{"start build container", b.startContainer},
		{"ctr import images", b.importImages},
		{"docker commit", b.commit},
	} {
		if err := b.step(s.name, s.fn); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) resolveKind() error {
	dir, _, err := b.modDownload("sigs.k8s.io/kind@" + b.pins.Kind)
	b.kindFiles = filepath.Join(dir, "images/base/files")
	return err
}

func (b *builder) extractRootfs() error {
	rootfs := filepath.Join(b.work, "rootfs")
	if err := os.MkdirAll(rootfs, 0o777); err != nil {
		return err
	}
	tarball := filepath.Join(b.partDir(rootfsPartName(b.pins.DebianSuite, nodePackages)), "rootfs.tar")
	return b.run("tar -xf "+tarball, b.asRoot("tar", "-C", rootfs, "--numeric-owner", "-xf", tarball))
}

// kindCopies are the directories of kind's images/base/files that its Dockerfile copies into the base image,
// with the mode of their files.
var kindCopies = []struct {
	dir  string
	mode string
}{
	{"usr/local/bin", "0755"}, {"kind", "0644"}, {"kind/bin", "0755"}, {"LICENSES", "0644"}, {"etc", "0644"},
	{"etc/containerd", "0644"}, {"etc/default", "0644"}, {"etc/sysctl.d", "0644"}, {"etc/systemd/system", "0644"},
	{"etc/systemd/system/kubelet.service.d", "0644"},
}

// assembleInput is what assembleScript installs into the rootfs Root.
type assembleInput struct {
	Root      string
	KindFiles string              // kind's images/base/files
	KindNames map[string][]string // the regular files of each of kindCopies's directories
	NodeFiles string              // hack/kind/node
	// Generated holds the files made for this image: config.toml (kind's, with the sandbox image), version,
	// default-storage.yaml, zns-mysql-build.txt
	Generated                   string
	Kube, Containerd, Runc, CNI string // the parts' directories
}

// assembleScript is the shell (run as root: the rootfs is root's) that installs kind's base files, ours and the
// binaries into the rootfs, enables the units (systemctl enable as links: no systemd on the build host) and masks
// systemd-binfmt.
func assembleScript(in assembleInput) string {
	var s strings.Builder
	line := func(args ...string) {
		for i, a := range args {
			if i > 0 {
				s.WriteByte(' ')
			}
			s.WriteString(shellQuote(a))
		}
		s.WriteByte('\n')
	}
	r := func(p string) string { return filepath.Join(in.Root, p) }
	dirs := []string{"install", "-d", "-m", "0755"}
	for _, d := range []string{"kind", "kind/bin", "kind/manifests", "LICENSES", "usr/local/bin", "usr/local/sbin", "etc/containerd",
		"etc/default", "etc/sysctl.d", "etc/systemd/system/kubelet.service.d", "etc/systemd/system/multi-user.target.wants",
		"etc/kubernetes/manifests", "opt/cni/bin", "etc/cni/net.d"} {
		dirs = append(dirs, r(d))
	}
	line(dirs...)
	for _, c := range kindCopies {
		for _, name := range in.KindNames[c.dir] {
			from := filepath.Join(in.KindFiles, c.dir, name)
			if c.dir == "etc/containerd" && name == "config.toml" {
				from = filepath.Join(in.Generated, "config.toml")
			}
			line("install", "-m", c.mode, from, r(filepath.Join(c.dir, name)))
		}
	}
	// ours: the CNI config writer (no kindnetd), and the entrypoint before kind's that makes /sys and cgroups
	// writable in a node started without --privileged (hack/kind/docker-unprivileged)
	line("install", "-m", "0755", filepath.Join(in.NodeFiles, "zns-cni-config.sh"), r("kind/bin/zns-cni-config.sh"))
	line("install", "-m", "0755", filepath.Join(in.NodeFiles, "zns-entrypoint"), r("usr/local/bin/zns-entrypoint"))
	line("install", "-m", "0644", filepath.Join(in.NodeFiles, "zns-cni-config.service"), r("etc/systemd/system/zns-cni-config.service"))
	for _, u := range []string{"kubelet", "containerd", "undo-mount-hacks", "zns-cni-config"} {
		line("ln", "-sf", "/etc/systemd/system/"+u+".service", r("etc/systemd/system/multi-user.target.wants/"+u+".service"))
	}
	line("ln", "-sf", "/dev/null", r("etc/systemd/system/systemd-binfmt.service"))
	// kubernetes in /usr/bin (kind's kubelet.service expects /usr/bin/kubelet), the runtime in /usr/local
	bin := func(from, to string) { line("install", "-m", "0755", "-o", "root", "-g", "root", from, r(to)) }
	for _, k := range []string{"kubeadm", "kubelet", "kubectl"} {
		bin(filepath.Join(in.Kube, k), "usr/bin/"+k)
	}
	for _, c := range []string{"containerd", "ctr", "containerd-shim-runc-v2"} {
		bin(filepath.Join(in.Containerd, c), "usr/local/bin/"+c)
	}
	bin(filepath.Join(in.Runc, "runc"), "usr/local/sbin/runc")
	for _, c := range []string{"ptp", "host-local", "loopback", "portmap"} {
		bin(filepath.Join(in.CNI, c), "opt/cni/bin/"+c)
	}
	// what kind applies on cluster creation, and what went in
	for _, f := range [][2]string{{"version", "kind/version"}, {"default-storage.yaml", "kind/manifests/default-storage.yaml"},
		{"zns-mysql-build.txt", "kind/zns-mysql-build.txt"}} {
		line("install", "-m", "0644", filepath.Join(in.Generated, f[0]), r(f[1]))
	}
	return s.String()
}

// shellQuote quotes s for sh: as it is when it holds only safe characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=+,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (b *builder) assembleRootfs() error {
	if st, err := os.Stat(b.kindFiles); err != nil || !st.IsDir() {
		return fmt.Errorf("no %s in sigs.k8s.io/kind@%s", b.kindFiles, b.pins.Kind)
	}
	in := assembleInput{Root: filepath.Join(b.work, "rootfs"), KindFiles: b.kindFiles, KindNames: map[string][]string{},
		NodeFiles: filepath.Join(b.Root, "hack/kind/node"), Generated: filepath.Join(b.work, "generated"),
		Kube: b.partDir(kubePartName(b.pins.K8s)), Containerd: b.partDir("containerd-" + b.pins.Containerd),
		Runc: b.partDir("runc-" + b.pins.Runc), CNI: b.partDir("cni-plugins-" + b.pins.CNI)}
	for _, c := range kindCopies {
		names, err := sortedNames(filepath.Join(b.kindFiles, c.dir), true)
		if err != nil {
			return err
		}
		in.KindNames[c.dir] = names
	}
	toml, err := os.ReadFile(filepath.Join(b.kindFiles, "etc/containerd/config.toml"))
	if err != nil {
		return err
	}
	config, err := withSandboxImage(string(toml), imageRef(b.imageList, "pause"))
	if err != nil {
		return err
	}
	storage, err := os.ReadFile(filepath.Join(in.NodeFiles, "default-storage.yaml"))
	if err != nil {
		return err
	}
	provisioner, helper := provisionerImage(b.pins.LPP), helperImage(b.busyboxVersion)
	if err := os.MkdirAll(in.Generated, 0o777); err != nil {
		return err
	}
	for name, content := range map[string]string{
		"config.toml":          config,
		"version":              "v" + b.pins.K8s,
		"default-storage.yaml": defaultStorage(string(storage), provisioner, helper, b.pins.LPP),
		"zns-mysql-build.txt":  buildInfo(b.recipe, b.pins, b.busyboxVersion, b.imageList, provisioner, helper),
	} {
		if err := os.WriteFile(filepath.Join(in.Generated, name), []byte(content), 0o666); err != nil {
			return err
		}
	}
	return b.run("installing into the rootfs", b.asRoot("sh", "-euc", assembleScript(in), "sh"))
}

// importBase makes the rootfs the build container's image.
func (b *builder) importBase() error {
	b.base = "zns-mysql/kind-node-build:" + b.recipe
	tar := b.asRoot("tar", "-C", filepath.Join(b.work, "rootfs"), "--numeric-owner", "-cf", "-", ".")
	imp := b.Cmd(nil, "docker", "import", "-m", "hack/kind/build-node-image.sh rootfs", "-", b.base)
	imp.Stdout = nil
	return b.pipe(tar, imp)
}

// pipe is bash's `from | to` under pipefail: both in the foreground, the failure of either is the pipe's.
func (b *builder) pipe(from, to *exec.Cmd) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	from.Stdout, to.Stdin = w, r
	rc := make(chan int, 1)
	go func() {
		rc <- b.Run(from)
		w.Close() // the reader's end of input
	}()
	toRC := b.Run(to)
	r.Close() // a writer still writing gets EPIPE
	if fromRC := <-rc; fromRC != 0 || toRC != 0 {
		return fmt.Errorf("%s | %s failed (exit %d, %d)", from.Args[0], to.Args[0], fromRC, toRC)
	}
	return nil
}

// inContainer is docker exec in the build container, its output on stderr.
func (b *builder) inContainer(args ...string) *exec.Cmd {
	return b.Cmd(nil, "docker", append([]string{"exec", b.container}, args...)...)
}

func quiet(c *exec.Cmd) *exec.Cmd {
	c.Stdout, c.Stderr = nil, nil
	return c
}

// startContainer runs the image with containerd started in it. Its stop signal is kept by docker commit (docker
// import cannot set STOPSIGNAL).
func (b *builder) startContainer() error {
	b.container = fmt.Sprintf("zns-kind-build-%s-%d", b.recipe, os.Getpid())
	run := b.Cmd(nil, "docker", "run", "-d", "--name", b.container, "--stop-signal", "SIGRTMIN+3", "--entrypoint", "sleep",
		"--security-opt", "seccomp=unconfined", b.base, "infinity")
	run.Stdout = nil
	if err := b.run("docker run", run); err != nil {
		return err
	}
	if err := b.run("starting containerd", b.inContainer("bash", "-c", "nohup containerd >/var/log/containerd-build.log 2>&1 &")); err != nil {
		return err
	}
	if b.poll(func() bool { return b.Run(quiet(b.inContainer("ctr", "version"))) == 0 }) {
		return nil
	}
	b.Run(b.inContainer("cat", "/var/log/containerd-build.log"))
	return errors.New("containerd did not come up in the build container")
}

// poll tries cond 60 times, pollEvery apart, until it holds.
func (b *builder) poll(cond func() bool) bool {
	for range 60 {
		if cond() {
			return true
		}
		time.Sleep(b.pollEvery)
	}
	return false
}

// importImages imports the component images into the node's containerd, pinned (never garbage-collected), and
// checks that every image kubeadm and the default StorageClass ask for is there.
func (b *builder) importImages() error {
	tars, _ := filepath.Glob(filepath.Join(b.work, "images", "*.tar"))
	for _, t := range tars {
		f, err := os.Open(t)
		if err != nil {
			return err
		}
		c := b.Cmd(nil, "docker", "exec", "-i", b.container, "ctr", "--namespace=k8s.io", "images", "import",
			"--label=io.cri-containerd.pinned=pinned", "--all-platforms", "--no-unpack", "--digests", "-")
		c.Stdin, c.Stdout = f, nil
		rc := b.Run(c)
		f.Close()
		if rc != 0 {
			return fmt.Errorf("ctr import of %s failed", filepath.Base(t))
		}
	}
	list := b.inContainer("ctr", "--namespace=k8s.io", "images", "list", "-q")
	have, rc := b.Output(list)
	if rc != 0 {
		return errors.New("ctr images list failed")
	}
	want := append(strings.Fields(b.imageList), provisionerImage(b.pins.LPP), helperImage(b.busyboxVersion))
	if missing := missingImages(have, want); len(missing) > 0 {
		io.WriteString(b.Out.Stderr(), have+"\n")
		return fmt.Errorf("not in the node's containerd after import: %s", strings.Join(missing, " "))
	}
	for _, l := range strings.Split(have, "\n") {
		if l != "" && !strings.HasPrefix(l, "sha256:") {
			io.WriteString(b.Out.Stderr(), "  "+l+"\n")
		}
	}
	return nil
}

// criBase is kind's base image's runtime spec: with kind's product-files hook and without rlimits.
const criBase = `ctr oci spec | ` +
	`jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' | ` +
	`jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json`

// commit stops containerd, commits the container as the image with its entrypoint and labels, and removes the
// container, its base image and the image this one replaces (unless a container still uses it).
func (b *builder) commit() error {
	if err := b.run("writing cri-base.json", b.inContainer("bash", "-c", criBase)); err != nil {
		return err
	}
	b.Run(quiet(b.inContainer("pkill", "containerd")))
	b.poll(func() bool { return b.Run(quiet(b.inContainer("pgrep", "-x", "containerd"))) != 0 })
	// the glob is the container's /tmp (the bash builder's was expanded on the host)
	b.Run(b.inContainer("sh", "-c", "rm -rf /var/log/containerd-build.log /run/containerd /tmp/*"))
	old, _ := b.Output(quiet(b.Cmd(nil, "docker", "image", "inspect", "-f", "{{.Id}}", b.cfg.Image)))
	args := []string{"commit"}
	for _, c := range commitChanges(b.recipe, b.pins.K8s) {
		args = append(args, "--change", c)
	}
	commit := b.Cmd(nil, "docker", append(args, b.container, b.cfg.Image)...)
	commit.Stdout = nil
	if err := b.run("docker commit", commit); err != nil {
		return err
	}
	// left to the cleanups when they fail now
	if b.Run(quiet(b.Cmd(nil, "docker", "rm", "-f", "-v", b.container))) == 0 {
		b.container = ""
	}
	if b.Run(quiet(b.Cmd(nil, "docker", "rmi", b.base))) == 0 {
		b.base = ""
	}
	if b.imageRecipe() != b.recipe {
		return fmt.Errorf("committed %s lacks the recipe label", b.cfg.Image)
	}
	id, _ := b.Output(quiet(b.Cmd(nil, "docker", "image", "inspect", "-f", "{{.Id}}", b.cfg.Image)))
	if old != "" && old != id && b.Run(quiet(b.Cmd(nil, "docker", "rmi", old))) == 0 {
		b.Logf("removed the previous %s (%s)", b.cfg.Image, shortID(old))
	}
	return nil
}

// shortID is an image id's first 12 hex digits.
func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func (b *builder) removeContainer() {
	if b.container != "" {
		b.RunCleanup(quiet(b.Cmd(nil, "docker", "rm", "-f", "-v", b.container)))
	}
}

func (b *builder) removeBase() {
	if b.base != "" {
		b.RunCleanup(quiet(b.Cmd(nil, "docker", "rmi", b.base)))
	}
}
