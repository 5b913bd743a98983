#!/usr/bin/env bash
# hack/demo.sh: the README's main command (`make demo`): a kind cluster, zoned devices, the images, the chart,
# databases, a short Benchmark across all of them, and the comparison printed as a table.
#
#   1. what this machine can do: zoned block devices (hack/nullblk-zoned.sh check) and the Percona + ZenFS
#      image (it needs repo.percona.com). With both: two null_blk zoned devices (RAM-backed) for two MyRocks
#      on ZenFS tenants, and InnoDB on a conventional volume as the baseline, all Percona Server. Without
#      either, it says which is missing and runs the conventional part only: MyRocks and InnoDB on volumes,
#      with the MariaDB + MyRocks stand-in image.
#   2. the kind cluster (hack/kind/cluster.sh up): kind's upstream node image when a registry is reachable,
#      otherwise a node image built here from Debian packages and Go modules (it says which, and why); the
#      zoned devices are mounted into the node at the same paths.
#   3. the images, built here and loaded into the node (hack/kind/load-images.sh), and the chart installed
#      with them (helm upgrade --install).
#   4. the databases in namespace $DEMO_NAMESPACE, waited for until Available; then a Benchmark across all of
#      them (a fresh one each run), waited for until it completes; then the table.
#
# The cluster and the devices stay up afterwards for a look around (it prints how); `make demo-clean`
# (hack/demo.sh clean) removes both: the demo's own null_blk devices only, never another device. Running it again reuses them: ZenFS already on a device is kept (formatPolicy IfNeeded).
#
# Environment:
#   DEMO_ZONED        auto (default), 1 (fail unless the zoned part can run), 0 (conventional only)
#   DEMO_NAMESPACE    namespace of the databases and the Benchmark (default zns-demo)
#   DEMO_SECONDS      sysbench run time per target (default 60)
#   DEMO_THREADS      sysbench threads (default 4)
#   DEMO_TABLES       tables (default 4)
#   DEMO_TABLE_SIZE   rows per table (default 20000)
#   DEMO_WORKLOAD     sysbench workload (default oltp_update_index, the seed's)
#   DEMO_MEMORY       memory limit of each database (default 1Gi; the caches are sized from it)
#   DEMO_DEVICE_MIB   size of each null_blk zoned device in MiB (default 4096, 64 zones of 64 MiB; RAM is
#                     used only for what is written)
#   ZNS_KIND_CLUSTER, ZNS_KIND_NODE: see hack/kind/cluster.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ns=${DEMO_NAMESPACE:-zns-demo}
seconds=${DEMO_SECONDS:-60}
threads=${DEMO_THREADS:-4}
tables=${DEMO_TABLES:-4}
table_size=${DEMO_TABLE_SIZE:-20000}
workload=${DEMO_WORKLOAD:-oltp_update_index}
memory=${DEMO_MEMORY:-1Gi}
device_mib=${DEMO_DEVICE_MIB:-4096}
zoned=${DEMO_ZONED:-auto}
cluster=${ZNS_KIND_CLUSTER:-zns-mysql}
node="${cluster}-control-plane"
cache=${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}
devices_file="${cache}/demo-devices"

