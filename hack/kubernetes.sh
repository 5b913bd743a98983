#!/usr/bin/env bash
# shellcheck disable=SC2317 # functions run through step() look unreachable to shellcheck
# hack/kubernetes.sh: build (once, cached) the Kubernetes binaries the project needs, at the one pinned
# version, and print their directory.
#
#   dir=$(hack/kubernetes.sh envtest)   kube-apiserver, kubectl, etcd                 (envtest)
#   dir=$(hack/kubernetes.sh node)      the above + kubeadm, kubelet, kube-controller-manager,
#                                       kube-scheduler, kube-proxy                      (the kind node image)
#
# Both sets live in one directory, ${cache}/kubernetes/v<K8S_VERSION>_etcd-<ETCD_VERSION>/, so envtest and the
# kind node never build Kubernetes twice: the binaries a set lacks are built in ONE `go build` (the packages
# the binaries share compile once) and added next to the others. The download sites of these binaries are out
# of reach here, so they come from the Go module proxy:
#   k8s.io/kubernetes/cmd/...  at v$K8S_VERSION, every k8s.io staging module replaced by v0.<minor>.<patch>
#   etcd                       a tiny main calling go.etcd.io/etcd/server/v3/etcdmain.Main at v$ETCD_VERSION
# (versions.mk; ETCD_VERSION is the etcd kubeadm of that Kubernetes deploys, checked by the node build).
#
# Each binary in the directory answers its version check (--version) before it is trusted. New binaries
# are built in a scratch directory and renamed into place, so an interrupted build never leaves a
# half-written binary; concurrent runs serialise on flock(1).
#
# Cold, on 2 cores: ~13 minutes for the envtest set, a few more for the node set (see docs/performance.md). Progress
# ("compiled N of at most M packages") every 30 s; stdout carries exactly one line, the directory.
#
# Environment:
#   ZNS_CACHE_DIR        cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql)
#   ZNS_KUBE_REBUILD=1   rebuild the requested binaries even if the cached ones are good
set -euo pipefail

exec 3>&1 1>&2

TOOL_NAME=kubernetes
# shellcheck source=hack/lib/tool-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/tool-common.sh"
# shellcheck source=hack/lib/etcd-module.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/etcd-module.sh"

T_START=$(now)

case "${1:-}" in
  envtest) KUBE_BINS=(kube-apiserver kubectl) ;;
  node) KUBE_BINS=(kube-apiserver kubectl kubeadm kubelet kube-controller-manager kube-scheduler kube-proxy) ;;
  *) die "usage: $0 envtest|node (which set of binaries to make sure of)" ;;
esac

