#!/usr/bin/env bash
# hack/zloop-zoned.sh: create and remove zloop zoned block devices (file-backed, they survive a reboot).
#
#   hack/zloop-zoned.sh check
#   hack/zloop-zoned.sh create [--id N] [--capacity MiB] [--zone-size MiB] [--zone-capacity MiB]
#                              [--conv-zones N] [--base-dir DIR] [--buffered-io] [--scheduler NAME]
#   hack/zloop-zoned.sh remove [--delete-files] [--base-dir DIR] (--all | ID...)
#   hack/zloop-zoned.sh list
#
# zloop (Linux >= 6.15, CONFIG_BLK_DEV_ZONED_LOOP) makes a host-managed zoned device /dev/zloop<ID> out of
# one regular file per zone in <base-dir>/<ID>/: cnv-NNNNNN for a conventional zone (always the zone size),
# seq-NNNNNN for a sequential one, whose length is the zone's write pointer. Unlike null_blk, the data and
# the write pointers stay in those files: after a reboot (or a remove), `create` with the same ID, base
# directory and geometry brings the device back as it was; the kernel refuses another geometry.
#
# check    root, the zloop module loaded and /dev/zloop-control present. On a kernel without zloop it
#          says which kernel this is and what is needed, and exits 3 (every command does).
# create   makes one device (default: the lowest free ID) and sets its I/O scheduler (default mq-deadline,
#          the one ZenFS accepts). Prints the device node (/dev/zloopN) on stdout, a summary on stderr.
#            --id N               the N of /dev/zloopN (default: the lowest free one)
#            --capacity MiB       capacity, a multiple of the zone size (default 2048)
#            --zone-size MiB      zone size, a power of two (default 64)
#            --zone-capacity MiB  writable part of each zone (default: the zone size)
#            --conv-zones N       conventional zones at the start (default 0)
#            --base-dir DIR       where the zone files live, in DIR/<ID>/ (default /var/local/zloop); it
#                                 must be on a file system that survives what the data should survive
#            --buffered-io        buffered instead of direct I/O on the zone files (tmpfs and 9p may need it)
#          When DIR/<ID>/ already holds zone files the device is re-added over them: zones, data and
#          write pointers as they were left (the geometry must be the one they were made with).
# remove   removes devices ("remove id=N"); their zone files stay, so that `create` can bring them back,
#          unless --delete-files (with the --base-dir they were made in) deletes DIR/<ID>/ as well.
# list     prints the zloop devices that exist (/dev/zloopN), one a line.
#
# Environment: ZLOOP_MODULE=FILE loads FILE (a zloop.ko built for the running kernel, e.g. by
# hack/qemu/build-zloop-module.sh) with insmod instead of modprobe zloop, for kernels built without it.
#
# Exit status: 0 done; 1 an error (the message says which step and what to do); 2 usage; 3 this kernel has
# no zloop.
set -euo pipefail

SYSFS=/sys
CONTROL=/dev/zloop-control

log() { printf 'zloop-zoned: %s\n' "$*" >&2; }
die() { printf 'zloop-zoned: ERROR: %s\n' "$*" >&2; exit 1; }
usage() {
  echo "usage:" >&2
  sed -n '4,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
  exit 2
}

# readf VAR FILE: VAR=the file's first line (builtins only: a fork costs ~15 ms under emulation)
readf() {
  local -n _v=$1
  _v=""
  [[ -r "$2" ]] || return 1
  IFS= read -r _v <"$2" || [[ -n "$_v" ]]
}

# kernel_config NAME: CONFIG_NAME's value (y, m, or empty when not set) when the config is readable
kernel_config() {
  local rel f
  readf rel /proc/sys/kernel/osrelease || return 1
  for f in "/boot/config-$rel" "/lib/modules/$rel/config"; do
    if [[ -r "$f" ]]; then
      sed -n "s/^CONFIG_$1=//p" "$f"
      return 0
    fi
  done
  if [[ -r /proc/config.gz ]]; then
    zcat /proc/config.gz | sed -n "s/^CONFIG_$1=//p"
    return 0
  fi
  return 1
}

# no_zloop REASON: the one message for a kernel without zloop, and exit 3
no_zloop() {
  local rel cfg what
  readf rel /proc/sys/kernel/osrelease || rel=unknown
  if cfg=$(kernel_config BLK_DEV_ZONED_LOOP); then
    what="its config has ${cfg:+CONFIG_BLK_DEV_ZONED_LOOP=${cfg}}${cfg:-CONFIG_BLK_DEV_ZONED_LOOP not set}"
  else
    what="its config is not readable"
  fi
  local old=""
  if [[ "$rel" =~ ^([0-9]+)\.([0-9]+) ]] && ((BASH_REMATCH[1] < 6 || (BASH_REMATCH[1] == 6 && BASH_REMATCH[2] < 15))); then
    old=" (older than 6.15)"
  fi
  printf 'zloop-zoned: ERROR: kernel %s%s has no zloop (%s; %s): zloop needs Linux >= 6.15 built with CONFIG_BLK_DEV_ZONED_LOOP (=y or =m), which Debian'"'"'s kernels (6.1 to 7.3) are not; use null_blk (hack/nullblk-zoned.sh) or an emulated NVMe ZNS namespace here\n' \
    "$rel" "$old" "$1" "$what" >&2
  exit 3
}

