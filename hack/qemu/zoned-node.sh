#!/usr/bin/env bash
# hack/qemu/zoned-node.sh: a Kubernetes node whose kernel has zoned block devices, for machines whose own
# kernel has none (a kind node shares the host's kernel). The QEMU guest (hack/qemu/run.sh --userland: a
# Debian kernel with null_blk zoned and NVMe ZNS, by default versions.mk's current one, 7.3 from
# trixie-backports, or bookworm's 6.1 with ZNS_QEMU_KERNEL=6.1; the host's root read-only over 9p) runs a
# whole single-node cluster from what the project already builds: etcd and the control plane, kubelet and kube-proxy
# (hack/kubernetes.sh), containerd, runc, the CNI plugins, CoreDNS and pause (the offline kind node image's
# parts). No registry: the images are imported from a `docker save` over 9p on the first boot of a set of
# images, and kept on a disk image that later boots mount copy-on-write. docs/zoned-node.md has the why and
# the figures.
#
#   hack/qemu/zoned-node.sh up       boot it in the background and wait until the node is Ready with the images
#                                    imported; stdout: the kubeconfig (API server forwarded to 127.0.0.1 only)
#   hack/qemu/zoned-node.sh env      the settings for the e2e suite and the demo, as export lines
#   hack/qemu/zoned-node.sh down     stop it (the devices are memory-backed: their data goes with the guest)
#   hack/qemu/zoned-node.sh status
#   hack/qemu/zoned-node.sh kubectl ARGS...   kubectl on the node's cluster
#
# The node is named zns-guest. Its devices: nullb0 (zoned, 32 zones of 64 MiB), nullb1 (zoned, 16 MiB zones
# with 16 conventional zones: f2fs needs them), nullb2 (conventional), nullb3 and nullb4 (zoned, 64 MiB zones, the
# first 8 conventional: zoned XFS's metadata section), all memory-backed, 2 GiB each; nvme0n1
# (emulated NVMe ZNS, 40 zones of 64 MiB, 14 open/active), nvme0n2 (a second ZNS namespace of nvme0n1's
# controller, 64 zones of 16 MiB: two devices of one drive) and nvme1n1 (emulated conventional NVMe, 1 GiB, its
# controller with the OCP SMART extended log: needs QEMU >= 9, versions.mk's QEMU_VERSION). Device nodes are
# root:disk 0660, as udev makes them; tracefs is mounted at /sys/kernel/tracing (the drive sidecar's block trace).
#
# Environment: ZNS_NODE_ACCEL auto (default: KVM when /dev/kvm works, else TCG), kvm or tcg;
# ZNS_NODE_MEM (MiB, default 8192); ZNS_NODE_BOOT_TIMEOUT (seconds until Ready with the images, default 2700);
# ZNS_NODE_IMAGE_DISK=0 imports the images on every boot instead of keeping them on a disk image
# ($ZNS_CACHE_DIR/zoned-node-images/, sparse, one at a time); ZNS_NODE_IMAGE_DISK_ON_HOST=0 has the guest import
# them into a new disk instead of the host (hack/qemu/image-disk.sh, when root); ZNS_CACHE_DIR;
# ZNS_NODE_OWNER (a PID) and ZNS_NODE_OWNER_WHAT: the run that uses the node (make test, make demo);
# ZNS_QEMU_KERNEL (current, the default, or 6.1): the guest kernel (hack/qemu/build-guest.sh).
# There is one node per machine: while its owner is alive, up and down from another owner refuse, saying whose
# it is (a second make test on the same machine once stopped the first one's node in the middle of its tests);
# without ZNS_NODE_OWNER, down stops it whoever uses it.
# Progress goes to stderr at least every 30 s; the guest's output is in $ZNS_CACHE_DIR/zoned-node/guest.log, QEMU's
# monitor on the unix socket $ZNS_CACHE_DIR/zoned-node/monitor.sock ('info jit': TCG's code cache and its flushes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
exec 3>&1 1>&2

TOOL_NAME=zoned-node
# shellcheck source=hack/lib/tool-common.sh
source hack/lib/tool-common.sh

state=$cache_root/zoned-node
share=$state/share
kubeconfig=$state/kubeconfig
images_dir=$cache_root/zoned-node-images
mkdir -p "$state"

running() { [[ -s "$state/pid" ]] && kill -0 "$(cat "$state/pid")" 2>/dev/null; }

