#!/usr/bin/env bash
# hack/qemu/build-xfs-userland.sh: build (once) a small Debian chroot with the zoned-XFS tools and print
# its directory.
#
#   dir=$(hack/qemu/build-xfs-userland.sh)   # -> <cache>/qemu/xfs-userland/<suite>_xfsprogs-<version>
#
# xfsprogs >= 6.15 makes zoned XFS; the host (bookworm) has 6.1. This is a debootstrap --variant=minbase
# chroot of versions.mk's XFS_USERLAND_SUITE with xfsprogs at XFS_USERLAND_XFSPROGS_VERSION (and that
# suite's util-linux, for blkid, mount and blkzone), from this machine's Debian mirror. Nothing is
# installed on the host. The QEMU guest reaches it through run.sh --userland (the host's root, read-only,
# this directory included) and runs its programs with chroot; hack/qemu/capture-zoned-xfs.sh does.
#
# stdout carries exactly one line, the directory; progress goes to stderr. Exit status: 0 built or
# cached; 3 a prerequisite is missing (debootstrap, or the pinned xfsprogs no longer offered); 1 any other
# failure. ZNS_QEMU_REBUILD=1 rebuilds it.
set -euo pipefail
exec 3>&1 1>&2
TOOL_NAME=build-xfs-userland
# shellcheck source=hack/lib/tool-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/tool-common.sh"
missing() { printf '%s: MISSING: %s\n' "$TOOL_NAME" "$*" >&2; exit 3; }

SUITE=$(read_pin XFS_USERLAND_SUITE)
XFSV=$(read_pin XFS_USERLAND_XFSPROGS_VERSION)
root_parent="$cache_root/qemu/xfs-userland"
DIR="$root_parent/${SUITE}_xfsprogs-${XFSV}"

if [[ "${ZNS_QEMU_REBUILD:-0}" != 1 && -x "$DIR/usr/sbin/mkfs.xfs" && -r "$DIR/.zns-done" ]]; then
  printf '%s\n' "$DIR" >&3
  exit 0
fi
((EUID == 0)) || die "must run as root: debootstrap and chroot need it"
command -v debootstrap >/dev/null 2>&1 || missing "debootstrap not found (Debian package: debootstrap)"
mirror=$(debian_mirror) ||
  die "step 'find the Debian mirror' failed: apt-get indextargets names no source for this machine's release"

mkdir -p "$root_parent"
WORK=$(mktemp -d "$root_parent/.build-XXXXXX") || die "cannot create a scratch directory in ${root_parent}"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# logged NAME HINT CMD...: CMD with its output in a log (its last line in the progress lines); on failure
# the log's end and what to do
logged() {
  local name=$1 hint=$2 logf t0
  shift 2
  logf="$WORK/${name//[^a-z0-9]/_}.log"
  t0=$(now)
  if ! heartbeat --log "$logf" "$name" "$hint" "$@"; then
    tail -n 30 "$logf" >&2
    die "step '${name}' failed (the log's last lines above): check that this machine reaches its Debian mirror (${mirror}) and that ${SUITE} still has the packages; run again"
  fi
  log "$(awk -v a="$t0" -v b="$(now)" -v n="$name" 'BEGIN { printf "%-26s %7.1fs", n, b - a }')"
}
logged "debootstrap ${SUITE}" "minbase chroot, a few minutes" debootstrap --variant=minbase "$SUITE" "$WORK/root" "$mirror"
# in the chroot: its own apt, pinned xfsprogs, no recommends; policy-rc.d keeps services down
printf '#!/bin/sh\nexit 101\n' >"$WORK/root/usr/sbin/policy-rc.d"
chmod 0755 "$WORK/root/usr/sbin/policy-rc.d"
in_root() { chroot "$WORK/root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
offered=$(in_root apt-cache madison xfsprogs 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | paste -sd' ' -) || true
if [[ " ${offered} " != *" ${XFSV} "* ]]; then
  missing "${SUITE} offers no xfsprogs ${XFSV} (versions.mk's XFS_USERLAND_XFSPROGS_VERSION); it offers: ${offered:-nothing}. Set the pin to one of those and run again"
fi
logged "install xfsprogs ${XFSV}" "apt-get install in the chroot" in_root apt-get install -y -q --no-install-recommends "xfsprogs=${XFSV}"
in_root apt-get clean
mkdir -p "$WORK/root/mnt/a" "$WORK/root/mnt/b"
in_root dpkg-query -W xfsprogs util-linux mount libc6 >"$WORK/root/.zns-done"
rm -rf "$DIR"
mv "$WORK/root" "$DIR"
log "ready: ${DIR} ($(du -sh "$DIR" | cut -f1)): $(tr '\n' ' ' <"$DIR/.zns-done")"
printf '%s\n' "$DIR" >&3
