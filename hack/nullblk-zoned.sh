#!/usr/bin/env bash
# hack/nullblk-zoned.sh: create and remove null_blk zoned block devices through configfs.
#
#   hack/nullblk-zoned.sh check
#   hack/nullblk-zoned.sh create [--count N] [--first N] [--size MiB] [--zone-size MiB]
#                                [--zone-capacity MiB] [--conv-zones N] [--max-open N]
#                                [--max-active N] [--blocksize BYTES] [--memory-backed]
#                                [--conventional [--discard]] [--scheduler NAME]
#   hack/nullblk-zoned.sh destroy (--all | NAME...)
#   hack/nullblk-zoned.sh list
#   hack/nullblk-zoned.sh status [NAME...]
#
# check    checks the kernel and prepares it: root, configfs (loaded and mounted
#          at /sys/kernel/config), null_blk (loaded with nr_devices=0, so it makes
#          no device of its own), and zoned support (null_blk's configfs
#          `features`, and CONFIG_BLK_DEV_ZONED where the kernel config is
#          readable). Says plainly what is missing. Every command runs these
#          checks first; only check and zoned creates need zoned support.
# create   makes N devices named nullb<N>, nullb<N+1>, ... (default: the lowest
#          free numbers), powers them on and sets their I/O scheduler (default
#          mq-deadline, the one ZenFS accepts). Prints each device node
#          (/dev/nullbN) on stdout, one a line, and a summary on stderr. If one
#          device fails, the devices made by this call are removed again.
#            --size MiB           capacity (default 4096)
#            --zone-size MiB      zone size, a power of two (default 64)
#            --zone-capacity MiB  writable part of each zone (default: the zone size)
#            --conv-zones N       conventional zones at the start (default 0)
#            --max-open N         open zone limit (default 0: none)
#            --max-active N       active zone limit (default 0: none)
#            --blocksize BYTES    logical block size, 512 or 4096 (default 4096)
#            --memory-backed      keep written data in RAM: reads return it, and
#                                 it costs as much RAM as is written
#            --conventional       a non-zoned device (zone options are refused)
#            --discard            accept discards (conventional and memory-backed
#                                 only: null_blk ignores it otherwise)
# destroy  powers off and removes configfs devices (power=0, rmdir).
# list     prints the names of the devices that exist in configfs, one a line.
# status   prints a table: configfs settings and what the block layer reports.
#
# Environment: NULLBLK_CONFIGFS (default /sys/kernel/config) and NULLBLK_SYSFS
# (default /sys) only to point at another mount of the same filesystems.
set -euo pipefail

CONFIGFS=${NULLBLK_CONFIGFS:-/sys/kernel/config}
SYSFS=${NULLBLK_SYSFS:-/sys}
NULLB="$CONFIGFS/nullb"

log() { printf 'nullblk-zoned: %s\n' "$*" >&2; }
die() { printf 'nullblk-zoned: ERROR: %s\n' "$*" >&2; exit 1; }
usage() {
  echo "usage:" >&2
  sed -n '4,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
  exit 2
}

# Under software emulation (the project's QEMU guest) every fork costs ~15 ms,
# so the paths every command takes read files with builtins, not cat or grep.

# readf VAR FILE: VAR=the file's first line; fails when it cannot be read.
readf() {
  local -n _v=$1
  _v=""
  [[ -r "$2" ]] || return 1
  IFS= read -r _v <"$2" || [[ -n "$_v" ]]
}

# slurp VAR FILE: VAR=the whole file.
slurp() {
  local -n _s=$1
  _s=""
  [[ -r "$2" ]] || return 1
  IFS= read -r -d '' _s <"$2" || true
}

# --- kernel checks --------------------------------------------------------------------
kernel_config() {
  # prints CONFIG_$1's value (y, m, or empty when not set) when the config is readable
  local rel f
  readf rel /proc/sys/kernel/osrelease || return 1
  f="/boot/config-$rel"
  if [[ -r "$f" ]]; then
    sed -n "s/^CONFIG_$1=//p" "$f"
  elif [[ -r /proc/config.gz ]]; then
    zcat /proc/config.gz | sed -n "s/^CONFIG_$1=//p"
  else
    return 1
  fi
}