# foreign_owner: whether the running node belongs to another live run than $ZNS_NODE_OWNER; prints it.
foreign_owner() {
  local pid what
  [[ -n "${ZNS_NODE_OWNER:-}" && -s "$state/owner" ]] && running || return 1
  read -r pid what <"$state/owner"
  [[ "$pid" != "$ZNS_NODE_OWNER" ]] && kill -0 "$pid" 2>/dev/null || return 1
  printf 'pid %s, %s' "$pid" "${what:-its owner}"
}

# refuse_foreign WHAT: die when the node is another live run's.
refuse_foreign() {
  local o
  if o=$(foreign_owner); then
    die "cannot $1 the zoned node: another run uses it (${o}); wait until it ends, or stop the node by hand with hack/qemu/zoned-node.sh down"
  fi
}

down() {
  refuse_foreign stop
  if running; then
    local pid
    pid=$(cat "$state/pid")
    local cpu
    # the guest's own account of where its CPU went (hack/qemu/guest-node/node.sh), every 5 minutes
    cpu=$(grep -a 'zoned-node: cpu since boot' "$state/guest.log" 2>/dev/null | tail -n1 | tr -d '\r' || true)
    [[ -z $cpu ]] || log "${cpu#zoned-node: }"
    log "stopping the node (QEMU process group ${pid})"
    kill -TERM -- "-${pid}" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-${pid}" 2>/dev/null || true
  fi
  # QEMU is run.sh's child in its process group, and dies with it (hack/qemurun): nothing to look for by name
  rm -f "$state/pid" "$state/ready" "$state/owner"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on.
free_port() {
  local p
  for p in $(seq 16443 16543); do
    (exec 9<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { printf '%s' "$p"; return 0; }
  done
  die "no free port in 16443-16543 for the API server's forward"
}

# accel: kvm when /dev/kvm can be opened, is hardware KVM and ZNS_NODE_ACCEL allows it, else tcg.
accel() {
  case ${ZNS_NODE_ACCEL:-auto} in
    tcg) echo tcg ;;
    kvm) echo kvm ;;
    auto)
      if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
        echo tcg
      elif [[ -d /sys/module/kvm_pvm && ! -d /sys/module/kvm_intel && ! -d /sys/module/kvm_amd ]]; then
        # PVM (a KVM for CPUs without VMX/SVM, as in some cloud VMs) runs guest kernels built for it; the
        # Debian guest kernel did not start under it in 120 s (measured): do not spend them
        log "/dev/kvm is kvm_pvm here, which does not boot the Debian guest kernel: TCG (ZNS_NODE_ACCEL=kvm tries it anyway)"
        echo tcg
      else
        echo kvm
      fi
      ;;
    *) die "ZNS_NODE_ACCEL must be auto, kvm or tcg" ;;
  esac
}

