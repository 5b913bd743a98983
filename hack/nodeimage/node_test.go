package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

const (
	image       = "zns-mysql/kind-node:v1.36.3"
	rootfsPart  = "rootfs-bookworm-cdcddee62e52"
	busyboxPart = "busybox-1_1.35.0-4_deb12u1_b1"
)

var allParts = []string{rootfsPart, "kubernetes-v1.36.3", "containerd-v2.0.14", "runc-v1.2.9", "cni-plugins-v1.9.1",
	"coredns-v1.14.2", "local-path-provisioner-v0.0.30", busyboxPart}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// glob is what pattern matches under the cache's kind/ directory.
func glob(repo *stageruntest.Repo, pattern string) []string {
	m, _ := filepath.Glob(filepath.Join(repo.Cache, "kind", pattern))
	return m
}

// dockerImage is the fake docker's record of an image ("" when it has none).
func dockerImage(repo *stageruntest.Repo, name string) string {
	b, _ := os.ReadFile(filepath.Join(repo.Root, "docker/images", strings.NewReplacer("/", "_", ":", "_").Replace(name)))
	return string(b)
}

// coldBuild builds the image in an empty cache and checks what every build must leave.
func coldBuild(t *testing.T, repo *stageruntest.Repo, env map[string]string) (*builder, string) {
	t.Helper()
	b, out, errs := fakeBuilder(t, repo, env)
	if rc := build(t, b); rc != 0 {
		t.Fatalf("build: %d\n%s", rc, errs)
	}
	if out.String() != image+"\n" {
		t.Errorf("stdout %q, want the image's name alone", out.String())
	}
	if !strings.Contains(dockerImage(repo, image), "recipe="+b.recipe+"\n") {
		t.Errorf("docker's image: %q, want recipe %s", dockerImage(repo, image), b.recipe)
	}
	if left := append(glob(repo, ".work.*"), glob(repo, "parts/.build-*")...); len(left) > 0 {
		t.Errorf("scratch directories left: %q", left)
	}
	if left, _ := filepath.Glob(filepath.Join(repo.Root, "docker/containers/*")); len(left) > 0 {
		t.Errorf("containers left: %q", left)
	}
	if dockerImage(repo, "zns-mysql/kind-node-build:"+b.recipe) != "" {
		t.Error("the build container's image is left")
	}
	return b, errs.String()
}

