#!/usr/bin/env bash
# hack/qemu/build-zloop-module.sh: build (once) zloop.ko for the current-kernel guest and print its path.
#
#   ko=$(hack/qemu/build-zloop-module.sh)   # -> <cache>/qemu/zloop-module/<release>_<version>/zloop.ko
#   ZLOOP_MODULE=$ko ZNS_QEMU_KERNEL=current go test ./operator/internal/qemuguest -run TestGuestSuite
#   ko=$(hack/qemu/build-zloop-module.sh --for-guest "$(hack/qemu/build-guest.sh)")
#
# --for-guest DIR builds it only when the guest built in DIR needs it: its kernel is the pinned current one and
# has no zloop of its own. Otherwise it prints nothing, says why on stderr and exits 0 (a kernel with
# CONFIG_BLK_DEV_ZONED_LOOP needs no module; one older than 6.15, or another release, cannot use this one).
# make test (hack/test.sh) and make qemu call it so: about a minute cold, the cached path 0.1 s.
#
# Debian builds its kernels without CONFIG_BLK_DEV_ZONED_LOOP (7.3 included), so the guest has no zloop.
# zloop is one source file (drivers/block/zloop.c, Linux >= 6.15), so this builds it out of tree against the
# pinned current kernel (versions.mk's QEMU_GUEST_KERNEL_CURRENT_*): a debootstrap --variant=minbase chroot of
# ZLOOP_BUILD_SUITE with the kernel's suite added, linux-headers-<release> and linux-source-<major.minor> at
# the kernel's version (their compiler, the one the kernel was built with, comes with the headers), then
# `make -C .../build M=...`. The module is unsigned: Debian's kernel loads it (CONFIG_MODULE_SIG_FORCE is not
# set) and marks itself tainted. hack/zloop-zoned.sh loads it when ZLOOP_MODULE names it. Opt-in, for trying
# zloop here; a kernel with CONFIG_BLK_DEV_ZONED_LOOP needs none of it.
#
# stdout carries exactly one line, the module's path; progress goes to stderr. Exit status: 0 built or
# cached; 3 a prerequisite is missing (debootstrap, or the pinned packages no longer offered); 1 any other
# failure. ZNS_QEMU_REBUILD=1 rebuilds it. The chroot (about 600 MiB with the kernel source package) is kept
# in <cache>/qemu/zloop-module/chroot-<suite> for the next build.
set -euo pipefail
exec 3>&1 1>&2
TOOL_NAME=build-zloop-module
# shellcheck source=hack/lib/tool-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/tool-common.sh"
missing() { printf '%s: MISSING: %s\n' "$TOOL_NAME" "$*" >&2; exit 3; }

KPKG=$(read_pin QEMU_GUEST_KERNEL_CURRENT_PACKAGE)
KVER=$(read_pin QEMU_GUEST_KERNEL_CURRENT_VERSION)
KSUITE=$(read_pin QEMU_GUEST_KERNEL_CURRENT_SUITE)
SUITE=$(read_pin ZLOOP_BUILD_SUITE)
[[ "$KPKG" =~ ^linux-image-(([0-9]+)\.([0-9]+)[^[:space:]]*)$ ]] ||
  die "QEMU_GUEST_KERNEL_CURRENT_PACKAGE '${KPKG}' is not linux-image-<release>"
KREL=${BASH_REMATCH[1]}
SRCPKG="linux-source-${BASH_REMATCH[2]}.${BASH_REMATCH[3]}"
((BASH_REMATCH[2] > 6 || (BASH_REMATCH[2] == 6 && BASH_REMATCH[3] >= 15))) ||
  die "zloop needs Linux >= 6.15; the pinned current kernel is ${KREL}"

case ${1:-} in
  "") ;;
  --for-guest)
    guest=${2:?--for-guest needs the guest directory (hack/qemu/build-guest.sh prints it)}
    [[ -r "$guest/kernel-release" && -r "$guest/config" ]] ||
      die "--for-guest ${guest}: no kernel-release and config there (is it a directory hack/qemu/build-guest.sh made?)"
    grel=$(<"$guest/kernel-release")
    if grep -Eq '^CONFIG_BLK_DEV_ZONED_LOOP=[ym]$' "$guest/config"; then
      log "the guest's kernel ${grel} has zloop (CONFIG_BLK_DEV_ZONED_LOOP): no module needed"
      exit 0
    fi
    if [[ "$grel" != "$KREL" ]]; then
      log "the guest runs ${grel}, not the pinned current kernel ${KREL} that zloop.ko is built for: no module (its zloop tests skip and say why)"
      exit 0
    fi
    ;;
  *) die "usage: $0 [--for-guest GUEST_DIR]" ;;
esac

top="$cache_root/qemu/zloop-module"
OUT="$top/${KREL}_${KVER}"
ROOT="$top/chroot-${SUITE}"
if [[ "${ZNS_QEMU_REBUILD:-0}" != 1 && -s "$OUT/zloop.ko" ]]; then
  printf '%s\n' "$OUT/zloop.ko" >&3
  exit 0