# prepare: everything the guest reads, in $share (the guest caches the share: it is not changed while it runs).
prepare() {
  local guest_dir assets parts tag
  guest_dir=$(heartbeat "QEMU guest" "hack/qemu/build-guest.sh" hack/qemu/build-guest.sh) ||
    die "building the QEMU guest failed (above); hack/qemu/build-guest.sh alone shows it again"
  assets=$(heartbeat "Kubernetes binaries" "hack/kubernetes.sh node; 8-12 min the first time" hack/kubernetes.sh node) ||
    die "building the Kubernetes binaries failed (above); a rerun resumes from the Go build cache"
  parts=$cache_root/kind/parts
  if ! compgen -G "$parts/containerd-v*/containerd" >/dev/null || ! compgen -G "$parts/coredns-v*/coredns" >/dev/null ||
    ! compgen -G "$parts/kubernetes-*/pause" >/dev/null; then
    # ZNS_KIND_REBUILD=1: the kind node image can be in Docker while this cache lacks its parts (another cache
    # directory built it, or this one was emptied), and its fast path would then build none of them.
    heartbeat "node parts" "hack/kind/build-node-image.sh builds containerd, runc, CNI, CoreDNS, pause" \
      env ZNS_KIND_REBUILD=1 hack/kind/build-node-image.sh >/dev/null ||
      die "building the node's parts failed (above); ZNS_KIND_REBUILD=1 hack/kind/build-node-image.sh alone shows it again"
  fi
  mkdir -p "$share"
  tag=$(hack/kind/load-images.sh --save "$state/images.tar" bench mariadb operator) ||
    die "building or saving the images failed (above); hack/images/build.sh bench mariadb operator shows it again"
  # The sandbox image: the pause binary the node image built, as an image of its own (no registry).
  local pause
  pause=$(compgen -G "$parts/kubernetes-*/pause" | head -n1)
  [[ -x "$pause" ]] || die "no pause binary under ${parts}/kubernetes-*: run hack/kind/build-node-image.sh"
  if [[ ! -s "$state/pause.tar" || "$pause" -nt "$state/pause.tar" ]]; then
    local d
    d=$(mktemp -d)
    cp "$pause" "$d/pause"
    tar -C "$d" -cf "$d/root.tar" pause
    docker import --change 'ENTRYPOINT ["/pause"]' "$d/root.tar" zns.local/pause:1 >/dev/null
    docker save -o "$state/pause.tar" zns.local/pause:1
    rm -rf "$d"
  fi
  rm -rf "$share"
  mkdir -p "$share"
  # hard links: the share is one directory the guest sees; the images are not copied
  ln "$state/images.tar" "$share/images.tar" 2>/dev/null || cp "$state/images.tar" "$share/images.tar"
  ln "$state/pause.tar" "$share/pause.tar" 2>/dev/null || cp "$state/pause.tar" "$share/pause.tar"
  tr ' ' '\n' <"$state/images.tar.tags" >"$share/images.list"
  image_disk "$tag" "$parts"
  cp hack/qemu/guest-node/node.sh "$share/node.sh"
  # A bearer token for this node's life, known to the API server (system:masters) and the kubeconfig below.
  (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$share/token")
  printf '%s\n' "$tag" >"$state/tag"
  printf '%s\n' "$guest_dir" >"$state/guest-dir"
  assets=$(guest_visible "$assets" assets)
  parts=$(guest_visible "$parts" parts)
  printf '%s\n%s\n' "$assets" "$parts" >"$state/paths"
}

# guest_visible DIR NAME: DIR, or a hard-linked copy of it in the share when the guest cannot see it. The guest
# sees the host's root read-only but has its own /tmp, /run, /dev, /proc and /sys, so a cache under one of them
# (ZNS_CACHE_DIR=/tmp/...) is empty there; the share is mounted at its host path wherever it is, and lies in the
# same cache, so the links cost nothing (a copy when they cannot be made).
guest_visible() {
  case $1 in
    /tmp/* | /run/* | /dev/* | /proc/* | /sys/*) ;;
    *) printf '%s' "$1"; return 0 ;;
  esac
  local dst=$share/$2
  rm -rf "$dst"
  cp -al "$1" "$dst" 2>/dev/null || cp -a "$1" "$dst" || die "cannot copy ${1} into the guest's share ${share}"
  log "${1} lies where the guest has its own directory: its ${2} are linked into the share" >&2
  printf '%s' "$dst"
}

# image_disk TAG PARTS: choose the image disk of this boot. Importing the images takes 5 min of a TCG boot: the
# host imports them with the node's containerd and writes its root onto a disk image (hack/qemu/image-disk.sh,
# root only), or else the guest imports them and copies containerd's root onto the disk once ("fill"). Later
# boots of the same images, pause and containerd mount it copy-on-write ("use": the file is never changed by
# them). New images (a new build of the Go binaries) make a new disk, which replaces the old one: mounting the
# old one and importing over it was measured slower (the whole save is read and hashed either way) and grew the
# disk each time. ZNS_NODE_IMAGE_DISK_ON_HOST=0 leaves the import to the guest.
image_disk() {
  local key
  rm -f "$state/disk"
  if [[ "${ZNS_NODE_IMAGE_DISK:-1}" == 0 ]]; then
    log "image disk off (ZNS_NODE_IMAGE_DISK=0): the guest imports the images"
    return 0
  fi
  key=$({ printf 'image disk v1\n%s\n' "$1"; sha256sum <"$state/pause.tar"; compgen -G "$2/containerd-v*" | head -n1 | xargs basename; } |
    sha256sum | cut -c1-16)
  mkdir -p "$images_dir"
  find "$images_dir" -maxdepth 1 -name '*.img.part' -delete
  if [[ -s "$images_dir/$key.img" ]]; then
    printf 'use\n' >"$share/image-disk"
    printf '%s,snapshot\n' "$images_dir/$key.img" >"$state/disk"
    log "images from the image disk of an earlier boot ($images_dir/$key.img)"
    return 0
  fi
  local containerd
  containerd=$(dirname "$(compgen -G "$2/containerd-v*/containerd" | head -n1)")
  if [[ "${ZNS_NODE_IMAGE_DISK_ON_HOST:-1}" != 0 ]]; then
    if heartbeat "image disk" "the images imported on the host" hack/qemu/image-disk.sh "$images_dir/$key.img.part" \
      "$containerd" "$state/pause.tar" "$state/images.tar"; then
      find "$images_dir" -maxdepth 1 -name '*.img' -delete
      mv "$images_dir/$key.img.part" "$images_dir/$key.img"
      printf 'use\n' >"$share/image-disk"
      printf '%s,snapshot\n' "$images_dir/$key.img" >"$state/disk"
      log "images imported on the host into $images_dir/$key.img"
      return 0
    fi
    rm -f "$images_dir/$key.img.part"
    log "the image disk was not made on the host (above): the guest imports the images (about 5 min under TCG)"
  fi
  truncate -s 16G "$images_dir/$key.img.part"
  printf 'fill\n' >"$share/image-disk"
  printf '%s\n' "$images_dir/$key.img.part" >"$state/disk"
  log "no image disk for these images yet: the guest imports them and keeps them on $images_dir/$key.img"
}