// TestColdBuild: an empty cache gets every part, in its directory of the bash builder's name; the rootfs and the
// Kubernetes binaries build in the background, CoreDNS meanwhile at the version of kubeadm's constants (the
// fake Kubernetes build ends only after CoreDNS's: a builder that needed kubeadm's list first would wait for
// ever); the image is committed with its labels and entrypoint, holds every image kubeadm and the storage ask
// for, and is saved into the cache in the background.
func TestColdBuild(t *testing.T) {
	repo := fakeRepo(t)
	b, errs := coldBuild(t, repo, map[string]string{"FAKE_KUBE_AFTER": "coredns/coredns@v1.14.2", "FAKE_GO_SLOW": "./cmd/containerd"})
	for _, p := range allParts {
		if !isFile(filepath.Join(repo.Cache, "kind/parts", p, ".complete")) {
			t.Errorf("part %s is not complete", p)
		}
	}
	stageruntest.Contains(t, "stderr", errs,
		"build-node-image: part 1/8 "+rootfsPart+": building in the background (debootstrap: network and disk bound)\n",
		"build-node-image: part 2/8 kubernetes-v1.36.3: building in the background (hack/kubernetes.sh)\n",
		"kubernetes: compiled 10 of at most 20 packages\n", // the background build's own progress
		"build-node-image: part 3/8 containerd-v2.0.14: building\n",
		"build-node-image: part 3/8 containerd-v2.0.14: still running, 0m00s elapsed\n",
		"build-node-image: part 8/8 "+busyboxPart+": building\n",
		"build-node-image: rootfs (wall, from start) ",
		"build-node-image: docker commit ",
		"  registry.k8s.io/etcd:3.6.8-0\n",
		"build-node-image: built "+image+" (988 MB)\n",
		"build-node-image: saving "+image+" into ",
		"build-node-image: total ")
	calls := strings.Join(repo.CallLines(t, ""), "\n")
	for _, want := range []string{
		"debootstrap --variant=minbase --components=main --include=systemd,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,fuse-overlayfs,e2fsprogs,btrfs-progs,f2fs-tools,bash,ca-certificates,jq,procps bookworm ",
		"go install -trimpath -tags seccomp urfave_cli_no_docs netgo osusergo -ldflags -s -w -X main.version=1.2.9 -X main.gitCommit=0123456789abcdef0123456789abcdef01234567 -extldflags -static github.com/opencontainers/runc@v1.2.9 [CGO_ENABLED=1 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local GOWORK=off]",
		"gcc -Os -Wall -Werror -static -DVERSION=v3.10.2-zns-mysql -o ",
		"docker import -m hack/kind/build-node-image.sh rootfs - zns-mysql/kind-node-build:" + b.recipe,
		"docker run -d --name zns-kind-build-" + b.recipe + "-" + strconv.Itoa(os.Getpid()) + " --stop-signal SIGRTMIN+3 --entrypoint sleep --security-opt seccomp=unconfined",
		"docker exec zns-kind-build-" + b.recipe + "-" + strconv.Itoa(os.Getpid()) + " sh -c rm -rf /var/log/containerd-build.log /run/containerd /tmp/*",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("no call %q in\n%s", want, calls)
		}
	}
	if strings.Contains(calls, "vendor/ present") {
		t.Error("containerd was built with its vendor/ directory")
	}
	if got, want := read(t, filepath.Join(repo.Root, "docker/commit-changes")), strings.Join(commitChanges(b.recipe, "1.36.3"), "\n")+"\n"; got != want {
		t.Errorf("commit changes:\n%s\nwant\n%s", got, want)
	}
	refs := strings.Fields(read(t, filepath.Join(repo.Root, "docker/refs")))
	want := append(strings.Fields(kubeadmList), "zns-mysql.local/local-path-provisioner:v0.0.30", "zns-mysql.local/local-path-helper:busybox-1_1.35.0-4_deb12u1_b1")
	slices.Sort(refs)
	slices.Sort(want)
	if !slices.Equal(refs, want) {
		t.Errorf("imported %q\nwant %q", refs, want)
	}
	checkKubeProxyImage(t, read(t, filepath.Join(repo.Root, "archives/kube-proxy.tar")))
	checkNodeRootfs(t, filepath.Join(repo.Root, "docker/import.tar"), b.recipe)
	// the background save holds the cache's lock until the tarball is whole
	nodeDir := filepath.Join(repo.Cache, "kind/node/v1.36.3")
	stageruntest.WaitFor(t, "the background save", func() bool {
		r, _ := os.ReadFile(filepath.Join(nodeDir, "recipe"))
		return string(r) == b.recipe+"\n"
	})
	if !isFile(filepath.Join(nodeDir, "node-image.tar.gz")) {
		t.Error("no tarball beside the recipe")
	}
}

// checkKubeProxyImage: kube-proxy's image has the rootfs's iptables with its libraries and links, as the bash
// builder made it.
func checkKubeProxyImage(t *testing.T, listing string) {
	t.Helper()
	stageruntest.Contains(t, "the kube-proxy image", listing,
		"ref=registry.k8s.io/kube-proxy:v1.36.3\n",
		"config={\"Env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"]}\n",
		"./bin/sh -> busybox\n", "./bin/busybox 755\n", "./tmp 1777\n", "./etc/passwd 644\n",
		"./usr/local/bin/kube-proxy 755\n", "./usr/sbin/xtables-nft-multi 755\n", "./usr/sbin/iptables-wrapper 755\n",
		"./usr/sbin/iptables -> iptables-wrapper\n", "./usr/sbin/ip6tables-legacy-save -> xtables-legacy-multi\n",
		"./usr/sbin/iptables-nft-restore -> xtables-nft-multi\n",
		"./usr/lib/x86_64-linux-gnu/libxtables.so.12 -> libxtables.so.12.7.0\n",
		"./usr/lib/x86_64-linux-gnu/xtables/libxt_mark.so 644\n",
		"./lib/x86_64-linux-gnu/libc.so.6 644\n", "./lib64/ld-linux-x86-64.so.2 644\n", "./sbin -> usr/sbin\n")
	if strings.Contains(listing, "/usr/share/") {
		t.Errorf("the kube-proxy image has documentation:\n%s", listing)
	}
}

