#!/usr/bin/env bash
# hack/qemu/capture-zoned-xfs.sh: record what the zoned-XFS tools print on real zoned devices, for parser
# testdata (operator/internal/zonedfs/testdata/zoned-xfs/).
#
#   hack/qemu/capture-zoned-xfs.sh [--kernel current|6.1] [OUTDIR]
#
# Boots the QEMU guest (default: the current kernel, ZNS_QEMU_KERNEL=current) with the host's userland
# and four devices: two memory-backed null_blk zoned devices of 2 GiB in 64 MiB zones, nullb0 with 8
# conventional zones (512 MiB) and nullb1 with 4 (256 MiB, less than mkfs.xfs's 300 MiB minimum), and
# an emulated NVMe ZNS namespace with no conventional zones (nvme0n1: 40 zones of 64 MiB, capacity 60 MiB)
# beside a conventional NVMe namespace of 512 MiB for its metadata (nvme1n1). In the guest, chrooted into
# the zoned-XFS tools of hack/qemu/build-xfs-userland.sh (xfsprogs and util-linux of a newer Debian suite),
# it runs:
#   (a) nullb0, one device with conventional zones: mkfs.xfs, blkid -p -o export, mount, findmnt,
#       xfs_info, df, a 128 MiB direct write, df, blkzone report, the kernel's XFS lines
#   (b) nvme1n1 + nvme0n1: mkfs.xfs /dev/nvme1n1 -r rtdev=/dev/nvme0n1, blkid of both, mount -o rtdev=,
#       the same inspection
#   (c) what is refused or goes wrong: the ZNS namespace alone (no conventional zones, no rtdev), nullb1
#       (too little conventional space), and the host's own (older) mkfs.xfs on nullb1
# Each command's stdout and stderr go to OUTDIR/<case>-<what>.txt exactly as printed; exit-status.txt lists
# every command line with its exit status, and versions.txt the kernel and tool versions. OUTDIR defaults to
# operator/internal/zonedfs/testdata/zoned-xfs (a directory of the worktree: it is the guest's share).
#
# The guest part is this script run again inside the guest (ZNS_QEMU_GUEST=1 and ZNS_XFS_ROOT set).
set -euo pipefail

log() { printf 'capture-zoned-xfs: %s\n' "$*" >&2; }
die() { printf 'capture-zoned-xfs: ERROR: %s\n' "$*" >&2; exit 1; }

