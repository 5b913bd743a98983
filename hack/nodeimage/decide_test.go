package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

func TestEveryKnobIsDescribed(t *testing.T) {
	for _, name := range stagerun.UndescribedKnobs(Config{}, usage) {
		t.Errorf("%s is a knob of Config but --help does not describe it", name)
	}
}

func TestConfigRefusesWhatWouldFailLater(t *testing.T) {
	for knob, value := range map[string]string{"ZNS_KIND_REBUILD": "3", "ZNS_KIND_SAVE": "yes", "ZNS_PROGRESS_EVERY": "soon"} {
		env := map[string]string{"ZNS_CACHE_DIR": "/c", knob: value}
		if _, err := parseConfig(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), knob+"="+value) {
			t.Errorf("%s=%s: %v, want a refusal that names it", knob, value, err)
		}
	}
	c, err := parseConfig(func(k string) string { return map[string]string{"HOME": "/h"}[k] })
	if err != nil || c.CacheRoot != "/h/.cache/zns-mysql" || c.Rebuild != 0 || !c.Save || c.Image != "" ||
		c.DebianMirror != "http://deb.debian.org/debian" || c.ProgressEvery.Seconds() != 30 {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	c, _ = parseConfig(func(k string) string {
		return map[string]string{"ZNS_CACHE_DIR": "/c", "ZNS_KIND_REBUILD": "2", "ZNS_KIND_SAVE": "0", "ZNS_KIND_NODE_IMAGE": "x/y:z"}[k]
	})
	if c.Rebuild != 2 || c.Save || c.Image != "x/y:z" {
		t.Errorf("set: %+v", c)
	}
}

// bashReadPin is hack/kind/lib.sh's read_pin.
const bashReadPin = `read_pin() { sed -nE "s/^[[:space:]]*$1[[:space:]]*[:?]?=[[:space:]]*([^[:space:]#]+).*/\\1/p" "$VERSIONS_FILE" | tail -n 1; }
`

func TestReadPinIsLibShs(t *testing.T) {
	mk := "# K8S_VERSION := 0.0.1\nK8S_VERSION := 1.36.3 # a comment\n  KIND_VERSION ?= v0.1.0\nKIND_VERSION=v0.2.0\nKIND_VERSIONS := v9\nEMPTY :=\n"
	f := filepath.Join(t.TempDir(), "versions.mk")
	if err := os.WriteFile(f, []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"K8S_VERSION", "KIND_VERSION", "KIND_VERSIONS", "EMPTY", "MISSING"} {
		out, err := exec.Command("bash", "-c", bashReadPin+`VERSIONS_FILE=$2; read_pin "$1"`, "bash", name, f).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := readPin(mk, name), strings.TrimSpace(string(out)); got != want {
			t.Errorf("%s: %q, bash's read_pin %q", name, got, want)
		}
	}
}

