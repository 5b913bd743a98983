#!/usr/bin/env bash
# shellcheck disable=SC2317 # functions run through step() look unreachable to shellcheck
# hack/envtest-assets.sh: build (once) and print the envtest binary directory.
#
#   export KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"      # shell
#   test: ; KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" go test ./...   # Makefile
# (In a recipe a failed build stops make; a global `$(shell ...)` would run on
# every make invocation and turn a failure into an empty value.)
#
# controller-runtime's envtest needs kube-apiserver and etcd (kubectl is
# optional, handy for debugging). Their download sites are out of reach here, so
# they are built from the Go module proxy:
#   kube-apiserver, kubectl  k8s.io/kubernetes/cmd/... at v$ENVTEST_K8S_VERSION,
#                            every k8s.io staging module replaced by v0.<minor>.<patch>
#   etcd                     a tiny main calling go.etcd.io/etcd/server/v3/etcdmain.Main
# Versions come from versions.mk at the repo root (the only pin).
#
# The binaries go to
#   ${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/envtest/k8s-<ver>_etcd-<ver>/
# If they are there and answer --version with the pinned versions, nothing is
# built (fast path). Otherwise they are built in a scratch directory beside it
# and renamed into place in one step, so an interrupted build never leaves a
# half-written cache. Concurrent runs are serialised with flock(1) if present.
#
# Progress and step timings go to stderr; stdout carries exactly one line, the
# absolute asset directory.
#
# Environment:
#   ZNS_CACHE_DIR         cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql)
#   ZNS_ENVTEST_KUBECTL   1 (default) also build kubectl; 0 to skip it
#   ZNS_ENVTEST_REBUILD   1 to rebuild even if the cached binaries are good
set -euo pipefail

# stdout is reserved for the result; everything else, go's output included, goes to stderr.
exec 3>&1 1>&2

TOOL_NAME=envtest-assets
# shellcheck source=hack/lib/tool-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/tool-common.sh"

T_START=$(now)

