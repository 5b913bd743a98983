#!/usr/bin/env bash
# hack/zoned-stacks.sh: MySQL on zoned file systems, next to a conventional one, inside the QEMU guest.
#
# Run by hack/demo-zoned.sh in the guest's userland (hack/qemu/run.sh --userland), from a directory holding
# bin/znsdb, bin/znsbench and hack/. For each stack NAME=ENGINE:FS:DEVICE of ZONED_STACKS it makes the file
# system (btrfs and f2fs in zoned mode through `znsdb format`, with the operator's own safety checks and
# report; ext4 and xfs on a conventional device with mkfs), mounts it at /mnt/zns/NAME, and hands the stacks
# to hack/demo-local.sh: a private MariaDB each, prepare in bulkload, verify, a run of all of them together
# with the device's written bytes counted per transaction, and the table. A stack whose device the format
# step refuses is reported and left out; the others go on.
#
# FS zxfs is zoned XFS, made by `znsdb format --filesystem xfs --zoned` inside the newer userland of
# ZNS_XFS_ROOT (hack/qemu/build-xfs-userland.sh: xfsprogs >= 6.15, which the host lacks) on DEVICE, or on
# DEVICE+META with META a conventional device for its metadata; its written bytes are DEVICE's and META's.
#
# Environment: ZONED_STACKS (see hack/demo-zoned.sh), ZONED_RESULTS (directory that receives NAME-format.json,
# NAME.json and the run's logs; default ./results), ZNS_XFS_ROOT (for zxfs), and the DEMO_* settings of
# hack/demo-local.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'zoned-stacks: %s\n' "$*" >&2; exit 1; }

results=${ZONED_RESULTS:-results}
mkdir -p "$results"
# the host's hack/demo-zoned.sh shows the last line of this file while the guest runs
exec > >(tee -a "$results/progress.log") 2>&1
[[ -n "${ZONED_STACKS:-}" ]] || die "ZONED_STACKS is empty: give NAME=ENGINE:FS:DEVICE entries"
[[ -x bin/znsdb && -x bin/znsbench ]] || die "bin/znsdb and bin/znsbench are missing (hack/demo-zoned.sh builds them)"

# xfs_root_ready: ZNS_XFS_ROOT with the guest's /dev, /proc and /sys, and a writable /tmp holding znsdb (the
# root itself is the host's, read-only); once.
xfs_root_ready() {
  local x=${ZNS_XFS_ROOT:-}
  [[ -n "$x" && -x "$x/usr/sbin/mkfs.xfs" ]] ||
    die "zoned XFS needs ZNS_XFS_ROOT, a root with xfsprogs >= 6.15 (hack/demo-zoned.sh sets it with hack/qemu/build-xfs-userland.sh)"
  mountpoint -q "$x/proc" && return 0
  if ! { mount --rbind /dev "$x/dev" && mount -t proc proc "$x/proc" && mount -t sysfs sysfs "$x/sys" &&
    mount -t tmpfs tmpfs "$x/tmp" && cp bin/znsdb "$x/tmp/znsdb"; }; then
    die "step 'mount /dev, /proc, /sys and /tmp in ${x}' failed (above)"
  fi
}