fi
((EUID == 0)) || die "must run as root: debootstrap and chroot need it"
command -v debootstrap >/dev/null 2>&1 || missing "debootstrap not found (Debian package: debootstrap)"
mirror=$(debian_mirror) ||
  die "step 'find the Debian mirror' failed: apt-get indextargets names no source for this machine's release"
mkdir -p "$top"
LOGS=$(mktemp -d "$top/.logs-XXXXXX") || die "cannot create a log directory in ${top}"
trap 'rm -rf "$LOGS"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# logged NAME HINT CMD...: CMD with its output in a log (its last line in the progress lines); on failure
# the log's end and what to do
logged() {
  local name=$1 hint=$2 logf t0
  shift 2
  logf="$LOGS/${name//[^a-z0-9]/_}.log"
  t0=$(now)
  if ! heartbeat --log "$logf" "$name" "$hint" "$@"; then
    tail -n 30 "$logf" >&2
    die "step '${name}' failed (the log's last lines above): fix what it says and run again (finished steps are kept)"
  fi
  log "$(awk -v a="$t0" -v b="$(now)" -v n="$name" 'BEGIN { printf "%-30s %7.1fs", n, b - a }')"
}
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive "$@"; }

if [[ ! -x "$ROOT/usr/bin/apt-get" || ! -e "$ROOT/.zns-debootstrap-done" ]]; then
  rm -rf "$ROOT"
  logged "debootstrap ${SUITE}" "minbase chroot, about a minute" debootstrap --variant=minbase "$SUITE" "$ROOT" "$mirror"
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod 0755 "$ROOT/usr/sbin/policy-rc.d"
  : >"$ROOT/.zns-debootstrap-done"
fi
printf 'deb %s %s main\n' "$mirror" "$KSUITE" >"$ROOT/etc/apt/sources.list.d/zns-kernel.list"
logged "apt-get update" "" in_root apt-get update -q
for p in "linux-headers-${KREL}" "$SRCPKG"; do
  offered=$(in_root apt-cache madison "$p" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | paste -sd' ' -) || true
  [[ " ${offered} " == *" ${KVER} "* ]] ||
    missing "${KSUITE} offers no ${p} ${KVER} (the pinned current kernel's version); it offers: ${offered:-nothing}. Update QEMU_GUEST_KERNEL_CURRENT_* in versions.mk"
done
logged "install headers ${KVER}" "linux-headers, its compiler, make, binutils" \
  in_root apt-get install -y -q --no-install-recommends "linux-headers-${KREL}=${KVER}" make binutils xz-utils
src_deb=$(find "$ROOT/root" -maxdepth 1 -name "${SRCPKG}_*.deb" | head -n 1)
if [[ -z "$src_deb" ]]; then
  # as root apt drops to _apt for downloads, which cannot write to /root
  logged "download ${SRCPKG}" "about 170 MB" in_root sh -c "cd /root && apt-get download -q -o APT::Sandbox::User=root '${SRCPKG}=${KVER}'"
  src_deb=$(find "$ROOT/root" -maxdepth 1 -name "${SRCPKG}_*.deb" | head -n 1)
fi
[[ -n "$src_deb" ]] || die "step 'download ${SRCPKG}' left no ${SRCPKG}_*.deb in ${ROOT}/root"

B="$ROOT/root/zloop-build"
rm -rf "$B" && mkdir -p "$B"
extract_zloop_c() {
  dpkg-deb --fsys-tarfile "$src_deb" | tar -xO --wildcards "*/${SRCPKG}.tar.xz" | xz -dc |
    tar -x -C "$B" --wildcards --strip-components=3 '*/drivers/block/zloop.c'
}
logged "extract zloop.c" "decompressing the kernel source" extract_zloop_c
[[ -s "$B/zloop.c" ]] || die "${src_deb} holds no drivers/block/zloop.c: is ${KREL} older than 6.15?"
echo 'obj-m := zloop.o' >"$B/Makefile"
# objtool reads /proc/self/limits
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc" || die "step 'mount /proc in ${ROOT}' failed"
trap 'umount "$ROOT/proc" 2>/dev/null; rm -rf "$LOGS"' EXIT
logged "make zloop.ko" "" in_root make -C "/usr/lib/modules/${KREL}/build" M=/root/zloop-build modules
vermagic=$(modinfo -F vermagic "$B/zloop.ko") || die "modinfo ${B}/zloop.ko failed"
[[ "$vermagic" == "$KREL "* ]] || die "zloop.ko has vermagic '${vermagic}', not for ${KREL}"
mkdir -p "$OUT"
cp "$B/zloop.ko" "$OUT/zloop.ko.tmp" && mv "$OUT/zloop.ko.tmp" "$OUT/zloop.ko"
log "built ${OUT}/zloop.ko (vermagic ${vermagic})"
printf '%s\n' "$OUT/zloop.ko" >&3
