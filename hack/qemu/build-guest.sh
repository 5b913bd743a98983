#!/usr/bin/env bash
# hack/qemu/build-guest.sh: build (once) the QEMU test guest and print its directory.
#
#   dir=$(hack/qemu/build-guest.sh)     # -> .../qemu/<kernel-release>_<debian-version>
#
# The guest is Debian's own kernel (pinned in versions.mk), a small
# initramfs (busybox-static, /init, and the kernel modules the tests need:
# null_blk, nvme and its CRC helpers, configfs, virtio-pci, 9p, with a
# modules.dep from `depmod -b`), and a sysroot/ directory holding bash, fio and
# blkzone with their shared libraries, which run.sh shares over 9p.
# The kernel package is fetched with `apt-get download` and unpacked with
# `dpkg -x`: nothing is installed on the host.
#
# Cache: ${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/qemu/
#   debs/                                  downloaded kernel packages (kept: an
#                                          initramfs rebuild does not download again)
#   <kernel-release>_<debian-version>/     vmlinuz (and vmlinux, its ELF payload, for
#                                          QEMU's PVH boot), initramfs.cpio, sysroot/,
#                                          stamp, manifest
# The directory is reused while its stamp matches: a hash of this script, the
# pins, the guest's init, and the path, size and mtime of every host file copied
# into the initramfs (so a host upgrade of fio or its libraries rebuilds it). A
# build happens in a scratch directory renamed into place, serialised with flock.
#
# stdout carries exactly one line, the guest directory; progress goes to stderr.
# Exit status: 0 built or cached; 3 a prerequisite is missing (a host tool or
# the pinned kernel package; the message names the Debian package); 1 any
# other failure.
#
# Environment:
#   ZNS_CACHE_DIR         cache root (see above)
#   ZNS_QEMU_REBUILD=1    rebuild even if the cached guest is current
set -euo pipefail

# stdout is reserved for the guest directory; every tool's output goes to stderr.
exec 3>&1 1>&2

# shared with helm.sh and envtest-assets.sh, so all cached builders agree on the cache root and pin syntax
TOOL_NAME=build-guest
# shellcheck source=hack/lib/tool-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/tool-common.sh"

# exit 3 and this prefix are how test/qemu tells "skip: install X" from a broken build
missing() { printf '%s: MISSING: %s\n' "$TOOL_NAME" "$*" >&2; exit 3; }

T_START=$(now)
# the build logs its own phrase per phase, so it times phases itself rather than through step
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

KPKG=$(read_pin QEMU_GUEST_KERNEL_PACKAGE)
KVER=$(read_pin QEMU_GUEST_KERNEL_VERSION)
[[ "$KPKG" =~ ^linux-image-([0-9][^[:space:]]*)$ ]] || die "QEMU_GUEST_KERNEL_PACKAGE '${KPKG}' is not linux-image-<release>"
KREL=${BASH_REMATCH[1]}

# Modules loaded in the guest; their dependencies come from modules.dep.
# nvme-core looks up the crc64-rocksoft and crct10dif algorithms by name at
# load time, which modules.dep does not record, so their generic
# implementations are listed too; btrfs asks for crc32c (and xxhash64 for
# some file systems) the same way. btrfs and f2fs in zoned mode, and xfs and
# ext4 for the conventional comparison, are what hack/qemu/run.sh --userland
# runs MySQL on; veth, overlay and loop give the pods of a kubelet in the guest their
# interfaces, their root file systems and the loop device the kubelet pins each
# block volume with; virtio_net and netfilter (what kube-proxy's iptables-nft
# rules use) give that node its API server's port forward and its Services;
# virtio_blk its image disk (hack/qemu/run.sh --disk).
MODULES=(null_blk nvme configfs virtio_pci 9pnet_virtio 9p crc64_rocksoft_generic crct10dif_generic
  btrfs f2fs xfs ext4 crc32c_generic xxhash_generic veth overlay loop virtio_net virtio_blk
  nf_tables nft_compat nft_chain_nat nft_nat nft_masq nft_ct nft_reject_ipv4 nft_numgen nft_limit
  nf_conntrack nf_nat xt_conntrack xt_comment xt_mark xt_MASQUERADE xt_addrtype xt_statistic xt_nat
  xt_multiport xt_tcpudp ipt_REJECT nf_reject_ipv4)