K8S_VERSION=$(read_pin K8S_VERSION)
K8S_VERSION=${K8S_VERSION#v}
ETCD_VER=$(read_pin ETCD_VERSION)
ETCD_VER=${ETCD_VER#v}
[[ "$K8S_VERSION" =~ ^1\.([0-9]+)\.([0-9]+)$ ]] || die "K8S_VERSION '${K8S_VERSION}' in versions.mk is not 1.<minor>.<patch>"
STAGING_VERSION="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
K8S_MINOR=${BASH_REMATCH[1]}
[[ "$ETCD_VER" =~ ^3\.[0-9]+\.[0-9]+$ ]] || die "ETCD_VERSION '${ETCD_VER}' in versions.mk is not 3.<minor>.<patch>"

mkdir -p "$cache_root/kubernetes" || die "cannot create ${cache_root}/kubernetes"
kube_root=$(cd "$cache_root/kubernetes" && pwd -P)
BIN_DIR="${kube_root}/v${K8S_VERSION}_etcd-${ETCD_VER}"

# version_ok DIR BINARY: the binary answers with the pinned version.
# The whole output is read and cut here: `| head -n 1` under pipefail failed a good binary whenever it
# was still writing when head exited (SIGPIPE), which under load made a fresh cache look unusable.
version_ok() {
  local out want="v${K8S_VERSION}"
  case "$2" in
    etcd) out=$("$1/etcd" --version 2>&1) && out=${out%%$'\n'*} && [[ "$out" == "etcd Version: ${ETCD_VER}" ]] ;;
    kubectl) out=$("$1/kubectl" version --client 2>&1) && out=${out%%$'\n'*} && [[ "$out" == "Client Version: ${want}" ]] ;;
    kubeadm) out=$("$1/kubeadm" version -o short 2>&1) && [[ "$out" == "$want" ]] ;;
    *) out=$("$1/$2" --version 2>&1) && out=${out%%$'\n'*} && [[ "$out" == "Kubernetes ${want}" ]] ;;
  esac || {
    [[ -x "$1/$2" ]] && log "not usable: $1/$2 said '${out:-nothing}'"
    return 1
  }
}
# missing_bins: the requested binaries (and etcd) not yet usable in BIN_DIR, checked side by side.
missing_bins() {
  local b pids=() names=() i
  if [[ "${ZNS_KUBE_REBUILD:-0}" == 1 ]]; then
    printf '%s\n' "${KUBE_BINS[@]}" etcd
    return
  fi
  for b in "${KUBE_BINS[@]}" etcd; do
    version_ok "$BIN_DIR" "$b" &
    pids+=($!)
    names+=("$b")
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || printf '%s\n' "${names[$i]}"; done
}
done_ok() {
  log "$(awk -v a="$T_START" -v b="$(now)" 'BEGIN { printf "total %.1fs", b - a }')"
  printf '%s\n' "$BIN_DIR" >&3
  exit 0
}