check_kernel() {
  ((EUID == 0)) || die "must run as root: /dev/zloop-control and modprobe need it"
  if [[ ! -e "$CONTROL" ]]; then
    local out=""
    if [[ ! -d "$SYSFS/module/zloop" ]]; then
      command -v modprobe >/dev/null 2>&1 || no_zloop "zloop is not loaded and there is no modprobe (Debian package: kmod)"
      if [[ -n "${ZLOOP_MODULE:-}" ]]; then
        [[ -r "$ZLOOP_MODULE" ]] || die "ZLOOP_MODULE=${ZLOOP_MODULE}: no such file"
        out=$(insmod "$ZLOOP_MODULE" 2>&1) ||
          die "step 'insmod ${ZLOOP_MODULE}' failed (${out:-insmod failed}): was it built for kernel $(uname -r)? (modinfo shows its vermagic)"
        log "loaded zloop from ${ZLOOP_MODULE}"
      else
        out=$(modprobe zloop 2>&1) || no_zloop "modprobe zloop: ${out:-failed}"
      fi
    fi
    # devtmpfs makes the node at once; under udev it may take a moment
    local w
    for ((w = 0; w < 50; w++)); do [[ -e "$CONTROL" ]] && break; sleep 0.1; done
    [[ -e "$CONTROL" ]] || no_zloop "no ${CONTROL} after modprobe zloop"
  fi
  [[ -c "$CONTROL" ]] || die "${CONTROL} exists but is not a character device"
}

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }
need_uint() { is_uint "$2" || die "$1 needs a whole number, got '$2'"; }

