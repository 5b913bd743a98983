# versions.mk: the one place that pins the project's tool versions.
#
# Included by the Makefile and read by shell scripts (hack/envtest-assets.sh),
# so keep every pin a plain `NAME := value` line: no Make functions, no quotes,
# a trailing `# comment` is allowed. Everything here is built from the Go module
# proxy (the usual download sites are not reachable from our machines).

# Kubernetes: ONE version for everything that runs an API server or a node here: envtest (kube-apiserver,
# kubectl), the chart tests (on envtest) and the kind node image (kubeadm, kubelet, the control plane,
# kube-proxy), all built by hack/kubernetes.sh in one cached directory from k8s.io/kubernetes v1.36.3 with its
# staging modules (k8s.io/api, apimachinery, apiserver, client-go, ...) replaced by v0.36.3. Matches the
# k8s.io/* v0.36.x libraries in go.mod. Our hosts run cgroup v1, which kubelet >= 1.35 refuses by default;
# kubelet 1.36 still supports it behind failCgroupV1: false (pkg/kubelet/apis/config/validation), which
# hack/kind/cluster.sh sets on such hosts. No leading "v".
K8S_VERSION := 1.36.3

# etcd, built from go.etcd.io/etcd/server/v3 (etcdmain.Main), for envtest and as the node's etcd image.
# 3.6.8 is the etcd that Kubernetes v1.36.3 itself pins: build/dependencies.yaml and kubeadm's
# DefaultEtcdVersion (3.6.8-0, checked by hack/kind/build-node-image.sh), and the go.etcd.io/etcd/*
# v3.6.8 client libraries in its go.mod. No leading "v".
ETCD_VERSION := 3.6.8

# controller-gen (sigs.k8s.io/controller-tools/cmd/controller-gen). v0.23.0 is
# the newest release on the module proxy (go list -m -versions); builds with
# Go 1.26 and generates for the k8s.io v0.36 API machinery.
CONTROLLER_TOOLS_VERSION := v0.23.0

# staticcheck (honnef.co/go/tools/cmd/staticcheck), `make lint`: the linter beyond go vet, run with `go run` from
# the module proxy (nothing to install). v0.8.2 (staticcheck 2026.2.2) is the newest served that builds with Go 1.26.
STATICCHECK_VERSION := v0.8.2

# shellcheck, `make lint-shell` (part of `make lint`): Debian bookworm's package, installed by hack/install-deps.sh.
SHELLCHECK_VERSION := 0.9.0-1

# kustomize (sigs.k8s.io/kustomize/kustomize/v5). v5.8.3 needs go >= 1.27;
# v5.8.2 (go 1.26.0 in its go.mod) is the newest that `go install`s with Go 1.26.
KUSTOMIZE_VERSION := v5.8.2

# Helm (helm.sh/helm/v3/cmd/helm): newest v3 release on the module proxy,
# go 1.26.0 in its go.mod. Pinned only here so far.
HELM_VERSION := v3.22.0

# go-ycsb (github.com/pingcap/go-ycsb/cmd/go-ycsb), YCSB in Go: the bench image's load generator of the Benchmark tool
# ycsb. v1.0.3 is the only tagged version on the module proxy (go list -m -versions, 2026-11-27). Its go.mod has a
# replace directive (github.com/apache/thrift), so `go install MOD@VERSION` refuses it; hack/images/go-ycsb.sh
# builds it as a main module from the module's own files (go mod download), static (CGO_ENABLED=0), into the Go
# binaries image, and images/go-build.Dockerfile does the same inside a Go image.
YCSB_VERSION := v1.0.3

# Percona Server for MySQL, the product image (Dockerfile.percona-zenfs; hack/images/build.sh passes these as its
# build arguments, whose defaults test/images checks against them). Releases as Percona numbers them, packages
# percona-server-*=<release>-1.bookworm from repo.percona.com. 8.0 (ps-80 repository) is the only series with
# ZenFS-enabled MyRocks; 8.4 LTS (ps-84-lts) has InnoDB and MyRocks without ZenFS, removed in 8.1.0-1
# (2023-11-27). 8.4.11-11 (2026-08-20) is the newest 8.4 (Percona skipped 8.4.12, a security-only release
# that does not affect it).
PERCONA_80_VERSION := 8.0.44-35
PERCONA_84_VERSION := 8.4.11-11