func TestPinsChecked(t *testing.T) {
	good := "K8S_VERSION := v1.36.3\nETCD_VERSION := 3.6.8\nKIND_VERSION := v0.33.0\nKIND_NODE_DEBIAN_SUITE := bookworm\n" +
		"KIND_CONTAINERD_VERSION := v2.0.14\nKIND_RUNC_VERSION := v1.2.9\nKIND_CNI_PLUGINS_VERSION := v1.9.1\n" +
		"KIND_LOCAL_PATH_PROVISIONER_VERSION := v0.0.30\n"
	dir := t.TempDir()
	for _, c := range []struct{ mk, want string }{
		{good, ""},
		{good + "K8S_VERSION := 2.0.0\n", "K8S_VERSION '2.0.0' in versions.mk is not 1.<minor>.<patch>"},
		{good + "KIND_RUNC_VERSION := 1.2.9\n", "KIND_RUNC_VERSION '1.2.9' in versions.mk is not v<major>.<minor>.<patch>"},
		{strings.Replace(good, "ETCD_VERSION", "ETCD", 1), "has no 'ETCD_VERSION := <value>' line"},
	} {
		f := filepath.Join(dir, "versions.mk")
		if err := os.WriteFile(f, []byte(c.mk), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := readPins(f)
		if c.want == "" {
			if err != nil || p.K8s != "1.36.3" || p.LPP != "v0.0.30" {
				t.Errorf("good pins: %+v, %v", p, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.mk, err, c.want)
		}
	}
}

// bashNames are the bash builder's expressions of the parts' and our images' names (hack/kind/build-node-image.sh
// before hack/nodeimage), on the repository's versions.mk, for a busybox version ($1) and CoreDNS tag ($2).
const bashNames = `VERSIONS_FILE=versions.mk
` + bashReadPin + `K8S_VERSION=$(read_pin K8S_VERSION); K8S_VERSION=${K8S_VERSION#v}
DEBIAN_SUITE=$(read_pin KIND_NODE_DEBIAN_SUITE); CONTAINERD_VER=$(read_pin KIND_CONTAINERD_VERSION)
RUNC_VER=$(read_pin KIND_RUNC_VERSION); CNI_VER=$(read_pin KIND_CNI_PLUGINS_VERSION)
LPP_VER=$(read_pin KIND_LOCAL_PATH_PROVISIONER_VERSION)
NODE_PACKAGES=(systemd conntrack iptables nftables iproute2 ethtool util-linux mount kmod libseccomp2 pigz
  fuse-overlayfs e2fsprogs btrfs-progs f2fs-tools bash ca-certificates jq procps)
BUSYBOX_VERSION=$1 COREDNS_TAG=$2
printf '%s\n' "rootfs-${DEBIAN_SUITE}-$(printf '%s\n' "${NODE_PACKAGES[*]}" | sha256sum | cut -c1-12)" "kubernetes-v${K8S_VERSION}" \
  "containerd-${CONTAINERD_VER}" "runc-${RUNC_VER}" "cni-plugins-${CNI_VER}" "coredns-${COREDNS_TAG}" \
  "local-path-provisioner-${LPP_VER}" "busybox-${BUSYBOX_VERSION//[:~+]/_}" \
  "zns-mysql.local/local-path-provisioner:${LPP_VER}" "zns-mysql.local/local-path-helper:busybox-${BUSYBOX_VERSION//[:~+]/_}"
`

// TestPartNamesAreTheBashOnes: a cache the bash builder filled is reused: the parts' directories, for the
// repository's versions.mk, are named as it named them.
func TestPartNamesAreTheBashOnes(t *testing.T) {
	p, err := readPins("../../versions.mk")
	if err != nil {
		t.Fatal(err)
	}
	for _, busybox := range []string{"1:1.35.0-4+deb12u1+b1", "1:1.36.1-9~bpo12+1", "1.30.1-6"} {
		cmd := exec.Command("bash", "-c", bashNames, "bash", busybox, "v1.14.2")
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Split(strings.TrimSpace(string(out)), "\n")
		got := []string{rootfsPartName(p.DebianSuite, nodePackages), kubePartName(p.K8s), "containerd-" + p.Containerd,
			"runc-" + p.Runc, "cni-plugins-" + p.CNI, "coredns-v1.14.2", "local-path-provisioner-" + p.LPP,
			busyboxPartName(busybox), provisionerImage(p.LPP), helperImage(busybox)}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("busybox %s:\n got %q\nbash %q", busybox, got, want)
		}
	}
	// the package list is in the rootfs's name: a change builds a new rootfs
	if got := rootfsPartName("bookworm", nodePackages); got != "rootfs-bookworm-cdcddee62e52" {
		t.Errorf("rootfs part %s: the package list changed (then change this test too)", got)
	}
}

// bashRecipe is the bash builder's recipe() with its sources ($SOURCES) in place of the script and lib.sh.
const bashRecipe = `NODE_FILES=$1; shift
{
  printf '%s\n' 1.36.3 v0.33.0 bookworm v2.0.14 v1.2.9 v1.9.1 v0.0.30 "a b c"
  cat "$@"
  find "$NODE_FILES" -type f | LC_ALL=C sort | while read -r f; do
    printf '%s %s\n' "${f#"$NODE_FILES"/}" "$(stat -c %a "$f")"
    cat "$f"
  done
} | sha256sum | cut -c1-16
`

// TestRecipeIsHashedAsBashDid: the recipe's bytes are laid out as the bash builder's (a node file's path and its
// permission bits before its content, in byte order of the paths); and each input changes it.
func TestRecipeIsHashedAsBashDid(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join(dir, "node")
	write := func(p string, data string, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(node, "zns-entrypoint"), "#!/bin/sh\n", 0o755)
	write(filepath.Join(node, "a-b/x"), "x\n", 0o600)
	write(filepath.Join(node, "a/x"), "y", 0o644)
	write(filepath.Join(node, "default-storage.yaml"), "kind: x\n", 0o644)
	if err := os.Symlink("zns-entrypoint", filepath.Join(node, "link")); err != nil {
		t.Fatal(err)
	}
	src1, src2 := filepath.Join(dir, "main.go"), filepath.Join(dir, "other.go")
	write(src1, "package main\n", 0o644)
	write(src2, "package other\n", 0o644)
	out, err := exec.Command("bash", "-c", bashRecipe, "bash", node, src1, src2).Output()
	if err != nil {
		t.Fatal(err)
	}
	files, err := readNodeFiles(node)
	if err != nil {
		t.Fatal(err)
	}
	in := recipeInput{Pins: Pins{K8s: "1.36.3", Etcd: "3.6.8", Kind: "v0.33.0", DebianSuite: "bookworm", Containerd: "v2.0.14",
		Runc: "v1.2.9", CNI: "v1.9.1", LPP: "v0.0.30"}, Packages: []string{"a", "b", "c"},
		Sources: [][]byte{[]byte("package main\n"), []byte("package other\n")}, NodeFiles: files}
	base := recipe(in)
	if want := strings.TrimSpace(string(out)); base != want {
		t.Errorf("recipe %s, bash's pipeline %s", base, want)
	}
	for what, change := range map[string]func(*recipeInput){
		"a pin":              func(r *recipeInput) { r.Pins.Runc = "v1.2.10" },
		"the packages":       func(r *recipeInput) { r.Packages = []string{"a", "c", "b"} },
		"a source":           func(r *recipeInput) { r.Sources = [][]byte{[]byte("package main\n\n"), r.Sources[1]} },
		"a node file's mode": func(r *recipeInput) { r.NodeFiles[0].Mode = 0o755 },
		"a node file":        func(r *recipeInput) { r.NodeFiles[1].Data = []byte("z") },
	} {
		c := in
		c.Pins, c.Sources, c.NodeFiles = in.Pins, append([][]byte(nil), in.Sources...), append([]nodeFile(nil), in.NodeFiles...)
		change(&c)
		if recipe(c) == base {
			t.Errorf("changing %s keeps the recipe", what)
		}
	}
	// etcd's pin is checked against kubeadm's, and decides no file of the image
	c := in
	c.Pins.Etcd = "3.6.9"
	if recipe(c) != base {
		t.Error("ETCD_VERSION changed the recipe")
	}
}

func TestChooseFastPath(t *testing.T) {
	for _, c := range []struct {
		image, saved string
		tarball      bool
		save         bool
		want         fastPath
	}{
		{"r1", "r1", true, true, useImage},
		{"r1", "r0", true, true, useImageSave}, // the tarball is of an older image
		{"r1", "", false, true, useImageSave},
		{"r1", "", false, false, useImage}, // ZNS_KIND_SAVE=0
		{"", "r1", true, true, loadTarball},
		{"r0", "r1", true, false, loadTarball},
		{"", "r1", false, true, buildImage}, // a recipe without its tarball
		{"", "r0", true, true, buildImage},
		{"<no value>", "", false, true, buildImage},
	} {
		if got := chooseFastPath("r1", c.image, c.saved, c.tarball, c.save); got != c.want {
			t.Errorf("%+v: %d, want %d", c, got, c.want)
		}
	}
}

const kubeadmList = `registry.k8s.io/kube-apiserver:v1.36.3
registry.k8s.io/kube-controller-manager:v1.36.3
registry.k8s.io/kube-scheduler:v1.36.3
registry.k8s.io/kube-proxy:v1.36.3
registry.k8s.io/coredns/coredns:v1.14.2
registry.k8s.io/pause:3.10.2
registry.k8s.io/etcd:3.6.8-0
`

func TestKubeadmImageList(t *testing.T) {
	for name, want := range map[string]string{"kube-proxy": "registry.k8s.io/kube-proxy:v1.36.3", "coredns": "registry.k8s.io/coredns/coredns:v1.14.2",
		"etcd": "registry.k8s.io/etcd:3.6.8-0", "kube": "", "proxy": ""} {
		if got := imageRef(kubeadmList, name); got != want {
			t.Errorf("imageRef %s: %q, want %q", name, got, want)
		}
	}
	if pause, err := checkKubeadmImages(kubeadmList, "1.36.3", "3.6.8"); err != nil || pause != "3.10.2" {
		t.Errorf("pause %q, %v", pause, err)
	}
	_, err := checkKubeadmImages(kubeadmList, "1.36.3", "3.6.7")
	if want := "kubeadm v1.36.3 deploys etcd 3.6.8-0, but versions.mk pins ETCD_VERSION 3.6.7: set it to 3.6.8"; err == nil || err.Error() != want {
		t.Errorf("etcd pin: %v, want %q", err, want)
	}
	if _, err := checkKubeadmImages(strings.ReplaceAll(kubeadmList, "pause", "paws"), "1.36.3", "3.6.8"); err == nil || !strings.Contains(err.Error(), "no pause image") {
		t.Errorf("no pause: %v", err)
	}
	if err := checkImageList(kubeadmList, "v1.14.2"); err != nil {
		t.Error(err)
	}
	if err := checkImageList(kubeadmList, "v1.14.1"); err == nil || err.Error() != "kubeadm's image list names CoreDNS v1.14.2, its constants.go said v1.14.1" {
		t.Errorf("coredns: %v", err)
	}
}

func TestCoreDNSVersionFromKubeadmsConstants(t *testing.T) {
	src := "package constants\n\nconst (\n\t// CoreDNSImageName ...\n\tCoreDNSImageName = \"coredns\"\n\n\t// CoreDNSVersion is the version of CoreDNS to be deployed if it is used\n\tCoreDNSVersion = \"v1.14.2\"\n)\n"
	if v, err := corednsVersion(src); err != nil || v != "v1.14.2" {
		t.Errorf("%q, %v", v, err)
	}
	for _, bad := range []string{"", `CoreDNSVersion = "1.14"`, `CoreDNSVersion = constants.Other`} {
		if v, err := corednsVersion(bad); err == nil {
			t.Errorf("%q gave %q", bad, v)
		}
	}
}

func TestParseModInfo(t *testing.T) {
	dir, hash := parseModInfo([]byte(`{"Path": "sigs.k8s.io/kind", "Version": "v0.33.0", "Dir": "/m/kind@v0.33.0",
	"Origin": {"VCS": "git", "Hash": "407a9675e6d9af1200b5f57f9ca52ec6cdacce74", "Ref": "refs/tags/v0.33.0"}}`))
	if dir != "/m/kind@v0.33.0" || hash != "407a9675e6d9af1200b5f57f9ca52ec6cdacce74" {
		t.Errorf("%q %q", dir, hash)
	}
	// a cache filled before Go recorded origins, and a failed download
	if dir, hash := parseModInfo([]byte(`{"Path": "x", "Dir": "/m/x"}`)); dir != "/m/x" || hash != "unknown" {
		t.Errorf("%q %q", dir, hash)
	}
	if dir, hash := parseModInfo([]byte(`{"Path": "x", "Error": "not found"}`)); dir != "" || hash != "unknown" {
		t.Errorf("%q %q", dir, hash)
	}
}

func TestBusyboxVersions(t *testing.T) {
	for status, want := range map[string]string{
		"install ok installed 1:1.35.0-4+deb12u1+b1": "1:1.35.0-4+deb12u1+b1",
		"deinstall ok config-files 1:1.35.0-4":       "",
		"":                                           "",
	} {
		if got := busyboxInstalled(status); got != want {
			t.Errorf("%q: %q, want %q", status, got, want)
		}
	}
	if v := aptCandidate("Package: busybox-static\nSource: busybox\nVersion: 1:1.36.1-9\nArchitecture: amd64\n"); v != "1:1.36.1-9" {
		t.Errorf("apt-cache: %q", v)
	}
	if v := aptCandidate("N: Unable to locate package busybox-static\n"); v != "" {
		t.Errorf("unknown: %q", v)
	}
}

// lddOutput is ldd over several files, as glibc's prints it (a script among them: "not a dynamic executable").
const lddOutput = `/usr/sbin/xtables-legacy-multi:
	linux-vdso.so.1 (0x00007ffc8b5f2000)
	libip4tc.so.2 => /lib/x86_64-linux-gnu/libip4tc.so.2 (0x00007f0c1a2a0000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0c1a0bf000)
	/lib64/ld-linux-x86-64.so.2 (0x00007f0c1a2d0000)
/usr/sbin/iptables-apply:
	not a dynamic executable
/usr/lib/x86_64-linux-gnu/libxtables.so.12.7.0:
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0c1a0bf000)
	libmissing.so.1 => not found
`

// TestLddLibrariesAsAwkRead: the libraries are those the bash builder's awk took from ldd's output.
func TestLddLibrariesAsAwkRead(t *testing.T) {
	cmd := exec.Command("bash", "-c", `awk '/=> \// { print $3 } /^[[:space:]]*\/lib.*ld-linux/ { print $1 }' | sort -u`)
	cmd.Stdin = strings.NewReader(lddOutput)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	if got := lddLibraries(lddOutput); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, awk %q", got, want)
	}
}