FEATURES=""
check_kernel() {
  ((EUID == 0)) || die "must run as root: configfs, modprobe and /sys/block need it"

  local fss
  slurp fss /proc/filesystems
  if [[ "$fss" != *$'\t'configfs$'\n'* ]]; then
    modprobe configfs 2>/dev/null || true
    slurp fss /proc/filesystems
    [[ "$fss" == *$'\t'configfs$'\n'* ]] ||
      die "the kernel has no configfs (CONFIG_CONFIGFS_FS), which null_blk's configfs interface needs"
  fi
  local mounted=0 mnt fstype rest
  while read -r _ mnt fstype rest; do
    [[ "$mnt" == "$CONFIGFS" && "$fstype" == configfs ]] && mounted=1
  done </proc/mounts
  if ((!mounted)); then
    [[ -d "$CONFIGFS" ]] || die "${CONFIGFS} does not exist: is sysfs mounted at /sys?"
    mount -t configfs configfs "$CONFIGFS" || die "configfs is not mounted at ${CONFIGFS} and mounting it failed"
    log "mounted configfs at ${CONFIGFS}"
  fi

  if [[ ! -d "$SYSFS/module/null_blk" ]]; then
    command -v modprobe >/dev/null 2>&1 || die "null_blk is not loaded and there is no modprobe to load it (Debian package: kmod)"
    local out
    if ! out=$(modprobe null_blk nr_devices=0 2>&1); then
      die "cannot load null_blk (${out:-modprobe failed}): the kernel needs CONFIG_BLK_DEV_NULL_BLK (on Ubuntu it is in linux-modules-extra-$(uname -r))"
    fi
    log "loaded null_blk with nr_devices=0"
  fi
  local nr=0
  readf nr "$SYSFS/module/null_blk/parameters/nr_devices" || nr=0
  if [[ "$nr" != 0 ]]; then
    log "warning: null_blk was loaded with nr_devices=${nr}, so it made ${nr} non-zoned device(s) of its own (nullb0...); their names are skipped." \
      "To drop them: modprobe -r null_blk && modprobe null_blk nr_devices=0"
  fi
  [[ -d "$NULLB" ]] ||
    die "null_blk is loaded but ${NULLB} is missing: this kernel's null_blk has no configfs interface (needs 4.14 or later)"

  readf FEATURES "$NULLB/features" || FEATURES=""
  local zoned
  if ! has_feature zoned; then
    NO_ZONED="this kernel's null_blk cannot make zoned devices (${NULLB}/features: '${FEATURES}'): needs kernel 4.19 or later"
  elif zoned=$(kernel_config BLK_DEV_ZONED) && [[ "$zoned" != y ]]; then
    NO_ZONED="the kernel is built without zoned block device support (CONFIG_BLK_DEV_ZONED is not set): null_blk cannot power on a zoned device"
  fi
}

# NO_ZONED says why zoned devices cannot be made; empty when they can (as far
# as can be told before trying: without a readable kernel config, power=1 tells).
NO_ZONED=""
require_zoned() {
  [[ -z "$NO_ZONED" ]] || die "$NO_ZONED"
}

has_feature() { [[ ",${FEATURES//[[:space:]]/}," == *",$1,"* ]]; }

# --- helpers --------------------------------------------------------------------------
is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }
need_uint() { is_uint "$2" || die "$1 needs a whole number, got '$2'"; }

setattr() {
  local dev=$1 attr=$2 val=$3
  # a refused write makes bash print the kernel's reason (e.g. Invalid argument)
  { printf '%s\n' "$val" >"$NULLB/$dev/$attr"; } ||
    die "${dev}: setting ${attr}=${val} failed (the kernel's reason is above)$(dmesg_hint)"
}

dmesg_hint() {
  local m
  m=$(dmesg 2>/dev/null | grep -i null_blk | tail -n 3 | sed 's/^/    /') || true
  [[ -n "$m" ]] && printf '\n  kernel log:\n%s' "$m"
  return 0
}

devices() {
  local d
  for d in "$NULLB"/*/; do
    d=${d%/}
    [[ -d "$d" ]] && printf '%s\n' "${d##*/}"
  done
  return 0
}

# disk_of VAR NAME: VAR=the block device configfs device NAME became, empty
# when none. Recent kernels name the disk after the configfs directory, older
# ones nullb<index>.
disk_of() {
  local -n _d=$1
  local idx
  _d=""
  if [[ -d "$SYSFS/block/$2" ]]; then
    _d=$2
  elif readf idx "$NULLB/$2/index" && [[ -d "$SYSFS/block/nullb$idx" ]]; then
    _d=nullb$idx
  fi
}

# cfg VAR NAME ATTR: VAR=a configfs attribute, or - when the kernel lacks it.
cfg() {
  local -n _c=$1
  readf _c "$NULLB/$2/$3" || _c=-
}