# Host programs copied with their libraries. bash runs the project's scripts,
# fio and blkzone are what the tests drive the zoned devices with.
PROGRAMS=(bash fio blkzone)

# --- prerequisites ----------------------------------------------------------------
need() { command -v "$1" >/dev/null 2>&1 || missing "$1 not found (Debian package: $2)"; }
# what the cache check needs; the build's own tools are checked before a build
need ldd libc-bin
need sha256sum coreutils
need fio fio
need blkzone util-linux
BUSYBOX=/bin/busybox
[[ -x "$BUSYBOX" ]] || missing "${BUSYBOX} not found (Debian package: busybox-static)"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
  missing "${BUSYBOX} is dynamically linked; the guest needs the static one (Debian package: busybox-static)"
fi

mkdir -p "$cache_root/qemu/debs" || die "cannot create ${cache_root}/qemu"
qroot=$(cd "$cache_root/qemu" && pwd -P)
GUEST_DIR="$qroot/${KREL}_${KVER}"

# host_files: every host file the initramfs copies (programs, their libraries, busybox).
host_files() {
  local p path
  printf '%s\n' "$BUSYBOX"
  for p in "${PROGRAMS[@]}"; do
    path=$(command -v "$p")
    printf '%s\n' "$path"
    # ldd prints "soname => /path (addr)" and the loader as "/path (addr)"
    ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
  done | sort -u
}

compute_stamp() {
  {
    printf 'kernel %s %s\n' "$KPKG" "$KVER"
    printf 'modules %s\n' "${MODULES[*]}"
    # contents, not paths: a clone elsewhere (as CI makes) reuses the cache.
    # tool-common.sh is left out: it only finds the cache and reads the pins,
    # which are stamped by value, so a change there need not rebuild the guest.
    cat "$script_dir/build-guest.sh" "$script_dir/init" | sha256sum
    local f
    while read -r f; do
      stat -L -c '%n %s %Y' "$f"
    done < <(host_files)
  } | sha256sum | cut -d' ' -f1
}

is_current() {
  [[ "${ZNS_QEMU_REBUILD:-0}" != 1 && -r "$GUEST_DIR/stamp" && -r "$GUEST_DIR/vmlinuz" && -d "$GUEST_DIR/sysroot" &&
    -r "$GUEST_DIR/initramfs.cpio" && "$(cat "$GUEST_DIR/stamp")" == "$STAMP" ]]
}

STAMP=$(compute_stamp)
if is_current; then
  printf '%s\n' "$GUEST_DIR" >&3
  exit 0
fi

# --- slow path: one builder at a time ----------------------------------------------
if command -v flock >/dev/null 2>&1; then
  exec 9>"$qroot/.lock"
  if ! flock -n 9; then
    log "another build holds ${qroot}/.lock; waiting"
    flock 9
  fi
  # holding the lock: scratch dirs of killed builds are stale
  rm -rf "$qroot"/.build-* "$qroot"/.old-* 2>/dev/null || true
  if is_current; then
    printf '%s\n' "$GUEST_DIR" >&3
    exit 0
  fi
fi

need apt-get apt
need dpkg-deb dpkg
need cpio cpio
need depmod kmod
need modprobe kmod
need ldconfig libc-bin

log "building the guest ${KPKG} ${KVER} into ${GUEST_DIR}"
WORK=$(mktemp -d "$qroot/.build-XXXXXX") || die "cannot create a scratch directory in ${qroot}"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- kernel package -----------------------------------------------------------------
DEB="$qroot/debs/${KPKG}_${KVER}_amd64.deb"
if [[ ! -s "$DEB" ]]; then
  t=$(now)
  mkdir -p "$WORK/dl"
  # as root apt drops to _apt for downloads; the scratch dir is root's, so stay root
  if ! (cd "$WORK/dl" && apt-get download -q -o APT::Sandbox::User=root "${KPKG}=${KVER}") >"$WORK/dl.log" 2>&1; then
    cat "$WORK/dl.log" >&2
    avail=$(apt-cache madison "$KPKG" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | paste -sd' ' -)
    missing "cannot download ${KPKG}=${KVER} with apt-get (available versions: ${avail:-none; run apt-get update, or pick a kernel with apt-cache search '^linux-image-6\.1\.0-[0-9]+-amd64\$'}); update the pin in versions.mk"
  fi
  mv "$WORK/dl/${KPKG}_"*.deb "$DEB.tmp" && mv "$DEB.tmp" "$DEB"
  log "downloaded $(basename "$DEB") in $(elapsed "$t")"
