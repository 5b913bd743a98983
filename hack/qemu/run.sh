#!/usr/bin/env bash
# hack/qemu/run.sh: boot the QEMU test guest, run one command in it, exit with its status.
#
#   hack/qemu/run.sh [options] -- CMD [ARG...]
#
# Options:
#   --share DIR        share the host directory DIR with the guest over 9p, at the
#                      same path (and at /host); CMD starts there, or in the
#                      current directory when that lies inside DIR. The guest
#                      caches it: leave it alone on the host while the guest runs
#   --nullblk 'ARGS'   before CMD, run `hack/nullblk-zoned.sh create ARGS` in the
#                      guest (repeatable; e.g. --nullblk '--count 2 --zone-size 64');
#                      what it prints goes to stderr
#   --zns SPEC         add an emulated NVMe ZNS namespace on a controller of its own
#                      (repeatable). SPEC is `default` or comma-separated key=value
#                      over the defaults zone_size=64M,zone_capacity=60M,
#                      max_open=14,max_active=14,size=2560M (40 zones),lbs=4096,
#                      controller=own; controller=previous puts the namespace on the
#                      controller of the --zns before it instead, as its next
#                      namespace (nvme0n2 after nvme0n1): two namespaces of one drive.
#                      Its image is a fresh sparse file each run.
#   --nvme SPEC        add a conventional emulated NVMe namespace on a controller of
#                      its own (repeatable). SPEC is `default` or comma-separated
#                      key=value over the defaults size=1G,lbs=4096,ocp=on,fdp=off:
#                      ocp=on gives the controller the OCP datacenter SMART log (C0h);
#                      fdp=on puts it in an nvme-subsys with Flexible Data Placement
#                      (endurance group 1, one reclaim group, 8 reclaim unit handles
#                      of 96 MiB units, all 8 on the namespace). Needs a QEMU with both
#                      (10.0 has them, Debian bookworm's 7.2 neither: versions.mk).
#                      The namespaces of --zns and --nvme are nvme0n1, nvme1n1, ... in
#                      the order of the options on the command line (each on the
#                      controller nvme0, nvme1, ... with serial zns<N>, conv<N> or
#                      fdp<N>; a controller=previous namespace is nvme<N>n2, n3, ...);
#                      the command starts once all are there.
#   --disk FILE[,snapshot]
#                      attach FILE (raw) as a virtio disk: /dev/vda, /dev/vdb, ...
#                      in the order given (repeatable). With ,snapshot the guest's
#                      writes go to a temporary file and FILE is left unchanged
#   --env NAME=VALUE   export in the guest (repeatable); ZNS_QEMU_GUEST=1 always is
#   --mem MIB          guest memory (default 1024; memory-backed null_blk data lives there)
#   --smp N            guest CPUs (default 1)
#   --accel tcg|kvm    the accelerator (default tcg: KVM is not usable on every
#                      machine, and a nested KVM guest has been seen to hang)
#   --timeout SECONDS  kill QEMU after this long (default 300); exit 124
#   --console FILE     save the guest's console (kernel messages) to FILE
#   --guest-dir DIR    use this built guest instead of running build-guest.sh
#   --kernel current|6.1
#                      which pinned guest kernel build-guest.sh builds (ZNS_QEMU_KERNEL;
#                      default current: Debian's newest packaged kernel, versions.mk's
#                      QEMU_GUEST_KERNEL_CURRENT_*; 6.1 is bookworm's, the opt-in tier)
#   --append PARAMS    extra kernel command-line parameters
#   ZNS_QEMU_CPU       the guest's CPU model (-cpu; default Westmere-v2: SSE4.2, AES-NI and PCLMULQDQ, no AVX
#                      and no ERMS, whose emulation under TCG is slow: in a 2-vCPU guest on this machine,
#                      openssl's AES-128-GCM ran at 151 MB/s against 8.3 MB/s with -cpu max, reading 3 GB of
#                      /dev/zero took 0.46 s against 5.2 s, 5 mariadbd starts 1.38 s against 1.32 s; TLS in
#                      the zoned node's control plane and the kernel's page clearing are the gain)
#   --hostfwd HOSTPORT:GUESTPORT
#                      give the guest a network interface (QEMU user networking,
#                      restricted: no way out) at 10.0.2.15/24, gateway 10.0.2.2,
#                      and forward 127.0.0.1:HOSTPORT on the host to GUESTPORT in
#                      the guest (repeatable; TCP)
#   --userland         run CMD in the host's own userland: the host's root is
#                      shared read-only over 9p and CMD runs chrooted into it,
#                      with the guest's /proc, /sys, /dev, /run and /tmp, a
#                      writable tmpfs at /mnt and /var/tmp, and the --share
#                      directory writable. What the host has installed (MariaDB,
#                      sysbench, mkfs.btrfs, mkfs.f2fs) runs on the guest's kernel;
#                      the btrfs, f2fs, xfs and ext4 modules are loaded first
#                      (modprobe cannot find the guest's modules from there),
#                      and the loopback interface is up
#
# CMD runs under bash in the guest, as root, with stdin from /dev/null; its
# stdout and stderr (one stream) are printed on stdout once QEMU has exited. The
# guest has busybox, bash, fio, blkzone, the project's nullblk-zoned.sh and
# zloop-zoned.sh (on PATH), null_blk, nvme and configfs modules (zloop where the
# kernel has it), and ZNS_QEMU_GUEST=1 (and with
# --userland, everything the host has).
#
# Exit status: CMD's; 124 when the timeout killed the guest; 125 when the guest
# did not run CMD (build or boot failure, a --nullblk set-up that failed): the
# reason and the console's last lines go to stderr.
# ZNS_QEMU_VERBOSE=1 streams the guest's console to stderr as it runs.
# ZNS_QEMU_DATADIR=DIR[:DIR...] passes each DIR to QEMU as -L (firmware and option
# ROMs). Unset, a qemu-system-x86_64 found outside /usr (a newer Debian package
# unpacked with dpkg -x into PREFIX, PREFIX/usr/bin first on PATH) gets
# -L PREFIX/usr/share/qemu and -L PREFIX/usr/share/seabios, so that it boots
# with its own firmware rather than the installed QEMU's.
set -euo pipefail