// checkNodeRootfs reads the tar docker imported: kind's files and ours, installed with their modes, the units
// enabled, pause as the sandbox image.
func checkNodeRootfs(t *testing.T, path, rcp string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]string{}
	content := map[string]string{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if h.Typeflag == tar.TypeSymlink {
			got[name] = "-> " + h.Linkname
		} else {
			got[name] = strconv.FormatInt(h.Mode&0o7777, 8)
		}
		if h.Typeflag == tar.TypeReg && h.Size < 1<<16 {
			b, _ := io.ReadAll(tr)
			content[name] = string(b)
		}
	}
	for name, want := range map[string]string{
		"usr/local/bin/entrypoint": "755", "usr/local/bin/zns-entrypoint": "755", "kind/README.txt": "644",
		"kind/bin/mount-product-files.sh": "755", "kind/bin/zns-cni-config.sh": "755", "etc/crictl.yaml": "644",
		"etc/containerd/config.toml": "644", "etc/systemd/system/kubelet.service.d/10-kubeadm.conf": "644",
		"etc/systemd/system/zns-cni-config.service": "644", "usr/bin/kubelet": "755", "usr/local/bin/ctr": "755",
		"usr/local/sbin/runc": "755", "opt/cni/bin/portmap": "755", "kind/version": "644",
		"kind/manifests/default-storage.yaml": "644", "etc/cni/net.d/": "755", "etc/kubernetes/manifests/": "755",
		"etc/systemd/system/multi-user.target.wants/kubelet.service":        "-> /etc/systemd/system/kubelet.service",
		"etc/systemd/system/multi-user.target.wants/zns-cni-config.service": "-> /etc/systemd/system/zns-cni-config.service",
		"etc/systemd/system/systemd-binfmt.service":                         "-> /dev/null",
		"usr/sbin/init": "-> /usr/lib/systemd/systemd",
	} {
		if got[name] != want {
			t.Errorf("node rootfs %s: %q, want %q", name, got[name], want)
		}
	}
	for _, gone := range []string{"var/cache/apt/archives/x.deb", "debootstrap/", "usr/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
		"usr/lib/systemd/system/multi-user.target.wants/getty.target"} {
		if _, ok := got[gone]; ok {
			t.Errorf("node rootfs keeps %s", gone)
		}
	}
	for name, want := range map[string]string{
		"kind/version":               "v1.36.3",
		"etc/containerd/config.toml": "  sandbox_image = \"registry.k8s.io/pause:3.10.2\"\n",
		"etc/systemd/journald.conf":  "ReadKMsg=no\n",
		"etc/machine-id":             "",
		"kind/zns-mysql-build.txt":   "recipe " + rcp + "\n",
	} {
		if c, ok := content[name]; !ok || !strings.Contains(c, want) {
			t.Errorf("node rootfs %s: %q, want %q in it", name, c, want)
		}
	}
	if c := content["kind/manifests/default-storage.yaml"]; !strings.Contains(c, "image: zns-mysql.local/local-path-provisioner:v0.0.30\n") ||
		strings.Contains(c, "@HELPER_IMAGE@") {
		t.Errorf("default-storage.yaml not filled:\n%s", c)
	}
}

