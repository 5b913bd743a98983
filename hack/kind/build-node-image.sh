#!/usr/bin/env bash
# hack/kind/build-node-image.sh: build (once) the kind node image without any image registry; print its name.
#
#   image=$(hack/kind/build-node-image.sh)     # e.g. zns-mysql/kind-node:v1.34.10
#
# `kind build node-image` pulls etcd, coredns, pause, kindnetd and the storage images from registries and
# starts from kindest/base, all out of reach here. This script repeats its steps from Debian packages and Go
# modules only (versions: versions.mk, KIND_* pins):
#   rootfs          debootstrap --variant=minbase $KIND_NODE_DEBIAN_SUITE with systemd, iptables, nftables, ...,
#                   plus kind's base-image files (images/base/files of the sigs.k8s.io/kind module)
#   kubernetes      kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy
#                   from k8s.io/kubernetes (staging modules replaced by v0.<minor>.<patch>), pause from its
#                   build/pause/linux/pause.c
#   runtime         containerd $KIND_CONTAINERD_VERSION, runc $KIND_RUNC_VERSION (cgo, libseccomp, static),
#                   CNI plugins $KIND_CNI_PLUGINS_VERSION (ptp host-local loopback portmap)
#   images          named exactly as `kubeadm config images list --kubernetes-version v<k8s>` prints them:
#                   kube-apiserver/-controller-manager/-scheduler/-proxy, etcd (go.etcd.io/etcd/server/v3),
#                   coredns (github.com/coredns/coredns), pause; plus rancher/local-path-provisioner
#                   $KIND_LOCAL_PATH_PROVISIONER_VERSION and a busybox helper (Debian's busybox-static) behind
#                   the default StorageClass "standard". Written as docker-archive tarballs by this script and
#                   imported into the node's containerd (ctr -n k8s.io images import), then `docker commit`.
#   networking      no kindnetd (not obtainable): a ptp + host-local CNI config written at boot by
#                   zns-cni-config.service (MTU of eth0); clusters must set disableDefaultCNI: true.
#   entrypoint      /usr/local/bin/zns-entrypoint runs before kind's entrypoint: in a node started without
#                   --privileged (hack/kind/docker-unprivileged) it makes /sys and cgroups writable.
#
# Caching, under ${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/kind:
#   parts/<name>-<version>/      each built part, renamed into place when complete (kept across image rebuilds)
#   node/v<k8s>/node-image.tar.gz  `docker save` of the image, and node/v<k8s>/recipe
# The image carries the label zns-mysql.kind-node.recipe, a hash of the pins and of hack/kind's files. Fast
# path: the image is in docker with the current recipe, or the saved tarball has it and is `docker load`ed.
# Otherwise the missing parts are built and the image is assembled. Concurrent runs serialise on flock(1).
#
# Needs: docker, go, gcc + libc6-dev, libseccomp-dev (static runc), debootstrap, tar, gzip; root or
# passwordless sudo (debootstrap, and the rootfs's root-owned files). Debian: apt-get install debootstrap
# libseccomp-dev gcc libc6-dev.
#
# Progress and step timings go to stderr; stdout carries exactly one line, the image name.
#
# Environment:
#   ZNS_CACHE_DIR            cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql)
#   ZNS_KIND_NODE_IMAGE      image name (default zns-mysql/kind-node:v$KIND_NODE_K8S_VERSION)
#   ZNS_KIND_REBUILD         1: rebuild the image even if cached (parts stay cached); 2: parts too
#   ZNS_KIND_SAVE            0: do not `docker save` the image into the cache (default 1)
#   ZNS_DEBIAN_MIRROR        debootstrap mirror (default http://deb.debian.org/debian)
# shellcheck disable=SC2317 # functions run through step() look unreachable to shellcheck
set -euo pipefail

# stdout is reserved for the result; everything else, go's and docker's output included, goes to stderr.
exec 3>&1 1>&2

LOG_PREFIX=build-node-image
# shellcheck source=hack/kind/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/lib.sh"
SELF="${KIND_LIB_DIR}/$(basename "${BASH_SOURCE[0]}")"
NODE_FILES="${KIND_LIB_DIR}/node"

T_START=$(now)

