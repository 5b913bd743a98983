#!/usr/bin/env bash
# hack/demo-zoned.sh: the seed methodology on zoned devices, on any machine: MyRocks and InnoDB (MariaDB, the
# project's stand-in) on btrfs and f2fs in zoned mode over null_blk zoned devices, next to the same on ext4
# over a conventional null_blk, inside the project's QEMU guest (Debian's kernel, which has zoned support,
# under software emulation when the machine's own kernel has none). The guest runs the host's own MariaDB,
# sysbench, mkfs.btrfs and mkfs.f2fs (hack/qemu/run.sh --userland); hack/zoned-stacks.sh does the work there.
#
# What the numbers mean under emulation: throughput and latency, nothing (every instruction is emulated and
# the devices are RAM); device KiB per transaction, the host side of write amplification: what the file
# system and the engine wrote to the block device per committed transaction. null_blk has no FTL, so the
# device-internal garbage collection that ZNS removes does not show here.
#
# Environment:
#   ZONED_STACKS     NAME=ENGINE:FS:DEVICE entries (default: rocksdb and innodb on btrfs over nullb0/nullb1,
#                    on f2fs over nullb2/nullb3, on ext4 over the conventional nullb4/nullb5)
#   ZONED_NVME=1     add an emulated NVMe ZNS namespace (nvme0n1) to the guest
#   ZONED_XFS=1      add what zoned XFS (FS zxfs) needs: a null_blk with 8 conventional zones of 64 MiB (nullb6),
#                    with ZONED_NVME=1 a second ZNS namespace (nvme1n1) and a conventional one for its metadata
#                    (nvme2n1), xfsprogs >= 6.15 (hack/qemu/build-xfs-userland.sh), and a kernel >= 6.15
#                    (ZNS_QEMU_KERNEL, default here: current)
#   ZONED_MEM_MIB    guest memory (default 6144; the null_blk devices keep their data in it)
#   ZONED_TIMEOUT    seconds before the guest is stopped (default 3600)
#   ZONED_RESULTS    host directory that receives the results (default: a new directory under /var/tmp)
#   DEMO_*           as for hack/demo-local.sh (defaults here: 20 s runs, 2 tables of 5000 rows, 512Mi)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=hack/lib/progress.sh
source hack/lib/progress.sh

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'demo-zoned: %s\n' "$*" >&2; exit 1; }
# wait_for_exit PID SECONDS: true once PID has exited, false after SECONDS while it still runs
wait_for_exit() {
  local i
  for ((i = 0; i < $2; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 1
  done
  ! kill -0 "$1" 2>/dev/null
}

need=(qemu-system-x86_64 mariadbd mariadb-install-db sysbench mkfs.btrfs mkfs.f2fs mkfs.ext4 blkid)
missing=()
for tool in "${need[@]}"; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]})); then
  [[ $(id -u) -eq 0 ]] || die "missing: ${missing[*]}: run hack/install-deps.sh as root"
  say "installing what is missing (${missing[*]})"
  hack/install-deps.sh
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/zns-zoned.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "building znsdb and znsbench for the guest"
mkdir -p "$work/bin" "$work/hack"
CGO_ENABLED=0 go build -o "$work/bin/" ./operator/cmd/znsdb ./operator/cmd/znsbench
cp hack/demo-local.sh hack/zoned-stacks.sh "$work/hack/"
say "making an empty MariaDB datadir on the host, copied to every server in the guest (its bootstrap takes minutes there)"
as_root=()
[[ $(id -u) -eq 0 ]] && as_root=(--user=root)
# its own tmpdir: a mariadbd that starts on this host (another test's) deletes every #sql file of /tmp
mkdir -p "$work/install-tmp"
mariadb-install-db --no-defaults --auth-root-authentication-method=socket --skip-test-db "${as_root[@]}" \
  --datadir="$work/datadir" --tmpdir="$work/install-tmp" >"$work/install.log" 2>&1 || { tail "$work/install.log"; die "mariadb-install-db failed"; }

xfs_env=()
if [[ "${ZONED_XFS:-0}" == 1 ]]; then
  export ZNS_QEMU_KERNEL=${ZNS_QEMU_KERNEL:-current}
  say "building the zoned-XFS tools (once; cached): xfsprogs >= 6.15, which this machine's Debian lacks"
  xfs_root=$(hack/qemu/build-xfs-userland.sh) ||
    die "step 'hack/qemu/build-xfs-userland.sh' failed (above); run it alone to see why"
  xfs_env=(--env "ZNS_XFS_ROOT=$xfs_root")
