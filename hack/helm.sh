#!/usr/bin/env bash
# shellcheck disable=SC2317 # functions run through step() look unreachable to shellcheck
# hack/helm.sh: build (once) and print the path of the pinned helm binary.
#
#   helm="$(hack/helm.sh)" && "$helm" lint charts/zns-mysql          # shell
#   chart-test: ; ZNS_HELM="$$(hack/helm.sh)" go test ./test/chart/   # Makefile
# (In a recipe a failed build stops make; a global `$(shell ...)` would run on
# every make invocation and turn a failure into an empty value.)
#
# get.helm.sh is out of reach here, so helm is built from the Go module proxy:
#   helm  helm.sh/helm/v3/cmd/helm at $HELM_VERSION (versions.mk, the only pin)
# with the ldflags of helm's own Makefile: the version stamp (so `helm version`
# answers the pin) and the default Kubernetes version of `helm template` and
# `helm lint` (1.<minor of helm's k8s.io/client-go>, as its Makefile derives it).
#
# The binary goes to
#   ${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/tools/helm-<ver>
# If it is there and `helm version` answers the pinned version, nothing is built
# (fast path). Otherwise it is built into a scratch directory beside it and
# renamed into place in one step, so an interrupted build never leaves a
# half-written binary. Concurrent runs are serialised with flock(1) if present.
#
# Progress and step timings go to stderr; stdout carries exactly one line, the
# absolute path of the binary.
#
# Environment:
#   ZNS_CACHE_DIR       cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql)
#   ZNS_HELM_REBUILD    1 to rebuild even if the cached binary is good
set -euo pipefail

# stdout is reserved for the result; everything else, go's output included, goes to stderr.
exec 3>&1 1>&2

TOOL_NAME=helm
# shellcheck source=hack/lib/tool-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/tool-common.sh"

T_START=$(now)

HELM_VER=$(read_pin HELM_VERSION)
HELM_VER=v${HELM_VER#v}
[[ "$HELM_VER" =~ ^v3\.[0-9]+\.[0-9]+$ ]] ||
  die "HELM_VERSION '${HELM_VER}' in versions.mk is not v3.<minor>.<patch> (helm.sh/helm/v3)"

mkdir -p "$cache_root/tools" || die "cannot create ${cache_root}/tools"
tools_dir=$(cd "$cache_root/tools" && pwd -P)
HELM_BIN="${tools_dir}/helm-${HELM_VER}"

# check_helm BIN: BIN runs and says it is the pinned version.
check_helm() {
  local out
  [[ -x "$1" ]] || return 1
  out=$("$1" version --template '{{.Version}}' 2>&1) || { log "not usable: $1 version failed: ${out%%$'\n'*}"; return 1; }
  [[ "$out" == "$HELM_VER" ]] || { log "not usable: $1 version said '${out%%$'\n'*}'"; return 1; }
}
done_ok() {
  log "$(awk -v a="$T_START" -v b="$(now)" 'BEGIN { printf "total %.1fs", b - a }')"
  printf '%s\n' "$HELM_BIN" >&3
  exit 0
}

have_flock() { command -v flock >/dev/null 2>&1; }
# Scratch dirs of killed builds are stale once we hold the lock (a running build holds it).
clean_stale() { rm -rf "${tools_dir}"/.build-helm-* 2>/dev/null || true; }

# --- fast path ------------------------------------------------------------------
if [[ "${ZNS_HELM_REBUILD:-0}" != 1 ]] && check_helm "$HELM_BIN"; then
  log "cached: ${HELM_BIN}"
  done_ok
fi

# --- slow path: one builder at a time ---------------------------------------------
if have_flock; then
  exec 9>"${tools_dir}/.helm.lock"
  if ! flock -n 9; then
    log "another build holds ${tools_dir}/.helm.lock; waiting"
    flock 9
  fi
  clean_stale
  if [[ "${ZNS_HELM_REBUILD:-0}" != 1 ]] && check_helm "$HELM_BIN"; then
    log "built by a concurrent run: ${HELM_BIN}"
    done_ok
  fi
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH"
log "building helm ${HELM_VER} with $(go version | awk '{print $3}')"
log "into ${HELM_BIN}"

WORK=$(mktemp -d "${tools_dir}/.build-helm-${HELM_VER}.XXXXXX") ||
  die "cannot create a scratch directory in ${tools_dir}"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# `go install pkg@version` builds in module mode from helm's own go.mod, outside any
# workspace; pure Go, as helm's release binaries are.
export GOWORK=off CGO_ENABLED=0

# --- resolve: helm's go.mod gives the Go it needs and its client-go version ------------
HELM_LDFLAGS=""
resolve_helm() {
  local json gomod gover client_go
  json=$(go mod download -json "helm.sh/helm/v3@${HELM_VER}") || {
    printf '%s\n' "$json"
    return 1
  }
  gomod=$(printf '%s\n' "$json" | sed -nE 's/^[[:space:]]*"GoMod": "(.*)",?$/\1/p')
  [[ -r "$gomod" ]] || { log "no go.mod for helm.sh/helm/v3 in: ${json}"; return 1; }
  gover=$(sed -nE 's/^go ([0-9.]+).*/\1/p' "$gomod")
  log "helm ${HELM_VER} needs go ${gover:-?}; local is $(go env GOVERSION)"
  # helm's Makefile: major = client-go major + 1, minor = client-go minor (v0.37.0 -> 1.37)
  client_go=$(awk '$1 == "k8s.io/client-go" { print $2; exit }' "$gomod")
  [[ "$client_go" =~ ^v0\.([0-9]+)\. ]] || { log "no k8s.io/client-go v0.x requirement in ${gomod}"; return 1; }
  HELM_LDFLAGS="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VER} -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  local pkg
  for pkg in pkg/lint/rules pkg/chartutil; do
    HELM_LDFLAGS+=" -X helm.sh/helm/v3/${pkg}.k8sVersionMajor=1 -X helm.sh/helm/v3/${pkg}.k8sVersionMinor=${BASH_REMATCH[1]}"
  done
  log "default Kubernetes version of helm template/lint: 1.${BASH_REMATCH[1]} (client-go ${client_go})"
}
step "resolve helm.sh/helm/v3" resolve_helm

build_helm() {
  # GOTOOLCHAIN=local: a too-old Go says so instead of fetching another toolchain.
  GOBIN="$WORK" GOTOOLCHAIN=local go install -trimpath -buildvcs=false -ldflags "$HELM_LDFLAGS" \
    "helm.sh/helm/v3/cmd/helm@${HELM_VER}"
}
step "build helm" build_helm
step "check helm" check_helm "$WORK/helm"

install_helm() { mv -f "$WORK/helm" "$HELM_BIN"; }
step "install" install_helm
log "built: ${HELM_BIN}"
done_ok