# ids: the N of every /sys/block/zloopN, one a line
ids() {
  local d
  for d in "$SYSFS"/block/zloop*; do
    [[ -e "$d" ]] || continue
    d=${d##*/zloop}
    is_uint "$d" && printf '%s\n' "$d"
  done
  return 0
}

dmesg_hint() {
  local m
  m=$(dmesg 2>/dev/null | grep -i zloop | tail -n 3 | sed 's/^/    /') || true
  [[ -n "$m" ]] && printf '\n  kernel log:\n%s' "$m"
  return 0
}

# control CMD: write one command to /dev/zloop-control (the kernel's refusal comes back as the write's error)
control() {
  local err
  if ! err=$( { printf '%s\n' "$1" >"$CONTROL"; } 2>&1); then
    printf '%s' "${err##*: }"
    return 1
  fi
}

set_scheduler() {
  local disk=$1 sched=$2 q="$SYSFS/block/$1/queue/scheduler" line
  [[ -e "$q" ]] || die "${disk} has no ${q}"
  readf line "$q"
  if [[ " ${line//[][]/} " != *" $sched "* ]]; then
    modprobe "$sched" 2>/dev/null || true
    readf line "$q"
    [[ " ${line//[][]/} " == *" $sched "* ]] || die "${disk}: the kernel offers no ${sched} scheduler (${q}: ${line})"
  fi
  { printf '%s\n' "$sched" >"$q"; } || die "${disk}: writing ${sched} to ${q} failed"
  readf line "$q"
  [[ "$line" == *"[$sched]"* ]] || die "${disk}: the scheduler is '${line}' after setting ${sched}"
}

cmd_create() {
  local id="" capacity=2048 zsize=64 zcap=0 conv=0 base=/var/local/zloop buffered=0 sched=mq-deadline
  while (($#)); do
    case $1 in
      --id) need_uint "$1" "${2-}"; id=$2; shift 2 ;;
      --capacity) need_uint "$1" "${2-}"; capacity=$2; shift 2 ;;
      --zone-size) need_uint "$1" "${2-}"; zsize=$2; shift 2 ;;
      --zone-capacity) need_uint "$1" "${2-}"; zcap=$2; shift 2 ;;
      --conv-zones) need_uint "$1" "${2-}"; conv=$2; shift 2 ;;
      --base-dir) base=${2:?--base-dir needs a directory}; shift 2 ;;
      --buffered-io) buffered=1; shift ;;
      --scheduler) sched=${2:?--scheduler needs a name}; shift 2 ;;
      *) die "create: unknown option '$1' (see $0 --help)" ;;
    esac
  done
  ((zsize >= 1 && (zsize & (zsize - 1)) == 0)) || die "--zone-size must be a power of two in MiB, got ${zsize}"
  ((capacity >= zsize && capacity % zsize == 0)) ||
    die "--capacity ${capacity} is not a (non-zero) multiple of --zone-size ${zsize} (zloop would round it up)"
  ((zcap <= zsize)) || die "--zone-capacity ${zcap} is larger than --zone-size ${zsize}"
  local nzones=$((capacity / zsize))
  ((conv < nzones)) || die "--conv-zones ${conv} leaves no sequential zone of the ${nzones}"
  [[ "$base" == /* ]] || die "--base-dir must be an absolute path, got '${base}'"

  check_kernel
  if [[ -z "$id" ]]; then
    id=0
    while [[ -e "$SYSFS/block/zloop$id" ]]; do id=$((id + 1)); done
  elif [[ -e "$SYSFS/block/zloop$id" ]]; then
    die "/dev/zloop${id} already exists (see: $0 list); remove it or pick another --id"
  fi
  local dir="$base/$id" readd=0 f
  mkdir -p "$dir" || die "step 'mkdir ${dir}' failed: is --base-dir ${base} writable?"
  for f in "$dir"/cnv-* "$dir"/seq-*; do
    [[ -e "$f" ]] && readd=1 && break
  done
  local opts="id=${id},capacity_mb=${capacity},zone_size_mb=${zsize},conv_zones=${conv},base_dir=${base}"
  ((zcap == 0)) || opts+=",zone_capacity_mb=${zcap}"
  ((buffered == 0)) || opts+=",buffered_io"
  local err
  if ! err=$(control "add ${opts}"); then
    local hint="check the options against: cat ${CONTROL}"
    ((readd)) && hint="${dir} holds zone files of an earlier device: give the geometry it was made with, or remove ${dir} to start empty"
    die "step 'add ${opts}' refused by the kernel (${err:-write failed}): ${hint}$(dmesg_hint)"
  fi
  local disk=zloop$id w
  for ((w = 0; w < 100; w++)); do [[ -b /dev/$disk && -e "$SYSFS/block/$disk/queue/zoned" ]] && break; sleep 0.1; done
  [[ -b /dev/$disk ]] || die "/dev/${disk} did not appear after the add (is devtmpfs mounted on /dev?)$(dmesg_hint)"
  local model
  readf model "$SYSFS/block/$disk/queue/zoned"
  [[ "$model" == host-managed ]] || die "${disk} came up as '${model}', not host-managed"
  set_scheduler "$disk" "$sched"
  local zones chunk sched_line
  readf zones "$SYSFS/block/$disk/queue/nr_zones"
  readf chunk "$SYSFS/block/$disk/queue/chunk_sectors"
  readf sched_line "$SYSFS/block/$disk/queue/scheduler"
  log "/dev/${disk}: host-managed, ${zones} zones of $((chunk * 512 / 1048576)) MiB (capacity $((zcap > 0 ? zcap : zsize)) MiB)," \
    "${conv} conventional, files in ${dir}$( ((readd)) && printf ' (re-added: zones as they were left)'), scheduler ${sched_line}"
  printf '/dev/%s\n' "$disk"
}

cmd_remove() {
  local delete=0 base=/var/local/zloop all=0 list=()
  while (($#)); do
    case $1 in
      --delete-files) delete=1; shift ;;
      --base-dir) base=${2:?--base-dir needs a directory}; shift 2 ;;
      --all) all=1; shift ;;
      *) list+=("${1#/dev/zloop}"); shift ;;
    esac
  done
  ((all == 0 || ${#list[@]} == 0)) || die "remove: --all takes no IDs"
  ((all || ${#list[@]})) || die "remove: name the IDs (or /dev/zloopN), or --all"
  check_kernel
  ((all)) && mapfile -t list < <(ids)
  local id err
  for id in "${list[@]}"; do
    is_uint "$id" || die "remove: '${id}' is not an ID (the N of /dev/zloopN)"
    [[ -e "$SYSFS/block/zloop$id" ]] || die "no /dev/zloop${id} (see: $0 list)"
    err=$(control "remove id=${id}") ||
      die "step 'remove id=${id}' refused by the kernel (${err:-write failed}): is /dev/zloop${id} mounted or open?$(dmesg_hint)"
    if ((delete)); then
      rm -rf "${base:?}/$id" || die "step 'rm -rf ${base}/${id}' failed"
      log "removed /dev/zloop${id} and its zone files in ${base}/${id}"
    else
      log "removed /dev/zloop${id} (its zone files stay: create --id ${id} brings it back)"
    fi
  done
}

(($#)) || usage
cmd=$1
shift
case $cmd in
  check)
    (($# == 0)) || die "check takes no arguments"
    check_kernel
    log "ok: ${CONTROL} present (kernel $(uname -r)); the kernel takes: $(tr '\n' ';' <"$CONTROL")"
    ;;
  create) cmd_create "$@" ;;
  remove | destroy) cmd_remove "$@" ;;
  list)
    (($# == 0)) || die "list takes no arguments"
    check_kernel
    ids | sed 's|^|/dev/zloop|'
    ;;
  -h | --help | help) usage ;;
  *) die "unknown command '${cmd}' (check, create, remove, list; see --help)" ;;
esac