targets=() refused=()
for stack in $ZONED_STACKS; do
  [[ "$stack" =~ ^([a-z][-a-z0-9]*)=(rocksdb|innodb):(btrfs|f2fs|ext4|xfs|zxfs):([a-z][a-z0-9]*)(\+([a-z][a-z0-9]*))?$ ]] ||
    die "ZONED_STACKS: '$stack' is not NAME=ENGINE:FS:DEVICE[+META] (rocksdb|innodb, btrfs|f2fs|ext4|xfs|zxfs; +META for zxfs)"
  name=${BASH_REMATCH[1]} engine=${BASH_REMATCH[2]} fs=${BASH_REMATCH[3]} dev=${BASH_REMATCH[4]} meta=${BASH_REMATCH[6]}
  [[ -z "$meta" || $fs == zxfs ]] || die "ZONED_STACKS: '$stack': +META is for zxfs only"
  mnt=/mnt/zns/$name
  mkdir -p "$mnt"
  source_dev=/dev/$dev mount_opts=() counted=$dev
  case $fs in
    zxfs)
      xfs_root_ready
      meta_flag=()
      if [[ -n "$meta" ]]; then
        meta_flag=(--metadata-device "$meta") source_dev=/dev/$meta mount_opts=(-o "rtdev=/dev/$dev") counted=$dev+$meta
      fi
      say "$name: znsdb format --filesystem xfs --zoned --device $dev${meta:+ --metadata-device $meta} (xfsprogs $(chroot "$ZNS_XFS_ROOT" mkfs.xfs -V | awk '{print $3}'))"
      t0=$SECONDS
      rc=0
      chroot "$ZNS_XFS_ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin /tmp/znsdb format --filesystem xfs --zoned \
        --device "$dev" "${meta_flag[@]}" --termination-log "/tmp/$name-format.json" >/dev/null 2>"$results/$name-format.err" || rc=$?
      cp "$ZNS_XFS_ROOT/tmp/$name-format.json" "$results/" 2>/dev/null || true
      if ((rc != 0)); then
        sed 's/^/   /' "$results/$name-format.err"
        refused+=("$name")
        continue
      fi
      echo "   $(grep -o '"action":"[a-z]*"' "$results/$name-format.json"), $((SECONDS - t0)) s"
      fs=xfs
      ;;
    btrfs | f2fs)
      # What the preflight would ask of an administrator: zoned writes in order (QEMU's NVMe namespace
      # comes up with none).
      sched=/sys/block/$dev/queue/scheduler
      if [[ -w $sched && "$(<"$sched")" != *"[mq-deadline]"* ]]; then
        echo mq-deadline >"$sched" && echo "   $dev: I/O scheduler set to mq-deadline"
      fi
      say "$name: znsdb format --filesystem $fs --device $dev"
      t0=$SECONDS
      if ! bin/znsdb format --filesystem "$fs" --device "$dev" --termination-log "$results/$name-format.json" \
        >/dev/null 2>"$results/$name-format.err"; then
        sed 's/^/   /' "$results/$name-format.err"
        refused+=("$name")
        continue
      fi
      echo "   $(grep -o '"action":"[a-z]*"' "$results/$name-format.json"), $((SECONDS - t0)) s"
      ;;
    ext4) say "$name: mkfs.ext4 on the conventional $dev"; mkfs.ext4 -q -F "/dev/$dev" ;;
    xfs) say "$name: mkfs.xfs on the conventional $dev"; mkfs.xfs -q -f "/dev/$dev" ;;
  esac
  mount -t "$fs" "${mount_opts[@]}" "$source_dev" "$mnt" || die "$name: mounting $source_dev ($fs ${mount_opts[*]}) at $mnt failed"
  echo "   mounted: $(df -h --output=size,avail "$mnt" | tail -n 1 | awk '{print $1 " size, " $2 " free"}')"
  targets+=("$name=$engine@$mnt@$counted")
done
((${#targets[@]} > 0)) || die "no stack could be set up"

rc=0
DEMO_SKIP_BUILD=1 DEMO_TARGETS="${targets[*]}" hack/demo-local.sh || rc=$?
for t in "${targets[@]}"; do
  name=${t%%=*} dir=${t#*@}
  dir=${dir%@*}
  for f in run.json run.log prepare.log install.log mysqld.log; do
    [[ -r "$dir/$f" ]] && cp "$dir/$f" "$results/$name.${f}"
  done
  [[ -r "$dir/run.json" ]] && cp "$dir/run.json" "$results/$name.json"
done
((${#refused[@]} == 0)) || echo "refused by the format step (see above): ${refused[*]}"
exit "$rc"
