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
#                                          stamp, manifest, kernel-release, config
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
#   ZNS_QEMU_KERNEL       which pinned kernel (versions.mk): current (the default:
#                         QEMU_GUEST_KERNEL_CURRENT_*, Debian's newest packaged kernel, from a newer
#                         suite than the host's, fetched through a private apt configuration in the
#                         cache: <cache>/qemu/apt/<suite>/) or 6.1 (bookworm's QEMU_GUEST_KERNEL_*,
#                         the smaller opt-in tier of the oldest supported kernel)
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

# KSUITE is empty for a kernel the host's own apt sources offer (bookworm's 6.1)
case ${ZNS_QEMU_KERNEL:-current} in
  current)
    KPKG=$(read_pin QEMU_GUEST_KERNEL_CURRENT_PACKAGE) KVER=$(read_pin QEMU_GUEST_KERNEL_CURRENT_VERSION)
    KSUITE=$(read_pin QEMU_GUEST_KERNEL_CURRENT_SUITE)
    ;;
  6.1) KPKG=$(read_pin QEMU_GUEST_KERNEL_PACKAGE) KVER=$(read_pin QEMU_GUEST_KERNEL_VERSION) KSUITE="" ;;
  *) die "ZNS_QEMU_KERNEL='${ZNS_QEMU_KERNEL}': say current (the default, versions.mk's QEMU_GUEST_KERNEL_CURRENT_*) or 6.1 (QEMU_GUEST_KERNEL_*)" ;;
esac
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
MODULES=(null_blk nvme configfs virtio_pci 9pnet_virtio 9p
  btrfs f2fs xfs ext4 veth overlay loop virtio_net virtio_blk
  nf_tables nft_compat nft_chain_nat nft_nat nft_masq nft_ct nft_reject_ipv4 nft_numgen nft_limit
  nf_conntrack nf_nat xt_conntrack xt_comment xt_mark xt_MASQUERADE xt_addrtype xt_statistic xt_nat
  xt_multiport xt_tcpudp ipt_REJECT nf_reject_ipv4)
