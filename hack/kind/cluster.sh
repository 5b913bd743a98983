#!/usr/bin/env bash
# hack/kind/cluster.sh: a kind cluster from the offline node image (no image registry needed): one node, or
# with ZNS_KIND_WORKERS more.
#
#   hack/kind/cluster.sh up               build what is missing (node image, kind), create the cluster, wait
#                                         for the node Ready, CoreDNS and the storage provisioner; prints the
#                                         kubeconfig path on stdout. Idempotent: a healthy cluster is kept.
#   hack/kind/cluster.sh down             delete the cluster (and its kubeconfig)
#   hack/kind/cluster.sh status           print the cluster's state; exit 0 only if it is up and Ready
#   hack/kind/cluster.sh load IMAGE...    load local docker images into the node (kind load docker-image);
#                                         pods must use them with imagePullPolicy IfNotPresent or Never
#   hack/kind/cluster.sh config           print the kind cluster config `up` would use (no cluster, no image
#                                         build or pull: the offline image, or with ZNS_KIND_NODE=upstream kind's)
#   hack/kind/cluster.sh kubeconfig       print the kubeconfig path
#   hack/kind/cluster.sh kubectl ARGS...  run the node's kubectl (same version as the cluster) against it
#
# The cluster: name $ZNS_KIND_CLUSTER (default zns-mysql), image from hack/kind/build-node-image.sh,
# `disableDefaultCNI: true` (the image has no kindnetd; its own ptp + host-local CNI config serves the single
# node), default StorageClass "standard" (local-path-provisioner), containerd with
# device_ownership_from_security_context = true (a non-root mysqld can open a raw device), and the host
# devices in $ZNS_KIND_DEVICES bind-mounted at the same paths (null_blk or NVMe ZNS namespaces: create them
# first; the node's /dev is a copy taken at creation).
#
# Host requirements checked by `up`: a Docker Engine; /lib/modules (kind bind-mounts it; created empty if
# missing, which needs root or passwordless sudo); the netfilter matches and targets kube-proxy and the CNI
# plugins use, built in or loaded (no modules can be loaded on hosts without /lib/modules); on cgroup v1
# hosts, Kubernetes < 1.35 or kubelet's failCgroupV1: false (set automatically).
#
# Hosts where `docker run --privileged` fails because the Docker host's capability bounding set lacks a
# capability (our Firecracker VMs lack CAP_SYS_RESOURCE): `up` detects it and gives kind
# hack/kind/docker-unprivileged as its docker, which starts the node with every available capability,
# unmasked /proc and /sys, all devices allowed, and containerd's restrict_oom_score_adj (as rootless kind).
#
# The node image (ZNS_KIND_NODE), always Kubernetes $K8S_VERSION (versions.mk), the version envtest runs too:
# "offline" builds it here from Debian packages and Go modules (hack/kind/build-node-image.sh, cached);
# "upstream" pulls kind's own of that version (kindest/node:v$K8S_VERSION, with kindnetd; ZNS_KIND_NODE_IMAGE
# names another); "auto" (the default) uses upstream when it is already here or `docker pull` gets it (so a
# registry, mirror or proxy is reachable), and says why it falls back to offline.
#
# kind is built from the Go module proxy (KIND_VERSION in versions.mk) into the cache; kubectl is copied out
# of the node image. Step timings go to stderr; stdout carries only the result (`up`: kubeconfig path).
#
# Environment:
#   ZNS_KIND_CLUSTER       cluster name (default zns-mysql)
#   ZNS_KIND_NODE          auto (default), offline or upstream: where the node image comes from
#   ZNS_KIND_DEVICES       space-separated host block devices to mount into the nodes, e.g. "/dev/nullb0"
#   ZNS_KIND_WORKERS       worker nodes besides the control plane (default 0); the control plane keeps no taint,
#                          and on the offline image each node's pod /24 is routed to it from the others
#   ZNS_KIND_KUBECONFIG    kubeconfig to write (default <cache>/kind/<cluster>.kubeconfig)
#   ZNS_KIND_WAIT          seconds to wait for the node, CoreDNS and storage (default 300)
#   ZNS_KIND_KEEP_FAILED   1: keep the node container of a failed `up` for debugging
#   ZNS_CACHE_DIR          cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql)
#   KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER   passed to the node; default overlayfs when docker's data root
#                          is on ext4/xfs/btrfs (kind's own guess picks fuse-overlayfs on a fuse-overlayfs
#                          docker, which the offline image does not ship)
set -euo pipefail