# keep_image_disk: after the guest wrote a new image disk, it replaces the old one for later boots; a disk the
# guest could not use is dropped.
keep_image_disk() {
  local disk
  disk=$(cat "$state/disk" 2>/dev/null) || return 0
  if [[ "$disk" == *,snapshot ]]; then
    if grep -aqE 'zoned-node: WARNING: (cannot mount the image disk|the image disk lacks)' "$state/guest.log"; then
      rm -f "${disk%,snapshot}"
      log "the image disk ${disk%,snapshot} was unusable (${state}/guest.log): removed"
    fi
  elif grep -aq 'zoned-node: image disk written' "$state/guest.log"; then
    find "$images_dir" -maxdepth 1 -name '*.img' -delete
    mv "$disk" "${disk%.part}"
    log "the images are kept on ${disk%.part} ($(du -m "${disk%.part}" | cut -f1) MiB): the next boots skip the import"
  else
    rm -f "$disk"
    log "the guest did not write the image disk (${state}/guest.log says why): the next boot imports the images again"
  fi
}

up() {
  refuse_foreign "take over"
  if running && [[ -e "$state/ready" ]]; then
    log "already up ($(cat "$state/accel" 2>/dev/null)); hack/qemu/zoned-node.sh down stops it"
    printf '%s\n' "$kubeconfig" >&3
    return 0
  fi
  down
  local t0=$SECONDS
  prepare
  local port assets parts guest_dir acc
  port=$(free_port)
  { read -r assets && read -r parts; } <"$state/paths"
  guest_dir=$(cat "$state/guest-dir")
  (
    umask 077
    cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: zns-guest, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: zns-guest-admin, user: {token: "$(cat "$share/token")"}}]
contexts: [{name: zns-guest, context: {cluster: zns-guest, user: zns-guest-admin}}]
current-context: zns-guest
EOF
  )
  acc=$(accel)
  boot "$acc" "$port" "$assets" "$parts" "$guest_dir"
  if [[ "$acc" == kvm ]] && ! wait_started 120; then
    log "under KVM the guest did not start its command within 120 s (a nested KVM guest can hang): TCG instead"
    down
    boot tcg "$port" "$assets" "$parts" "$guest_dir"
  fi
  wait_ready "$t0"
  keep_image_disk
  printf '%s\n' "$kubeconfig" >&3
}

# boot ACCEL PORT ASSETS PARTS GUEST-DIR: start the guest in the background.
boot() {
  local acc=$1 port=$2 assets=$3 parts=$4 guest_dir=$5 cpus=2 mem=${ZNS_NODE_MEM:-8192} disk=()
  [[ -s "$state/disk" ]] && disk=(--disk "$(cat "$state/disk")")
  printf '%s\n' "$acc" >"$state/accel"
  log "booting the node (QEMU, ${acc}, ${cpus} CPUs, ${mem} MiB, kernel $(cat "$guest_dir/kernel-release" 2>/dev/null); API server forwarded to 127.0.0.1:${port}; guest output: ${state}/guest.log)"
  # emptied here, not only by the background job's redirection: wait_ready would otherwise find the last boot's
  # "ready" before that job has run
  : >"$state/guest.log"
  # its own process group (setsid), so that down stops QEMU and run.sh together
  ZNS_QEMU_VERBOSE=1 setsid hack/qemu/run.sh --userland --accel "$acc" --guest-dir "$guest_dir" --share "$share" \
    --smp "$cpus" --mem "$mem" --timeout $((24 * 3600)) --hostfwd "${port}:6443" --monitor "$state/monitor.sock" \
    --nullblk '--first 0 --count 1 --size 2048 --zone-size 64 --memory-backed' \
    --nullblk '--first 1 --count 1 --size 2048 --zone-size 16 --conv-zones 16 --memory-backed' \
    --nullblk '--first 2 --count 1 --size 2048 --conventional --memory-backed' \
    --nullblk '--first 3 --count 2 --size 2048 --zone-size 64 --conv-zones 8 --memory-backed' \
    --zns default --zns 'controller=previous,zone_size=16M,zone_capacity=16M,size=1G' --nvme default "${disk[@]}" \
    -- bash "$share/node.sh" "$assets" "$parts" "$share" </dev/null >"$state/guest.log" 2>&1 &
  printf '%s\n' "$!" >"$state/pid"
}

