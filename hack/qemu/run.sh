#!/usr/bin/env bash
# hack/qemu/run.sh: boot the QEMU test guest, run one command in it, exit with its status.
#
#   hack/qemu/run.sh [options] -- CMD [ARG...]      (--help lists the options and the ZNS_QEMU_* knobs)
#
# The work is hack/qemurun's, in Go (QEMU's command line, the guest's script, the timeout, the report); this
# builds it once for each version of its sources, under $ZNS_CACHE_DIR/bin, and hands the command line over.
set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(cd "$script_dir/../.." && pwd -P)
cache=${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/bin
sum=$(cat "$repo_root"/hack/qemurun/*.go "$repo_root"/hack/qemurun/*.sh | sha256sum | cut -c1-16)
bin="$cache/qemurun-$sum"
if [[ ! -x "$bin" ]]; then
  command -v go >/dev/null || { echo "qemu-run: ERROR: needs Go on PATH to build hack/qemurun" >&2; exit 125; }
  mkdir -p "$cache"
  tmp=$(mktemp "$cache/qemurun.XXXXXX")
  # a temporary name, then a rename: runs that start together never exec a half-written binary
  if ! (cd "$repo_root" && CGO_ENABLED=0 go build -o "$tmp" ./hack/qemurun); then
    rm -f "$tmp"
    echo "qemu-run: ERROR: building hack/qemurun failed (above); 'go build ./hack/qemurun' shows it again" >&2
    exit 125
  fi
  mv -f "$tmp" "$bin"
fi
export ZNS_REPO_ROOT=$repo_root ZNS_QEMU_BUILD_GUEST=$script_dir/build-guest.sh
exec "$bin" "$@"