exec 3>&1 1>&2

LOG_PREFIX=cluster
# shellcheck source=hack/kind/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/lib.sh"

T_START=$(now)
CLUSTER=${ZNS_KIND_CLUSTER:-zns-mysql}
[[ "$CLUSTER" =~ ^[a-z0-9][a-z0-9.-]*$ ]] || die "ZNS_KIND_CLUSTER '${CLUSTER}' is not a valid kind cluster name"
NODE="${CLUSTER}-control-plane"
WAIT=${ZNS_KIND_WAIT:-300}
WORKERS=${ZNS_KIND_WORKERS:-0}
[[ "$WORKERS" =~ ^[0-8]$ ]] || die "ZNS_KIND_WORKERS must be a number of worker nodes from 0 to 8, not '${WORKERS}'"
[[ "$WAIT" =~ ^[0-9]+$ ]] || die "ZNS_KIND_WAIT must be a number of seconds"
NODE_SOURCE=${ZNS_KIND_NODE:-auto}
[[ "$NODE_SOURCE" =~ ^(auto|offline|upstream)$ ]] || die "ZNS_KIND_NODE must be auto, offline or upstream, not '${NODE_SOURCE}'"
PINNED_K8S=$(read_pin K8S_VERSION)
PINNED_K8S=${PINNED_K8S#v}
OFFLINE_IMAGE=zns-mysql/kind-node:v${PINNED_K8S}
UPSTREAM_IMAGE=kindest/node:v${PINNED_K8S}
if [[ -n "${ZNS_KIND_NODE_IMAGE:-}" ]]; then
  # an image of the user's: upstream when that is the source asked for, else it replaces the offline name
  if [[ "$NODE_SOURCE" == upstream ]]; then UPSTREAM_IMAGE=$ZNS_KIND_NODE_IMAGE; else OFFLINE_IMAGE=$ZNS_KIND_NODE_IMAGE; fi
fi
# set_k8s_version V: the node's Kubernetes version (no leading v), which decides kubectl and cgroup v1 handling.
set_k8s_version() {
  K8S_VERSION=${1#v}
  K8S_MINOR=$(cut -d. -f2 <<<"$K8S_VERSION")
}
set_k8s_version "$PINNED_K8S"
# The version of the node image the cluster was created from, kept by `up` for the other subcommands.
VERSION_FILE="${ROOT:=$(cache_root)}/${CLUSTER}.k8s-version"
[[ -f "$VERSION_FILE" ]] && set_k8s_version "$(cat "$VERSION_FILE")"
KUBECONFIG_PATH=${ZNS_KIND_KUBECONFIG:-${ROOT}/${CLUSTER}.kubeconfig}
KUBECTL=""
KIND=""

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

SUDO=()
need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
      die "$1 needs root or passwordless sudo"
    fi
    SUDO=(sudo -n)
  fi
}

check_docker() {
  command -v docker >/dev/null 2>&1 || die "docker is not on PATH"
  docker info >/dev/null 2>&1 || die "cannot talk to the Docker Engine (docker info failed)"
}

# --- tools: kind (module proxy), kubectl (from the node image) ---------------------------------------------
get_kind() { KIND=$(kind_binary); }
get_kubectl() {
  local image=$1 dir="${ROOT}/bin/kubectl-v${K8S_VERSION}" c
  if [[ -x "$dir/kubectl" ]] && "$dir/kubectl" version --client 2>/dev/null | grep -q "v${K8S_VERSION}"; then
    KUBECTL="$dir/kubectl"
    return 0
  fi
  mkdir -p "$dir"
  c=$(docker create "$image" 2>/dev/null) || return 1
  docker cp "$c:/usr/bin/kubectl" "$dir/.kubectl.tmp" >/dev/null && mv "$dir/.kubectl.tmp" "$dir/kubectl"
  docker rm -f -v "$c" >/dev/null
  KUBECTL="$dir/kubectl"
  "$KUBECTL" version --client >&2
}
kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG_PATH" "$@"; }

# --- --privileged or not ------------------------------------------------------------------------------------
# kind runs `docker run --privileged` and `docker exec --privileged`. Where the Docker host's capability
# bounding set lacks a capability, runc cannot grant "all" of them and both fail ("unable to apply caps:
# operation not permitted"). `up` probes this; if so, kind gets hack/kind/docker-unprivileged as its docker
# (see there), and the decision is kept in DROP_CAPS_FILE for the other subcommands.
DROP_CAPS_FILE="${ROOT}/${CLUSTER}.docker-drop-caps"
CAP_NAMES=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE
  NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE
  SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE
  AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF
  CHECKPOINT_RESTORE)