# QEMU test guest kernel of the 6.1 tier (hack/qemu/build-guest.sh with ZNS_QEMU_KERNEL=6.1; `make qemu-6.1`,
# opt-in, not in make test or CI; the default is the current kernel below).
# Debian bookworm's kernel, fetched with `apt-get download` and unpacked with
# `dpkg -x`, never installed on the host. 6.1.0-50 (6.1.176-1) is both the
# current point release in bookworm/main and in bookworm-security, so it stays
# downloadable after the security archive moves on. Its config has
# CONFIG_BLK_DEV_ZONED=y and CONFIG_MQ_IOSCHED_DEADLINE=y; null_blk, nvme,
# configfs, virtio and 9p are modules. When Debian drops this version,
# build-guest.sh says so: pick another with
#   apt-cache search '^linux-image-6\.1\.0-[0-9]+-amd64$'; apt-cache madison <name>
QEMU_GUEST_KERNEL_PACKAGE := linux-image-6.1.0-50-amd64
QEMU_GUEST_KERNEL_VERSION := 6.1.176-1

# The QEMU guest's default kernel (ZNS_QEMU_KERNEL unset or current; hack/qemu/build-guest.sh): the QEMU tier
# and the zoned node (hack/qemu/zoned-node.sh) boot it. Debian's newest packaged kernel,
# from trixie-backports, downloaded through a private apt configuration under the cache (the host's apt
# sources are not touched). From 7.x Debian splits the kernel: linux-image-<release> depends on
# linux-base-, linux-binary- and linux-modules-<release> of the same version, which build-guest.sh
# downloads with it; files live under usr/lib/modules/<release>/ (vmlinuz, config) and modules are
# xz-compressed. Checked on 2026-11-27 (apt-cache madison): 7.3.4-1~bpo13+1 is trixie-backports' newest;
# its config has CONFIG_BLK_DEV_ZONED=y, CONFIG_XFS_RT=y (zoned XFS), CONFIG_PVH=y, but NOT
# CONFIG_BLK_DEV_ZONED_LOOP (zloop): no Debian kernel flavour (amd64, cloud, rt; sid's 7.2.13,
# experimental's 7.3~rc7) builds it. Backports keep only a few builds: when apt no longer offers this one,
# build-guest.sh says which it offers.
QEMU_GUEST_KERNEL_CURRENT_SUITE := trixie-backports
QEMU_GUEST_KERNEL_CURRENT_PACKAGE := linux-image-7.3.4+deb13-amd64
QEMU_GUEST_KERNEL_CURRENT_VERSION := 7.3.4-1~bpo13+1
# hack/qemu/build-zloop-module.sh builds zloop.ko out of tree for that kernel (opt-in; Debian's kernel lacks
# it) in a debootstrap chroot of this suite, with the kernel's suite added for linux-headers-<release> and
# linux-source-<major.minor> at QEMU_GUEST_KERNEL_CURRENT_VERSION (the headers bring gcc-14, the kernel's own
# compiler). trixie: the suite that trixie-backports builds for.
ZLOOP_BUILD_SUITE := trixie

# The zoned-XFS tools for the current-kernel guest (hack/qemu/build-xfs-userland.sh): xfsprogs >= 6.15 makes
# zoned XFS (data on the realtime device's sequential zones); bookworm has 6.1, trixie 6.13. A throwaway
# debootstrap --variant=minbase chroot of this suite in the cache, with xfsprogs at this version (checked
# on 2026-11-27: 7.2.0-1 in sid and forky); the guest runs it chrooted over the host's userland
# (run.sh --userland). Sid keeps only its newest build: when apt no longer offers this one, the script
# says which it offers. The MySQL images carry the same mkfs.xfs as mkfs.xfs-zoned (images/zoned-xfsprogs.sh,
# build arguments ZONED_XFS_SUITE and ZONED_XFSPROGS_VERSION from hack/images/build.sh).
XFS_USERLAND_SUITE := sid
XFS_USERLAND_XFSPROGS_VERSION := 7.2.0-1