# Taken when the kernel has them, skipped when it has not: the CRC helpers that 6.1 looks up by name
# (from 6.14 on the CRC code is a built-in library and these modules are gone), and zloop (Linux >= 6.15
# with CONFIG_BLK_DEV_ZONED_LOOP; Debian's kernels, 7.3 included, are built without it:
# hack/zloop-zoned.sh says so in the guest).
OPTIONAL_MODULES=(crc64_rocksoft_generic crct10dif_generic crc32c_generic xxhash_generic zloop)
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
    printf 'modules %s optional %s\n' "${MODULES[*]}" "${OPTIONAL_MODULES[*]}"
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
# apt_k ARGS...: apt-get or apt-cache (first argument) with the kernel's apt configuration: the host's own
# for 6.1, else a private one (its own sources, lists, cache and an empty dpkg status) under
# $qroot/apt/<suite>/, so that nothing of the host's apt changes.
APTDIR="$qroot/apt/${KSUITE:-host}"
apt_k() {
  local tool=$1
  shift
  if [[ -z "$KSUITE" ]]; then
    "$tool" -o APT::Sandbox::User=root "$@"
    return
  fi
  "$tool" -o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$APTDIR/sources.list.d" \
    -o Dir::State::Lists="$APTDIR/lists" -o Dir::State::status="$APTDIR/status" -o Dir::Cache="$APTDIR/cache" \
    -o Dir::Etc::preferencesparts="$APTDIR/preferences.d" -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}
if [[ -n "$KSUITE" ]]; then
  mkdir -p "$APTDIR"/{sources.list.d,preferences.d,lists/partial,cache/archives/partial} ||
    die "cannot create the private apt directory ${APTDIR}"
  [[ -e "$APTDIR/status" ]] || : >"$APTDIR/status"
  mirror=$(debian_mirror) ||
    die "step 'find the Debian mirror' failed: apt-get indextargets names no source for this machine's release; add one to /etc/apt/sources.list.d (a Debian mirror's main component)"
  printf '%s\n' "# written by hack/qemu/build-guest.sh for ${KPKG} ${KVER} (versions.mk)" "Types: deb" \
    "URIs: ${mirror}" "Suites: ${KSUITE}" "Components: main" \
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" >"$APTDIR/sources.list.d/kernel.sources"
fi
# apt_k_update: the private lists, fetched when missing or when they lack the pinned version
apt_k_update() {
  [[ -n "$KSUITE" ]] || return 0
  local offered
  # madison pads its version column: compare the versions alone
  offered=$(apt_k apt-cache madison "$KPKG" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }') || true
  if [[ $'\n'"$offered"$'\n' != *$'\n'"$KVER"$'\n'* ]]; then
    t=$(now)
    apt_k apt-get update -q >"$WORK/update.log" 2>&1 || {
      cat "$WORK/update.log" >&2
      die "step 'apt-get update of ${KSUITE}' failed (above): check that this machine reaches its Debian mirror and that /usr/share/keyrings/debian-archive-keyring.gpg (Debian package debian-archive-keyring) knows ${KSUITE}'s key"
    }
    log "fetched the ${KSUITE} package lists in $(elapsed "$t")"
  fi
}
# kernel_debs: the package and what it depends on at exactly its version (7.x splits the kernel into
# linux-image-, linux-base-, linux-binary- and linux-modules-<release>; 6.1 is one package)
kernel_debs() {
  printf '%s\n' "$KPKG"
  apt_k apt-cache show "${KPKG}=${KVER}" 2>/dev/null | awk -v v="$KVER" '
    /^Depends:/ {
      sub(/^Depends: */, "")
      n = split($0, dep, /, */)
      for (i = 1; i <= n; i++) if (split(dep[i], w, " ") == 3 && w[1] ~ /^linux-/ && w[2] == "(=" && w[3] == v ")") print w[1]
      exit
    }'
}
# the list of packages is kept beside them, so that a cached kernel needs no apt at all
DEPS_LIST="$qroot/debs/${KPKG}_${KVER}_amd64.deps"
have_debs() {
  local p
  [[ -s "$DEPS_LIST" ]] || return 1
  while read -r p; do [[ -s "$qroot/debs/${p}_${KVER}_amd64.deb" ]] || return 1; done <"$DEPS_LIST"
}
if ! have_debs; then
  apt_k_update
  mapfile -t pkgs < <(kernel_debs)
  t=$(now)
  mkdir -p "$WORK/dl"
  for p in "${pkgs[@]}"; do
    deb="$qroot/debs/${p}_${KVER}_amd64.deb"
    [[ -s "$deb" ]] && continue
    log "downloading ${p}=${KVER}${KSUITE:+ from ${KSUITE}}"
    # as root apt drops to _apt for downloads; the scratch dir is root's, so stay root
    if ! (cd "$WORK/dl" && heartbeat --log "$WORK/dl.log" "download ${p}" "apt-get download" apt_k apt-get download -q "${p}=${KVER}"); then
      cat "$WORK/dl.log" >&2
      avail=$(apt_k apt-cache madison "$p" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | paste -sd' ' -)
      missing "cannot download ${p}=${KVER} with apt-get${KSUITE:+ from ${KSUITE}} (available versions: ${avail:-none; run apt-get update, or pick a kernel with apt-cache search '^linux-image-[0-9].*-amd64\$'}); update the pin in versions.mk"
    fi
    mv "$WORK/dl/${p}_"*.deb "$deb.tmp" && mv "$deb.tmp" "$deb"
  done
  printf '%s\n' "${pkgs[@]}" >"$DEPS_LIST"
  log "downloaded ${pkgs[*]} in $(elapsed "$t")"
fi
DEBS=()
mapfile -t pkgs <"$DEPS_LIST"
for p in "${pkgs[@]}"; do DEBS+=("$qroot/debs/${p}_${KVER}_amd64.deb"); done

t=$(now)
KX="$WORK/kernel"
for deb in "${DEBS[@]}"; do
  [[ -s "$deb" ]] || die "${deb} is missing: remove ${DEPS_LIST} and run again to download it"
  dpkg -x "$deb" "$KX" || die "dpkg -x ${deb} failed: remove it from ${qroot}/debs and run again to download it anew"
done
# 7.x packages put everything under usr/lib/modules/<release>/ (vmlinuz and config too), 6.1 under
# boot/ and lib/modules/: depmod -b and modprobe -d look in lib/modules
if [[ -d "$KX/usr/lib/modules/$KREL" && ! -e "$KX/lib" ]]; then ln -s usr/lib "$KX/lib"; fi
MODDIR="$KX/lib/modules/$KREL"
KIMG="$KX/boot/vmlinuz-$KREL" KCONFIG="$KX/boot/config-$KREL"
[[ -r "$KIMG" ]] || KIMG="$MODDIR/vmlinuz"
[[ -r "$KCONFIG" ]] || KCONFIG="$MODDIR/config"
[[ -r "$KIMG" && -d "$MODDIR" ]] ||
  die "${DEBS[*]} hold no boot/vmlinuz-${KREL} nor lib/modules/${KREL}/vmlinuz: is the pin a kernel image package?"
depmod -b "$KX" "$KREL" || die "depmod -b ${KX} ${KREL} failed"
log "unpacked the kernel in $(elapsed "$t")"

# vmlinuz is a bzImage whose payload the guest itself decompresses (xz here),
# which takes ~10 s under software emulation. QEMU boots the uncompressed ELF
# directly through its PVH entry point when the kernel has CONFIG_PVH, so the
# payload is unpacked once here. Without PVH, or if the payload cannot be
# found, run.sh boots vmlinuz, only slower.
extract_vmlinux() {
  local img=$1 out=$2 magic pos cmd
  grep -qx 'CONFIG_PVH=y' "$KCONFIG" 2>/dev/null || { log "no CONFIG_PVH: booting the bzImage (slower)"; return 1; }
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
if extract_vmlinux "$KIMG" "$WORK/vmlinux"; then
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
skipped=()
for m in "${OPTIONAL_MODULES[@]}"; do
  modprobe -d "$KX" -S "$KREL" --show-depends "$m" >>"$WORK/deps" 2>/dev/null || skipped+=("$m")
done
((${#skipped[@]} == 0)) || log "not in this kernel (optional, skipped): ${skipped[*]}"
# Compressed modules (7.x: .ko.xz) are stored decompressed: busybox's modprobe loads plain .ko files,
# and the guest's depmod below indexes them under their new names.
awk '$1 == "insmod" { print $2 }' "$WORK/deps" | sort -u | while read -r ko; do
  rel=${ko#"$MODDIR/"}
  mkdir -p "$GMOD/$(dirname "$rel")"
  case $ko in
    *.ko.xz) xz -dc "$ko" >"$GMOD/${rel%.xz}" || die "xz -d ${ko} failed (Debian package: xz-utils)" ;;
    *.ko.zst) zstd -dcq "$ko" >"$GMOD/${rel%.zst}" || die "zstd -d ${ko} failed (Debian package: zstd)" ;;
    *.ko.gz) gzip -dc "$ko" >"$GMOD/${rel%.gz}" || die "gzip -d ${ko} failed" ;;
    *) cp "$ko" "$GMOD/$rel" ;;
  esac
done
for f in modules.builtin modules.builtin.modinfo modules.order; do
  [[ -r "$MODDIR/$f" ]] && cp "$MODDIR/$f" "$GMOD/"
done
depmod -b "$ROOT" "$KREL" || die "depmod -b for the guest failed"
n_mods=$(find "$GMOD" -name '*.ko' | wc -l)

# the kernel's config, where scripts look for it (hack/nullblk-zoned.sh, hack/zloop-zoned.sh)
mkdir -p "$ROOT/boot" && cp "$KCONFIG" "$ROOT/boot/config-$KREL"
install -m 0755 "$script_dir/init" "$ROOT/init"
log "assembled the root (initramfs $(du -sh "$ROOT" | cut -f1), sysroot $(du -sh "$OUT/sysroot" | cut -f1), ${n_mods} modules) in $(elapsed "$t")"

# --- output ------------------------------------------------------------------------
t=$(now)
# Uncompressed: under software emulation gunzip in the guest costs more than
# QEMU loading the larger file.
(cd "$ROOT" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) >"$OUT/initramfs.cpio" ||
  die "cpio failed"
cp "$KIMG" "$OUT/vmlinuz"
[[ -s "$WORK/vmlinux" ]] && mv "$WORK/vmlinux" "$OUT/vmlinux"
{
  (cd "$ROOT" && find . -mindepth 1 \( -type f -o -type l \) | LC_ALL=C sort)
  (cd "$OUT" && find sysroot -type f | LC_ALL=C sort | sed 's|^|9p:|')
} >"$OUT/manifest"
printf '%s\n' "$KREL" >"$OUT/kernel-release"
# the kernel's config beside it, for what a test may ask before booting (CONFIG_BLK_DEV_ZONED_LOOP)
cp "$KCONFIG" "$OUT/config"
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
