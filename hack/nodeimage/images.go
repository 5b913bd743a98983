package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The component images the node's containerd gets (kubeadm's, and the default StorageClass's), each a directory
// made here and written as a one-layer docker-archive by hack/imagearchive, which both docker load and ctr images
// import read. Files are created as the bash builder's cp and redirections made them (the umask applies), so
// that the same parts give layers with the same digests.

// Files of the distroless-like images: users root, nobody and nonroot, hosts from files then DNS.
const (
	staticPasswd   = "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	staticGroup    = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
	staticNsswitch = "hosts: files dns\n"
)

// staticRoot is the skeleton of a distroless-like image in dir.
func staticRoot(dir string) error {
	for _, d := range []string{"etc", "tmp", "usr/local/bin", "var/run"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o777); err != nil {
			return err
		}
	}
	if err := os.Chmod(filepath.Join(dir, "tmp"), 0o777|os.ModeSticky); err != nil {
		return err
	}
	for name, content := range map[string]string{"passwd": staticPasswd, "group": staticGroup, "nsswitch.conf": staticNsswitch} {
		if err := os.WriteFile(filepath.Join(dir, "etc", name), []byte(content), 0o666); err != nil {
			return err
		}
	}
	return nil
}

// archive writes the image ref of the root file system dir into work/images/name.tar.
func (b *builder) archive(name, ref, dir, config string) error {
	if b.imagearchive == "" {
		bin := filepath.Join(b.work, "imagearchive")
		if err := b.run("go build ./hack/imagearchive", b.Cmd([]string{"CGO_ENABLED=0"}, "go", "build", "-o", bin, "./hack/imagearchive")); err != nil {
			return fmt.Errorf("building hack/imagearchive failed (above): %v", err)
		}
		b.imagearchive = bin
	}
	if ref == "" {
		return fmt.Errorf("no image named %s in kubeadm's list", name)
	}
	return b.run("imagearchive of "+ref, b.Cmd(nil, b.imagearchive, "-o", filepath.Join(b.work, "images", name+".tar"),
		"-ref", ref, "-rootfs", dir, "-config", config))
}

func (b *builder) imgDir(name string) string { return filepath.Join(b.work, "img-"+name) }

