package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// nodePackages are the node rootfs's Debian packages: kind's base image list (images/base/Dockerfile) without
// the network-storage ones (nfs-common, open-iscsi) and curl (no network here anyway). Their order is part of the
// rootfs part's name and of the recipe.
var nodePackages = []string{"systemd", "conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux",
	"mount", "kmod", "libseccomp2", "pigz", "fuse-overlayfs", "e2fsprogs", "btrfs-progs", "f2fs-tools", "bash",
	"ca-certificates", "jq", "procps"}

const (
	recipeLabel  = "zns-mysql.kind-node.recipe"
	partsTotal   = 8
	imageEnvPath = `"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]`
)

// The parts' directory names are what the bash builder named them, so that a cache it filled is reused as it
// is (a test computes them with its expressions).

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// rootfsPartName carries the package list, which decides the rootfs as much as the suite does.
func rootfsPartName(suite string, packages []string) string {
	return "rootfs-" + suite + "-" + sha256Hex(strings.Join(packages, " ") + "\n")[:12]
}

func kubePartName(k8s string) string { return "kubernetes-v" + k8s }

// debVersionName is a Debian version as part of a directory or tag name: an epoch's ':', '~' and '+' are not
// allowed in an image tag.
func debVersionName(v string) string {
	return strings.NewReplacer(":", "_", "~", "_", "+", "_").Replace(v)
}

func busyboxPartName(version string) string { return "busybox-" + debVersionName(version) }

// The images of our own, never pulled: their names only have to be unique and stable.
func provisionerImage(lpp string) string { return "zns-mysql.local/local-path-provisioner:" + lpp }
func helperImage(busyboxVersion string) string {
	return "zns-mysql.local/local-path-helper:busybox-" + debVersionName(busyboxVersion)
}

// recipeInput is everything that decides the image's content but the parts' own sources (each part's directory
// name carries its version): a change of any of it assembles the image again.
type recipeInput struct {
	Pins      Pins
	Packages  []string
	Sources   [][]byte   // hack/nodeimage's Go sources (not its tests), then hack/imagearchive/*.go, in name order
	NodeFiles []nodeFile // hack/kind/node's files, in byte order of their paths
}

// nodeFile is a file of hack/kind/node: its path there, its permission bits (they are the installed files') and
// its content.
type nodeFile struct {
	Rel  string
	Mode uint32
	Data []byte
}