func TestCopiedFromPackage(t *testing.T) {
	for _, c := range []struct {
		path                  string
		link, dir, exists, ok bool
	}{
		{"/usr/sbin/xtables-nft-multi", false, false, true, true},
		{"/usr/lib/x86_64-linux-gnu/libxtables.so.12", true, false, true, true},
		{"/lib/x86_64-linux-gnu", true, true, true, true}, // a link to a directory stays a link
		{"/usr/sbin", false, true, true, false},
		{"/usr/share/doc/iptables/copyright", false, false, true, false},
		{"/usr/share/man/man8/iptables.8.gz", true, false, false, false},
		{"/usr/sbin/gone", false, false, false, false},
		{"/usr/sbin/dangling", true, false, false, true},
		{"", false, true, true, false},
	} {
		if got := copiedFromPackage(c.path, c.link, c.dir, c.exists); got != c.ok {
			t.Errorf("%+v: %v", c, got)
		}
	}
}

// TestIptablesLinksAsBashNamedThem: the -legacy and -nft names are bash's ${c/tables/tables-$mode}.
func TestIptablesLinksAsBashNamedThem(t *testing.T) {
	out, err := exec.Command("bash", "-c", `for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do echo "$c iptables-wrapper"; done
for mode in legacy nft; do for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do echo "${c/tables/tables-${mode}} xtables-${mode}-multi"; done; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range iptablesLinks() {
		got = append(got, l[0]+" "+l[1])
	}
	if want := strings.Split(strings.TrimSpace(string(out)), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nbash %q", got, want)
	}
}

// TestImageConfigsAreTheBashOnes: the config objects are byte for byte those the bash builder handed
// hack/imagearchive: they are part of each image's digest.
func TestImageConfigsAreTheBashOnes(t *testing.T) {
	envPath := `"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]`
	for got, want := range map[string]string{
		imageConfig(): "{" + envPath + "}",
		imageConfig(`"Entrypoint":["/coredns"]`, `"ExposedPorts":{"53/tcp":{},"53/udp":{}}`): "{" + envPath + `,"Entrypoint":["/coredns"],"ExposedPorts":{"53/tcp":{},"53/udp":{}}}`,
		imageConfig(`"Entrypoint":["/pause"]`, `"User":"65535:65535"`):                       "{" + envPath + `,"Entrypoint":["/pause"],"User":"65535:65535"}`,
		imageConfig(`"Cmd":["sh"]`): "{" + envPath + `,"Cmd":["sh"]}`,
	} {
		if got != want {
			t.Errorf("%s, want %s", got, want)
		}
	}
}

func TestSandboxImage(t *testing.T) {
	toml := "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  # use fixed sandbox image\n  sandbox_image = \"registry.k8s.io/pause:3.10\"\n  other = 1\n"
	got, err := withSandboxImage(toml, "registry.k8s.io/pause:3.10.2")
	if err != nil || got != strings.Replace(toml, "pause:3.10\"", "pause:3.10.2\"", 1) {
		t.Errorf("%q, %v", got, err)
	}
	if _, err := withSandboxImage("version = 3\n", "p"); err == nil {
		t.Error("a config without sandbox_image")
	}
}

func TestGeneratedFiles(t *testing.T) {
	yaml := "# @...@ placeholders are filled by hack/kind/build-node-image.sh.\n# module proxy at @LPP_VERSION@)\nimage: @PROVISIONER_IMAGE@\n- @HELPER_IMAGE@\nimage: @HELPER_IMAGE@\n"
	want := "# @...@ placeholders are filled by hack/kind/build-node-image.sh.\n# module proxy at v0.0.30)\nimage: p:1\n- h:2\nimage: h:2\n"
	if got := defaultStorage(yaml, "p:1", "h:2", "v0.0.30"); got != want {
		t.Errorf("default-storage.yaml:\n%s", got)
	}
	p := Pins{K8s: "1.36.3", Kind: "v0.33.0", DebianSuite: "bookworm", Containerd: "v2.0.14", Runc: "v1.2.9", CNI: "v1.9.1", LPP: "v0.0.30"}
	info := buildInfo("0123456789abcdef", p, "1:1.35.0-4", kubeadmList, "p:1", "h:2")
	if want := "zns-mysql offline kind node image (hack/kind/build-node-image.sh), recipe 0123456789abcdef\n" +
		"kubernetes v1.36.3, kind v0.33.0 base files, debian bookworm\n" +
		"containerd v2.0.14, runc v1.2.9, cni-plugins v1.9.1, local-path-provisioner v0.0.30, busybox-static 1:1.35.0-4\n" +
		"images:\n" + kubeadmList + "p:1\nh:2\n"; info != want {
		t.Errorf("zns-mysql-build.txt:\n%s", info)
	}
	if got := missingImages("sha256:aa\nregistry.k8s.io/pause:3.10.2\n", []string{"registry.k8s.io/pause:3.10.2", "p:1"}); !reflect.DeepEqual(got, []string{"p:1"}) {
		t.Errorf("missing %q", got)
	}
}

// TestGoBuildsAreTheBashOnes: the parts' go commands, as the bash builder ran them (the version strings the
// binaries print come from them).
func TestGoBuildsAreTheBashOnes(t *testing.T) {
	for _, c := range []struct {
		got  []string
		want string
	}{
		{containerdBuild("/p/out", "v2.0.14", "abc1234"), `build -mod=mod -trimpath -o /p/out/ -tags urfave_cli_no_docs no_btrfs no_devmapper no_zfs osusergo netgo static_build -ldflags -s -w -X github.com/containerd/containerd/v2/version.Version=v2.0.14 -X github.com/containerd/containerd/v2/version.Revision=abc1234 -X github.com/containerd/containerd/v2/version.Package=github.com/containerd/containerd/v2 ./cmd/containerd ./cmd/ctr ./cmd/containerd-shim-runc-v2`},
		{runcInstall("v1.2.9", "unknown"), `install -trimpath -tags seccomp urfave_cli_no_docs netgo osusergo -ldflags -s -w -X main.version=1.2.9 -X main.gitCommit=unknown -extldflags -static github.com/opencontainers/runc@v1.2.9`},
		{cniInstall("v1.9.1"), `install -trimpath -ldflags -s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=v1.9.1 github.com/containernetworking/plugins/plugins/main/ptp@v1.9.1 github.com/containernetworking/plugins/plugins/ipam/host-local@v1.9.1 github.com/containernetworking/plugins/plugins/main/loopback@v1.9.1 github.com/containernetworking/plugins/plugins/meta/portmap@v1.9.1`},
		{corednsInstall("v1.14.2"), `install -trimpath -ldflags -s -w github.com/coredns/coredns@v1.14.2`},
		{lppInstall("v0.0.30"), `install -trimpath -ldflags -s -w -X main.VERSION=v0.0.30 github.com/rancher/local-path-provisioner@v0.0.30`},
	} {
		if got := strings.Join(c.got, " "); got != c.want {
			t.Errorf("go %s\nwant go %s", got, c.want)
		}
	}
}

// TestProgressLinesAlignAsBefore: the timing lines are the bash builder's printf's.
func TestProgressLinesAlignAsBefore(t *testing.T) {
	out, err := exec.Command("bash", "-c", `printf '%-40s %8s\n' "part 3/8 containerd-v2.0.14" cached
printf '%-40s %7ss\n' "part 4/8 runc-v1.2.9" 12.3
printf '%-34s %7ss\n' "docker commit" 4.0
printf '%-34s %7ss\n' "rootfs (wall, from start)" 61.5`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cachedLine(partLabel(3, "containerd-v2.0.14")), partTimeLine(partLabel(4, "runc-v1.2.9"), "12.3"),
		stepTimeLine("docker commit", "4.0"), stepTimeLine("rootfs (wall, from start)", secs(61500*time.Millisecond))}
	if want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nbash %q", got, want)
	}
}

