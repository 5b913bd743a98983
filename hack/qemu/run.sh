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
# shellcheck source=hack/lib/go-program.sh
source "$repo_root/hack/lib/go-program.sh"
# in the repository (go build), but the command runs where it was given: its paths may be relative
bin=$(cd "$repo_root" && mapfile -t sources < <(go_sources hack/qemurun/*.go) &&
  go_program qemu-run hack/qemurun "${sources[@]}" hack/qemurun/*.sh) || exit 125
export ZNS_REPO_ROOT=$repo_root ZNS_QEMU_BUILD_GUEST=$script_dir/build-guest.sh
exec "$bin" "$@"