# --- pins ------------------------------------------------------------------------------------------------
K8S_VERSION=$(read_pin K8S_VERSION)
K8S_VERSION=${K8S_VERSION#v}
[[ "$K8S_VERSION" =~ ^1\.([0-9]+)\.([0-9]+)$ ]] ||
  die "K8S_VERSION '${K8S_VERSION}' in versions.mk is not 1.<minor>.<patch>"
ETCD_VERSION=$(read_pin ETCD_VERSION)
KIND_VER=$(read_pin KIND_VERSION)
DEBIAN_SUITE=$(read_pin KIND_NODE_DEBIAN_SUITE)
CONTAINERD_VER=$(read_pin KIND_CONTAINERD_VERSION)
RUNC_VER=$(read_pin KIND_RUNC_VERSION)
CNI_VER=$(read_pin KIND_CNI_PLUGINS_VERSION)
LPP_VER=$(read_pin KIND_LOCAL_PATH_PROVISIONER_VERSION)
for v in KIND_VER CONTAINERD_VER RUNC_VER CNI_VER LPP_VER; do
  [[ "${!v}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "${v} '${!v}' from versions.mk is not v<major>.<minor>.<patch>"
done
DEBIAN_MIRROR=${ZNS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
IMAGE=${ZNS_KIND_NODE_IMAGE:-zns-mysql/kind-node:v${K8S_VERSION}}
REBUILD=${ZNS_KIND_REBUILD:-0}
SAVE=${ZNS_KIND_SAVE:-1}
[[ "$REBUILD" =~ ^[012]$ ]] || die "ZNS_KIND_REBUILD must be 0, 1 or 2"
[[ "$SAVE" =~ ^[01]$ ]] || die "ZNS_KIND_SAVE must be 0 or 1"

# Packages of the node rootfs: kind's base image list (images/base/Dockerfile) without the network-storage
# ones (nfs-common, open-iscsi) and curl (no network here anyway).
NODE_PACKAGES=(systemd conntrack iptables nftables iproute2 ethtool util-linux mount kmod libseccomp2 pigz
  fuse-overlayfs e2fsprogs btrfs-progs f2fs-tools bash ca-certificates jq procps)
RECIPE_LABEL=zns-mysql.kind-node.recipe
# Our own images (never pulled: the names only have to be unique and stable).
PROVISIONER_IMAGE="zns-mysql.local/local-path-provisioner:${LPP_VER}"

command -v docker >/dev/null 2>&1 || die "docker is not on PATH"
docker info >/dev/null 2>&1 || die "cannot talk to the Docker Engine (docker info failed)"

ROOT=$(cache_root)
PARTS="${ROOT}/parts"
NODE_DIR="${ROOT}/node/v${K8S_VERSION}"
SAVED="${NODE_DIR}/node-image.tar.gz"
mkdir -p "$PARTS" "$NODE_DIR"

# recipe: a hash of everything that decides the image's content except the parts' own sources (each part's
# directory name carries its version). A change of pins or of hack/kind's files rebuilds the image.
recipe() {
  {
    printf '%s\n' "$K8S_VERSION" "$KIND_VER" "$DEBIAN_SUITE" "$CONTAINERD_VER" "$RUNC_VER" "$CNI_VER" \
      "$LPP_VER" "${NODE_PACKAGES[*]}"
    cat "$SELF" "${KIND_LIB_DIR}/lib.sh" "${REPO_ROOT}"/hack/imagearchive/*.go
    find "$NODE_FILES" -type f | LC_ALL=C sort | while read -r f; do
      printf '%s %s\n' "${f#"$NODE_FILES"/}" "$(stat -c %a "$f")"
      cat "$f"
    done
  } | sha256sum | cut -c1-16
}
RECIPE=$(recipe)

image_recipe() { docker image inspect -f "{{ index .Config.Labels \"${RECIPE_LABEL}\" }}" "$1" 2>/dev/null || true; }
image_ok() { [[ "$(image_recipe "$IMAGE")" == "$RECIPE" ]]; }
done_ok() {
  log "$(printf 'total %ss' "$(elapsed "$T_START")")"
  printf '%s\n' "$IMAGE" >&3
  exit 0
}
load_saved() {
  [[ -f "$SAVED" && -f "${NODE_DIR}/recipe" && "$(cat "${NODE_DIR}/recipe")" == "$RECIPE" ]] || return 1
  log "loading ${SAVED}"
  docker load -i "$SAVED" >&2 || { warn "docker load -i ${SAVED} failed"; return 1; }
  image_ok || { warn "${SAVED} did not hold ${IMAGE} with recipe ${RECIPE}"; return 1; }
}
fast_path() {
  if image_ok; then
    log "cached in docker: ${IMAGE} (recipe ${RECIPE})"
    if [[ "$SAVE" == 1 && ! -f "$SAVED" ]] || [[ "$SAVE" == 1 && "$(cat "${NODE_DIR}/recipe" 2>/dev/null)" != "$RECIPE" ]]; then
      save_in_background
    fi
    done_ok
  fi
  local t0
  t0=$(now)
  if load_saved; then
    log "$(printf '%-34s %7ss' "docker load (cache)" "$(elapsed "$t0")")"
    done_ok
  fi
}

# save_in_background: save_image without making anyone wait for it (~30 s): the image is in docker already,
# and the tarball only matters once docker has lost it. A save still running holds the cache's lock (fd 9,
# inherited), so the next slow-path build waits for it; the tarball is renamed into place only when whole.
save_in_background() {
  if compgen -G "${NODE_DIR}/.node-image.*" >/dev/null; then
    log "a save of ${IMAGE} into the cache is already running"
    return 0
  fi
  log "saving ${IMAGE} into ${SAVED} in the background (for when docker has lost it)"
  (save_image >/dev/null 2>&1 || rm -f "${NODE_DIR}"/.node-image.*) &
  disown
}
# save_image: docker save | gzip into the cache, atomically.
save_image() {
  local tmp gz=gzip
  command -v pigz >/dev/null 2>&1 && gz=pigz
  tmp=$(mktemp "${NODE_DIR}/.node-image.XXXXXX") || return 1
  if ! docker save "$IMAGE" | "$gz" -1 >"$tmp"; then
    rm -f "$tmp"
    return 1
  fi
  chmod 0644 "$tmp" && mv "$tmp" "$SAVED" && printf '%s\n' "$RECIPE" >"${NODE_DIR}/recipe"
}

if [[ "$REBUILD" == 0 ]]; then fast_path; fi

# --- slow path: one builder at a time ----------------------------------------------------------------------
lock_dir "$ROOT"
if [[ "$REBUILD" == 0 ]]; then fast_path; fi

log "building ${IMAGE}: Kubernetes v${K8S_VERSION}, kind ${KIND_VER}, Debian ${DEBIAN_SUITE}, containerd ${CONTAINERD_VER}, runc ${RUNC_VER}, CNI ${CNI_VER}, local-path-provisioner ${LPP_VER} (recipe ${RECIPE})"

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
    die "not root and no passwordless sudo: debootstrap and the node rootfs need root"
  fi
  SUDO=(sudo -n)
fi
missing=()
for t in go gcc debootstrap tar gzip sha256sum; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
((${#missing[@]} == 0)) || die "missing tools: ${missing[*]} (Debian: apt-get install golang debootstrap gcc libc6-dev)"
LIBSECCOMP_A=$(gcc -print-file-name=libseccomp.a)
[[ -f "$LIBSECCOMP_A" && -f /usr/include/seccomp.h ]] ||
  die "runc needs libseccomp's headers and static library: apt-get install libseccomp-dev"
go_env

WORK=$(mktemp -d "${ROOT}/.work.XXXXXX") || die "cannot create a scratch directory in ${ROOT}"
BUILD_CONTAINER=""
BASE_IMAGE=""
ROOTFS_PID=""
KUBE_PID=""
cleanup() {
  # the background builds run in their own process groups (set -m below): stop all of each
  local pid
  for pid in "$ROOTFS_PID" "$KUBE_PID"; do
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      "${SUDO[@]}" kill -TERM -- "-${pid}" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  if [[ -n "$BUILD_CONTAINER" ]]; then docker rm -f -v "$BUILD_CONTAINER" >/dev/null 2>&1 || true; fi
  if [[ -n "$BASE_IMAGE" ]]; then docker rmi "$BASE_IMAGE" >/dev/null 2>&1 || true; fi
  "${SUDO[@]}" rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# Scratch dirs of killed runs are stale once we hold the lock.
"${SUDO[@]}" rm -rf "${PARTS}"/.build-* 2>/dev/null || true
find "$ROOT" -maxdepth 1 -name '.work.*' ! -path "$WORK" -exec "${SUDO[@]}" rm -rf {} + 2>/dev/null || true
rm -f "${NODE_DIR}"/.node-image.* 2>/dev/null || true

# part NAME BUILDER: PARTS/NAME is built by `BUILDER <scratch-dir>` unless it is there; prints progress only.
# Parts are numbered "n/PARTS_TOTAL" in the log, in the order they are built below.
PARTS_TOTAL=8
PART_N=0
part() {
  local name=$1 builder=$2 dir="${PARTS}/$1" scratch t0
  PART_N=$((PART_N + 1))
  if [[ -f "$dir/.complete" && "$REBUILD" != 2 ]]; then
    log "$(printf '%-40s %8s' "part ${PART_N}/${PARTS_TOTAL} ${name}" cached)"
    return 0
  fi
  t0=$(now)
  log "part ${PART_N}/${PARTS_TOTAL} ${name}: building"
  scratch=$(mktemp -d "${PARTS}/.build-${name}.XXXXXX") || die "cannot create a scratch directory in ${PARTS}"
  heartbeat "part ${PART_N}/${PARTS_TOTAL} ${name}" "" "$builder" "$scratch" || die "building part ${name} failed (see the output above)"
  touch "$scratch/.complete"
  if [[ -e "$dir" ]]; then "${SUDO[@]}" mv "$dir" "$scratch.old" && "${SUDO[@]}" rm -rf "$scratch.old"; fi
  mv "$scratch" "$dir"
  log "$(printf '%-40s %7ss' "part ${PART_N}/${PARTS_TOTAL} ${name}" "$(elapsed "$t0")")"
}

# go_mod_hash MODULE@VERSION: the VCS commit of a downloaded module version (from its .info), or "unknown".
go_mod_hash() {
  local h
  h=$(go mod download -json "$1" 2>/dev/null | sed -nE 's/^[[:space:]]*"Hash": "([0-9a-f]{7,})",?$/\1/p' | head -n 1)
  printf '%s' "${h:-unknown}"
}

# --- part: rootfs ------------------------------------------------------------------------------------------
ROOTFS_PART="rootfs-${DEBIAN_SUITE}-$(printf '%s\n' "${NODE_PACKAGES[*]}" | sha256sum | cut -c1-12)"
build_rootfs() {
  local out=$1 r="$1/rootfs" inc
  inc=$(IFS=,; printf '%s' "${NODE_PACKAGES[*]}")
  log "debootstrap ${DEBIAN_SUITE} from ${DEBIAN_MIRROR} (log: ${out}/debootstrap.log while it runs)"
  if ! "${SUDO[@]}" debootstrap --variant=minbase --components=main --include="$inc" \
    "$DEBIAN_SUITE" "$r" "$DEBIAN_MIRROR" >"$out/debootstrap.log" 2>&1; then
    tail -n 30 "$out/debootstrap.log" >&2
    [[ -f "$r/debootstrap/debootstrap.log" ]] && tail -n 30 "$r/debootstrap/debootstrap.log" >&2
    return 1
  fi
  # as kind's base image: no package caches, no services but ours, no kmsg in journald, /sbin/init
  # shellcheck disable=SC2016 # the script is in single quotes: its $ are its own, its values come as arguments
  "${SUDO[@]}" sh -euc '
    r=$1
    rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/var/log/*.log "$r"/debootstrap
    find "$r"/lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete
    rm -f "$r"/lib/systemd/system/multi-user.target.wants/* "$r"/etc/systemd/system/*.wants/* \
      "$r"/lib/systemd/system/local-fs.target.wants/* "$r"/lib/systemd/system/sockets.target.wants/*udev* \
      "$r"/lib/systemd/system/sockets.target.wants/*initctl* "$r"/lib/systemd/system/basic.target.wants/*
    echo "ReadKMsg=no" >>"$r"/etc/systemd/journald.conf
    ln -sf /usr/lib/systemd/systemd "$r"/sbin/init
    : >"$r"/etc/machine-id
  ' sh "$r" || return 1
  "${SUDO[@]}" tar -C "$r" --numeric-owner -cf "$out/rootfs.tar" . || return 1
  "${SUDO[@]}" chown "$(id -u):$(id -g)" "$out/rootfs.tar"
  "${SUDO[@]}" rm -rf "$r"
  rm -f "$out/debootstrap.log"
}

# --- part: kubernetes binaries, pause, and kubeadm's image list -------------------------------------------
# The binaries come from hack/kubernetes.sh, the directory envtest uses too (one build for both).
KUBE_PART="kubernetes-v${K8S_VERSION}"
KUBE_BINS=(kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy)
KUBE_DIR=""
build_kubernetes() {
  local out=$1 moddir b
  for b in "${KUBE_BINS[@]}" etcd; do
    # a hard link where the cache is one filesystem: 600 MB not copied
    ln -f "${KUBE_DIR}/$b" "$out/$b" 2>/dev/null || cp "${KUBE_DIR}/$b" "$out/$b" || return 1
  done
  "$out/kubeadm" config images list --kubernetes-version "v${K8S_VERSION}" >"$out/images.txt" || return 1
  local pause_tag etcd_tag
  pause_tag=$(sed -nE 's#^.*/pause:([^[:space:]]+)$#\1#p' "$out/images.txt")
  [[ -n "$pause_tag" ]] || { log "no pause image in kubeadm's list: $(cat "$out/images.txt")"; return 1; }
  etcd_tag=$(sed -nE 's#^.*/etcd:([^[:space:]]+)$#\1#p' "$out/images.txt")
  [[ "${etcd_tag%%-*}" == "$ETCD_VERSION" ]] || {
    log "kubeadm v${K8S_VERSION} deploys etcd ${etcd_tag:-?}, but versions.mk pins ETCD_VERSION ${ETCD_VERSION}: set it to ${etcd_tag%%-*}"
    return 1
  }
  # pause, as build/pause/Makefile: CFLAGS = -Os -Wall -Werror -static -DVERSION=v$(TAG)-$(REV)
  moddir=$(go_mod_dir "k8s.io/kubernetes@v${K8S_VERSION}") || return 1
  gcc -Os -Wall -Werror -static -DVERSION="v${pause_tag}-zns-mysql" -o "$out/pause" \
    "$moddir/build/pause/linux/pause.c" || return 1
  strip "$out/pause" 2>/dev/null || true
}

# images.txt of the kubernetes part: kubeadm's image names; image_ref NAME: the one whose path ends in NAME.
image_ref() { grep -E "/$1:[^/]+$" "${PARTS}/${KUBE_PART}/images.txt" | head -n 1; }
image_tag() { local r; r=$(image_ref "$1"); printf '%s' "${r##*:}"; }

# --- parts: containerd, runc, CNI plugins, etcd, coredns, local-path-provisioner, busybox -------------------
# module_src MODULE@VERSION DIR: a writable copy of the module's source in DIR, without its (empty) vendor/,
# to build it as the main module: its go.mod's exclude directives only apply there (`go install pkg@v`
# refuses modules that have them).
module_src() {
  local d
  d=$(go_mod_dir "$1") || return 1
  cp -r "$d" "$2" && chmod -R u+w "$2" && rm -rf "$2/vendor"
}
build_containerd() {
  local out=$1 src="$1/.src" pkg=github.com/containerd/containerd/v2 ldflags
  module_src "${pkg}@${CONTAINERD_VER}" "$src" || return 1
  ldflags="-s -w -X ${pkg}/version.Version=${CONTAINERD_VER} -X ${pkg}/version.Revision=$(go_mod_hash "${pkg}@${CONTAINERD_VER}") -X ${pkg}/version.Package=${pkg}"
  (cd "$src" && CGO_ENABLED=0 go build -mod=mod -trimpath -o "$out/" \
    -tags "urfave_cli_no_docs no_btrfs no_devmapper no_zfs osusergo netgo static_build" -ldflags "$ldflags" \
    ./cmd/containerd ./cmd/ctr ./cmd/containerd-shim-runc-v2) || return 1
  rm -rf "$src"
  "$out/containerd" --version
}
build_runc() {
  local out=$1
  # runc's `make static`: tags "seccomp urfave_cli_no_docs netgo osusergo", -extldflags -static
  CGO_ENABLED=1 GOBIN="$out" go install -trimpath -tags "seccomp urfave_cli_no_docs netgo osusergo" \
    -ldflags "-s -w -X main.version=${RUNC_VER#v} -X main.gitCommit=$(go_mod_hash "github.com/opencontainers/runc@${RUNC_VER}") -extldflags -static" \
    "github.com/opencontainers/runc@${RUNC_VER}" || return 1
  "$out/runc" --version
}
build_cni() {
  local out=$1 m=github.com/containernetworking/plugins
  CGO_ENABLED=0 GOBIN="$out" go install -trimpath \
    -ldflags "-s -w -X ${m}/pkg/utils/buildversion.BuildVersion=${CNI_VER}" \
    "${m}/plugins/main/ptp@${CNI_VER}" "${m}/plugins/ipam/host-local@${CNI_VER}" \
    "${m}/plugins/main/loopback@${CNI_VER}" "${m}/plugins/meta/portmap@${CNI_VER}"
}
build_coredns() {
  local out=$1
  CGO_ENABLED=0 GOBIN="$out" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@${COREDNS_TAG}" || return 1
  "$out/coredns" -version
}
build_lpp() {
  local out=$1
  CGO_ENABLED=0 GOBIN="$out" go install -trimpath -ldflags "-s -w -X main.VERSION=${LPP_VER}" \
    "github.com/rancher/local-path-provisioner@${LPP_VER}"
}
# busybox: Debian's busybox-static, for the helper and kube-proxy images: the installed package's binary if
# there is one (hack/install-deps.sh installs it), else its candidate version fetched with apt-get download
# (never installed).
BUSYBOX_VERSION=""
BUSYBOX_INSTALLED=0
busybox_version() {
  local st
  st=$(dpkg-query -W -f='${Status} ${Version}' busybox-static 2>/dev/null || true)
  if [[ "$st" == "install ok installed "* && -x /bin/busybox ]]; then
    BUSYBOX_VERSION=${st#install ok installed }
    BUSYBOX_INSTALLED=1
    return 0
  fi
  BUSYBOX_VERSION=$(apt-cache show --no-all-versions busybox-static 2>/dev/null | sed -nE 's/^Version: (.*)$/\1/p' | head -n 1)
  [[ -n "$BUSYBOX_VERSION" ]] || die "busybox-static is neither installed nor known to apt-cache (apt-get update?)"
}
build_busybox() {
  local out=$1 deb
  if ((BUSYBOX_INSTALLED)); then
    cp /bin/busybox "$out/busybox" || return 1
  else
    (cd "$out" && apt-get download "busybox-static=${BUSYBOX_VERSION}" >&2) || return 1
    deb=$(find "$out" -maxdepth 1 -name 'busybox-static_*.deb' | head -n 1)
    [[ -n "$deb" ]] || return 1
    dpkg-deb -x "$deb" "$out/x" || return 1
    mv "$out/x/bin/busybox" "$out/busybox"
    rm -rf "$out/x" "$deb"
  fi
  # static, or it would not run in the images
  if ldd "$out/busybox" >/dev/null 2>&1; then log "$out/busybox is not statically linked"; return 1; fi
  "$out/busybox" true
}

# await_rc RCFILE PID: wait until the background step PID wrote its exit status to RCFILE, and return it. Not
# `wait PID`: a background job that had already ended before the wait could be forgotten by bash (set -m
# toggled around it), and `wait` then blocked on the heartbeat's ticker forever (seen: 25 minutes on a rootfs
# part that was complete).
await_rc() {
  while [[ ! -s "$1" ]]; do
    if ! kill -0 "$2" 2>/dev/null; then
      [[ -s "$1" ]] && break
      log "the background step (pid $2) ended without an exit status"
      return 1
    fi
    sleep 1
  done
  return "$(<"$1")"
}

# The rootfs (network and disk bound) builds in the background while the Go builds use the CPUs.
ROOTFS_T0=$(now)
if [[ ! -f "${PARTS}/${ROOTFS_PART}/.complete" || "$REBUILD" == 2 ]]; then
  set -m # its own process group, so that cleanup can stop debootstrap too
  (
    rc=0
    part "$ROOTFS_PART" build_rootfs || rc=$?
    echo "$rc" >"${WORK}/rootfs.rc"
  ) &
  ROOTFS_PID=$!
  set +m
  log "part 1/${PARTS_TOTAL} ${ROOTFS_PART}: building in the background (debootstrap: network and disk bound)"
fi
PART_N=1

# The Kubernetes binaries (the longest build) compile beside the other parts: two go builds keep both cores
# busy through each other's serial stretches (big packages, links). CoreDNS's version is kubeadm's constant,
# read from the source here and checked against kubeadm's own image list once that is built.
if [[ ! -f "${PARTS}/${KUBE_PART}/.complete" || "$REBUILD" == 2 ]]; then
  set -m
  (
    rc=0
    "${REPO_ROOT}/hack/kubernetes.sh" node >"${WORK}/kube-dir" || rc=$?
    echo "$rc" >"${WORK}/kube.rc"
  ) &
  KUBE_PID=$!
  set +m
  log "part 2/${PARTS_TOTAL} ${KUBE_PART}: building in the background (hack/kubernetes.sh)"
fi
COREDNS_TAG=$(sed -nE 's/^[[:space:]]*CoreDNSVersion[[:space:]]*=[[:space:]]*"([^"]+)".*/\1/p' \
  "$(go_mod_dir "k8s.io/kubernetes@v${K8S_VERSION}")/cmd/kubeadm/app/constants/constants.go")
[[ "$COREDNS_TAG" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "no CoreDNSVersion in kubeadm's constants.go of k8s.io/kubernetes v${K8S_VERSION}"
PART_N=2
part "containerd-${CONTAINERD_VER}" build_containerd
part "runc-${RUNC_VER}" build_runc
part "cni-plugins-${CNI_VER}" build_cni
part "coredns-${COREDNS_TAG}" build_coredns
part "local-path-provisioner-${LPP_VER}" build_lpp
busybox_version
part "busybox-${BUSYBOX_VERSION//[:~+]/_}" build_busybox
BUSYBOX="${PARTS}/busybox-${BUSYBOX_VERSION//[:~+]/_}/busybox"
HELPER_IMAGE="zns-mysql.local/local-path-helper:busybox-${BUSYBOX_VERSION//[:~+]/_}"

if [[ -n "$KUBE_PID" ]]; then
  heartbeat "waiting for part 2/${PARTS_TOTAL} ${KUBE_PART}" "hack/kubernetes.sh" await_rc "${WORK}/kube.rc" "$KUBE_PID" ||
    die "building the Kubernetes binaries failed (see the output above); a rerun resumes from the Go build cache"
  KUBE_PID=""
  KUBE_DIR=$(cat "${WORK}/kube-dir")
fi
PART_N=1
part "$KUBE_PART" build_kubernetes
PART_N=$PARTS_TOTAL
ETCD_TAG=$(image_tag etcd)
PAUSE_TAG=$(image_tag pause)
[[ -n "$ETCD_TAG" && -n "$PAUSE_TAG" ]] ||
  die "kubeadm's image list lacks etcd or pause: $(tr '\n' ' ' <"${PARTS}/${KUBE_PART}/images.txt")"
[[ "$(image_tag coredns)" == "$COREDNS_TAG" ]] ||
  die "kubeadm's image list names CoreDNS $(image_tag coredns), its constants.go said ${COREDNS_TAG}"

if [[ -n "$ROOTFS_PID" ]]; then
  rc=0
  heartbeat "waiting for part 1/${PARTS_TOTAL} ${ROOTFS_PART}" "debootstrap" await_rc "${WORK}/rootfs.rc" "$ROOTFS_PID" || rc=$?
  ((rc == 0)) || die "building the rootfs failed (see the output above)"
  log "$(printf '%-34s %7ss' "rootfs (wall, from start)" "$(elapsed "$ROOTFS_T0")")"
else
  log "$(printf '%-40s %8s' "part 1/${PARTS_TOTAL} ${ROOTFS_PART}" cached)"
fi

# --- component images: docker-archive tarballs, written without docker ------------------------------------
# docker_archive OUT.tar REF ROOTFS_DIR CONFIG_JSON: one-layer image REF (docker save format, which both
# `docker load` and `ctr images import` read; hack/imagearchive writes it, with its digests). CONFIG_JSON is the
# image's "config" object.
docker_archive() {
  if [[ ! -x "${WORK}/imagearchive" ]]; then
    (cd "$REPO_ROOT" && CGO_ENABLED=0 go build -o "${WORK}/imagearchive" ./hack/imagearchive) ||
      { log "building hack/imagearchive failed (above)"; return 1; }
  fi
  "${WORK}/imagearchive" -o "$1" -ref "$2" -rootfs "$3" -config "$4"
}
# static_root DIR: the skeleton of a distroless-like image (passwd, group, nsswitch, tmp).
static_root() {
  mkdir -p "$1/etc" "$1/tmp" "$1/usr/local/bin" "$1/var/run"
  chmod 1777 "$1/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$1/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$1/etc/group"
  printf 'hosts: files dns\n' >"$1/etc/nsswitch.conf"
}
ENV_PATH='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'

IMAGES_DIR="${WORK}/images"
ROOTFS_DIR="${WORK}/rootfs"
build_images() {
  local d name ref kube="${PARTS}/${KUBE_PART}"
  mkdir -p "$IMAGES_DIR"
  for name in kube-apiserver kube-controller-manager kube-scheduler; do
    ref=$(image_ref "$name")
    d="${WORK}/img-${name}"
    static_root "$d"
    cp "$kube/$name" "$d/usr/local/bin/"
    docker_archive "$IMAGES_DIR/${name}.tar" "$ref" "$d" "{${ENV_PATH}}" || return 1
  done

  # kube-proxy: iptables (legacy and nft) from the node rootfs with their libraries, busybox for the wrapper
  d="${WORK}/img-kube-proxy"
  static_root "$d"
  cp "$kube/kube-proxy" "$d/usr/local/bin/"
  mkdir -p "$d/bin" "$d/usr/sbin"
  cp "$BUSYBOX" "$d/bin/busybox"
  for a in sh grep wc timeout ln basename cat; do ln -s busybox "$d/bin/$a"; done
  local multi lib
  for multi in xtables-legacy-multi xtables-nft-multi; do
    [[ -e "${ROOTFS_DIR}/usr/sbin/${multi}" ]] || { log "node rootfs lacks /usr/sbin/${multi}"; return 1; }
  done
  # the files of the rootfs's iptables packages, then every shared library their ELF files need
  local pkgs=(iptables libxtables12 libip4tc2 libip6tc2 libnftnl11 libmnl0 libnfnetlink0 libnetfilter-conntrack3)
  for p in "${pkgs[@]}"; do
    local list
    list=""
    for f in "${ROOTFS_DIR}/var/lib/dpkg/info/${p}.list" "${ROOTFS_DIR}/var/lib/dpkg/info/${p}:amd64.list"; do
      [[ -f "$f" ]] && list=$f && break
    done
    [[ -n "$list" ]] || { log "node rootfs has no package ${p}"; return 1; }
    while read -r f; do
      [[ -n "$f" && ! -d "${ROOTFS_DIR}${f}" && -e "${ROOTFS_DIR}${f}" || -L "${ROOTFS_DIR}${f}" ]] || continue
      [[ "$f" == /usr/share/* ]] && continue
      mkdir -p "$d$(dirname "$f")"
      cp -a "${ROOTFS_DIR}${f}" "$d${f}"
    done <"$list"
  done
  # glibc and friends: whatever ldd (run in the rootfs) names for the copied ELF files
  local needed
  needed=$(cd "$d" && find . -type f \( -name '*.so*' -o -path './usr/sbin/*' \) | sed 's#^\.##' |
    "${SUDO[@]}" chroot "$ROOTFS_DIR" xargs -r ldd 2>/dev/null | awk '/=> \// { print $3 } /^[[:space:]]*\/lib.*ld-linux/ { print $1 }' | sort -u)
  for lib in $needed; do
    [[ -e "$d$lib" ]] && continue
    mkdir -p "$d$(dirname "$lib")"
    cp -aL "${ROOTFS_DIR}${lib}" "$d${lib}"
  done
  # usrmerge: /lib, /lib64, /sbin are links into /usr in bookworm
  for l in lib lib64 sbin; do
    if [[ -L "${ROOTFS_DIR}/$l" && ! -e "$d/$l" ]]; then cp -a "${ROOTFS_DIR}/$l" "$d/$l"; fi
  done
  install -m 0755 "${NODE_FILES}/iptables-wrapper" "$d/usr/sbin/iptables-wrapper"
  for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -sf iptables-wrapper "$d/usr/sbin/$c"
  done
  for mode in legacy nft; do
    for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
      ln -sf "xtables-${mode}-multi" "$d/usr/sbin/${c/tables/tables-${mode}}"
    done
  done
  # the image must answer `iptables --version` through the wrapper logic's links
  "${SUDO[@]}" chroot "$d" /usr/sbin/xtables-nft-multi iptables --version >&2 || { log "iptables does not run in the kube-proxy image"; return 1; }
  "${SUDO[@]}" chroot "$d" /usr/sbin/xtables-legacy-multi iptables --version >&2 || { log "iptables-legacy does not run in the kube-proxy image"; return 1; }
  docker_archive "$IMAGES_DIR/kube-proxy.tar" "$(image_ref kube-proxy)" "$d" "{${ENV_PATH}}" || return 1

  d="${WORK}/img-etcd"
  static_root "$d"
  mkdir -p "$d/var/lib/etcd"
  cp "${PARTS}/${KUBE_PART}/etcd" "$d/usr/local/bin/"
  docker_archive "$IMAGES_DIR/etcd.tar" "$(image_ref etcd)" "$d" "{${ENV_PATH}}" || return 1

  d="${WORK}/img-coredns"
  static_root "$d"
  cp "${PARTS}/coredns-${COREDNS_TAG}/coredns" "$d/coredns"
  docker_archive "$IMAGES_DIR/coredns.tar" "$(image_ref coredns)" "$d" \
    "{${ENV_PATH},\"Entrypoint\":[\"/coredns\"],\"ExposedPorts\":{\"53/tcp\":{},\"53/udp\":{}}}" || return 1

  d="${WORK}/img-pause"
  mkdir -p "$d"
  cp "$kube/pause" "$d/pause"
  docker_archive "$IMAGES_DIR/pause.tar" "$(image_ref pause)" "$d" \
    "{${ENV_PATH},\"Entrypoint\":[\"/pause\"],\"User\":\"65535:65535\"}" || return 1

  d="${WORK}/img-local-path-provisioner"
  static_root "$d"
  cp "${PARTS}/local-path-provisioner-${LPP_VER}/local-path-provisioner" "$d/usr/local/bin/"
  docker_archive "$IMAGES_DIR/local-path-provisioner.tar" "$PROVISIONER_IMAGE" "$d" \
    "{${ENV_PATH},\"Entrypoint\":[\"/usr/local/bin/local-path-provisioner\"]}" || return 1

  d="${WORK}/img-local-path-helper"
  static_root "$d"
  mkdir -p "$d/bin"
  cp "$BUSYBOX" "$d/bin/busybox"
  local applet
  for applet in $("$BUSYBOX" --list); do
    [[ "$applet" == busybox ]] || ln -sf busybox "$d/bin/$applet"
  done
  docker_archive "$IMAGES_DIR/local-path-helper.tar" "$HELPER_IMAGE" "$d" "{${ENV_PATH},\"Cmd\":[\"sh\"]}" || return 1
  ls -l "$IMAGES_DIR" >&2
}

# --- the node rootfs: Debian + kind's base files + our binaries, configs and manifests ---------------------
KIND_DIR=""
assemble_rootfs() {
  local r=$ROOTFS_DIR f kube="${PARTS}/${KUBE_PART}"
  # kind's base-image files (copied as images/base/Dockerfile does: scripts 0755, the rest 0644)
  local kf="${KIND_DIR}/images/base/files"
  [[ -d "$kf" ]] || { log "no ${kf} in sigs.k8s.io/kind@${KIND_VER}"; return 1; }
  # shellcheck disable=SC2016 # the script is in single quotes: its $ are its own, its values come as arguments
  "${SUDO[@]}" sh -euc '
    r=$1 kf=$2 nf=$3 kube=$4 ctd=$5 runc=$6 cni=$7
    install -d -m 0755 "$r/kind" "$r/kind/bin" "$r/kind/manifests" "$r/LICENSES" "$r/usr/local/bin" "$r/usr/local/sbin" \
      "$r/etc/containerd" "$r/etc/default" "$r/etc/sysctl.d" "$r/etc/systemd/system/kubelet.service.d" \
      "$r/etc/systemd/system/multi-user.target.wants" "$r/etc/kubernetes/manifests" "$r/opt/cni/bin" "$r/etc/cni/net.d"
    for f in "$kf"/usr/local/bin/*; do install -m 0755 "$f" "$r/usr/local/bin/"; done
    for f in "$kf"/kind/*; do [ -f "$f" ] && install -m 0644 "$f" "$r/kind/"; done
    for f in "$kf"/kind/bin/*; do install -m 0755 "$f" "$r/kind/bin/"; done
    for f in "$kf"/LICENSES/*; do install -m 0644 "$f" "$r/LICENSES/"; done
    for f in "$kf"/etc/*; do [ -f "$f" ] && install -m 0644 "$f" "$r/etc/"; done
    for f in "$kf"/etc/containerd/*; do install -m 0644 "$f" "$r/etc/containerd/"; done
    for f in "$kf"/etc/default/*; do install -m 0644 "$f" "$r/etc/default/"; done
    for f in "$kf"/etc/sysctl.d/*; do install -m 0644 "$f" "$r/etc/sysctl.d/"; done
    for f in "$kf"/etc/systemd/system/*; do [ -f "$f" ] && install -m 0644 "$f" "$r/etc/systemd/system/"; done
    for f in "$kf"/etc/systemd/system/kubelet.service.d/*; do install -m 0644 "$f" "$r/etc/systemd/system/kubelet.service.d/"; done
    # ours: the CNI config writer (no kindnetd)
    install -m 0755 "$nf/zns-cni-config.sh" "$r/kind/bin/zns-cni-config.sh"
    # ours: runs before kind'"'"'s entrypoint; makes /sys and cgroups writable in a node started without
    # --privileged (hack/kind/docker-unprivileged), does nothing otherwise
    install -m 0755 "$nf/zns-entrypoint" "$r/usr/local/bin/zns-entrypoint"
    install -m 0644 "$nf/zns-cni-config.service" "$r/etc/systemd/system/zns-cni-config.service"
    # systemctl enable / mask, as symlinks (no systemd needed on the build host)
    for u in kubelet containerd undo-mount-hacks zns-cni-config; do
      ln -sf "/etc/systemd/system/$u.service" "$r/etc/systemd/system/multi-user.target.wants/$u.service"
    done
    ln -sf /dev/null "$r/etc/systemd/system/systemd-binfmt.service"
    # binaries: kubernetes in /usr/bin (kind'"'"'s kubelet.service expects /usr/bin/kubelet), runtime in /usr/local
    for b in kubeadm kubelet kubectl; do install -m 0755 -o root -g root "$kube/$b" "$r/usr/bin/$b"; done
    for b in containerd ctr containerd-shim-runc-v2; do install -m 0755 -o root -g root "$ctd/$b" "$r/usr/local/bin/$b"; done
    install -m 0755 -o root -g root "$runc/runc" "$r/usr/local/sbin/runc"
    for b in ptp host-local loopback portmap; do install -m 0755 -o root -g root "$cni/$b" "$r/opt/cni/bin/$b"; done
  ' sh "$r" "$kf" "$NODE_FILES" "$kube" "${PARTS}/containerd-${CONTAINERD_VER}" "${PARTS}/runc-${RUNC_VER}" \
    "${PARTS}/cni-plugins-${CNI_VER}" || return 1
  # containerd: kubeadm's pause as the sandbox image
  local pause_ref
  pause_ref=$(image_ref pause)
  "${SUDO[@]}" sed -i -E "s#^([[:space:]]*sandbox_image = ).*#\\1\"${pause_ref}\"#" "$r/etc/containerd/config.toml"
  grep -q "sandbox_image = \"${pause_ref}\"" "$r/etc/containerd/config.toml" ||
    { log "could not set sandbox_image in kind's containerd config.toml"; return 1; }
  # /kind/version and the storage manifest kind applies on cluster creation
  printf 'v%s' "$K8S_VERSION" | "${SUDO[@]}" tee "$r/kind/version" >/dev/null
  sed -e "s#@PROVISIONER_IMAGE@#${PROVISIONER_IMAGE}#g" -e "s#@HELPER_IMAGE@#${HELPER_IMAGE}#g" \
    -e "s#@LPP_VERSION@#${LPP_VER}#g" "${NODE_FILES}/default-storage.yaml" |
    "${SUDO[@]}" tee "$r/kind/manifests/default-storage.yaml" >/dev/null
  # what went in, for humans
  {
    printf 'zns-mysql offline kind node image (hack/kind/build-node-image.sh), recipe %s\n' "$RECIPE"
    printf 'kubernetes v%s, kind %s base files, debian %s\n' "$K8S_VERSION" "$KIND_VER" "$DEBIAN_SUITE"
    printf 'containerd %s, runc %s, cni-plugins %s, local-path-provisioner %s, busybox-static %s\n' \
      "$CONTAINERD_VER" "$RUNC_VER" "$CNI_VER" "$LPP_VER" "$BUSYBOX_VERSION"
    printf 'images:\n'
    cat "$kube/images.txt"
    printf '%s\n%s\n' "$PROVISIONER_IMAGE" "$HELPER_IMAGE"
  } | "${SUDO[@]}" tee "$r/kind/zns-mysql-build.txt" >/dev/null
}

extract_rootfs() {
  mkdir -p "$ROOTFS_DIR"
  "${SUDO[@]}" tar -C "$ROOTFS_DIR" --numeric-owner -xf "${PARTS}/${ROOTFS_PART}/rootfs.tar"
}
resolve_kind() { KIND_DIR=$(go_mod_dir "sigs.k8s.io/kind@${KIND_VER}"); }

import_base() {
  BASE_IMAGE="zns-mysql/kind-node-build:${RECIPE}"
  "${SUDO[@]}" tar -C "$ROOTFS_DIR" --numeric-owner -cf - . | docker import -m "hack/kind/build-node-image.sh rootfs" - "$BASE_IMAGE" >/dev/null
}

# in the build container: start containerd, import the images, write cri-base.json, stop containerd
in_container() { docker exec "$BUILD_CONTAINER" "$@"; }
start_build_container() {
  BUILD_CONTAINER="zns-kind-build-${RECIPE}-$$"
  # --stop-signal is kept by docker commit (docker import cannot set STOPSIGNAL)
  docker run -d --name "$BUILD_CONTAINER" --stop-signal SIGRTMIN+3 --entrypoint sleep \
    --security-opt seccomp=unconfined "$BASE_IMAGE" infinity >/dev/null || return 1
  in_container bash -c 'nohup containerd >/var/log/containerd-build.log 2>&1 &' || return 1
  for _ in $(seq 1 60); do
    if in_container ctr version >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  in_container cat /var/log/containerd-build.log >&2 || true
  log "containerd did not come up in the build container"
  return 1
}
import_images() {
  local f
  for f in "$IMAGES_DIR"/*.tar; do
    docker exec -i "$BUILD_CONTAINER" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
      --all-platforms --no-unpack --digests - <"$f" >/dev/null || { log "ctr import of ${f##*/} failed"; return 1; }
  done
  local have want missing=()
  have=$(in_container ctr --namespace=k8s.io images list -q)
  for want in $(cat "${PARTS}/${KUBE_PART}/images.txt") "$PROVISIONER_IMAGE" "$HELPER_IMAGE"; do
    grep -qxF "$want" <<<"$have" || missing+=("$want")
  done
  ((${#missing[@]} == 0)) || { log "not in the node's containerd after import: ${missing[*]}"; printf '%s\n' "$have" >&2; return 1; }
  printf '%s\n' "$have" | grep -v '^sha256:' | sed 's/^/  /' >&2
}
finish_container() {
  # as kind's base image: the runtime spec with kind's product-files hook and without rlimits
  in_container bash -c "ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {\"path\": \"/kind/bin/mount-product-files.sh\"}' | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json" || return 1
  in_container pkill containerd || true
  for _ in $(seq 1 60); do
    in_container pgrep -x containerd >/dev/null 2>&1 || break
    sleep 0.5
  done
  in_container rm -rf /var/log/containerd-build.log /run/containerd /tmp/* || true
  local old
  old=$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
  docker commit \
    --change 'ENTRYPOINT [ "/usr/local/bin/zns-entrypoint", "/usr/local/bin/entrypoint", "/sbin/init" ]' \
    --change 'ENV container=docker PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "LABEL ${RECIPE_LABEL}=${RECIPE} io.x-k8s.kind.kubernetes-version=v${K8S_VERSION}" \
    "$BUILD_CONTAINER" "$IMAGE" >/dev/null || return 1
  docker rm -f -v "$BUILD_CONTAINER" >/dev/null && BUILD_CONTAINER=""
  docker rmi "$BASE_IMAGE" >/dev/null && BASE_IMAGE=""
  image_ok || { log "committed ${IMAGE} lacks the recipe label"; return 1; }
  # the image this one replaces, unless a container still uses it
  if [[ -n "$old" && "$old" != "$(docker image inspect -f '{{.Id}}' "$IMAGE")" ]]; then
    if docker rmi "$old" >/dev/null 2>&1; then log "removed the previous ${IMAGE} (${old:7:12})"; fi
  fi
}

step "resolve sigs.k8s.io/kind" resolve_kind
step "extract rootfs" extract_rootfs
step "component images (archives)" build_images
step "assemble node rootfs" assemble_rootfs
step "docker import" import_base
step "start build container" start_build_container
step "ctr import images" import_images
step "docker commit" finish_container
if [[ "$SAVE" == 1 ]]; then save_in_background; fi
log "built ${IMAGE} ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
done_ok