// TestWarmRuns: the image in docker with the recipe ends the run at once; once docker lost it, the cache's
// tarball is loaded; ZNS_KIND_REBUILD=1 assembles it again from the cached parts (and builds the parts this cache
// lacks, even with the image in docker: what hack/zonednode asks of it) and removes the image it replaces.
func TestWarmRuns(t *testing.T) {
	repo := fakeRepo(t)
	first, _ := coldBuild(t, repo, nil)
	stageruntest.WaitFor(t, "the background save", func() bool { return isFile(filepath.Join(repo.Cache, "kind/node/v1.36.3/recipe")) })
	stageruntest.WaitFor(t, "the lock released", func() bool { return lockFree(t, repo) })
	calls := len(repo.CallLines(t, ""))

	b, out, errs := fakeBuilder(t, repo, nil)
	if rc := build(t, b); rc != 0 || out.String() != image+"\n" {
		t.Fatalf("cached: %d, %q\n%s", rc, out, errs)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "build-node-image: cached in docker: "+image+" (recipe "+first.recipe+")\n")
	if later := repo.CallLines(t, "")[calls:]; slices.ContainsFunc(later, func(c string) bool {
		return !strings.HasPrefix(c, "docker info") && !strings.HasPrefix(c, "docker image inspect")
	}) {
		t.Errorf("the cached run did more than look: %q", later)
	}

	if err := os.Remove(filepath.Join(repo.Root, "docker/images", "zns-mysql_kind-node_v1.36.3")); err != nil {
		t.Fatal(err)
	}
	b, out, errs = fakeBuilder(t, repo, nil)
	if rc := build(t, b); rc != 0 || out.String() != image+"\n" {
		t.Fatalf("from the tarball: %d, %q\n%s", rc, out, errs)
	}
	stageruntest.Contains(t, "stderr", errs.String(), "build-node-image: loading "+filepath.Join(repo.Cache, "kind/node/v1.36.3/node-image.tar.gz")+"\n",
		"build-node-image: docker load (cache) ")
	if !strings.Contains(dockerImage(repo, image), "recipe="+first.recipe) {
		t.Error("docker load did not bring the image back")
	}

	// the parts of another cache: this one lacks containerd's
	if err := os.RemoveAll(filepath.Join(repo.Cache, "kind/parts/containerd-v2.0.14")); err != nil {
		t.Fatal(err)
	}
	calls = len(repo.CallLines(t, ""))
	b, out, errs = fakeBuilder(t, repo, map[string]string{"ZNS_KIND_REBUILD": "1", "ZNS_KIND_SAVE": "0"})
	if rc := build(t, b); rc != 0 || out.String() != image+"\n" {
		t.Fatalf("rebuild: %d, %q\n%s", rc, out, errs)
	}
	for _, p := range allParts {
		if p != "containerd-v2.0.14" {
			stageruntest.Contains(t, "stderr", errs.String(), strings.TrimSpace(cachedLine(partLabel(1+slices.Index(allParts, p), p)))+"\n")
		}
	}
	stageruntest.Contains(t, "stderr", errs.String(), "build-node-image: part 3/8 containerd-v2.0.14: building\n", "build-node-image: removed the previous "+image+" (")
	later := strings.Join(repo.CallLines(t, "")[calls:], "\n")
	for _, not := range []string{"debootstrap", "kubernetes node", "go install", "gcc -Os", "docker save"} {
		if strings.Contains(later, not) {
			t.Errorf("the rebuild ran %q:\n%s", not, later)
		}
	}
}

// lockFree: no run holds the cache's lock.
func lockFree(t *testing.T, repo *stageruntest.Repo) bool {
	f, err := os.OpenFile(filepath.Join(repo.Cache, "kind/.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// TestRebuildPartsReplacesThem: ZNS_KIND_REBUILD=2 builds every part again, each replacing the old one whole.
func TestRebuildPartsReplacesThem(t *testing.T) {
	repo := fakeRepo(t)
	coldBuild(t, repo, map[string]string{"ZNS_KIND_SAVE": "0"})
	marker := filepath.Join(repo.Cache, "kind/parts", rootfsPart, "old")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	calls := len(repo.CallLines(t, ""))
	_, errs := coldBuild(t, repo, map[string]string{"ZNS_KIND_SAVE": "0", "ZNS_KIND_REBUILD": "2"})
	if strings.Contains(errs, "cached") {
		t.Errorf("ZNS_KIND_REBUILD=2 took a part from the cache:\n%s", errs)
	}
	later := strings.Join(repo.CallLines(t, "")[calls:], "\n")
	for _, want := range []string{"debootstrap", "kubernetes node", "go install", "gcc -Os"} {
		if !strings.Contains(later, want) {
			t.Errorf("the rebuild did not run %q", want)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) || len(glob(repo, "parts/*.old")) > 0 {
		t.Errorf("the old rootfs part is still there (%v, %q)", err, glob(repo, "parts/*.old"))
	}
}