log() { printf 'qemu-run: %s\n' "$*" >&2; }
die() { printf 'qemu-run: ERROR: %s\n' "$*" >&2; exit 125; }
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 125; }

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo_root=$(cd "$script_dir/../.." && pwd -P)

share="" accel=tcg mem=1024 smp=1 timeout_s=300 console_out="" guest_dir="" append="" userland=0
nullblk=() nvme=() envs=() hostfwd=() disks=()
while (($#)); do
  case $1 in
    --share) share=${2:?--share needs a directory}; shift 2 ;;
    --nullblk) nullblk+=("${2?--nullblk needs arguments}"); shift 2 ;;
    # one list, so that the namespaces are numbered in command-line order
    --zns | --nvme)
      [[ -n "${2:-}" ]] || die "$1 needs a spec (or default)"
      nvme+=("${1#--}:$2"); shift 2 ;;
    --disk)
      [[ -n "${2:-}" ]] || die "--disk needs FILE or FILE,snapshot"
      disks+=("$2"); shift 2 ;;
    --env) [[ "${2:-}" == *=* ]] || die "--env needs NAME=VALUE"; envs+=("$2"); shift 2 ;;
    --mem) mem=${2:?}; shift 2 ;;
    --smp) smp=${2:?}; shift 2 ;;
    --accel) accel=${2:?}; [[ "$accel" == tcg || "$accel" == kvm ]] || die "--accel takes tcg or kvm"; shift 2 ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --console) console_out=${2:?}; shift 2 ;;
    --guest-dir) guest_dir=${2:?}; shift 2 ;;
    --kernel)
      [[ "${2:-}" == current || "${2:-}" == 6.1 ]] || die "--kernel takes current or 6.1"
      export ZNS_QEMU_KERNEL=$2; shift 2 ;;
    --append) append=${2?}; shift 2 ;;
    --hostfwd)
      [[ "${2:-}" =~ ^[0-9]+:[0-9]+$ ]] || die "--hostfwd needs HOSTPORT:GUESTPORT (e.g. 16443:6443)"
      hostfwd+=("$2"); shift 2 ;;
    --userland) userland=1; shift ;;
    -h | --help) usage ;;
    --) shift; break ;;
    *) die "unknown option '$1' (CMD goes after --; see --help)" ;;
  esac