DROP_CAPS=""
probe_privileged() {
  local image=$1 out bnd last i names=()
  if out=$(docker run --rm --net none --privileged --entrypoint /bin/true "$image" 2>&1); then
    rm -f "$DROP_CAPS_FILE"
    log "docker run --privileged works"
    return 0
  fi
  [[ "$out" == *"apply caps"* ]] || { log "docker run --privileged fails: ${out}"; return 1; }
  # the capability bounding set of the Docker daemon (host PID namespace), else of the host's PID 1
  bnd=$(docker run --rm --net none --pid host --entrypoint bash "$image" -c '
    for p in $(pgrep -x dockerd) $(pgrep -x containerd) 1; do
      sed -n "s/^CapBnd:[[:space:]]*//p" "/proc/$p/status" 2>/dev/null && exit 0
    done' 2>/dev/null | head -n 1)
  last=$(docker run --rm --net none --entrypoint cat "$image" /proc/sys/kernel/cap_last_cap 2>/dev/null || true)
  [[ "$bnd" =~ ^[0-9a-f]+$ && "$last" =~ ^[0-9]+$ ]] ||
    { log "docker run --privileged fails (${out}) and the host's capability bounding set is unreadable"; return 1; }
  for ((i = 0; i <= last && i < ${#CAP_NAMES[@]}; i++)); do
    (((0x${bnd} >> i) & 1)) || names+=("${CAP_NAMES[$i]}")
  done
  ((${#names[@]})) || { log "docker run --privileged fails (${out}), yet no capability is missing"; return 1; }
  DROP_CAPS="${names[*]}"
  printf '%s\n' "$DROP_CAPS" >"$DROP_CAPS_FILE"
  warn "docker run --privileged fails here (runc: unable to apply caps): the Docker host lacks CAP_${DROP_CAPS// /, CAP_};"
  warn "the node runs with every other capability instead (hack/kind/docker-unprivileged)"
}
load_drop_caps() { [[ -f "$DROP_CAPS_FILE" ]] && DROP_CAPS=$(cat "$DROP_CAPS_FILE") || DROP_CAPS=""; }
# run_kind ARGS...: kind, with the unprivileged docker when needed.
run_kind() {
  if [[ -z "$DROP_CAPS" ]]; then
    "$KIND" "$@"
    return
  fi
  local shim="${ROOT}/bin/docker-unprivileged"
  mkdir -p "$shim"
  ln -sf "${KIND_LIB_DIR}/docker-unprivileged" "${shim}/docker"
  ZNS_REAL_DOCKER=$(command -v docker) ZNS_DOCKER_DROP_CAPS="$DROP_CAPS" PATH="${shim}:${PATH}" "$KIND" "$@"
}

cluster_exists() { [[ -n "$KIND" ]] && "$KIND" get clusters 2>/dev/null | grep -qxF "$CLUSTER"; }
node_running() { [[ "$(docker inspect -f '{{.State.Running}}' "$NODE" 2>/dev/null)" == true ]]; }
node_ready() {
  [[ -n "$KUBECTL" && -f "$KUBECONFIG_PATH" ]] || return 1
  [[ "$(kc get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' --request-timeout=10s 2>/dev/null)" == True ]]
}

# --- host checks ---------------------------------------------------------------------------------------------
CGROUP_V1=0
detect_cgroup() {
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    log "cgroup v2"
  else
    CGROUP_V1=1
    log "cgroup v1 host: a node with Kubernetes >= 1.35 gets kubelet failCgroupV1: false"
  fi
}
check_devices() {
  local d
  for d in ${ZNS_KIND_DEVICES:-}; do
    [[ "$d" == /dev/* ]] || die "ZNS_KIND_DEVICES: '${d}' is not a /dev path"
    [[ -b "$d" || -c "$d" ]] || die "ZNS_KIND_DEVICES: ${d} does not exist or is not a device (create it before the cluster)"
  done
}
check_host() {
  detect_cgroup
  check_devices
  # /lib/modules: kind bind-mounts it read-only; docker would create it as root, we do it explicitly
  if [[ ! -d /lib/modules ]]; then
    need_root "creating /lib/modules"
    "${SUDO[@]}" mkdir -p /lib/modules || die "cannot create /lib/modules"
    log "created an empty /lib/modules (this kernel has no modules; everything needed must be built in)"
  fi
  # netfilter: what kube-proxy (iptables mode), the ptp CNI plugin (ipMasq) and portmap use. A match or
  # target is usable if the kernel has registered it (built in, or its module loaded); a module that is not
  # loaded yet counts only if the host can load modules.
  local missing=() m t have_matches have_targets can_load=0
  [[ -d "/lib/modules/$(uname -r)" ]] && command -v modprobe >/dev/null 2>&1 && can_load=1
  have_matches=$(cat /proc/net/ip_tables_matches 2>/dev/null || true)
  have_targets=$(cat /proc/net/ip_tables_targets 2>/dev/null || true)
  if [[ -z "$have_matches$have_targets" ]]; then
    if ((can_load)); then
      warn "no /proc/net/ip_tables_*: iptables not loaded yet; cannot check netfilter features"
    else
      die "the kernel has no iptables (no /proc/net/ip_tables_matches) and cannot load modules"
    fi
  else
    for m in comment conntrack multiport mark statistic addrtype; do
      grep -qx "$m" <<<"$have_matches" || missing+=("match:${m}")
    done
    for t in MASQUERADE DNAT SNAT REJECT MARK; do
      grep -qx "$t" <<<"$have_targets" || missing+=("target:${t}")
    done
  fi
  grep -qw overlay /proc/filesystems || [[ -d /sys/module/overlay ]] || missing+=("overlay filesystem")
  if [[ -r /proc/config.gz ]] || [[ -r "/boot/config-$(uname -r)" ]]; then
    local cfg
    cfg=$({ zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)"; } 2>/dev/null)
    for m in CONFIG_VETH CONFIG_NF_NAT CONFIG_NF_CONNTRACK CONFIG_BRIDGE; do
      grep -qE "^${m}=(y|m)$" <<<"$cfg" || missing+=("${m}")
    done
  fi
  if ((${#missing[@]})); then
    if ((can_load)); then
      warn "not registered yet (modules will have to load on demand): ${missing[*]}"
    else
      die "the kernel lacks netfilter/network features kube-proxy and the CNI plugins need, and cannot load modules: ${missing[*]}"
    fi
  else
    log "netfilter: the matches and targets kube-proxy and the CNI plugins use are available"
  fi
}

# write_config FILE IMAGE: the kind cluster config (hack/kindconfig writes it from these values).
write_config() {
  local file=$1 image=$2 offline=false cgroup_v1=false
  [[ "$image" != "$UPSTREAM_IMAGE" ]] && offline=true
  ((CGROUP_V1 && K8S_MINOR >= 35)) && cgroup_v1=true
  (cd "$REPO_ROOT" && go run ./hack/kindconfig -name "$CLUSTER" -image "$image" -offline="$offline" \
    -devices "${ZNS_KIND_DEVICES:-}" -workers "$WORKERS" -dropped-caps "$DROP_CAPS" -cgroup-v1="$cgroup_v1") >"$file"
}

snapshotter_env() {
  if [[ -n "${KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER:-}" ]]; then
    log "containerd snapshotter: ${KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER} (from the environment)"
    return 0
  fi
  local root fs
  root=$(docker info -f '{{.DockerRootDir}}' 2>/dev/null || true)
  fs=$(stat -f -c %T "$root" 2>/dev/null || true)
  case "$fs" in
    ext2/ext3 | ext4 | xfs | btrfs)
      # the node's /var (containerd's root) is a docker volume on this filesystem: overlayfs works there
      export KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER=overlayfs
      log "containerd snapshotter: overlayfs (docker's data root ${root} is ${fs})"
      ;;
    *) log "containerd snapshotter: kind's choice (docker's data root: '${root:-?}' on '${fs:-?}')" ;;
  esac
}

# use_node_image IMAGE: take the node's Kubernetes version from the image chosen.
use_node_image() {
  local v
  v=$(docker image inspect -f '{{ index .Config.Labels "io.x-k8s.kind.kubernetes-version" }}' "$1" 2>/dev/null || true)
  if [[ "$v" =~ ^v?1\.[0-9]+\.[0-9]+$ ]]; then
    set_k8s_version "$v"
  else
    set_k8s_version "$PINNED_K8S"
  fi
  [[ "$K8S_VERSION" == "$PINNED_K8S" ]] ||
    warn "node image ${1} is Kubernetes v${K8S_VERSION}, not the pinned v${PINNED_K8S} that envtest and the chart tests use"
}

# node_image: the node image to use, by ZNS_KIND_NODE (see the header); prints its name.
node_image() {
  if [[ "$NODE_SOURCE" != offline ]]; then
    local out
    if docker image inspect "$UPSTREAM_IMAGE" >/dev/null 2>&1; then
      log "node image: kind's upstream ${UPSTREAM_IMAGE} (already here)"
      printf '%s\n' "$UPSTREAM_IMAGE"
      return 0
    fi
    if out=$(docker pull "$UPSTREAM_IMAGE" 2>&1); then
      log "node image: kind's upstream ${UPSTREAM_IMAGE} (pulled: a registry is reachable)"
      printf '%s\n' "$UPSTREAM_IMAGE"
      return 0
    fi
    if [[ "$NODE_SOURCE" == upstream ]]; then
      log "$out"
      die "ZNS_KIND_NODE=upstream, but docker pull ${UPSTREAM_IMAGE} failed (above)"
    fi
    log "no image registry is reachable (docker pull ${UPSTREAM_IMAGE}: $(tail -n 1 <<<"$out"))"
    log "so the node image is built here from Debian packages and Go modules (hack/kind/build-node-image.sh;"
    log "cached per Kubernetes version: ~15 minutes on 2 cores the first time, seconds after)"
  fi
  step --own-progress "node image (offline build)" env ZNS_KIND_NODE_IMAGE="$OFFLINE_IMAGE" "${KIND_LIB_DIR}/build-node-image.sh"
}

create_cluster() {
  local cfg="${WORK}/kind.config" logs
  mkdir -p "$(dirname "$KUBECONFIG_PATH")"
  if ! run_kind create cluster --config "$cfg" --kubeconfig "$KUBECONFIG_PATH" --retain --wait 0s; then
    logs=$(mktemp -d "${TMPDIR:-/tmp}/zns-kind-logs.XXXXXX")
    run_kind export logs --name "$CLUSTER" "$logs" >/dev/null 2>&1 || true
    log "kind create cluster failed; node logs in ${logs} (journal, kubelet, containerd); last kubelet lines:"
    tail -n 25 "$logs/${NODE}/kubelet.log" >&2 2>/dev/null || true
    [[ "${ZNS_KIND_KEEP_FAILED:-0}" == 1 ]] || run_kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true
    return 1
  fi
}

# wait_for WHAT CMD...: retry CMD until it succeeds or ZNS_KIND_WAIT runs out.
wait_for() {
  local what=$1 deadline=$((SECONDS + WAIT))
  shift
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      log "timed out after ${WAIT}s waiting for ${what}"
      return 1
    fi
    sleep 2
  done
}
wait_node() {
  wait_for "node ${NODE} Ready" node_ready || {
    kc describe node "$NODE" | sed -n '/Conditions:/,/Addresses:/p' >&2 || true
    return 1
  }
}
nodes_ready() {
  [[ "$(kc get nodes --no-headers 2>/dev/null | awk '$2 == "Ready"' | wc -l)" -eq $((WORKERS + 1)) ]]
}
wait_workers() {
  wait_for "$((WORKERS + 1)) nodes Ready" nodes_ready || { kc get nodes -o wide >&2 || true; return 1; }
}
# route_pods: on the offline image each node's pods live on the /24 its CNI config names
# (hack/kind/node/zns-cni-config.sh); every other node gets a route to it through that node's address.
route_pods() {
  local n nodes=() ips=() subnets=() i j
  mapfile -t nodes < <(docker ps --filter "label=io.x-k8s.kind.cluster=${CLUSTER}" --format '{{.Names}}' | sort)
  for n in "${nodes[@]}"; do
    ips+=("$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$n")")
    subnets+=("$(docker exec "$n" jq -r '.plugins[0].ipam.ranges[0][0].subnet' /etc/cni/net.d/10-zns-ptp.conflist)") ||
      { log "node ${n} has no zns-ptp CNI config"; return 1; }
  done
  [[ "$(printf '%s\n' "${subnets[@]}" | sort -u | wc -l)" -eq ${#nodes[@]} ]] ||
    { log "two nodes have the same pod subnet: ${nodes[*]}: ${subnets[*]}"; return 1; }
  for i in "${!nodes[@]}"; do
    for j in "${!nodes[@]}"; do
      ((i == j)) && continue
      docker exec "${nodes[$i]}" ip route replace "${subnets[$j]}" via "${ips[$j]}" ||
        { log "cannot route ${subnets[$j]} via ${ips[$j]} on ${nodes[$i]}"; return 1; }
    done
    log "${nodes[$i]} (${ips[$i]}): pods on ${subnets[$i]}"
  done
}
coredns_ready() { [[ "$(kc -n kube-system get deployment coredns -o jsonpath='{.status.readyReplicas}')" -ge 1 ]]; }
storage_ready() {
  [[ "$(kc -n local-path-storage get deployment local-path-provisioner -o jsonpath='{.status.readyReplicas}')" -ge 1 ]] &&
    kc get storageclass standard >/dev/null
}
show_pods() { kc get pods -A -o wide >&2 || true; }
wait_coredns() { wait_for "CoreDNS" coredns_ready || { show_pods; return 1; }; }
wait_storage() { wait_for "local-path-provisioner" storage_ready || { show_pods; return 1; }; }

done_ok() {
  log "$(printf 'total %ss' "$(elapsed "$T_START")")"
  [[ $# -eq 0 ]] || printf '%s\n' "$@" >&3
  exit 0
}

cmd_up() {
  check_docker
  lock_file "${ROOT}/${CLUSTER}.lock" 8
  step "host checks" check_host
  local image
  image=$(node_image) || die "no node image"
  use_node_image "$image"
  printf '%s\n' "$K8S_VERSION" >"$VERSION_FILE"
  step "kind binary" get_kind
  step "kubectl" get_kubectl "$image"
  step "probe docker --privileged" probe_privileged "$image"
  if cluster_exists; then
    if node_running && node_ready && nodes_ready; then
      local running current
      running=$(docker inspect -f '{{.Image}}' "$NODE" 2>/dev/null || true)
      current=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)
      [[ "$running" == "$current" ]] ||
        warn "cluster ${CLUSTER} runs an older node image than ${image}; '$0 down' and up again to use it"
      log "cluster ${CLUSTER} is already up"
      done_ok "$KUBECONFIG_PATH"
    fi
    log "cluster ${CLUSTER} exists but is not healthy: recreating it"
    step "delete broken cluster" run_kind delete cluster --name "$CLUSTER"
  fi
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/zns-kind.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  write_config "${WORK}/kind.config" "$image" || die "writing the kind configuration (hack/kindconfig) failed (above)"
  sed 's/^/  | /' "${WORK}/kind.config" >&2
  snapshotter_env
  step "kind create cluster" create_cluster
  step "node Ready" wait_node
  if ((WORKERS > 0)); then
    step "all nodes Ready" wait_workers
    [[ "$image" == "$UPSTREAM_IMAGE" ]] || step "pod routes between the nodes" route_pods
  fi
  step "CoreDNS ready" wait_coredns
  step "storage provisioner ready" wait_storage
  kc get nodes -o wide >&2
  done_ok "$KUBECONFIG_PATH"
}

cmd_down() {
  check_docker
  lock_file "${ROOT}/${CLUSTER}.lock" 8
  get_kind
  load_drop_caps
  if cluster_exists; then
    step "kind delete cluster" run_kind delete cluster --name "$CLUSTER"
  else
    log "no cluster ${CLUSTER}"
  fi
  rm -f "$KUBECONFIG_PATH" "$DROP_CAPS_FILE" "$VERSION_FILE"
  done_ok
}

cmd_status() {
  check_docker
  get_kind
  local image=""
  [[ -x "${ROOT}/bin/kubectl-v${K8S_VERSION}/kubectl" ]] && KUBECTL="${ROOT}/bin/kubectl-v${K8S_VERSION}/kubectl"
  if ! cluster_exists; then
    log "cluster ${CLUSTER}: absent"
    printf 'absent\n' >&3
    exit 1
  fi
  image=$(docker inspect -f '{{.Config.Image}}' "$NODE" 2>/dev/null || true)
  log "cluster ${CLUSTER}: node ${NODE} ($(docker inspect -f '{{.State.Status}}' "$NODE" 2>/dev/null || echo missing)), image ${image:-?}"
  if node_running && node_ready; then
    kc get nodes -o wide >&2 || true
    kc get pods -A >&2 || true
    log "kubeconfig: ${KUBECONFIG_PATH}"
    printf 'ready\n' >&3
    exit 0
  fi
  log "node ${NODE} is not Ready (or the kubeconfig ${KUBECONFIG_PATH} is missing)"
  printf 'not-ready\n' >&3
  exit 1
}

cmd_load() {
  (($# > 0)) || die "load: name at least one docker image"
  check_docker
  get_kind
  cluster_exists || die "no cluster ${CLUSTER}: run '$0 up' first"
  local i
  for i in "$@"; do
    docker image inspect "$i" >/dev/null 2>&1 || die "no docker image ${i} on this host"
    [[ "$i" == *:* && "$i" != *:latest ]] ||
      warn "${i}: untagged or :latest images get imagePullPolicy Always by default; use a tag or set IfNotPresent"
  done
  load_drop_caps
  step "kind load docker-image" run_kind load docker-image --name "$CLUSTER" "$@"
  done_ok
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case "$cmd" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  load) cmd_load "$@" ;;
  kubeconfig) printf '%s\n' "$KUBECONFIG_PATH" >&3 ;;
  config)
    detect_cgroup
    check_devices
    load_drop_caps
    image=$OFFLINE_IMAGE
    [[ "$NODE_SOURCE" == upstream ]] && image=$UPSTREAM_IMAGE
    use_node_image "$image"
    write_config /dev/fd/3 "$image" || die "writing the kind configuration (hack/kindconfig) failed (above)"
    ;;
  kubectl)
    [[ -x "${ROOT}/bin/kubectl-v${K8S_VERSION}/kubectl" ]] || die "no kubectl yet: run '$0 up' first"
    exec 1>&3 3>&-
    exec "${ROOT}/bin/kubectl-v${K8S_VERSION}/kubectl" --kubeconfig "$KUBECONFIG_PATH" "$@"
    ;;
  *) usage ;;
esac
