package main

import (
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// Config is every knob of hack/kind/build-node-image.sh, read once from the environment (parseConfig) and
// checked before anything runs. Each field's env tag names its variable; usage describes every one of them (a
// test checks it).
type Config struct {
	// CacheRoot: ZNS_CACHE_DIR, else $XDG_CACHE_HOME/zns-mysql, else $HOME/.cache/zns-mysql; the build's cache is
	// its kind/ directory.
	CacheRoot string `env:"ZNS_CACHE_DIR"`
	// Image: the image's name; "" until the pins give the default, zns-mysql/kind-node:v<K8S_VERSION>.
	Image string `env:"ZNS_KIND_NODE_IMAGE"`
	// Rebuild: 1 assembles the image again even when it is cached, 2 rebuilds its parts too.
	Rebuild int `env:"ZNS_KIND_REBUILD"`
	// Save: docker save the image into the cache (in the background) for when docker has lost it.
	Save bool `env:"ZNS_KIND_SAVE"`
	// DebianMirror: debootstrap's mirror.
	DebianMirror string `env:"ZNS_DEBIAN_MIRROR"`
	// ProgressEvery: the interval of the "still running" lines.
	ProgressEvery time.Duration `env:"ZNS_PROGRESS_EVERY"`
}

const usage = `hack/kind/build-node-image.sh: build (once) the kind node image without any image registry; print its name.

  image=$(hack/kind/build-node-image.sh)     # e.g. zns-mysql/kind-node:v1.36.3

` + "`kind build node-image`" + ` pulls etcd, coredns, pause, kindnetd and the storage images from registries and
starts from kindest/base, all out of reach here. This repeats its steps from Debian packages and Go modules only
(versions: versions.mk, KIND_* pins). The work is hack/nodeimage's, in Go; the script builds it once for each
version of its sources and hands its command line over.
  rootfs          debootstrap --variant=minbase $KIND_NODE_DEBIAN_SUITE with systemd, iptables, nftables, ...,
                  plus kind's base-image files (images/base/files of the sigs.k8s.io/kind module)
  kubernetes      kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy and
                  etcd from hack/kubernetes.sh (the directory envtest uses too), pause from k8s.io/kubernetes's
                  build/pause/linux/pause.c
  runtime         containerd $KIND_CONTAINERD_VERSION, runc $KIND_RUNC_VERSION (cgo, libseccomp, static),
                  CNI plugins $KIND_CNI_PLUGINS_VERSION (ptp host-local loopback portmap)
  images          named exactly as ` + "`kubeadm config images list --kubernetes-version v<k8s>`" + ` prints them:
                  kube-apiserver/-controller-manager/-scheduler/-proxy, etcd, coredns (github.com/coredns/coredns
                  at kubeadm's CoreDNSVersion), pause; plus rancher/local-path-provisioner
                  $KIND_LOCAL_PATH_PROVISIONER_VERSION and a busybox helper (Debian's busybox-static) behind the
                  default StorageClass "standard". Written as docker-archive tarballs (hack/imagearchive), imported
                  into the node's containerd (ctr -n k8s.io images import), then ` + "`docker commit`" + `.
  networking      no kindnetd (not obtainable): a ptp + host-local CNI config written at boot by
                  zns-cni-config.service (MTU of eth0); clusters must set disableDefaultCNI: true.
  entrypoint      /usr/local/bin/zns-entrypoint runs before kind's entrypoint: in a node started without
                  --privileged (hack/kind/docker-unprivileged) it makes /sys and cgroups writable.

Caching, under $ZNS_CACHE_DIR/kind:
  parts/<name>-<version>/        each built part, renamed into place when complete (kept across image rebuilds)
  node/v<k8s>/node-image.tar.gz  ` + "`docker save`" + ` of the image, and node/v<k8s>/recipe
The image carries the label zns-mysql.kind-node.recipe, a hash of the pins, the package list, hack/nodeimage's
and hack/imagearchive's sources and hack/kind/node's files. Fast path: the image is in docker with the current
recipe, or the saved tarball has it and is ` + "`docker load`" + `ed. Otherwise the missing parts are built (the rootfs
and the Kubernetes binaries in process groups of their own, beside the others) and the image is assembled.
Concurrent runs serialise on a lock of $ZNS_CACHE_DIR/kind/.lock, which the background save holds until the
tarball is whole.

Needs: docker, go, gcc + libc6-dev, libseccomp-dev (static runc), debootstrap, tar, gzip; root or passwordless
sudo (debootstrap, and the rootfs's root-owned files). Debian: apt-get install debootstrap libseccomp-dev gcc
libc6-dev.

Progress and step timings go to stderr, at least every 30 s; stdout carries exactly one line, the image name. A
failure names the part or step that failed and what to do; SIGINT and SIGTERM stop the background builds by
their process groups and remove the scratch directories, the build container and its base image.

Environment:
  ZNS_CACHE_DIR            cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql)
  ZNS_KIND_NODE_IMAGE      image name (default zns-mysql/kind-node:v$K8S_VERSION)
  ZNS_KIND_REBUILD         1: rebuild the image even if cached (parts stay cached); 2: parts too
  ZNS_KIND_SAVE            0: do not ` + "`docker save`" + ` the image into the cache (default 1)
  ZNS_DEBIAN_MIRROR        debootstrap mirror (default http://deb.debian.org/debian)
  ZNS_PROGRESS_EVERY       seconds between two progress lines (default 30)
`

// parseConfig reads the knobs from getenv with their defaults and refuses a value that would only fail later,
// naming the knob.
func parseConfig(getenv func(string) string) (Config, error) {
	c := Config{
		Image:        getenv("ZNS_KIND_NODE_IMAGE"),
		DebianMirror: stagerun.OrDefault(getenv("ZNS_DEBIAN_MIRROR"), "http://deb.debian.org/debian"),
	}
	var err error
	if c.CacheRoot, err = stagerun.CacheRoot(getenv); err != nil {
		return c, err
	}
	switch v := getenv("ZNS_KIND_REBUILD"); v {
	case "", "0":
	case "1", "2":
		c.Rebuild = int(v[0] - '0')
	default:
		return c, fmt.Errorf("ZNS_KIND_REBUILD=%s: give 0, 1 (the image) or 2 (its parts too)", v)
	}
	switch v := getenv("ZNS_KIND_SAVE"); v {
	case "", "1":
		c.Save = true
	case "0":
	default:
		return c, fmt.Errorf("ZNS_KIND_SAVE=%s: give 0 or 1", v)
	}
	if c.ProgressEvery, err = stagerun.ProgressEvery(getenv); err != nil {
		return c, err
	}
	return c, nil
}

// Pins are the versions.mk pins the image is made of.
type Pins struct {
	K8s         string // without its "v"
	Etcd        string // kubeadm's etcd must be this one
	Kind        string // sigs.k8s.io/kind, for its base-image files
	DebianSuite string
	Containerd  string
	Runc        string
	CNI         string
	LPP         string // rancher/local-path-provisioner
}

var (
	k8sVersion    = regexp.MustCompile(`^1\.[0-9]+\.[0-9]+$`)
	moduleVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
)

// readPins reads and checks the pins of versions.mk (its path).
func readPins(path string) (Pins, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Pins{}, fmt.Errorf("cannot read %s", path)
	}
	text := string(b)
	var p Pins
	for _, f := range []struct {
		name string
		to   *string
	}{
		{"K8S_VERSION", &p.K8s}, {"ETCD_VERSION", &p.Etcd}, {"KIND_VERSION", &p.Kind},
		{"KIND_NODE_DEBIAN_SUITE", &p.DebianSuite}, {"KIND_CONTAINERD_VERSION", &p.Containerd},
		{"KIND_RUNC_VERSION", &p.Runc}, {"KIND_CNI_PLUGINS_VERSION", &p.CNI},
		{"KIND_LOCAL_PATH_PROVISIONER_VERSION", &p.LPP},
	} {
		v := readPin(text, f.name)
		if v == "" {
			return p, fmt.Errorf("%s has no '%s := <value>' line", path, f.name)
		}
		*f.to = v
	}
	if len(p.K8s) > 0 && p.K8s[0] == 'v' {
		p.K8s = p.K8s[1:]
	}
	if !k8sVersion.MatchString(p.K8s) {
		return p, fmt.Errorf("K8S_VERSION '%s' in versions.mk is not 1.<minor>.<patch>", p.K8s)
	}
	for _, v := range []struct{ name, value string }{
		{"KIND_VERSION", p.Kind}, {"KIND_CONTAINERD_VERSION", p.Containerd}, {"KIND_RUNC_VERSION", p.Runc},
		{"KIND_CNI_PLUGINS_VERSION", p.CNI}, {"KIND_LOCAL_PATH_PROVISIONER_VERSION", p.LPP},
	} {
		if !moduleVersion.MatchString(v.value) {
			return p, fmt.Errorf("%s '%s' in versions.mk is not v<major>.<minor>.<patch>", v.name, v.value)
		}
	}
	return p, nil
}

// readPin is the value of the last `NAME := value` line (also `=` and `?=`), as the shell scripts read it
// (hack/kind/lib.sh's read_pin): "" when there is none.
func readPin(versionsMk, name string) string {
	re := regexp.MustCompile(`(?m)^[ \t]*` + regexp.QuoteMeta(name) + `[ \t]*[:?]?=[ \t]*([^\s#]+)`)
	all := re.FindAllStringSubmatch(versionsMk, -1)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1][1]
}