// TestAssembleScript: kind's files get the modes of its Dockerfile, config.toml is ours (with the sandbox image),
// the units are enabled as links; paths with spaces and quotes reach sh whole.
func TestAssembleScript(t *testing.T) {
	in := assembleInput{Root: "/c d/it's/rootfs", KindFiles: "/k", NodeFiles: "/n", Generated: "/g", Kube: "/p/k", Containerd: "/p/c",
		Runc: "/p/r", CNI: "/p/n", KindNames: map[string][]string{"usr/local/bin": {"entrypoint"}, "kind": {"README.txt"},
			"etc/containerd": {"config.toml"}, "etc/systemd/system": {"kubelet.service"}}}
	script := assembleScript(in)
	for _, want := range []string{
		`install -d -m 0755 '/c d/it'\''s/rootfs/kind' `,
		`install -m 0755 /k/usr/local/bin/entrypoint '/c d/it'\''s/rootfs/usr/local/bin/entrypoint'` + "\n",
		`install -m 0644 /k/kind/README.txt '/c d/it'\''s/rootfs/kind/README.txt'` + "\n",
		`install -m 0644 /g/config.toml '/c d/it'\''s/rootfs/etc/containerd/config.toml'` + "\n",
		`ln -sf /etc/systemd/system/zns-cni-config.service '/c d/it'\''s/rootfs/etc/systemd/system/multi-user.target.wants/zns-cni-config.service'` + "\n",
		`ln -sf /dev/null '/c d/it'\''s/rootfs/etc/systemd/system/systemd-binfmt.service'` + "\n",
		`install -m 0755 -o root -g root /p/r/runc '/c d/it'\''s/rootfs/usr/local/sbin/runc'` + "\n",
		`install -m 0644 /g/version '/c d/it'\''s/rootfs/kind/version'` + "\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the script lacks %q:\n%s", want, script)
		}
	}
	if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
}
