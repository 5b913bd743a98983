# hack/lib/tool-common.sh: what the cached tool builders share (envtest-assets.sh, helm.sh, qemu/build-guest.sh).
# Source it after setting TOOL_NAME; it defines log, die, now, step, read_pin and cache_root.
# shellcheck shell=bash

log() { printf '%s: %s\n' "$TOOL_NAME" "$*" >&2; }
die() { printf '%s: ERROR: %s\n' "$TOOL_NAME" "$*" >&2; exit 1; }

now() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then printf '%s' "${EPOCHREALTIME/,/.}"; else date +%s; fi
}

# shellcheck source=hack/lib/progress.sh
source "$(dirname "${BASH_SOURCE[0]}")/progress.sh"
explain_failures

# step [--own-progress] NAME CMD...: run CMD (saying every 30 s that it still runs, unless CMD reports its
# own progress), then log how long it took.
step() {
  local ticker=heartbeat
  if [[ "$1" == --own-progress ]]; then
    ticker=""
    shift
  fi
  local name=$1 t0 t1
  shift
  t0=$(now)
  ${ticker:+"$ticker" "$name" ""} "$@" || die "step '${name}' failed: the output above says why; fix that and run again (finished parts are cached)"
  t1=$(now)
  log "$(awk -v a="$t0" -v b="$t1" -v n="$name" 'BEGIN { printf "%-26s %7.1fs", n, b - a }')"
}

versions_file="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)/versions.mk"
[[ -r "$versions_file" ]] || die "cannot read ${versions_file}"

# read_pin NAME: the value of a `NAME := value` line in versions.mk, the one place pins live.
read_pin() {
  local v
  v=$(sed -nE "s/^[[:space:]]*$1[[:space:]]*[:?]?=[[:space:]]*([^[:space:]#]+).*/\\1/p" "$versions_file" | tail -n 1)
  [[ -n "$v" ]] || die "${versions_file} has no '$1 := <value>' line"
  printf '%s' "$v"
}

# shellcheck disable=SC2034 # cache_root is used by the scripts that source this file
# cache_root: ZNS_CACHE_DIR, else the XDG cache, else ~/.cache; it survives between runs on one machine.
if [[ -n "${ZNS_CACHE_DIR:-}" ]]; then
  cache_root=$ZNS_CACHE_DIR
elif [[ -n "${XDG_CACHE_HOME:-}" ]]; then
  cache_root=$XDG_CACHE_HOME/zns-mysql
elif [[ -n "${HOME:-}" ]]; then
  cache_root=$HOME/.cache/zns-mysql
else
  die "no cache directory: set ZNS_CACHE_DIR, XDG_CACHE_HOME or HOME"
fi

# debian_mirror: the URI of the Debian archive this machine's apt uses for its own release (what a private
# apt configuration or debootstrap of another suite should fetch from), e.g. .../debian/. Fails when apt
# names no source for the release.
debian_mirror() {
  local codename="" uri
  # shellcheck disable=SC1091 # the machine's own
  codename=$(. /etc/os-release 2>/dev/null && printf '%s' "${VERSION_CODENAME:-}")
  [[ -n "$codename" ]] || return 1
  # shellcheck disable=SC2016 # $(...) is apt's own format syntax
  uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null | awk -v c="$codename" '$2 == c { print $1; exit }')
  [[ -n "$uri" ]] || return 1
  printf '%s' "$uri"
}