# wait_started SECONDS: whether the guest's script said it started within SECONDS.
wait_started() {
  local t=$SECONDS
  while ((SECONDS - t < $1)); do
    grep -aq 'zoned-node: start' "$state/guest.log" 2>/dev/null && return 0
    running || return 1
    sleep 2
  done
  return 1
}

# wait_ready T0: until the guest says the node is ready, saying where it is every 30 s.
wait_ready() {
  local t0=$1 limit=${ZNS_NODE_BOOT_TIMEOUT:-2700} last=$SECONDS line
  while ! grep -aq 'zoned-node: ready' "$state/guest.log" 2>/dev/null; do
    if ! running; then
      tail -n 40 "$state/guest.log" | sed 's/^/  | /' >&2
      die "the guest stopped before the node was ready (above, the end of ${state}/guest.log); hack/qemu/zoned-node.sh up tries again"
    fi
    if ((SECONDS - t0 > limit)); then
      tail -n 40 "$state/guest.log" | sed 's/^/  | /' >&2
      down
      die "the node was not ready within ${limit}s (ZNS_NODE_BOOT_TIMEOUT); above, the end of ${state}/guest.log"
    fi
    if ((SECONDS - last >= 30)); then
      last=$SECONDS
      # the guest's first line may follow the firmware's output on the same line ("Booting from ROM..zoned-node:
      # start"): not anchored, and no match is no error
      line=$(grep -ao 'zoned-node: .*' "$state/guest.log" 2>/dev/null | tail -n 1 || true)
      log "still booting, $(mmss $((SECONDS - t0))) elapsed: ${line:-the guest kernel is starting}"
    fi
    sleep 2
  done
  touch "$state/ready"
  if [[ -n "${ZNS_NODE_OWNER:-}" ]]; then printf '%s %s\n' "$ZNS_NODE_OWNER" "${ZNS_NODE_OWNER_WHAT:-}" >"$state/owner"; fi
  log "node Ready with the images after $(mmss $((SECONDS - t0))) ($(grep -ao 'zoned-node: ready.*' "$state/guest.log" | head -n1))"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  env)
    # shellcheck disable=SC2015 # die when either check fails
    running && [[ -e "$state/ready" ]] || die "the node is not up: hack/qemu/zoned-node.sh up"
    # under TCG a process takes about a second to start: the suite's waits are stretched, and each database's
    # readiness probe (an exec) runs every 20 s instead of 5
    scale=1 probe=5
    [[ "$(cat "$state/accel")" == kvm ]] || scale=4 probe=20
    printf 'export ZNS_E2E=1 ZNS_E2E_KUBECONFIG=%q ZNS_E2E_TAG=%q ZNS_E2E_ZONED_NODE=zns-guest ZNS_E2E_TIME_SCALE=%d ZNS_E2E_PROBE_PERIOD=%d\n' \
      "$kubeconfig" "$(cat "$state/tag")" "$scale" "$probe" >&3
    ;;
  kubectl)
    shift
    [[ -s "$state/paths" && -s "$kubeconfig" ]] || die "the node was never brought up: hack/qemu/zoned-node.sh up"
    exec 1>&3
    exec "$(head -n1 "$state/paths")/kubectl" --kubeconfig "$kubeconfig" "$@"
    ;;
  status)
    if running; then log "running (pid $(cat "$state/pid"), $(cat "$state/accel" 2>/dev/null))$([[ -e $state/ready ]] && echo ', Ready')"; else log "not running"; fi
    ;;
  *) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
esac