K8S_VERSION=$(read_pin ENVTEST_K8S_VERSION)
K8S_VERSION=${K8S_VERSION#v}
ETCD_VER=$(read_pin ETCD_VERSION)
ETCD_VER=${ETCD_VER#v}
[[ "$K8S_VERSION" =~ ^1\.([0-9]+)\.([0-9]+)$ ]] ||
  die "ENVTEST_K8S_VERSION '${K8S_VERSION}' in versions.mk is not 1.<minor>.<patch>"
STAGING_VERSION="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
K8S_MINOR=${BASH_REMATCH[1]}
[[ "$ETCD_VER" =~ ^3\.[0-9]+\.[0-9]+$ ]] ||
  die "ETCD_VERSION '${ETCD_VER}' in versions.mk is not 3.<minor>.<patch>"

WITH_KUBECTL=${ZNS_ENVTEST_KUBECTL:-1}
[[ "$WITH_KUBECTL" == 0 || "$WITH_KUBECTL" == 1 ]] || die "ZNS_ENVTEST_KUBECTL must be 0 or 1"

mkdir -p "$cache_root/envtest" || die "cannot create ${cache_root}/envtest"
envtest_root=$(cd "$cache_root/envtest" && pwd -P)
ASSET_DIR="${envtest_root}/k8s-${K8S_VERSION}_etcd-${ETCD_VER}"

# --- checks: the binaries in DIR answer --version with the pinned versions ----
check_apiserver() {
  local out
  out=$("$1/kube-apiserver" --version 2>&1) || return 1
  [[ "$out" == "Kubernetes v${K8S_VERSION}" ]] || { log "not usable: $1/kube-apiserver --version said '${out}'"; return 1; }
}
check_etcd() {
  local out
  out=$("$1/etcd" --version 2>&1) || return 1
  [[ "$out" == "etcd Version: ${ETCD_VER}"* ]] || { log "not usable: $1/etcd --version said '${out%%$'\n'*}'"; return 1; }
}
check_kubectl() {
  local out
  out=$("$1/kubectl" version --client 2>&1) || return 1
  [[ "$out" == "Client Version: v${K8S_VERSION}"* ]] || { log "not usable: $1/kubectl version --client said '${out%%$'\n'*}'"; return 1; }
}
check_all() {
  local dir=$1
  [[ -x "$dir/kube-apiserver" && -x "$dir/etcd" ]] || return 1
  if [[ "$WITH_KUBECTL" == 1 ]]; then [[ -x "$dir/kubectl" ]] || return 1; fi
  # the three checks run side by side: kube-apiserver's start-up dominates
  local pa pe pk=""
  check_apiserver "$dir" & pa=$!
  check_etcd "$dir" & pe=$!
  if [[ "$WITH_KUBECTL" == 1 ]]; then check_kubectl "$dir" & pk=$!; fi
  local ok=0
  wait "$pa" || ok=1
  wait "$pe" || ok=1
  if [[ -n "$pk" ]]; then wait "$pk" || ok=1; fi
  return "$ok"
}
done_ok() {
  log "$(awk -v a="$T_START" -v b="$(now)" 'BEGIN { printf "total %.1fs", b - a }')"
  printf '%s\n' "$ASSET_DIR" >&3
  exit 0
}

have_flock() { command -v flock >/dev/null 2>&1; }
# Scratch dirs of killed builds are stale once we hold the lock (a running build holds it).
clean_stale() { rm -rf "${envtest_root}"/.build-* 2>/dev/null || true; }

# --- fast path ------------------------------------------------------------------
if [[ "${ZNS_ENVTEST_REBUILD:-0}" != 1 ]] && check_all "$ASSET_DIR"; then
  log "cached: ${ASSET_DIR}"
  if have_flock && compgen -G "${envtest_root}/.build-*" >/dev/null; then
    exec 9>"${envtest_root}/.lock"
    if flock -n 9; then clean_stale; fi
  fi
  done_ok
fi

# --- slow path: one builder at a time ---------------------------------------------
if have_flock; then
  exec 9>"${envtest_root}/.lock"
  if ! flock -n 9; then
    log "another build holds ${envtest_root}/.lock; waiting"
    flock 9
  fi
  clean_stale
  if [[ "${ZNS_ENVTEST_REBUILD:-0}" != 1 ]] && check_all "$ASSET_DIR"; then
    log "built by a concurrent run: ${ASSET_DIR}"
    done_ok
  fi
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH"
log "building kube-apiserver v${K8S_VERSION} (staging ${STAGING_VERSION}) and etcd v${ETCD_VER} with $(go version | awk '{print $3}')"
log "into ${ASSET_DIR}"

WORK=$(mktemp -d "${envtest_root}/.build-k8s-${K8S_VERSION}_etcd-${ETCD_VER}.XXXXXX") ||
  die "cannot create a scratch directory in ${envtest_root}"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$WORK/apiserver" "$WORK/etcd" "$WORK/bin"

# The scratch modules are builds of their own: no workspace, no vendor dir, pure Go.
export GOWORK=off CGO_ENABLED=0
GOBUILD=(go build -mod=mod -trimpath -buildvcs=false)

# --- kube-apiserver / kubectl module ---------------------------------------------------
K8S_INFO=""
K8S_GOMOD=""
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
step "resolve k8s.io/kubernetes" resolve_kubernetes

# The staging modules: every `k8s.io/x => ./staging/src/k8s.io/x` in kubernetes' go.mod.
mapfile -t STAGING < <(awk '/=>[[:space:]]*\.\/staging\/src\// { for (i = 1; i <= NF; i++) if ($i ~ /^k8s\.io\//) { print $i; break } }' "$K8S_GOMOD")
((${#STAGING[@]} > 10)) || die "found only ${#STAGING[@]} staging replaces in ${K8S_GOMOD}"
log "${#STAGING[@]} staging modules -> ${STAGING_VERSION}"

{
  echo "// generated by hack/envtest-assets.sh; a throwaway module"
  echo "module zns-mysql.local/envtest/kube-apiserver"
  echo
  # kubernetes' own go and godebug lines, so the binaries get its runtime defaults
  grep -E '^go [0-9]' "$K8S_GOMOD"
  awk '/^godebug \(/ { inblk = 1 } inblk { print; if ($0 ~ /^\)/) inblk = 0; next } /^godebug / { print }' "$K8S_GOMOD"
  echo
  echo "require k8s.io/kubernetes v${K8S_VERSION}"
  echo
  echo "replace ("
  for m in "${STAGING[@]}"; do printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"; done
  echo ")"
} >"$WORK/apiserver/go.mod"

# version stamps, as kubernetes' hack/lib/version.sh sets them
build_date=$(sed -nE 's/.*"Time":"([^"]+)".*/\1/p' "$K8S_INFO" 2>/dev/null || true)
K8S_LDFLAGS="-s -w"
for kv in "gitVersion=v${K8S_VERSION}" "gitMajor=1" "gitMinor=${K8S_MINOR}" "gitTreeState=clean" \
  ${build_date:+"buildDate=${build_date}"}; do
  K8S_LDFLAGS+=" -X k8s.io/component-base/version.${kv}"
  K8S_LDFLAGS+=" -X k8s.io/client-go/pkg/version.${kv}"
done

build_k8s() { (cd "$WORK/apiserver" && "${GOBUILD[@]}" -ldflags "$K8S_LDFLAGS" -o "$WORK/bin/$1" "k8s.io/kubernetes/cmd/$1"); }
step "build kube-apiserver" build_k8s kube-apiserver
step "check kube-apiserver" check_apiserver "$WORK/bin"
if [[ "$WITH_KUBECTL" == 1 ]]; then
  step "build kubectl" build_k8s kubectl
  step "check kubectl" check_kubectl "$WORK/bin"
fi

# --- etcd module ---------------------------------------------------------------------------
# shellcheck source=hack/lib/etcd-module.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/etcd-module.sh"
resolve_etcd() { write_etcd_module "$WORK/etcd" "$ETCD_VER" zns-mysql.local/envtest/etcd; }
step "resolve etcd" resolve_etcd
build_etcd() { (cd "$WORK/etcd" && "${GOBUILD[@]}" -ldflags "-s -w" -o "$WORK/bin/etcd" .); }
step "build etcd" build_etcd
step "check etcd" check_etcd "$WORK/bin"

# --- install atomically ------------------------------------------------------------------
install_assets() {
  if [[ -e "$ASSET_DIR" ]]; then
    # a stale or broken set: move it aside in one rename, then delete it
    mv "$ASSET_DIR" "$WORK/old" || return 1
  fi
  mv "$WORK/bin" "$ASSET_DIR"
}
step "install" install_assets
log "built: ${ASSET_DIR}"
done_ok