# --- in the guest ---------------------------------------------------------------------------------------
if [[ "${ZNS_QEMU_GUEST:-0}" == 1 && -n "${ZNS_XFS_ROOT:-}" ]]; then
  X=$ZNS_XFS_ROOT out=$1
  mkdir -p "$out"
  : >"$out/exit-status.txt"
  if ! { mount --rbind /dev "$X/dev" && mount -t proc proc "$X/proc" && mount -t sysfs sysfs "$X/sys" &&
    mount -t tmpfs tmpfs "$X/tmp" && mount -t tmpfs tmpfs "$X/mnt"; }; then
    die "step 'mount /dev, /proc, /sys, /tmp and /mnt in ${X}' failed (above)"
  fi
  mkdir -p "$X/mnt/a" "$X/mnt/b"
  # cap FILE CMD...: CMD in the chroot; its output, as printed, into FILE; the command and status into exit-status.txt
  cap() {
    local f=$1 rc=0
    shift
    chroot "$X" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@" >"$out/$f" 2>&1 || rc=$?
    printf '%s\t%d\t%s\n' "$f" "$rc" "$*" >>"$out/exit-status.txt"
    log "$* -> exit ${rc}"
  }
  # hcap FILE CMD...: the same with the host's own program (bookworm's), outside the chroot: blkzone (the
  # newer suite moved it out of util-linux), and the older mkfs.xfs of case (c)
  hcap() {
    local f=$1 rc=0
    shift
    "$@" >"$out/$f" 2>&1 || rc=$?
    printf '%s\t%d\t(host) %s\n' "$f" "$rc" "$*" >>"$out/exit-status.txt"
    log "(host) $* -> exit ${rc}"
  }
  {
    printf 'kernel\t%s\n' "$(uname -r)"
    # shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
    chroot "$X" dpkg-query -W -f='${Package}\t${Version}\n' xfsprogs util-linux mount
    printf 'host mkfs.xfs (case c)\t%s\n' "$(mkfs.xfs -V)"
    printf 'host blkzone\t%s\n' "$(blkzone --version)"
  } >"$out/versions.txt"
  xfs_dmesg() { dmesg | grep -E 'XFS|xfs' || true; }

  log "(a) null_blk zoned with conventional zones"
  cap a-mkfs.txt mkfs.xfs /dev/nullb0
  cap a-blkid.txt blkid -p -o export /dev/nullb0
  dmesg -C
  cap a-mount.txt mount -t xfs /dev/nullb0 /mnt/a
  cap a-findmnt.txt findmnt -n -o SOURCE,TARGET,FSTYPE,OPTIONS /mnt/a
  xfs_dmesg >"$out/a-dmesg.txt"
  cap a-xfs_info.txt xfs_info /mnt/a
  cap a-df.txt df /mnt/a
  cap a-df-B1.txt df -B1 /mnt/a
  cap a-write.txt dd if=/dev/zero of=/mnt/a/f bs=1M count=128 oflag=direct
  cap a-sync.txt sync
  cap a-df-B1-after-write.txt df -B1 /mnt/a
  # the first sequential zone (zone 8, after the 8 conventional ones) and three more
  hcap a-blkzone.txt blkzone report -o 0x100000 -c 4 /dev/nullb0
  cap a-umount.txt umount /mnt/a

  log "(b) NVMe ZNS without conventional zones, metadata on a conventional NVMe namespace"
  hcap b-blkzone-before.txt blkzone report -c 2 /dev/nvme0n1
  cap b-mkfs.txt mkfs.xfs /dev/nvme1n1 -r rtdev=/dev/nvme0n1
  cap b-blkid-meta.txt blkid -p -o export /dev/nvme1n1
  cap b-blkid-rt.txt blkid -p -o export /dev/nvme0n1
  dmesg -C
  cap b-mount.txt mount -t xfs -o rtdev=/dev/nvme0n1 /dev/nvme1n1 /mnt/b
  cap b-findmnt.txt findmnt -n -o SOURCE,TARGET,FSTYPE,OPTIONS /mnt/b
  xfs_dmesg >"$out/b-dmesg.txt"
  cap b-xfs_info.txt xfs_info /mnt/b
  cap b-df.txt df /mnt/b
  cap b-df-B1.txt df -B1 /mnt/b
  cap b-write.txt dd if=/dev/zero of=/mnt/b/f bs=1M count=128 oflag=direct
  cap b-sync.txt sync
  cap b-df-B1-after-write.txt df -B1 /mnt/b
  hcap b-blkzone.txt blkzone report -c 4 /dev/nvme0n1
  cap b-umount.txt umount /mnt/b
  dmesg -C
  cap b-mount-without-rtdev.txt mount -t xfs /dev/nvme1n1 /mnt/b
  xfs_dmesg >"$out/b-mount-without-rtdev-dmesg.txt"
  umount /mnt/b 2>/dev/null || true

  log "(c) refusals"
  cap c-mkfs-zns-alone.txt mkfs.xfs -f /dev/nvme0n1
  cap c-mkfs-small-conventional.txt mkfs.xfs /dev/nullb1
  # the host's own mkfs.xfs (bookworm's, older than 6.15)
  hcap c-mkfs-old-xfsprogs.txt mkfs.xfs /dev/nullb1
  sync
  exit 0
fi

# --- on the host ----------------------------------------------------------------------------------------
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(cd "$script_dir/../.." && pwd -P)
kernel=current
while (($#)); do
  case $1 in
    --kernel) kernel=${2:?--kernel takes current or 6.1}; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
    *) break ;;
  esac
done
out=${1:-$repo_root/operator/internal/zonedfs/testdata/zoned-xfs}
mkdir -p "$out" || die "cannot create ${out}"
out=$(cd "$out" && pwd -P)
[[ "$out" == "$repo_root"/* ]] || die "OUTDIR must lie inside the worktree (${repo_root}): the guest reaches it through the share"

xfs_root=$("$script_dir/build-xfs-userland.sh") ||
  die "step 'build the zoned-XFS tools (hack/qemu/build-xfs-userland.sh)' failed (above); run it alone to see why"
log "booting the ${kernel} guest; the captures go to ${out}"
"$script_dir/run.sh" --kernel "$kernel" --userland --share "$repo_root" --mem 2048 --timeout 600 \
  --nullblk '--size 2048 --zone-size 64 --conv-zones 8 --memory-backed' \
  --nullblk '--size 2048 --zone-size 64 --conv-zones 4 --memory-backed' \
  --zns default --nvme size=512M,ocp=off --env "ZNS_XFS_ROOT=${xfs_root}" \
  -- bash "$repo_root/hack/qemu/capture-zoned-xfs.sh" "$out" ||
  die "step 'the guest run' failed (exit $?; above): ZNS_QEMU_VERBOSE=1 shows the guest's console"
log "done: $(wc -l <"$out/exit-status.txt") commands in ${out}/exit-status.txt"