# active_scheduler VAR DISK: VAR=the bracketed entry of queue/scheduler.
active_scheduler() {
  local -n _a=$1
  local line
  _a=""
  readf line "$SYSFS/block/$2/queue/scheduler" || return 0
  [[ "$line" =~ \[([^]]+)\] ]] && _a=${BASH_REMATCH[1]}
  return 0
}

remove_device() {
  local name=$1
  [[ -d "$NULLB/$name" ]] || die "no null_blk device ${name} in ${NULLB} (see: $0 list)"
  local power=0
  readf power "$NULLB/$name/power" || true
  if [[ "$power" == 1 ]]; then
    (echo 0 >"$NULLB/$name/power") 2>/dev/null || die "${name}: power=0 failed (is the device in use?)"
  fi
  rmdir "$NULLB/$name" || die "${name}: rmdir ${NULLB}/${name} failed"
}

# --- commands -----------------------------------------------------------------------
CREATED=()
cleanup_created() {
  local n
  for n in "${CREATED[@]}"; do
    [[ -d "$NULLB/$n" ]] || continue
    (echo 0 >"$NULLB/$n/power") 2>/dev/null || true
    rmdir "$NULLB/$n" 2>/dev/null || true
    log "removed ${n} again"
  done
}

cmd_create() {
  local count=1 first="" size=4096 zsize=64 zcap=0 conv=0 maxopen=0 maxactive=0 bs=4096
  local membacked=0 zoned=1 discard=0 sched=mq-deadline zone_opts=()
  while (($#)); do
    case $1 in
      --count) need_uint "$1" "${2-}"; count=$2; shift 2 ;;
      --first) need_uint "$1" "${2-}"; first=$2; shift 2 ;;
      --size) need_uint "$1" "${2-}"; size=$2; shift 2 ;;
      --zone-size) need_uint "$1" "${2-}"; zsize=$2; zone_opts+=("$1"); shift 2 ;;
      --zone-capacity) need_uint "$1" "${2-}"; zcap=$2; zone_opts+=("$1"); shift 2 ;;
      --conv-zones) need_uint "$1" "${2-}"; conv=$2; zone_opts+=("$1"); shift 2 ;;
      --max-open) need_uint "$1" "${2-}"; maxopen=$2; zone_opts+=("$1"); shift 2 ;;
      --max-active) need_uint "$1" "${2-}"; maxactive=$2; zone_opts+=("$1"); shift 2 ;;
      --blocksize) need_uint "$1" "${2-}"; bs=$2; shift 2 ;;
      --memory-backed) membacked=1; shift ;;
      --conventional) zoned=0; shift ;;
      --discard) discard=1; shift ;;
      --scheduler) sched=${2:?--scheduler needs a name}; shift 2 ;;
      *) die "create: unknown option '$1' (see $0 --help)" ;;
    esac
  done

  ((count >= 1)) || die "--count must be at least 1"
  ((size >= 1)) || die "--size must be at least 1 MiB"
  [[ "$bs" == 512 || "$bs" == 4096 ]] || die "--blocksize must be 512 or 4096, got ${bs}"
  if ((zoned)); then
    ((zsize >= 1 && (zsize & (zsize - 1)) == 0)) || die "--zone-size must be a power of two in MiB, got ${zsize}"
    ((size % zsize == 0)) ||
      die "--size ${size} is not a multiple of --zone-size ${zsize}: the last zone would be a smaller runt zone"
    local nzones=$((size / zsize))
    ((zcap <= zsize)) || die "--zone-capacity ${zcap} is larger than --zone-size ${zsize}"
    ((conv < nzones)) || die "--conv-zones ${conv} leaves no sequential zone of the ${nzones}"
    if ((maxactive > 0 && maxopen > maxactive)); then
      die "--max-open ${maxopen} exceeds --max-active ${maxactive}: every open zone is also active"
    fi
  elif ((${#zone_opts[@]})); then
    die "--conventional makes a device without zones; drop ${zone_opts[*]}"
  fi
  if ((discard && (zoned || !membacked))); then
    die "--discard needs --conventional and --memory-backed: null_blk ignores discard on zoned or memory-less devices"
  fi

  check_kernel
  ((zoned)) && require_zoned
  local f
  for f in size blocksize memory_backed power; do
    has_feature "$f" || die "this kernel's null_blk lacks the configfs attribute '${f}' (features: ${FEATURES})"
  done
  ((discard == 0)) || has_feature discard || die "this kernel's null_blk has no discard attribute"
  ((zcap == 0)) || has_feature zone_capacity || die "this kernel's null_blk has no zone_capacity (needs 5.9 or later)"
  ((conv == 0)) || has_feature zone_nr_conv || die "this kernel's null_blk has no zone_nr_conv (needs 5.5 or later)"
  ((maxopen == 0)) || has_feature zone_max_open || die "this kernel's null_blk has no zone_max_open (needs 5.9 or later)"
  ((maxactive == 0)) || has_feature zone_max_active || die "this kernel's null_blk has no zone_max_active (needs 5.9 or later)"

  # names: consecutive from --first, or the lowest free numbers
  local names=() n=${first:-0}
  while ((${#names[@]} < count)); do
    if [[ -e "$NULLB/nullb$n" || -e "$SYSFS/block/nullb$n" ]]; then
      [[ -z "$first" ]] || die "nullb${n} already exists (see: $0 status); destroy it or pick another --first"
    else
      names+=("nullb$n")
    fi
    n=$((n + 1))
  done

  trap cleanup_created EXIT
  local name disk
  for name in "${names[@]}"; do
    mkdir "$NULLB/$name" || die "cannot create ${NULLB}/${name}"
    CREATED+=("$name")
    setattr "$name" blocksize "$bs"
    setattr "$name" size "$size"
    setattr "$name" memory_backed "$membacked"
    ((discard == 0)) || setattr "$name" discard 1
    if ((zoned)); then
      setattr "$name" zoned 1
      setattr "$name" zone_size "$zsize"
      has_feature zone_capacity && setattr "$name" zone_capacity "$zcap"
      has_feature zone_nr_conv && setattr "$name" zone_nr_conv "$conv"
      has_feature zone_max_open && setattr "$name" zone_max_open "$maxopen"
      has_feature zone_max_active && setattr "$name" zone_max_active "$maxactive"
    fi
    setattr "$name" power 1

    disk_of disk "$name"
    [[ -n "$disk" ]] || die "${name} is powered on but no block device appeared$(dmesg_hint)"
    [[ "$disk" == "$name" ]] || log "warning: configfs device ${name} became /dev/${disk} (older kernels name disks by index)"
    local model
    readf model "$SYSFS/block/$disk/queue/zoned"
    if ((zoned)) && [[ "$model" != host-managed ]]; then
      die "${disk} came up as '${model}', not host-managed: is CONFIG_BLK_DEV_ZONED set?"
    fi
    if ((discard)); then
      local dmax=0
      readf dmax "$SYSFS/block/$disk/queue/discard_max_bytes"
      ((dmax > 0)) || die "${disk}: discard=1 was set but the queue takes no discards (discard_max_bytes ${dmax})$(dmesg_hint)"
    fi
    set_scheduler "$disk" "$sched"
    # devtmpfs makes the node at once; under udev it may take a moment
    command -v udevadm >/dev/null 2>&1 && udevadm settle --timeout=10 2>/dev/null
    local w
    for ((w = 0; w < 100; w++)); do [[ -b /dev/$disk ]] && break; sleep 0.1; done
    [[ -b /dev/$disk ]] || die "/dev/${disk} did not appear (is devtmpfs mounted on /dev?)"
    summary "$name" "$disk"
  done
  trap - EXIT
  for name in "${names[@]}"; do
    disk_of disk "$name"
    printf '/dev/%s\n' "$disk"
  done
}

set_scheduler() {
  local disk=$1 sched=$2 q="$SYSFS/block/$1/queue/scheduler" line active
  [[ -e "$q" ]] || die "${disk} has no ${q}: a bio-based queue cannot take the ${sched} scheduler"
  readf line "$q"
  if [[ " ${line//[][]/} " != *" $sched "* ]]; then
    modprobe "$sched" 2>/dev/null || true
    readf line "$q"
    [[ " ${line//[][]/} " == *" $sched "* ]] || die "${disk}: the kernel offers no ${sched} scheduler (${q}: ${line})"
  fi
  { printf '%s\n' "$sched" >"$q"; } || die "${disk}: writing ${sched} to ${q} failed"
  active_scheduler active "$disk"
  [[ "$active" == "$sched" ]] || die "${disk}: the scheduler is '${active}' after setting ${sched}"
}

summary() {
  local name=$1 disk=$2 q="$SYSFS/block/$2/queue"
  local size model bs sched chunk zones cap=0 conv=0 mo=0 ma=0
  readf size "$SYSFS/block/$disk/size"
  readf model "$q/zoned"
  readf bs "$q/logical_block_size"
  active_scheduler sched "$disk"
  if [[ "$model" == none ]]; then
    local dmax=0 discard=off
    readf dmax "$SYSFS/block/$disk/queue/discard_max_bytes" || true
    ((dmax > 0)) && discard=on
    log "/dev/${disk}: conventional, $((size * 512 / 1048576)) MiB, block size ${bs}, scheduler ${sched}, discard ${discard}"
    return
  fi
  readf chunk "$q/chunk_sectors"
  readf zones "$q/nr_zones"
  readf cap "$NULLB/$name/zone_capacity" || true
  readf conv "$NULLB/$name/zone_nr_conv" || true
  readf mo "$q/max_open_zones" || true
  readf ma "$q/max_active_zones" || true
  local zmib=$((chunk * 512 / 1048576))
  ((cap > 0)) || cap=$zmib
  log "/dev/${disk}: ${model}, ${zones} zones of ${zmib} MiB (capacity ${cap} MiB), ${conv} conventional," \
    "max open ${mo:-0}, max active ${ma:-0}, block size ${bs}, scheduler ${sched}"
}

cmd_destroy() {
  (($#)) || die "destroy: name the devices, or --all"
  check_kernel
  local names=()
  if [[ "$1" == --all ]]; then
    (($# == 1)) || die "destroy: --all takes no names"
    mapfile -t names < <(devices)
  else
    local a
    for a in "$@"; do names+=("${a#/dev/}"); done
  fi
  local n
  for n in "${names[@]}"; do
    remove_device "$n"
    log "removed ${n}"
  done
}

cmd_list() {
  (($# == 0)) || die "list takes no arguments"
  check_kernel
  devices
}

cmd_status() {
  check_kernel
  local names=("$@")
  ((${#names[@]})) || mapfile -t names < <(devices)
  local fmt='%-8s %-5s %-12s %8s %5s %8s %7s %4s %8s %10s %5s %3s %s\n'
  # shellcheck disable=SC2059 # $fmt is the table's column format, one for the header and the rows
  printf "$fmt" NAME POWER MODEL SIZE_MIB ZONES ZONE_MIB CAP_MIB CONV MAX_OPEN MAX_ACTIVE BS MEM SCHEDULER
  local n disk model zones zmib cap conv mo ma sched power size bs mem chunk q
  for n in "${names[@]}"; do
    n=${n#/dev/}
    [[ -d "$NULLB/$n" ]] || die "no null_blk device ${n} in ${NULLB} (see: $0 list)"
    disk_of disk "$n"
    model=- zones=- zmib=- cap=- sched=- mo=- ma=-
    if [[ -n "$disk" ]]; then
      q="$SYSFS/block/$disk/queue"
      readf model "$q/zoned"
      active_scheduler sched "$disk"
      sched=${sched:-none}
      if [[ "$model" != none ]]; then
        readf zones "$q/nr_zones"
        readf chunk "$q/chunk_sectors"
        zmib=$((chunk * 512 / 1048576))
        readf mo "$q/max_open_zones" || mo=0
        readf ma "$q/max_active_zones" || ma=0
        cfg cap "$n" zone_capacity
        [[ "$cap" == 0 ]] && cap=$zmib
      fi
    fi
    cfg conv "$n" zone_nr_conv
    [[ "$model" == none ]] && conv=-
    cfg power "$n" power
    cfg size "$n" size
    cfg bs "$n" blocksize
    cfg mem "$n" memory_backed
    # shellcheck disable=SC2059 # $fmt is the table's column format, one for the header and the rows
    printf "$fmt" "${disk:-$n}" "$power" "$model" "$size" "$zones" "$zmib" "$cap" "$conv" "$mo" "$ma" "$bs" "$mem" "$sched"
  done
}

(($#)) || usage
cmd=$1
shift
case $cmd in
  check)
    (($# == 0)) || die "check takes no arguments"
    check_kernel
    require_zoned
    log "ok: configfs at ${CONFIGFS}, null_blk loaded, zoned supported (kernel $(uname -r)); features: ${FEATURES}"
    ;;
  create) cmd_create "$@" ;;
  destroy) cmd_destroy "$@" ;;
  list) cmd_list "$@" ;;
  status) cmd_status "$@" ;;
  -h | --help | help) usage ;;
  *) die "unknown command '${cmd}' (check, create, destroy, list, status; see --help)" ;;
esac