// recipe is the first 16 hex digits of the inputs' SHA-256, laid out as the bash builder hashed them.
func recipe(in recipeInput) string {
	h := sha256.New()
	p := in.Pins
	for _, v := range []string{p.K8s, p.Kind, p.DebianSuite, p.Containerd, p.Runc, p.CNI, p.LPP, strings.Join(in.Packages, " ")} {
		fmt.Fprintf(h, "%s\n", v)
	}
	for _, s := range in.Sources {
		h.Write(s)
	}
	for _, f := range in.NodeFiles {
		fmt.Fprintf(h, "%s %o\n", f.Rel, f.Mode)
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// fastPath is what a run does before building anything.
type fastPath int

const (
	useImage     fastPath = iota // docker has the image with this recipe
	useImageSave                 // ... and the cache lacks its tarball: save it in the background
	loadTarball                  // docker lacks it, the cache's tarball has it: docker load
	buildImage                   // neither: assemble it
)

// chooseFastPath: imageRecipe is the label of the image in docker ("" when docker lacks it), savedRecipe the
// cache's recipe file ("" when missing), haveTarball whether node-image.tar.gz is there.
func chooseFastPath(want, imageRecipe, savedRecipe string, haveTarball, save bool) fastPath {
	switch {
	case imageRecipe == want && save && (!haveTarball || savedRecipe != want):
		return useImageSave
	case imageRecipe == want:
		return useImage
	case haveTarball && savedRecipe == want:
		return loadTarball
	}
	return buildImage
}

// imageRef is the image of kubeadm's list (images.txt) whose path ends in name, "" when there is none.
func imageRef(list, name string) string {
	re := regexp.MustCompile(`/` + regexp.QuoteMeta(name) + `:[^/]+$`)
	for _, l := range strings.Split(list, "\n") {
		if re.MatchString(l) {
			return l
		}
	}
	return ""
}

// imageTag is the tag of imageRef's image, "" when there is none.
func imageTag(list, name string) string {
	ref := imageRef(list, name)
	if ref == "" {
		return ""
	}
	return ref[strings.LastIndex(ref, ":")+1:]
}

// checkKubeadmImages: the pause tag (pause's VERSION) of kubeadm's image list, once its etcd is the one
// versions.mk pins: envtest and the node run that etcd binary, so a Kubernetes bump must move the pin too.
func checkKubeadmImages(list, k8s, etcdPin string) (string, error) {
	pause := imageTag(list, "pause")
	if pause == "" {
		return "", fmt.Errorf("no pause image in kubeadm's list: %s", list)
	}
	etcd := imageTag(list, "etcd")
	etcdVersion, _, _ := strings.Cut(etcd, "-")
	if etcdVersion != etcdPin {
		return "", fmt.Errorf("kubeadm v%s deploys etcd %s, but versions.mk pins ETCD_VERSION %s: set it to %s",
			k8s, orQuestion(etcd), etcdPin, etcdVersion)
	}
	return pause, nil
}

func orQuestion(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// checkImageList: what the images need of kubeadm's list once the parts are built. CoreDNS was built at the
// version of kubeadm's constants, before the list existed (the Kubernetes binaries build beside it).
func checkImageList(list, coredns string) error {
	if imageTag(list, "etcd") == "" || imageTag(list, "pause") == "" {
		return fmt.Errorf("kubeadm's image list lacks etcd or pause: %s", strings.Join(strings.Fields(list), " "))
	}
	if got := imageTag(list, "coredns"); got != coredns {
		return fmt.Errorf("kubeadm's image list names CoreDNS %s, its constants.go said %s", got, coredns)
	}
	return nil
}

var corednsConst = regexp.MustCompile(`(?m)^[ \t]*CoreDNSVersion[ \t]*=[ \t]*"([^"]+)"`)

// corednsVersion is kubeadm's CoreDNSVersion in cmd/kubeadm/app/constants/constants.go.
func corednsVersion(constantsGo string) (string, error) {
	m := corednsConst.FindStringSubmatch(constantsGo)
	if m == nil || !moduleVersion.MatchString(m[1]) {
		return "", errors.New("no CoreDNSVersion v<major>.<minor>.<patch>")
	}
	return m[1], nil
}

// modInfo is what `go mod download -json` says of a module version.
type modInfo struct {
	Dir    string
	Error  string
	Origin struct{ Hash string }
}

// parseModInfo reads go mod download's JSON; hash is the version's VCS commit, "unknown" when the proxy did
// not say (what the binaries' version strings then carry).
func parseModInfo(out []byte) (dir, hash string) {
	var m modInfo
	_ = json.Unmarshal(out, &m)
	hash = m.Origin.Hash
	if !regexp.MustCompile(`^[0-9a-f]{7,}$`).MatchString(hash) {
		hash = "unknown"
	}
	return m.Dir, hash
}

// busyboxInstalled is the version of busybox-static from dpkg-query -W -f='${Status} ${Version}', "" when it is
// not installed.
func busyboxInstalled(status string) string {
	v, ok := strings.CutPrefix(status, "install ok installed ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

// aptCandidate is the first Version of apt-cache show --no-all-versions.
func aptCandidate(show string) string {
	for _, l := range strings.Split(show, "\n") {
		if v, ok := strings.CutPrefix(l, "Version: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

var (
	lddResolved = regexp.MustCompile(`=> /`)
	lddLoader   = regexp.MustCompile(`^\s*/lib.*ld-linux`)
)

// lddLibraries are the libraries ldd's output over several files names: what each `=> /path` resolves to, and
// the dynamic loader, sorted, each once.
func lddLibraries(out string) []string {
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case lddResolved.MatchString(l) && len(f) >= 3:
			seen[f[2]] = true
		case lddLoader.MatchString(l) && len(f) >= 1:
			seen[f[0]] = true
		}
	}
	libs := make([]string, 0, len(seen))
	for l := range seen {
		libs = append(libs, l)
	}
	sort.Strings(libs)
	return libs
}

// kubeProxyPackages are the Debian packages whose files the kube-proxy image takes from the node rootfs: iptables
// legacy and nft with their libraries.
var kubeProxyPackages = []string{"iptables", "libxtables12", "libip4tc2", "libip6tc2", "libnftnl11", "libmnl0",
	"libnfnetlink0", "libnetfilter-conntrack3"}

// copiedFromPackage: whether the kube-proxy image takes a path of a package's file list: a file or a link
// (to a directory too), never a directory itself or documentation.
func copiedFromPackage(path string, isLink, isDir, exists bool) bool {
	if strings.HasPrefix(path, "/usr/share/") {
		return false
	}
	return (path != "" && !isDir && exists) || isLink
}

var iptablesCommands = []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"}

// iptablesLinks are the kube-proxy image's links in /usr/sbin, name to target: the commands lead to the wrapper,
// which chooses legacy or nft at its first call, and their -legacy and -nft names to each multi-call binary.
func iptablesLinks() [][2]string {
	var links [][2]string
	for _, c := range iptablesCommands {
		links = append(links, [2]string{c, "iptables-wrapper"})
	}
	for _, mode := range []string{"legacy", "nft"} {
		for _, c := range iptablesCommands {
			links = append(links, [2]string{strings.Replace(c, "tables", "tables-"+mode, 1), "xtables-" + mode + "-multi"})
		}
	}
	return links
}

// imageConfig is an image's "config" object for hack/imagearchive: the PATH every image has, then extra
// (`"Entrypoint":[...]`, ...). Its bytes are part of the image's digest: keep them as they are.
func imageConfig(extra ...string) string {
	return "{" + strings.Join(append([]string{imageEnvPath}, extra...), ",") + "}"
}

var sandboxLine = regexp.MustCompile(`(?m)^([ \t]*sandbox_image = ).*$`)

// withSandboxImage is kind's containerd config.toml with kubeadm's pause as the sandbox image.
func withSandboxImage(toml, pauseRef string) (string, error) {
	if !sandboxLine.MatchString(toml) {
		return "", errors.New("could not set sandbox_image in kind's containerd config.toml")
	}
	return sandboxLine.ReplaceAllString(toml, `${1}"`+strings.ReplaceAll(pauseRef, "$", "$$")+`"`), nil
}

// defaultStorage is hack/kind/node/default-storage.yaml with its placeholders filled.
func defaultStorage(yaml, provisioner, helper, lpp string) string {
	return strings.NewReplacer("@PROVISIONER_IMAGE@", provisioner, "@HELPER_IMAGE@", helper, "@LPP_VERSION@", lpp).Replace(yaml)
}

// buildInfo is /kind/zns-mysql-build.txt: what went in, for humans.
func buildInfo(rcp string, p Pins, busybox, images, provisioner, helper string) string {
	return fmt.Sprintf("zns-mysql offline kind node image (hack/kind/build-node-image.sh), recipe %s\n"+
		"kubernetes v%s, kind %s base files, debian %s\n"+
		"containerd %s, runc %s, cni-plugins %s, local-path-provisioner %s, busybox-static %s\n"+
		"images:\n%s%s\n%s\n", rcp, p.K8s, p.Kind, p.DebianSuite, p.Containerd, p.Runc, p.CNI, p.LPP, busybox,
		images, provisioner, helper)
}

// missingImages are the images of want that ctr's list (have, one a line) lacks.
func missingImages(have string, want []string) []string {
	got := map[string]bool{}
	for _, l := range strings.Split(have, "\n") {
		got[strings.TrimSpace(l)] = true
	}
	var missing []string
	for _, w := range want {
		if !got[w] {
			missing = append(missing, w)
		}
	}
	return missing
}

// commitChanges are docker commit's --change values: kind's entrypoint behind ours, and the labels kind and the
// fast path read.
func commitChanges(rcp, k8s string) []string {
	return []string{
		`ENTRYPOINT [ "/usr/local/bin/zns-entrypoint", "/usr/local/bin/entrypoint", "/sbin/init" ]`,
		`ENV container=docker PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
		fmt.Sprintf("LABEL %s=%s io.x-k8s.kind.kubernetes-version=v%s", recipeLabel, rcp, k8s),
	}
}

// The Go builds of the parts: flags as the projects' own release builds set them (version strings included).

// containerdBuild is go build's arguments in containerd's source, as the main module: its go.mod's exclude
// directives only apply there.
func containerdBuild(out, version, revision string) []string {
	pkg := "github.com/containerd/containerd/v2"
	return []string{"build", "-mod=mod", "-trimpath", "-o", out + "/",
		"-tags", "urfave_cli_no_docs no_btrfs no_devmapper no_zfs osusergo netgo static_build",
		"-ldflags", fmt.Sprintf("-s -w -X %s/version.Version=%s -X %s/version.Revision=%s -X %s/version.Package=%s", pkg, version, pkg, revision, pkg, pkg),
		"./cmd/containerd", "./cmd/ctr", "./cmd/containerd-shim-runc-v2"}
}

// runcInstall is runc's `make static`: cgo with libseccomp, linked statically.
func runcInstall(version, commit string) []string {
	return []string{"install", "-trimpath", "-tags", "seccomp urfave_cli_no_docs netgo osusergo",
		"-ldflags", fmt.Sprintf("-s -w -X main.version=%s -X main.gitCommit=%s -extldflags -static", strings.TrimPrefix(version, "v"), commit),
		"github.com/opencontainers/runc@" + version}
}

func cniInstall(version string) []string {
	m := "github.com/containernetworking/plugins"
	return []string{"install", "-trimpath", "-ldflags", "-s -w -X " + m + "/pkg/utils/buildversion.BuildVersion=" + version,
		m + "/plugins/main/ptp@" + version, m + "/plugins/ipam/host-local@" + version,
		m + "/plugins/main/loopback@" + version, m + "/plugins/meta/portmap@" + version}
}

func corednsInstall(tag string) []string {
	return []string{"install", "-trimpath", "-ldflags", "-s -w", "github.com/coredns/coredns@" + tag}
}

func lppInstall(version string) []string {
	return []string{"install", "-trimpath", "-ldflags", "-s -w -X main.VERSION=" + version,
		"github.com/rancher/local-path-provisioner@" + version}
}

// Progress lines, aligned as the bash builder aligned them.

func partLabel(n int, name string) string { return fmt.Sprintf("part %d/%d %s", n, partsTotal, name) }
func cachedLine(label string) string      { return fmt.Sprintf("%-40s %8s", label, "cached") }
func partTimeLine(label, secs string) string {
	return fmt.Sprintf("%-40s %7ss", label, secs)
}
func stepTimeLine(label, secs string) string { return fmt.Sprintf("%-34s %7ss", label, secs) }