fi
say "building the QEMU guest (once; cached)"
heartbeat "QEMU guest" "kernel download and initramfs" hack/qemu/build-guest.sh >/dev/null

stacks=${ZONED_STACKS:-"rocks-btrfs=rocksdb:btrfs:nullb0 inno-btrfs=innodb:btrfs:nullb1 rocks-f2fs=rocksdb:f2fs:nullb2 inno-f2fs=innodb:f2fs:nullb3 rocks-ext4=rocksdb:ext4:nullb4 inno-ext4=innodb:ext4:nullb5"}
# btrfs: 2 GiB in 64 MiB zones, no limits; f2fs: 16 MiB zones (it reserves whole zones for its cleaner)
# with 16 conventional zones for its metadata; ext4: a conventional null_blk. All keep their data in RAM.
devices=(--nullblk '--first 0 --count 2 --size 2048 --zone-size 64 --memory-backed'
  --nullblk '--first 2 --count 2 --size 2048 --zone-size 16 --conv-zones 16 --memory-backed'
  --nullblk '--first 4 --count 2 --size 2048 --conventional --memory-backed')
[[ "${ZONED_NVME:-0}" == 1 ]] && devices+=(--zns default)
if [[ "${ZONED_XFS:-0}" == 1 ]]; then
  # zoned XFS: its data section on 512 MiB of conventional zones (mkfs.xfs wants at least 300 MiB), and on NVMe
  # a ZNS namespace (none conventional) with a conventional namespace for the metadata
  devices+=(--nullblk '--first 6 --count 1 --size 2048 --zone-size 64 --conv-zones 8 --memory-backed')
  [[ "${ZONED_NVME:-0}" == 1 ]] && devices+=(--zns default --nvme "size=512M,ocp=off")
fi

envs=()
for v in DEMO_SECONDS DEMO_THREADS DEMO_TABLES DEMO_TABLE_SIZE DEMO_WORKLOAD DEMO_MEMORY; do
  [[ -n "${!v:-}" ]] && envs+=(--env "$v=${!v}")
done
say "booting the guest and running: ${stacks}"
echo "   (under software emulation this takes minutes; the guest's output follows when it powers off)"
rc=0
mkdir -p "$work/results"
# The guest's own output arrives when it powers off; meanwhile its progress file (shared over 9p) tells where
# it is, every 30 seconds.
hack/qemu/run.sh --userland --share "$work" \
  --mem "${ZONED_MEM_MIB:-6144}" --smp 2 --timeout "${ZONED_TIMEOUT:-3600}" "${devices[@]}" \
  --env "ZONED_STACKS=$stacks" --env "ZONED_RESULTS=$work/results" \
  --env "DEMO_SECONDS=${DEMO_SECONDS:-20}" --env "DEMO_TABLES=${DEMO_TABLES:-2}" \
  --env "DEMO_TABLE_SIZE=${DEMO_TABLE_SIZE:-5000}" --env "DEMO_MEMORY=${DEMO_MEMORY:-512Mi}" \
  --env "DEMO_START_TRIES=${DEMO_START_TRIES:-600}" --env "DEMO_TEMPLATE_DATADIR=$work/datadir" "${envs[@]}" "${xfs_env[@]}" \
  -- hack/zoned-stacks.sh >"$work/guest.out" 2>&1 &
guest_pid=$!
t0=$SECONDS
while ! wait_for_exit "$guest_pid" 30; do
  last=$(tail -n 1 "$work/results/progress.log" 2>/dev/null | cut -c1-120)
  printf 'demo-zoned: the QEMU guest is running the stacks, %dm%02ds elapsed%s\n' $(((SECONDS - t0) / 60)) \
    $(((SECONDS - t0) % 60)) "${last:+; last: $last}"
done
wait "$guest_pid" || rc=$?
cat "$work/guest.out"

results=${ZONED_RESULTS:-$(mktemp -d /var/tmp/zns-zoned-results.XXXXXX)}
mkdir -p "$results"
cp -r "$work/results/." "$results/" 2>/dev/null || true
echo
echo "results and logs: $results"
echo "under emulation, TPS and latency say nothing; device KiB/txn is the host side of write amplification"
[[ $rc -eq 0 ]] || die "the zoned stacks failed (exit $rc; output above, logs in $results)"