# QEMU for the test guest (hack/qemu), installed by hack/install-deps.sh: Debian's qemu-system-x86 (with
# qemu-system-common and qemu-system-data at the same version, and bookworm-backports' seabios) from
# bookworm-backports, which rebuilds trixie's QEMU 10.0 for bookworm (bookworm itself has 7.2). The NVMe log
# tests (operator/internal/nvmelog, hack/qemu/run.sh --nvme) need what 7.2's NVMe model lacks: the OCP
# datacenter SMART extended log (log C0h, the controller's ocp=on) and Flexible Data Placement (nvme-subsys
# fdp=on, its statistics log 22h). 10.0.2 counts OCP Physical Media Units Written in bytes, as the OCP
# specification says, and sets CMIC bit 1, for which run.sh loads nvme_core with multipath=N. The zoned
# namespace (nvme-ns zoned=true) is in QEMU since 6.0 and needs nothing newer; the zoned node's conventional
# namespace has ocp=on, so it needs 10.0 too. Both guest kernels, 7.3 and 6.1, run on 10.0.2. Backports keep
# only the newest build of a package: when apt no longer offers this one, install-deps.sh says so and what it
# offers; take the newest, check it with `make qemu`, and update this pin.
QEMU_VERSION := 1:10.0.2+ds-2+deb13u1~bpo12+1

# --- offline kind cluster (hack/kind/build-node-image.sh, hack/kind/cluster.sh) ---
# Every version below was probed on the Go module proxy with
#   go list -m -versions <module>; go mod download -json <module>@<version>
# (the second also checks sum.golang.org: newer tags the proxy lists but the
# checksum database does not serve yet are unusable without disabling checks).
#
# The node runs K8S_VERSION (above). CoreDNS and pause are not pinned here: their
# versions and image names come from that version's `kubeadm config images list`
# (v1.36.3: etcd 3.6.8-0, coredns v1.14.2, pause 3.10.2), so kubeadm finds the
# images it asks for. Where a registry is reachable, hack/kind/cluster.sh may use
# kind's own node image instead, kindest/node:v$(K8S_VERSION), the same version.

# kind (sigs.k8s.io/kind): newest release on the proxy; its images/base/files
# (entrypoint, systemd units, containerd config) are copied into the node image.
KIND_VERSION := v0.33.0

# Debian suite of the node rootfs (debootstrap). bookworm's systemd 252 still
# supports cgroup v1 hosts (trixie's systemd 257 deprecates it, 258 drops it).
KIND_NODE_DEBIAN_SUITE := bookworm

# containerd in the node (github.com/containerd/containerd/v2): newest v2.0.x on
# the proxy; the v2 line reads kind's version 2 config.toml.
KIND_CONTAINERD_VERSION := v2.0.14

# runc in the node (github.com/opencontainers/runc): newest v1.2.x on the proxy;
# built with cgo and Debian's libseccomp-dev, linked statically.
KIND_RUNC_VERSION := v1.2.9

# CNI plugins (github.com/containernetworking/plugins): newest on the proxy, the
# same release kind v0.33.0 ships. ptp + host-local + loopback + portmap.
KIND_CNI_PLUGINS_VERSION := v1.9.1

# local-path-provisioner (github.com/rancher/local-path-provisioner), behind the
# default StorageClass "standard". kind v0.33.0 ships v0.0.34, which the proxy
# does not serve; v0.0.33 is listed but fails sum.golang.org; v0.0.30 verifies.
KIND_LOCAL_PATH_PROVISIONER_VERSION := v0.0.30