// buildImages writes every component image.
func (b *builder) buildImages() error {
	kube := b.partDir(kubePartName(b.pins.K8s))
	busybox := filepath.Join(b.partDir(busyboxPartName(b.busyboxVersion)), "busybox")
	if err := os.MkdirAll(filepath.Join(b.work, "images"), 0o777); err != nil {
		return err
	}
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		d := b.imgDir(name)
		if err := errors.Join(staticRoot(d), copyFile(filepath.Join(kube, name), filepath.Join(d, "usr/local/bin", name))); err != nil {
			return err
		}
		if err := b.archive(name, imageRef(b.imageList, name), d, imageConfig()); err != nil {
			return err
		}
	}
	if err := b.kubeProxyImage(kube, busybox); err != nil {
		return err
	}

	d := b.imgDir("etcd")
	err := errors.Join(staticRoot(d), os.MkdirAll(filepath.Join(d, "var/lib/etcd"), 0o777),
		copyFile(filepath.Join(kube, "etcd"), filepath.Join(d, "usr/local/bin/etcd")))
	if err == nil {
		err = b.archive("etcd", imageRef(b.imageList, "etcd"), d, imageConfig())
	}
	if err != nil {
		return err
	}

	d = b.imgDir("coredns")
	err = errors.Join(staticRoot(d), copyFile(filepath.Join(b.partDir("coredns-"+b.coredns), "coredns"), filepath.Join(d, "coredns")))
	if err == nil {
		err = b.archive("coredns", imageRef(b.imageList, "coredns"), d,
			imageConfig(`"Entrypoint":["/coredns"]`, `"ExposedPorts":{"53/tcp":{},"53/udp":{}}`))
	}
	if err != nil {
		return err
	}

	d = b.imgDir("pause")
	err = errors.Join(os.MkdirAll(d, 0o777), copyFile(filepath.Join(kube, "pause"), filepath.Join(d, "pause")))
	if err == nil {
		err = b.archive("pause", imageRef(b.imageList, "pause"), d, imageConfig(`"Entrypoint":["/pause"]`, `"User":"65535:65535"`))
	}
	if err != nil {
		return err
	}

	d = b.imgDir("local-path-provisioner")
	err = errors.Join(staticRoot(d), copyFile(filepath.Join(b.partDir("local-path-provisioner-"+b.pins.LPP), "local-path-provisioner"),
		filepath.Join(d, "usr/local/bin/local-path-provisioner")))
	if err == nil {
		err = b.archive("local-path-provisioner", provisionerImage(b.pins.LPP), d, imageConfig(`"Entrypoint":["/usr/local/bin/local-path-provisioner"]`))
	}
	if err != nil {
		return err
	}

	d = b.imgDir("local-path-helper")
	if err := errors.Join(staticRoot(d), os.MkdirAll(filepath.Join(d, "bin"), 0o777), copyFile(busybox, filepath.Join(d, "bin/busybox"))); err != nil {
		return err
	}
	applets, rc := b.Output(b.Cmd(nil, busybox, "--list"))
	if rc != 0 {
		return errors.New("busybox --list failed")
	}
	for _, a := range strings.Fields(applets) {
		if a != "busybox" {
			if err := forceSymlink("busybox", filepath.Join(d, "bin", a)); err != nil {
				return err
			}
		}
	}
	if err := b.archive("local-path-helper", helperImage(b.busyboxVersion), d, imageConfig(`"Cmd":["sh"]`)); err != nil {
		return err
	}
	tars, _ := filepath.Glob(filepath.Join(b.work, "images", "*.tar"))
	for _, t := range tars {
		if st, err := os.Stat(t); err == nil {
			b.Logf("  %-30s %6.1f MB", filepath.Base(t), float64(st.Size())/1e6)
		}
	}
	return nil
}