fi

t=$(now)
KX="$WORK/kernel"
dpkg -x "$DEB" "$KX" || die "dpkg -x ${DEB} failed"
MODDIR="$KX/lib/modules/$KREL"
[[ -r "$KX/boot/vmlinuz-$KREL" && -d "$MODDIR" ]] || die "${DEB} has no boot/vmlinuz-${KREL} or lib/modules/${KREL}"
depmod -b "$KX" "$KREL" || die "depmod -b ${KX} ${KREL} failed"
log "unpacked the kernel in $(elapsed "$t")"

# vmlinuz is a bzImage whose payload the guest itself decompresses (xz here),
# which takes ~10 s under software emulation. QEMU boots the uncompressed ELF
# directly through its PVH entry point when the kernel has CONFIG_PVH, so the
# payload is unpacked once here. Without PVH, or if the payload cannot be
# found, run.sh boots vmlinuz, only slower.
extract_vmlinux() {
  local img=$1 out=$2 magic pos cmd
  grep -qx 'CONFIG_PVH=y' "$KX/boot/config-$KREL" 2>/dev/null || { log "no CONFIG_PVH: booting the bzImage (slower)"; return 1; }
  for magic in '\xfd7zXZ\x00:xz -dc' '\x1f\x8b\x08:gzip -dc' '\x28\xb5\x2f\xfd:zstd -dcq'; do
    cmd=${magic#*:}
    command -v "${cmd%% *}" >/dev/null 2>&1 || continue
    pos=$(LC_ALL=C grep -obUaP "${magic%%:*}" "$img" 2>/dev/null | head -n 1 | cut -d: -f1) || true
    [[ -n "$pos" ]] || continue
    # the payload is followed by the decompressor's trailer: its complaint is expected
    tail -c "+$((pos + 1))" "$img" | $cmd >"$out" 2>/dev/null || true
    if [[ "$(head -c 4 "$out" | od -An -c | tr -d ' ')" == '177ELF' ]]; then
      return 0
    fi
  done
  log "could not unpack the ELF kernel from ${img}: booting the bzImage (slower)"
  rm -f "$out"
  return 1
}
t=$(now)
if extract_vmlinux "$KX/boot/vmlinuz-$KREL" "$WORK/vmlinux"; then
  log "unpacked vmlinux for PVH boot in $(elapsed "$t")"
fi

# --- root filesystem ----------------------------------------------------------------
# Two parts. The initramfs holds only busybox, the modules and /init: the
# kernel unpacks it before init runs and, under software emulation, every MiB
# costs boot time (fio's libraries, ceph's among them, are ~80 MiB: 2 s).
# sysroot/ holds the programs and their libraries at their host paths; run.sh
# shares it read-only over 9p and init mounts it at /sysroot. The initramfs
# links the programs and the ELF interpreter into /sysroot, and its
# ld.so.cache lists /sysroot's library directories, so the programs run
# unchanged and read only the pages they touch.
t=$(now)
OUT="$WORK/out"
ROOT="$WORK/root"
SYSROOT="$ROOT/sysroot" # moved to $OUT/sysroot once ldconfig has seen it
mkdir -p "$OUT" "$ROOT"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,etc,root,mnt,lib64} "$SYSROOT"
cp "$BUSYBOX" "$ROOT/bin/busybox"
while read -r applet; do
  # --list-full gives each applet's usual place (usr/bin/env, sbin/modprobe, ...)
  mkdir -p "$ROOT/$(dirname "$applet")"
  [[ -e "$ROOT/$applet" ]] || ln -s /bin/busybox "$ROOT/$applet"