if [[ "${1:-}" == clean ]]; then
  hack/kind/cluster.sh down
  if [[ -f "$devices_file" ]]; then
    read -r -a devices <"$devices_file"
    existing=()
    for d in "${devices[@]}"; do [[ -b "$d" ]] && existing+=("${d##*/}"); done
    ((${#existing[@]} == 0)) || hack/nullblk-zoned.sh destroy "${existing[@]}"
    rm -f "$devices_file"
  fi
  exit 0
fi
[[ $# -eq 0 ]] || { echo "usage: hack/demo.sh [clean]" >&2; exit 2; }

[[ "$zoned" =~ ^(auto|0|1)$ ]] || { echo "demo: DEMO_ZONED must be auto, 0 or 1" >&2; exit 2; }
for v in seconds threads tables table_size; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "demo: DEMO_${v^^} must be a positive number" >&2; exit 2; }
done

LOG_PREFIX=demo
# shellcheck source=hack/lib/progress.sh
source hack/lib/progress.sh
explain_failures
t_start=$(date +%s)
timings=()
# say TEXT: a banner a person can find in the output, with the time since the start.
say() { printf '\n==> %s (%ss since the start)\n' "$*" "$(($(date +%s) - t_start))" >&2; }
note() { printf 'demo: %s\n' "$*" >&2; }
die() { printf 'demo: ERROR: %s\n' "$*" >&2; exit 1; }
# record NAME T0: remember how long NAME took since T0 (a $SECONDS value).
record() { timings+=("$(printf '%-34s %5ss' "$1" "$((SECONDS - $2))")"); }
# timed NAME CMD...: run CMD and record how long it took (not for command substitutions: a subshell's
# record is lost; use record there).
timed() {
  local name=$1 t0=$SECONDS
  shift
  "$@" || return
  record "$name" "$t0"
}
kubectl() { hack/kind/cluster.sh kubectl "$@"; }

# --- 1. what this machine can do -------------------------------------------------------------------------------
say "checking this machine"
command -v docker >/dev/null && docker info >/dev/null 2>&1 ||
  die "needs a Docker Engine: 'docker info' failed. Install Docker Engine (Debian: apt-get install docker.io) and start it"
command -v go >/dev/null || die "needs Go 1.26 on PATH (https://go.dev/dl/), then run make demo again"
hack/install-deps.sh demo || die "the Debian packages the builds need are missing (above says which and how to install them)"

zoned_why=""
if [[ "$zoned" == 0 ]]; then
  zoned_why="DEMO_ZONED=0"
elif ! out=$(hack/nullblk-zoned.sh check 2>&1); then
  zoned_why="no zoned block devices can be made here: $(grep -m1 ERROR <<<"$out" | sed 's/^nullblk-zoned: ERROR: //')"
fi
images=(bench mariadb operator)
if [[ -z "$zoned_why" ]]; then
  say "zoned block devices are supported: building the Percona + ZenFS image (needs repo.percona.com)"
  if timed "Percona + ZenFS image" hack/images/build.sh percona; then
    images+=(percona)
  else
    zoned_why="the Percona + ZenFS image could not be built (it needs https://repo.percona.com; see above)"
  fi
fi
if [[ -n "$zoned_why" ]]; then
  [[ "$zoned" == 1 ]] && die "DEMO_ZONED=1, but ${zoned_why}"
  say "conventional part only: ${zoned_why}"
  note "MyRocks and InnoDB on conventional volumes, with the MariaDB + MyRocks stand-in image; the zoned part"
  note "(two MyRocks on ZenFS tenants on null_blk zoned devices) needs a kernel with CONFIG_BLK_DEV_ZONED and"
  note "null_blk, and the Percona image"
fi

# --- zoned devices (before the cluster: a kind node keeps a static copy of /dev) --------------------------
devices=()
if [[ -z "$zoned_why" ]]; then
  say "null_blk zoned devices"
  if [[ -f "$devices_file" ]]; then
    read -r -a devices <"$devices_file"
    for d in "${devices[@]}"; do [[ -b "$d" ]] || devices=(); done
    ((${#devices[@]})) && note "reusing the demo's devices ${devices[*]} (ZenFS on them is kept)"
  fi
  if ((${#devices[@]} == 0)); then
    mapfile -t devices < <(hack/nullblk-zoned.sh create --count 2 --size "$device_mib" --zone-size 64 --memory-backed)
    ((${#devices[@]} == 2)) || die "hack/nullblk-zoned.sh create made ${#devices[@]} devices, want 2"
    mkdir -p "$cache"
    printf '%s\n' "${devices[*]}" >"$devices_file"
  fi
  hack/nullblk-zoned.sh status "${devices[@]##*/}" >&2 || true
fi

# --- 2. the cluster, with the images building beside it -------------------------------------------------
# The images (debootstrap, apt in docker: disk and network bound) build while the node image's Go builds use
# the CPUs; loading them into the node waits for the cluster.
images_log="${cache}/demo-images.log"
mkdir -p "$cache"
say "images (${images[*]}): building in the background (log: ${images_log})"
hack/images/build.sh "${images[@]}" >"$images_log" 2>&1 &
images_pid=$!
# helm too: a Go build that fills the CPU while the cluster boots
helm_log="${cache}/demo-helm.log"
hack/helm.sh >"${helm_log}.out" 2>"$helm_log" &
helm_pid=$!
trap 'kill "$images_pid" "$helm_pid" 2>/dev/null || true' EXIT
say "kind cluster ${cluster}"
export ZNS_KIND_DEVICES="${devices[*]}"
t0=$SECONDS
kubeconfig=$(hack/kind/cluster.sh up) || die "the cluster did not come up (see above)"
record "kind cluster" "$t0"
for d in "${devices[@]}"; do
  docker exec "$node" test -b "$d" ||
    die "the existing cluster's node has no ${d} (it was created before the device): run 'make demo-clean' and again"
done

# --- 3. images and chart ----------------------------------------------------------------------------------
say "images (${images[*]}), loaded into the node"
t0=$SECONDS
if ! heartbeat --log "$images_log" "images" "built in the background" wait "$images_pid"; then
  tail -n 40 "$images_log" >&2
  die "building the images failed (above; the whole log: ${images_log})"
fi
tag=$(hack/kind/load-images.sh "${images[@]}") || die "loading the images into the node failed (above)"
record "images built and loaded" "$t0"
say "the operator's chart"
t0=$SECONDS
heartbeat --log "$helm_log" "helm" "built in the background" wait "$helm_pid" ||
  { cat "$helm_log" >&2; die "building helm failed (above; hack/helm.sh alone shows it again)"; }
trap - EXIT
helm=$(cat "${helm_log}.out")
record "helm (built once, cached)" "$t0"
install_chart() {
  "$helm" --kubeconfig "$kubeconfig" upgrade --install zns-mysql charts/zns-mysql \
    --namespace zns-mysql-system --create-namespace --wait --timeout 5m \
    --set image.tag="$tag" --set benchImage.tag="$tag" --set mariadbImage.tag="$tag" --set perconaImage.tag="$tag" >&2
}
timed "helm upgrade --install" install_chart

# --- 4. databases, Benchmark, table -----------------------------------------------------------------------
say "databases in namespace ${ns}"
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >&2
targets=()
manifest=""
# db NAME ENGINE FLAVOR DESCRIPTION STORAGE-LINE...: add a ZNSDatabase to the manifest and to the targets.
db() {
  local name=$1 engine=$2 flavor=$3 what=$4
  shift 4
  targets+=("$name")
  note "${name}: ${what}"
  manifest+="---
apiVersion: zns-mysql.dev/v1alpha1
kind: ZNSDatabase
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  engine: ${engine}
  flavor: ${flavor}
  resources:
    limits:
      memory: ${memory}
  storage:
$(printf '    %s\n' "$@")
"
}
if [[ -z "$zoned_why" ]]; then
  flavor=percona
  for i in 0 1; do
    d=${devices[$i]##*/}
    db "tenant$((i + 1))" rocksdb "$flavor" "MyRocks on ZenFS, zoned ${d}" \
      "zonedDevice:" "  nodeName: ${node}" "  deviceName: ${d}"
  done
else
  flavor=mariadb
  db myrocks rocksdb "$flavor" "MyRocks on a volume" "volume:" "  size: 5Gi"
fi
db innodb-baseline innodb "$flavor" "InnoDB on a volume (baseline)" "volume:" "  size: 5Gi"
printf '%s' "$manifest" | kubectl apply -f - >&2
show_trouble() {
  kubectl -n "$ns" get znsdatabases,benchmarks,pods,jobs -o wide >&2 || true
  kubectl -n "$ns" get events --sort-by=.lastTimestamp >&2 | tail -n 30 || true
}
wait_available() {
  heartbeat "databases Available" "kubectl -n ${ns} get znsdatabases shows them" \
    kubectl -n "$ns" wait --for=condition=Available --timeout=10m "${targets[@]/#/znsdatabase/}" >&2 ||
    { show_trouble; die "the databases did not become Available within 10 minutes (above: their state and events)"; }
}
timed "databases Available" wait_available
kubectl -n "$ns" get znsdatabases -o wide >&2

say "Benchmark: ${workload}, ${tables} tables of ${table_size} rows, ${threads} threads, ${seconds}s, all targets at once"
bench="demo-$(date +%Y%m%d-%H%M%S)"
target_yaml=""
for t in "${targets[@]}"; do target_yaml+="  - name: ${t}"$'\n'; done
kubectl apply -f - >&2 <<EOF
apiVersion: zns-mysql.dev/v1alpha1
kind: Benchmark
metadata:
  name: ${bench}
  namespace: ${ns}
spec:
  targets:
${target_yaml}  baseline: innodb-baseline
  workload: ${workload}
  tables: ${tables}
  tableSize: ${table_size}
  threads: ${threads}
  durationSeconds: ${seconds}
  reportIntervalSeconds: 1
  iterations: 1
EOF
wait_benchmark() {
  local deadline=$((SECONDS + 900 + seconds * 2)) phase="" last="" said=$SECONDS t0=$SECONDS
  while ((SECONDS < deadline)); do
    phase=$(kubectl -n "$ns" get benchmark "$bench" -o jsonpath='{.status.phase}{" "}{.status.progress}' 2>/dev/null || true)
    [[ -n "${phase// /}" ]] || phase=""
    if [[ "$phase" != "$last" ]] || ((SECONDS - said >= 30)); then
      note "$(mmss $((SECONDS - t0))) ${phase:-(no status yet)}"
      said=$SECONDS
    fi
    last=$phase
    case "$phase" in
      Completed*) return 0 ;;
      Failed*) show_trouble; die "the Benchmark failed: ${phase}" ;;
    esac
    sleep 3
  done
  show_trouble
  die "the Benchmark did not complete in time (last: ${phase})"
}
timed "Benchmark" wait_benchmark

# --- the table ------------------------------------------------------------------------------------------------
# The table comes from the kubectl plugin (operator/cmd/kubectl-zns), the same one users run.
CGO_ENABLED=0 go build -o bin/ ./operator/cmd/kubectl-zns
say "result (kubectl zns report ${bench}; kubectl -n ${ns} get benchmark ${bench} -o yaml has it all, the series in ConfigMaps)"
bin/kubectl-zns --kubeconfig "$kubeconfig" -n "$ns" report "$bench"
echo
echo "(${flavor} images; ratios are against innodb-baseline; ${seconds}s of ${workload} on $(nproc) cores with every"
echo " database in one kind node: this shows the stack works end to end, not how a ZNS drive compares)"

say "timings"
printf '  %s\n' "${timings[@]}" "$(printf '%-34s %5ss' total "$(($(date +%s) - t_start))")"
cat <<EOF

The cluster stays up:
  export KUBECONFIG=${kubeconfig}
  hack/kind/cluster.sh kubectl -n ${ns} get znsdatabases,benchmarks
  bin/kubectl-zns -n ${ns} report ${bench}          # also: compare, export, plot, watch
  make demo-clean      # delete the cluster$( ((${#devices[@]})) && printf ' and the null_blk devices %s' "${devices[*]}")
EOF