// kubeProxyImage: kube-proxy with the node rootfs's iptables (legacy and nft) and their libraries, and busybox
// for the wrapper that chooses between them.
func (b *builder) kubeProxyImage(kube, busybox string) error {
	rootfs, d := filepath.Join(b.work, "rootfs"), b.imgDir("kube-proxy")
	err := errors.Join(staticRoot(d), copyFile(filepath.Join(kube, "kube-proxy"), filepath.Join(d, "usr/local/bin/kube-proxy")),
		os.MkdirAll(filepath.Join(d, "bin"), 0o777), os.MkdirAll(filepath.Join(d, "usr/sbin"), 0o777),
		copyFile(busybox, filepath.Join(d, "bin/busybox")))
	if err != nil {
		return err
	}
	for _, a := range []string{"sh", "grep", "wc", "timeout", "ln", "basename", "cat"} {
		if err := os.Symlink("busybox", filepath.Join(d, "bin", a)); err != nil {
			return err
		}
	}
	for _, multi := range []string{"xtables-legacy-multi", "xtables-nft-multi"} {
		if _, err := os.Stat(filepath.Join(rootfs, "usr/sbin", multi)); err != nil {
			return fmt.Errorf("node rootfs lacks /usr/sbin/%s", multi)
		}
	}
	// the files of the rootfs's iptables packages, then every shared library their ELF files need
	for _, p := range kubeProxyPackages {
		list := ""
		for _, f := range []string{p + ".list", p + ":amd64.list"} {
			if isFile(filepath.Join(rootfs, "var/lib/dpkg/info", f)) {
				list = filepath.Join(rootfs, "var/lib/dpkg/info", f)
				break
			}
		}
		if list == "" {
			return fmt.Errorf("node rootfs has no package %s", p)
		}
		if err := copyListed(list, rootfs, d); err != nil {
			return err
		}
	}
	// glibc and friends: whatever ldd, run in the rootfs, names for the copied ELF files
	var elves []string
	_ = filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			rel, _ := filepath.Rel(d, path)
			if strings.Contains(e.Name(), ".so") || strings.HasPrefix(rel, "usr/sbin/") {
				elves = append(elves, "/"+rel)
			}
		}
		return nil
	})
	ldd := b.asRoot("chroot", rootfs, "xargs", "-r", "ldd")
	ldd.Stdin, ldd.Stderr = strings.NewReader(strings.Join(elves, "\n")+"\n"), nil
	// its status is not the question (a script among the files fails ldd): what it names is
	out, _ := b.Output(ldd)
	for _, lib := range lddLibraries(out) {
		if _, err := os.Stat(d + lib); err == nil {
			continue
		}
		// cp -aL: the file a link leads to, with its mode
		st, err := os.Stat(rootfs + lib)
		if err != nil {
			return err
		}
		if err := errors.Join(os.MkdirAll(filepath.Dir(d+lib), 0o777), installFile(rootfs+lib, d+lib, keptMode(st.Mode()))); err != nil {
			return err
		}
	}
	// usrmerge: /lib, /lib64, /sbin are links into /usr in bookworm
	for _, l := range []string{"lib", "lib64", "sbin"} {
		if st, err := os.Lstat(filepath.Join(rootfs, l)); err == nil && st.Mode()&os.ModeSymlink != 0 {
			if _, err := os.Stat(filepath.Join(d, l)); err != nil {
				if err := copyEntry(filepath.Join(rootfs, l), filepath.Join(d, l)); err != nil {
					return err
				}
			}
		}
	}
	if err := installFile(filepath.Join(b.Root, "hack/kind/node/iptables-wrapper"), filepath.Join(d, "usr/sbin/iptables-wrapper"), 0o755); err != nil {
		return err
	}
	for _, l := range iptablesLinks() {
		if err := forceSymlink(l[1], filepath.Join(d, "usr/sbin", l[0])); err != nil {
			return err
		}
	}
	// the image must answer `iptables --version` through the wrapper logic's links
	for _, mode := range []string{"nft", "legacy"} {
		if err := b.run("iptables --version", b.asRoot("chroot", d, "/usr/sbin/xtables-"+mode+"-multi", "iptables", "--version")); err != nil {
			return fmt.Errorf("iptables-%s does not run in the kube-proxy image: %v", mode, err)
		}
	}
	return b.archive("kube-proxy", imageRef(b.imageList, "kube-proxy"), d, imageConfig())
}

// copyListed copies into dir what the kube-proxy image takes of a package's file list (copiedFromPackage), each
// path's directories made as mkdir -p makes them (through the links it finds).
func copyListed(list, rootfs, dir string) error {
	f, err := os.Open(list)
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		p := s.Text()
		st, serr := os.Stat(rootfs + p)
		lst, lerr := os.Lstat(rootfs + p)
		isLink := p != "" && lerr == nil && lst.Mode()&os.ModeSymlink != 0
		if !copiedFromPackage(p, isLink, serr == nil && st.IsDir(), serr == nil) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dir+p), 0o777); err != nil {
			return err
		}
		if err := copyEntry(rootfs+p, dir+p); err != nil {
			return err
		}
	}
	return s.Err()
}

// copyEntry is cp -a of one file or link: a link stays a link, a file keeps its mode.
func copyEntry(from, to string) error {
	st, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return forceSymlink(target, to)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is neither a file nor a link", from)
	}
	return installFile(from, to, keptMode(st.Mode()))
}

// keptMode is what cp -a keeps of a file's mode.
func keptMode(m os.FileMode) os.FileMode {
	return m & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
}

// installFile copies from to to with exactly mode (install -m).
func installFile(from, to string, mode os.FileMode) error {
	_ = os.Remove(to)
	if err := copyFile(from, to); err != nil {
		return err
	}
	return os.Chmod(to, mode)
}

// forceSymlink is ln -sf.
func forceSymlink(target, link string) error {
	_ = os.Remove(link)
	return os.Symlink(target, link)
}

// sortedNames are the names in dir, sorted; only regular files with files.
func sortedNames(dir string, files bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !files || e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}