done < <("$BUSYBOX" --list-full)

while read -r f; do
  [[ "$f" == "$BUSYBOX" ]] && continue
  mkdir -p "$SYSROOT$(dirname "$f")"
  cp -L "$f" "$SYSROOT$f"
done < <(host_files)
loader=$(ldd "$(command -v bash)" | awk '$1 ~ /^\/.*ld-linux/ { print $1 }')
[[ -n "$loader" ]] || die "cannot find the ELF interpreter in: ldd $(command -v bash)"
mkdir -p "$ROOT$(dirname "$loader")"
ln -sfn "/sysroot$loader" "$ROOT$loader"
# scripts say #!/usr/bin/env bash or #!/bin/bash: every name must reach the program
for p in "${PROGRAMS[@]}"; do
  path=$(command -v "$p")
  for d in /bin /usr/bin "$(dirname "$path")"; do
    rm -f "$ROOT$d/$p"
    ln -s "/sysroot$path" "$ROOT$d/$p"
  done
done
find "$SYSROOT" -name '*.so*' -type f -printf '%h\n' | sed "s|^$ROOT||" | sort -u >"$ROOT/etc/ld.so.conf"
ldconfig -r "$ROOT" || die "ldconfig -r ${ROOT} failed"
mv "$SYSROOT" "$OUT/sysroot"

# kernel modules: the closure of MODULES, as modprobe resolves it
GMOD="$ROOT/lib/modules/$KREL"
mkdir -p "$GMOD"
for m in "${MODULES[@]}"; do
  modprobe -d "$KX" -S "$KREL" --show-depends "$m" >>"$WORK/deps" ||
    die "module ${m} is not in ${KPKG}: is it built into this kernel, or missing?"
done
awk '$1 == "insmod" { print $2 }' "$WORK/deps" | sort -u | while read -r ko; do
  rel=${ko#"$MODDIR/"}
  mkdir -p "$GMOD/$(dirname "$rel")"
  cp "$ko" "$GMOD/$rel"
done
for f in modules.builtin modules.builtin.modinfo modules.order; do
  [[ -r "$MODDIR/$f" ]] && cp "$MODDIR/$f" "$GMOD/"
done
depmod -b "$ROOT" "$KREL" || die "depmod -b for the guest failed"
n_mods=$(find "$GMOD" -name '*.ko' | wc -l)

install -m 0755 "$script_dir/init" "$ROOT/init"
log "assembled the root (initramfs $(du -sh "$ROOT" | cut -f1), sysroot $(du -sh "$OUT/sysroot" | cut -f1), ${n_mods} modules) in $(elapsed "$t")"

# --- output ------------------------------------------------------------------------
t=$(now)
# Uncompressed: under software emulation gunzip in the guest costs more than
# QEMU loading the larger file.
(cd "$ROOT" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) >"$OUT/initramfs.cpio" ||
  die "cpio failed"
cp "$KX/boot/vmlinuz-$KREL" "$OUT/vmlinuz"
[[ -s "$WORK/vmlinux" ]] && mv "$WORK/vmlinux" "$OUT/vmlinux"
{
  (cd "$ROOT" && find . -mindepth 1 \( -type f -o -type l \) | LC_ALL=C sort)
  (cd "$OUT" && find sysroot -type f | LC_ALL=C sort | sed 's|^|9p:|')
} >"$OUT/manifest"
printf '%s\n' "$KREL" >"$OUT/kernel-release"
printf '%s\n' "$STAMP" >"$OUT/stamp"
log "wrote initramfs.cpio ($(du -h "$OUT/initramfs.cpio" | cut -f1)) in $(elapsed "$t")"

if [[ -e "$GUEST_DIR" ]]; then
  old=$(mktemp -d "$qroot/.old-XXXXXX")
  mv "$GUEST_DIR" "$old/"
  mv "$OUT" "$GUEST_DIR"
  rm -rf "$old"
else
  mv "$OUT" "$GUEST_DIR"
fi
log "guest ready in $(elapsed "$T_START"): ${GUEST_DIR}"
printf '%s\n' "$GUEST_DIR" >&3