done
(($#)) || die "no command: hack/qemu/run.sh [options] -- CMD [ARG...]"
[[ "$mem" =~ ^[0-9]+$ && "$smp" =~ ^[0-9]+$ && "$timeout_s" =~ ^[0-9]+$ ]] ||
  die "--mem, --smp and --timeout take whole numbers"

# spec_check OPTION SPEC KEY...: SPEC must be `default` or comma-separated key=value with these keys.
spec_check() {
  local opt=$1 spec=$2 kv
  local -a kvs
  shift 2
  IFS=, read -ra kvs <<<"$spec"
  for kv in "${kvs[@]}"; do
    [[ "$kv" == default || -z "$kv" ]] && continue
    [[ "$kv" == *=* ]] || die "${opt} '${spec}': '${kv}' is not key=value"
    [[ " $* " == *" ${kv%%=*} "* ]] || die "${opt} '${spec}': unknown key '${kv%%=*}' ($*)"
  done
}
# spec_arg SPEC KEY DEFAULT: KEY's value in a checked SPEC (the last one given), else DEFAULT.
spec_arg() {
  local kv v=$3
  local -a kvs
  IFS=, read -ra kvs <<<"$1"
  for kv in "${kvs[@]}"; do [[ "$kv" == "$2"=* ]] && v=${kv#*=}; done
  printf '%s' "$v"
}
zns_before=0
for entry in "${nvme[@]}"; do
  spec=${entry#*:}
  if [[ "$entry" == zns:* ]]; then
    spec_check --zns "$spec" zone_size zone_capacity max_open max_active size lbs controller
    case $(spec_arg "$spec" controller own) in
      own) zns_before=1 ;;
      previous) ((zns_before)) || die "--zns '${spec}': controller=previous needs a --zns on a controller of its own before it" ;;
      *) die "--zns '${spec}': controller takes own or previous" ;;
    esac
    continue
  fi
  spec_check --nvme "$spec" size lbs ocp fdp
  [[ "$(spec_arg "$spec" size 1G)" =~ ^[1-9][0-9]*[KMG]?$ ]] ||
    die "--nvme '${spec}': size takes a whole number of bytes with an optional K, M or G (e.g. 512M)"
  [[ "$(spec_arg "$spec" lbs 4096)" =~ ^(512|4096)$ ]] || die "--nvme '${spec}': lbs takes 512 or 4096"
  for k in ocp fdp; do
    [[ "$(spec_arg "$spec" "$k" on)" =~ ^(on|off)$ ]] || die "--nvme '${spec}': ${k} takes on or off"
  done
done

command -v qemu-system-x86_64 >/dev/null 2>&1 ||
  die "qemu-system-x86_64 not found (Debian package: qemu-system-x86)"
command -v timeout >/dev/null 2>&1 || die "timeout not found (Debian package: coreutils)"
# -L directories: see ZNS_QEMU_DATADIR above
datadirs=()
if [[ -n "${ZNS_QEMU_DATADIR:-}" ]]; then
  IFS=: read -ra datadirs <<<"$ZNS_QEMU_DATADIR"
else
  prefix=$(dirname "$(dirname "$(readlink -f "$(command -v qemu-system-x86_64)")")")
  if [[ "$prefix" != /usr && "$prefix" != /usr/local && -d "$prefix/share/qemu" ]]; then
    datadirs=("$prefix/share/qemu")
    [[ -d "$prefix/share/seabios" ]] && datadirs+=("$prefix/share/seabios")
  fi
fi
for d in "${datadirs[@]}"; do [[ -d "$d" ]] || die "ZNS_QEMU_DATADIR: ${d} is not a directory"; done
# what --nvme asks of QEMU: its OCP log and FDP (10.0 has both, 7.2 neither)
need_ocp=0 need_fdp=0
for entry in "${nvme[@]}"; do
  [[ "$entry" == nvme:* ]] || continue
  [[ $(spec_arg "${entry#*:}" ocp on) == on ]] && need_ocp=1
  [[ $(spec_arg "${entry#*:}" fdp off) == on ]] && need_fdp=1
done
qemu_lacks() {
  die "--nvme with $1=on: $(qemu-system-x86_64 --version | head -n 1) does not emulate $2 (QEMU 10 does:" \
    "hack/install-deps.sh installs versions.mk's QEMU_VERSION from bookworm-backports); or give $1=off"
}
if ((need_ocp)) && ! grep -q '^ *ocp=' <<<"$(qemu-system-x86_64 -device nvme,help 2>&1)"; then
  qemu_lacks ocp "the OCP SMART extended log"
fi
if ((need_fdp)) && ! grep -q '^ *fdp=' <<<"$(qemu-system-x86_64 -device nvme-subsys,help 2>&1)"; then
  qemu_lacks fdp "Flexible Data Placement"
fi

if [[ -z "$guest_dir" ]]; then
  guest_dir=$("$script_dir/build-guest.sh") || die "the guest could not be built (see above)"
fi
[[ -r "$guest_dir/vmlinuz" && -r "$guest_dir/initramfs.cpio" && -d "$guest_dir/sysroot" ]] ||
  die "${guest_dir} holds no vmlinuz, initramfs.cpio and sysroot/"
# the ELF payload boots through PVH without the guest decompressing it (~10 s faster)
kernel="$guest_dir/vmlinuz"
[[ -r "$guest_dir/vmlinux" ]] && kernel="$guest_dir/vmlinux"

((${#disks[@]} <= 26)) || die "at most 26 --disk"
for d in "${disks[@]}"; do
  f=${d%,snapshot}
  [[ "$f" != *,* ]] || die "--disk '${d}': a file name without commas, then ,snapshot or nothing"
  [[ -f "$f" && -r "$f" ]] || die "--disk '${d}': ${f} is not a readable file"
done

if [[ -n "$share" ]]; then
  [[ -d "$share" ]] || die "--share ${share}: not a directory"
  share=$(cd "$share" && pwd -P)
  [[ "$share" != / ]] || die "--share /: share a directory, not the host's root"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zns-qemu.XXXXXX")
qpid=""
# shellcheck disable=SC2317 # called by the traps
cleanup() {
  # timeout passes the TERM on to QEMU
  if [[ -n "$qpid" ]]; then kill "$qpid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
ctl="$tmp/ctl"
mkdir -p "$ctl/bin"
cp "$repo_root/hack/nullblk-zoned.sh" "$repo_root/hack/zloop-zoned.sh" "$ctl/bin/"
chmod 0755 "$ctl/bin/nullblk-zoned.sh" "$ctl/bin/zloop-zoned.sh"

# --- QEMU command line --------------------------------------------------------------
qemu=(qemu-system-x86_64 -accel "$accel" -M q35 -cpu "${ZNS_QEMU_CPU:-Westmere-v2}" -smp "$smp" -m "$mem"
  -nographic -nodefaults -serial stdio -no-reboot
  -kernel "$kernel" -initrd "$guest_dir/initramfs.cpio"
  -append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init mitigations=off cryptomgr.notests no_timer_check${append:+ $append}"
  -virtfs "local,path=$guest_dir/sysroot,mount_tag=znsroot,security_model=none,readonly=on,multidevs=remap"
  -virtfs "local,path=$ctl,mount_tag=znsctl,security_model=none,multidevs=remap")
for d in "${datadirs[@]}"; do qemu+=(-L "$d"); done
if [[ -n "$share" ]]; then
  qemu+=(-virtfs "local,path=$share,mount_tag=host0,security_model=none,multidevs=remap")
fi
if ((userland)); then
  qemu+=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap")
fi

if ((${#hostfwd[@]})); then
  # restrict=on: the guest reaches nothing outside; only the forwarded ports reach it
  netdev="user,id=net0,restrict=on"
  for f in "${hostfwd[@]}"; do netdev+=",hostfwd=tcp:127.0.0.1:${f%%:*}-:${f#*:}"; done
  # romfile=: no iPXE option ROM (the kernel is booted directly)
  qemu+=(-netdev "$netdev" -device "virtio-net-pci,netdev=net0,romfile=")
fi

# i counts controllers, img_i images; nvme_names are the block devices the guest waits for
i=0 img_i=0 zns_ctrl=-1 zns_nsid=0 nvme_names=() nvme_serials=()
for entry in "${nvme[@]}"; do
  spec=${entry#*:} img="$tmp/nvme$img_i.img"
  img_i=$((img_i + 1))
  size=$(spec_arg "$spec" size 2560M)
  [[ "$entry" == nvme:* ]] && size=$(spec_arg "$spec" size 1G)
  lbs=$(spec_arg "$spec" lbs 4096)
  truncate -s "$size" "$img" || die "--${entry%%:*} '${spec}': cannot create a ${size} image"
  if [[ "$entry" == zns:* ]]; then
    zoned="zoned=true,zoned.zone_size=$(spec_arg "$spec" zone_size 64M),zoned.zone_capacity=$(spec_arg "$spec" zone_capacity 60M),zoned.max_open=$(spec_arg "$spec" max_open 14),zoned.max_active=$(spec_arg "$spec" max_active 14)"
    if [[ $(spec_arg "$spec" controller own) == previous ]]; then
      zns_nsid=$((zns_nsid + 1))
      qemu+=(-drive "file=$img,id=zns${zns_ctrl}ns${zns_nsid},format=raw,if=none"
        -device "nvme-ns,drive=zns${zns_ctrl}ns${zns_nsid},bus=nvme$zns_ctrl,nsid=$zns_nsid,logical_block_size=$lbs,physical_block_size=$lbs,$zoned")
      nvme_names+=("nvme${zns_ctrl}n${zns_nsid}")
      continue
    fi
    zns_ctrl=$i zns_nsid=1
    nvme_serials+=("zns$i")
    qemu+=(-device "nvme,serial=zns$i,id=nvme$i"
      -drive "file=$img,id=zns$i,format=raw,if=none"
      -device "nvme-ns,drive=zns$i,bus=nvme$i,nsid=1,logical_block_size=$lbs,physical_block_size=$lbs,$zoned")
  else
    ctrl="nvme,id=nvme$i"
    # named only when on: QEMU < 9 has no such property
    [[ $(spec_arg "$spec" ocp on) == on ]] && ctrl+=",ocp=on"
    ns="nvme-ns,drive=nvmeimg$i,bus=nvme$i,nsid=1,logical_block_size=$lbs,physical_block_size=$lbs"
    if [[ $(spec_arg "$spec" fdp off) == on ]]; then
      # FDP lives in an NVM subsystem's endurance group (QEMU has one, id 1)
      qemu+=(-device "nvme-subsys,id=subsys$i,nqn=zns-fdp$i,fdp=on,fdp.runs=96M,fdp.nrg=1,fdp.nruh=8")
      ctrl+=",serial=fdp$i,subsys=subsys$i" ns+=",fdp.ruhs=0-7"
      nvme_serials+=("fdp$i")
    else
      ctrl+=",serial=conv$i"
      nvme_serials+=("conv$i")
    fi
    qemu+=(-device "$ctrl" -drive "file=$img,id=nvmeimg$i,format=raw,if=none" -device "$ns")
  fi
  nvme_names+=("nvme${i}n1")
  i=$((i + 1))
done
n_nvme=$i
i=0
for d in "${disks[@]}"; do
  f=${d%,snapshot} opts=""
  [[ "$d" == *,snapshot ]] && opts=",snapshot=on"
  qemu+=(-drive "file=$f,id=disk$i,format=raw,if=none$opts" -device "virtio-blk-pci,drive=disk$i,romfile=")
  i=$((i + 1))
done
n_disks=$i

# --- the guest's script ---------------------------------------------------------------
workdir=${share:-/root}
if [[ -n "$share" ]]; then
  here=$(pwd -P)
  [[ "$here" == "$share" || "$here" == "$share"/* ]] && workdir=$here
fi
# shellcheck disable=SC2016 # the $ are the guest script's own
{
  echo '# generated by hack/qemu/run.sh; run by the guest init'
  echo 'set -uo pipefail'
  echo 'ctl=/run/zns'
  echo 'cut -d" " -f1 /proc/uptime >"$ctl/boot-seconds"'
  echo 'fail() { echo "qemu-guest: $*" >>"$ctl/output"; echo "$*" >"$ctl/setup-error"; dmesg >"$ctl/dmesg" 2>&1; exit 0; }'
  printf 'share=%q n_nvme=%d n_disks=%d workdir=%q userland=%d network=%d\n' "$share" "$n_nvme" "$n_disks" "$workdir" "$userland" "${#hostfwd[@]}"
  printf 'nvme_names=%q nvme_serials=%q\n' "${nvme_names[*]}" "${nvme_serials[*]}"
  cat <<'EOF'
# modprobe_present MODULE...: load those of the modules this kernel has (the CRC helpers that 6.1 looks up
# by name are a built-in library from 6.14 on, and their modules are gone)
modprobe_present() {
  local m have=()
  for m; do grep -q "/${m}\.ko" "/lib/modules/$(uname -r)/modules.dep" && have+=("$m"); done
  ((${#have[@]} == 0)) || modprobe -a "${have[@]}"
}
if [[ -n "$share" ]]; then
  mkdir -p "$share" || fail "cannot create ${share}"
  # cache=loose: executables run from the share start 10-50x faster than with
  # cache=none; the host must not change the share while the guest runs, and
  # the guest's writes reach the host at the sync below
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose host0 "$share" || fail "cannot mount ${share} (9p tag host0)"
  [[ "$share" == /host ]] || ln -s "$share" /host
fi
if ((n_nvme > 0)); then
  # nvme-core finds its CRC helpers by algorithm name, not through modules.dep
  modprobe_present crc64_rocksoft_generic crct10dif_generic || fail "cannot load the CRC helpers of nvme"
  # QEMU 10 (not 7.2) sets CMIC bit 1 (more than one controller may reach the subsystem), for which a kernel with
  # NVMe multipath makes nvme<N>n1 a bio-based head device: no I/O scheduler (ZenFS needs mq-deadline),
  # no zone open/active limits and, on 6.1, no I/O statistics; the real disk is the hidden path device
  # nvme<N>c<N>n1. Without multipath the namespace is a plain disk, as a single-ported drive's is.
  modprobe nvme_core multipath=N || fail "cannot load nvme_core with multipath=N"
  # Each controller in its own subsystem: the kernel names a namespace nvme<N>n<I> with N the controller's
  # instance, given as the driver probes them. nvme probes asynchronously, so with autoprobe the instances can
  # come out of order (seen on 7.3 with two controllers: the conventional namespace became nvme0n1). Binding
  # one controller at a time, in PCI order (QEMU's, the order of the options), makes N that order.
  # I is the namespace's instance in its subsystem, given in the order the namespaces are found: 6.1 scans them
  # one after the other (I is the NSID), 7.3 all at once, so that a controller's NSID 2 can become nvme0n1 (7 of
  # 20 binds under TCG). A controller whose nvme<N>n<I> is not NSID I is unbound and bound again.
  echo 0 >/sys/bus/pci/drivers_autoprobe || fail "cannot turn off PCI autoprobe"
  modprobe nvme || fail "cannot load nvme"
  c=0
  for d in /sys/bus/pci/devices/*; do
    read -r class <"$d/class" && [[ "$class" == 0x010802 ]] || continue
    names=()
    for n in $nvme_names; do [[ "$n" == "nvme${c}n"* ]] && names+=("$n"); done
    for ((try = 1; ; try++)); do
      echo "${d##*/}" >/sys/bus/pci/drivers/nvme/bind || fail "cannot bind the NVMe controller ${d##*/} to nvme"
      in_order=1
      for n in "${names[@]}"; do
        for ((w = 0; w < 200; w++)); do [[ -e /sys/block/$n && -e /dev/$n ]] && break; sleep 0.05; done
        [[ -e /dev/$n ]] || fail "$n did not appear"
      done
      for n in "${names[@]}"; do
        read -r nsid <"/sys/block/$n/nsid" || fail "$n has no nsid in sysfs"
        [[ "$nsid" == "${n##*n}" ]] || in_order=0
      done
      ((in_order)) && break
      ((try < 20)) || fail "the namespaces of the NVMe controller nvme$c came up out of NSID order in 20 binds"
      echo "nvme$c: its namespaces came up out of NSID order: binding it again" >>"$ctl/setup.log"
      echo "${d##*/}" >/sys/bus/pci/drivers/nvme/unbind || fail "cannot unbind the NVMe controller ${d##*/}"
    done
    c=$((c + 1))
  done
  echo 1 >/sys/bus/pci/drivers_autoprobe || fail "cannot turn PCI autoprobe back on"
  # the serial is read with the controller's identify data, which is there once its namespaces are
  c=0
  for want in $nvme_serials; do
    read -r got <"/sys/class/nvme/nvme$c/serial" || got=missing
    [[ "$got" == "$want" ]] || fail "the NVMe controller nvme$c has serial '${got}', not ${want}: the namespaces are not in the order of the options"
    c=$((c + 1))
  done
fi
if ((n_disks > 0)); then
  modprobe virtio_blk || fail "cannot load virtio_blk"
  letters=abcdefghijklmnopqrstuvwxyz
  for ((i = 0; i < n_disks; i++)); do
    d=/dev/vd${letters:i:1}
    for ((w = 0; w < 200; w++)); do [[ -e $d ]] && break; sleep 0.05; done
    [[ -e $d ]] || fail "${d} (--disk) did not appear"
  done
fi
if ((network)); then
  # QEMU's user network: the guest is 10.0.2.15, the host side 10.0.2.2
  modprobe virtio_net || fail "cannot load virtio_net"
  # netfilter, for a kube-proxy in the guest (iptables-nft): inside the userland modprobe finds no modules
  modprobe -a nf_tables nft_compat nft_chain_nat nft_nat nft_masq nft_ct nft_reject_ipv4 nft_numgen nft_limit \
    nf_conntrack nf_nat xt_conntrack xt_comment xt_mark xt_MASQUERADE xt_addrtype xt_statistic xt_nat \
    xt_multiport xt_tcpudp ipt_REJECT || fail "cannot load the netfilter modules"
  for ((w = 0; w < 200; w++)); do [[ -e /sys/class/net/eth0 ]] && break; sleep 0.05; done
  ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2 ||
    fail "cannot configure eth0"
fi
# bash reads a script from the uncached control mount a few bytes at a
# time: a copy on tmpfs runs twice as fast
mkdir -p /run/bin && cp "$ctl"/bin/* /run/bin/ || fail "cannot copy the run's scripts to /run/bin"
export PATH="/run/bin:$PATH" ZNS_QEMU_GUEST=1 HOME=/root TMPDIR=/tmp
EOF
  for e in "${envs[@]}"; do printf 'export %q\n' "$e"; done
  for spec in "${nullblk[@]}"; do
    printf 'nullblk-zoned.sh create %s >>"$ctl/setup.log" 2>&1 || fail %q\n' "$spec" "nullblk-zoned.sh create ${spec} failed"
  done
  printf 'cd %q || fail %q\n' "$workdir" "cannot cd to ${workdir}"
  cat <<'EOF'
if ((userland)); then
  # The host's programs on the guest's kernel: the host's root read-only, the
  # guest's own kernel file systems and scratch space over it. Modules are
  # loaded here: inside, modprobe would look for them on the host.
  modprobe -a btrfs f2fs xfs ext4 || fail "cannot load the file system modules"
  modprobe_present crc32c_generic xxhash_generic || fail "cannot load crc32c_generic and xxhash_generic"
  # zloop, where the kernel has it as a module (zloop-zoned.sh cannot modprobe it from inside; a ZLOOP_MODULE it
  # loads with insmod)
  modprobe_present zloop || fail "cannot load zloop"
  # veth, overlay, loop: pod interfaces, root file systems and block-volume pins of a kubelet in the guest
  # (docs/zoned-node.md)
  modprobe -a veth overlay loop || fail "cannot load veth, overlay and loop"
  # servers and clients on 127.0.0.1: the guest's loopback starts down
  ip link set lo up || fail "cannot bring up the loopback interface"
  u=/userland
  mkdir -p "$u"
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro hostroot "$u" ||
    fail "cannot mount the host's root (9p tag hostroot)"
  for d in proc sys dev run tmp; do mount -o rbind "/$d" "$u/$d" || fail "cannot bind /$d into the userland"; done
  for d in mnt var/tmp; do mount -t tmpfs tmpfs "$u/$d" || fail "cannot mount a tmpfs at /$d in the userland"; done
  if [[ -n "$share" ]]; then mount -o bind "$share" "$u$share" || fail "cannot bind ${share} into the userland"; fi
  # The userland becomes the root of the mount namespace, as switch_root does, not a chroot below it: a
  # process that joins a mount namespace (runc exec, kubectl exec, exec probes) starts at the namespace's
  # root; below a plain chroot that is the initramfs, where a container's working directory does not exist
  # ("chdir to cwd ... no such file or directory"). This shell keeps its own root (the initramfs).
  cd "$u" && mount --move . / || fail "cannot move the userland to /"
  in_userland() { chroot . /usr/bin/env PATH="$PATH" HOME=/tmp bash -c 'cd "$1" && shift && exec "$@"' userland "$workdir" "$@"; }
else
  in_userland() { "$@"; }
fi
EOF
  echo 'cut -d" " -f1 /proc/uptime >"$ctl/cmd-start"'
  if [[ "${ZNS_QEMU_VERBOSE:-0}" == 1 ]]; then
    printf 'in_userland '; printf '%q ' "$@"
    echo '</dev/null 2>&1 | tee -a "$ctl/output" >/dev/console; rc=${PIPESTATUS[0]}'
  else
    printf 'in_userland '; printf '%q ' "$@"
    echo '</dev/null >>"$ctl/output" 2>&1; rc=$?'
  fi
  echo 'cut -d" " -f1 /proc/uptime >"$ctl/cmd-end"'
  echo 'dmesg >"$ctl/dmesg" 2>&1'
  echo 'sync'
  echo 'echo "$rc" >"$ctl/status"'
} >"$ctl/guest.sh"

# --- boot ---------------------------------------------------------------------------------
t0=${EPOCHREALTIME/,/.}
console="$tmp/console.log"
set +e
if [[ "${ZNS_QEMU_VERBOSE:-0}" == 1 ]]; then
  # in the background like below, so that a TERM to this script stops QEMU (timeout gives it a process group
  # of its own)
  timeout --kill-after=10 "$timeout_s" "${qemu[@]}" </dev/null > >(tee "$console" >&2) 2>&1 &
  qpid=$!
  wait "$qpid"
  qrc=$?
  qpid=""
else
  timeout --kill-after=10 "$timeout_s" "${qemu[@]}" </dev/null >"$console" 2>&1 &
  qpid=$!
  wait "$qpid"
  qrc=$?
  qpid=""
fi
set -e
wall=$(awk -v a="$t0" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.1f", b - a }')

[[ -n "$console_out" ]] && cp "$console" "$console_out"
# the --nullblk set-up is the run's business, not the command's: stderr
[[ -s "$ctl/setup.log" ]] && sed 's/^/qemu-run: setup: /' "$ctl/setup.log" >&2
[[ -r "$ctl/output" ]] && cat "$ctl/output"

show_console() {
  log "last lines of the guest console:"
  tail -n 40 "$console" | sed 's/^/  | /' >&2
  if [[ -s "$ctl/dmesg" ]]; then
    log "last lines of the guest's dmesg:"
    tail -n 20 "$ctl/dmesg" | sed 's/^/  | /' >&2
  fi
}
if [[ "$qrc" == 124 || "$qrc" == 137 ]]; then
  log "timed out after ${timeout_s}s (--timeout); the guest was killed"
  show_console
  exit 124
fi
if [[ -r "$ctl/setup-error" ]]; then
  log "the guest did not run the command: $(cat "$ctl/setup-error")"
  show_console
  exit 125
fi
if [[ ! -r "$ctl/status" ]]; then
  log "the guest exited (QEMU status ${qrc}) without running the command to its end"
  show_console
  exit 125
fi
rc=$(cat "$ctl/status")
log "$(awk -v boot="$(cat "$ctl/boot-seconds")" -v s="$(cat "$ctl/cmd-start")" -v e="$(cat "$ctl/cmd-end")" -v w="$wall" -v rc="$rc" \
  'BEGIN { printf "guest up at %.1fs, command %.1fs, exit %d; wall %.1fs", boot, e - s, rc, w }')"
exit "$rc"
