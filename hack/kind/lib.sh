# shellcheck shell=bash
# hack/kind/lib.sh: helpers shared by hack/kind/*.sh (sourced, never run).
#
# The caller sets LOG_PREFIX before sourcing. Conventions (as hack/envtest-assets.sh):
# progress and step timings on stderr, results on stdout, a cache under
#   ${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/kind
# written atomically (scratch dir + rename) under flock(1).

KIND_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "${KIND_LIB_DIR}/../.." && pwd -P)
VERSIONS_FILE="${REPO_ROOT}/versions.mk"

log() { printf '%s: %s\n' "${LOG_PREFIX:-kind}" "$*" >&2; }
warn() { printf '%s: WARNING: %s\n' "${LOG_PREFIX:-kind}" "$*" >&2; }
die() { printf '%s: ERROR: %s\n' "${LOG_PREFIX:-kind}" "$*" >&2; exit 1; }

now() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then printf '%s' "${EPOCHREALTIME/,/.}"; else date +%s; fi
}
# elapsed T0: seconds since T0, one decimal
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# shellcheck source=hack/lib/progress.sh
source "${REPO_ROOT}/hack/lib/progress.sh"
explain_failures

# step [--own-progress] NAME CMD...: run CMD (saying every 30 s that it still runs, unless CMD reports its
# own progress), then log how long it took; a failure
# stops the script.
step() {
  local ticker=heartbeat
  if [[ "$1" == --own-progress ]]; then
    ticker=""
    shift
  fi
  local name=$1 t0
  shift
  t0=$(now)
  ${ticker:+"$ticker" "$name" ""} "$@" || die "step '${name}' failed: the output above says why; fix that and run again (finished parts are cached)"
  log "$(printf '%-34s %7ss' "$name" "$(elapsed "$t0")")"
}

# read_pin NAME: the value of a `NAME := value` line in versions.mk.
read_pin() {
  local v
  [[ -r "$VERSIONS_FILE" ]] || die "cannot read ${VERSIONS_FILE}"
  v=$(sed -nE "s/^[[:space:]]*$1[[:space:]]*[:?]?=[[:space:]]*([^[:space:]#]+).*/\\1/p" "$VERSIONS_FILE" | tail -n 1)
  [[ -n "$v" ]] || die "${VERSIONS_FILE} has no '$1 := <value>' line"
  printf '%s' "$v"
}

# cache_root: ${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/kind, created, absolute.
cache_root() {
  local root
  if [[ -n "${ZNS_CACHE_DIR:-}" ]]; then
    root=$ZNS_CACHE_DIR
  elif [[ -n "${XDG_CACHE_HOME:-}" ]]; then
    root=$XDG_CACHE_HOME/zns-mysql
  elif [[ -n "${HOME:-}" ]]; then
    root=$HOME/.cache/zns-mysql
  else
    die "no cache directory: set ZNS_CACHE_DIR, XDG_CACHE_HOME or HOME"
  fi
  mkdir -p "$root/kind" || die "cannot create ${root}/kind"
  (cd "$root/kind" && pwd -P)
}

have_flock() { command -v flock >/dev/null 2>&1; }

# lock_file FILE [FD]: hold FILE (on FD, default 9) for the rest of the (sub)shell; waits if another run
# holds it.
lock_file() {
  have_flock || return 0
  local fd=${2:-9}
  eval "exec ${fd}>\"\$1\""
  if ! flock -n "$fd"; then
    log "another run holds $1; waiting"
    flock "$fd"
  fi
}
# lock_dir DIR: lock_file DIR/.lock on fd 9.
lock_dir() { lock_file "$1/.lock" 9; }

# Go builds run outside any workspace, with the local toolchain only (no toolchain downloads).
go_env() {
  command -v go >/dev/null 2>&1 || die "go is not on PATH"
  export GOWORK=off GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
}

# go_mod_dir MODULE@VERSION: download (checksum-verified) and print the module's directory.
go_mod_dir() {
  local json dir
  json=$(go mod download -json "$1" 2>&1) || true
  dir=$(printf '%s\n' "$json" | sed -nE 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')
  if [[ -z "$dir" || ! -d "$dir" ]]; then
    printf '%s\n' "$json" >&2
    return 1
  fi
  printf '%s' "$dir"
}

# kind_binary: build (once) sigs.k8s.io/kind at $KIND_VERSION into the cache; print its path.
kind_binary() {
  local ver root dir work
  ver=$(read_pin KIND_VERSION)
  root=$(cache_root)
  dir="${root}/bin/kind-${ver}"
  if [[ -x "$dir/kind" ]] && "$dir/kind" version 2>/dev/null | grep -q "^kind ${ver} "; then
    printf '%s' "$dir/kind"
    return 0
  fi
  mkdir -p "${root}/bin"
  (
    lock_dir "${root}/bin"
    if [[ -x "$dir/kind" ]]; then exit 0; fi
    go_env
    rm -rf "${root}/bin"/.build-kind-* 2>/dev/null || true
    work=$(mktemp -d "${root}/bin/.build-kind-${ver}.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    log "building sigs.k8s.io/kind@${ver}"
    CGO_ENABLED=0 GOBIN="$work" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kind@${ver}" >&2 || exit 1
    "$work/kind" version >&2 || exit 1
    mv "$work" "$dir"
  ) || die "building kind ${ver} failed"
  printf '%s' "$dir/kind"
}