mapfile -t MISSING < <(missing_bins)
if ((${#MISSING[@]} == 0)); then
  log "cached: ${BIN_DIR}"
  done_ok
fi

if command -v flock >/dev/null 2>&1; then
  exec 9>"${kube_root}/.lock"
  if ! flock -n 9; then
    log "another build holds ${kube_root}/.lock; waiting for it"
    heartbeat "waiting for the other build" "it holds ${kube_root}/.lock" flock 9
  fi
  rm -rf "${kube_root}"/.build-* 2>/dev/null || true # scratch dirs of killed builds
  mapfile -t MISSING < <(missing_bins)
  if ((${#MISSING[@]} == 0)); then
    log "built by a concurrent run: ${BIN_DIR}"
    done_ok
  fi
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH"
log "building ${MISSING[*]} (Kubernetes v${K8S_VERSION}, staging ${STAGING_VERSION}; etcd v${ETCD_VER}) with $(go version | awk '{print $3}')"
log "into ${BIN_DIR}; cold, this takes 10-20 minutes on 2 cores (progress every ${PROGRESS_EVERY}s)"

WORK=$(mktemp -d "${kube_root}/.build-v${K8S_VERSION}.XXXXXX") || die "cannot create a scratch directory in ${kube_root}"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$WORK/kubernetes" "$WORK/etcd" "$WORK/bin"

# The scratch modules are builds of their own: no workspace, no vendor dir, pure Go, the local toolchain.
# No -trimpath: the Kubernetes libraries these binaries share with the project's own packages (k8s.io/api,
# apimachinery, client-go, ... at the same versions as go.mod; about half of what kube-apiserver compiles) then
# have the same build-cache keys as in make test's go vet and go test, which run pure Go too (CGO_ENABLED=0, set
# by hack/testrun), so a cold run compiles them once instead of twice. The cost: the binaries name the module
# cache's paths in their stack traces.
export GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
GOBUILD_FLAGS=(-mod=mod)

want_kube=()
want_etcd=0
for b in "${MISSING[@]}"; do
  if [[ "$b" == etcd ]]; then want_etcd=1; else want_kube+=("$b"); fi
done

# --- kubernetes ----------------------------------------------------------------------------------------------
K8S_INFO="" K8S_GOMOD=""
resolve_kubernetes() {
  local json
  json=$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}") || {
    printf '%s\n' "$json"
    return 1
  }
  K8S_INFO=$(printf '%s\n' "$json" | sed -nE 's/^[[:space:]]*"Info": "(.*)",?$/\1/p')
  K8S_GOMOD=$(printf '%s\n' "$json" | sed -nE 's/^[[:space:]]*"GoMod": "(.*)",?$/\1/p')
  [[ -r "$K8S_GOMOD" ]] || { log "no go.mod for k8s.io/kubernetes in: ${json}"; return 1; }
}
write_kubernetes_module() {
  local staging
  # the staging modules: every `k8s.io/x => ./staging/src/k8s.io/x` in kubernetes' go.mod
  mapfile -t staging < <(awk '/=>[[:space:]]*\.\/staging\/src\// { for (i = 1; i <= NF; i++) if ($i ~ /^k8s\.io\//) { print $i; break } }' "$K8S_GOMOD")
  ((${#staging[@]} > 10)) || { log "found only ${#staging[@]} staging replaces in ${K8S_GOMOD}"; return 1; }
  {
    echo "// generated by hack/kubernetes.sh; a throwaway module"
    echo "module zns-mysql.local/kubernetes"
    echo
    # kubernetes' own go and godebug lines, so the binaries get its runtime defaults
    grep -E '^go [0-9]' "$K8S_GOMOD"
    awk '/^godebug \(/ { inblk = 1 } inblk { print; if ($0 ~ /^\)/) inblk = 0; next } /^godebug / { print }' "$K8S_GOMOD"
    echo
    echo "require k8s.io/kubernetes v${K8S_VERSION}"
    echo
    echo "replace ("
    for m in "${staging[@]}"; do printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"; done
    echo ")"
  } >"$WORK/kubernetes/go.mod"
}
build_kubernetes() {
  local ldflags="-s -w" build_date kv pkgs=() b
  # version stamps, as kubernetes' hack/lib/version.sh sets them
  build_date=$(sed -nE 's/.*"Time":"([^"]+)".*/\1/p' "$K8S_INFO" 2>/dev/null || true)
  for kv in "gitVersion=v${K8S_VERSION}" "gitMajor=1" "gitMinor=${K8S_MINOR}" "gitTreeState=clean" \
    ${build_date:+"buildDate=${build_date}"}; do
    ldflags+=" -X k8s.io/component-base/version.${kv} -X k8s.io/client-go/pkg/version.${kv}"
  done
  for b in "${want_kube[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  go_build_progress "${#want_kube[@]} Kubernetes binaries" "$WORK/kubernetes" "${GOBUILD_FLAGS[@]}" -ldflags "$ldflags" -o "$WORK/bin/" -- "${pkgs[@]}"
}
check_new() {
  local b
  for b in "$@"; do version_ok "$WORK/bin" "$b" || return 1; done
}
if ((${#want_kube[@]})); then
  step "resolve k8s.io/kubernetes" resolve_kubernetes
  step "write the build module" write_kubernetes_module
  step --own-progress "build ${want_kube[*]}" build_kubernetes
  step "check versions" check_new "${want_kube[@]}"
fi

# --- etcd ------------------------------------------------------------------------------------------------------
if ((want_etcd)); then
  step "resolve etcd" write_etcd_module "$WORK/etcd" "$ETCD_VER" zns-mysql.local/etcd
  step --own-progress "build etcd" go_build_progress etcd "$WORK/etcd" "${GOBUILD_FLAGS[@]}" -ldflags "-s -w" -o "$WORK/bin/etcd" -- .
  step "check etcd" check_new etcd
fi

# --- install: one rename per binary -------------------------------------------------------------------------------
install_bins() {
  mkdir -p "$BIN_DIR" || return 1
  local f
  for f in "$WORK"/bin/*; do mv -f "$f" "$BIN_DIR/" || return 1; done
}
step "install" install_bins
log "built: ${BIN_DIR}"
done_ok
