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
#   5. where this kernel has no zoned devices (a kind node shares it): the zoned part on a Kubernetes node in a
#      QEMU guest whose kernel has them (hack/qemu/zoned-node.sh; KVM when usable, else TCG, which is slow):
#      MyRocks and InnoDB on btrfs in zoned mode (null_blk zoned, emulated NVMe ZNS) and on zoned XFS (null_blk
#      zoned with conventional zones) against InnoDB on the node's conventional device, a short Benchmark and
#      its table (with the device bytes per transaction);
#      then the node is stopped (DEMO_KEEP_ZONED_NODE=1 keeps it). ZenFS needs the Percona image, which
#      needs repo.percona.com: without it this part uses btrfs, and says so.
#
# The cluster and the devices stay up afterwards for a look around (it prints how); `make demo-clean`
# (hack/demo.sh clean) removes both: the demo's own null_blk devices only, never another device. Running it again reuses them: ZenFS already on a device is kept (format.policy IfNeeded).
#
# Environment:
#   DEMO_ZONED        auto (default), 1 (fail unless the zoned part can run, here or on the QEMU node),
#                     0 (conventional only)
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
# on: the cluster kubectl talks to, kind or the QEMU node (step 5)
on=kind
kubectl() {
  if [[ "$on" == node ]]; then hack/qemu/zoned-node.sh kubectl "$@"; else hack/kind/cluster.sh kubectl "$@"; fi
}

# --- 1. what this machine can do -------------------------------------------------------------------------------
say "checking this machine"
# shellcheck disable=SC2015 # die when either check fails
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
# The zoned part on a QEMU node instead (step 5): when this kernel cannot make zoned devices.
node_why=""
if [[ "$zoned" == 0 ]]; then
  node_why="DEMO_ZONED=0"
elif [[ -z "$zoned_why" ]]; then
  node_why="zoned devices are made here"
elif ! command -v qemu-system-x86_64 >/dev/null; then
  node_why="no qemu-system-x86_64 (Debian package qemu-system-x86)"
fi
if [[ -n "$zoned_why" ]]; then
  [[ "$zoned" == 1 && -n "$node_why" ]] && die "DEMO_ZONED=1, but ${zoned_why}, and no QEMU node either: ${node_why}"
  say "conventional part$([[ -z "$node_why" ]] && printf ' first' || printf ' only'): ${zoned_why}"
  note "MyRocks and InnoDB on conventional volumes, with the MariaDB + MyRocks stand-in image, on kind"
  if [[ -z "$node_why" ]]; then
    note "then the zoned part on a Kubernetes node whose kernel has zoned devices, in a QEMU guest (step 5)"
  fi
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
    --namespace zns-mysql-system --create-namespace --wait --timeout "${chart_timeout:-5m}" \
    --set image.tag="$tag" --set benchImage.tag="$tag" --set mariadbImage.tag="$tag" --set perconaImage.tag="$tag" --set percona84Image.tag="$tag" \
    ${probe_period:+--set databaseProbePeriodSeconds="$probe_period"} >&2
}
timed "helm upgrade --install" install_chart

# --- 4. databases, Benchmark, table -----------------------------------------------------------------------
say "databases in namespace ${ns}"
kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >&2
# The databases and the Benchmark are config/samples' (the lab's scenario; the zoned node's in step 5), placed on
# this cluster and sized for the demo by hack/scenario: the demo runs what the samples and the e2e flows describe.
CGO_ENABLED=0 go build -o bin/ ./hack/scenario ./operator/cmd/kubectl-zns || die "building hack/scenario and kubectl-zns failed (above)"
# apply_scenario ARGS...: hack/scenario's manifest for ARGS, applied
apply_scenario() {
  local manifest
  manifest=$(bin/scenario -namespace "$ns" "$@") || die "hack/scenario $* failed (above)"
  printf '%s\n' "$manifest" | kubectl apply -f - >&2
}
targets=(innodb-baseline)
place=(-scenario lab -volume-size 5Gi)
if [[ -z "$zoned_why" ]]; then
  flavor=percona
  targets=(tenant1 tenant2 "${targets[@]}")
  place+=(-node "$node" -device "tenant1=${devices[0]##*/}" -device "tenant2=${devices[1]##*/}")
  note "tenant1, tenant2: MyRocks on ZenFS, zoned ${devices[0]##*/} and ${devices[1]##*/}"
else
  flavor=mariadb
  targets=(myrocks-xfs "${targets[@]}")
  note "myrocks-xfs: MyRocks on a volume"
fi
note "innodb-baseline: InnoDB on a volume (the baseline)"
place+=(-flavor "$flavor" -memory "$memory")
bench_name="compare"
apply_scenario "${place[@]}" -only "$(IFS=,; echo "${targets[*]}")" -print databases
show_trouble() {
  kubectl -n "$ns" get znsdatabases,benchmarks,pods,jobs -o wide >&2 || true
  kubectl -n "$ns" get events --sort-by=.lastTimestamp >&2 | tail -n 30 || true
}
available_minutes=10
wait_available() {
  heartbeat "databases Available" "kubectl -n ${ns} get znsdatabases shows them" \
    kubectl -n "$ns" wait --for=condition=Available --timeout="${available_minutes}m" "${targets[@]/#/znsdatabase/}" >&2 ||
    { show_trouble; die "the databases did not become Available within ${available_minutes} minutes (above: their state and events)"; }
}
timed "databases Available" wait_available
kubectl -n "$ns" get znsdatabases -o wide >&2

# apply_benchmark: the scenario's Benchmark (bench_name) of the targets, with the demo's run, named into $bench.
apply_benchmark() {
  say "Benchmark: ${workload}, ${tables} tables of ${table_size} rows, ${threads} threads, ${seconds}s, all targets at once"
  bench="demo-$(date +%Y%m%d-%H%M%S)"
  apply_scenario "${place[@]}" -only "$(IFS=,; echo "${targets[*]},${bench_name}")" -print benchmarks \
    -benchmark-name "$bench" -workload "$workload" -tables "$tables" -table-size "$table_size" -threads "$threads" \
    -seconds "$seconds" -iterations 1 -report-interval 1
}
apply_benchmark
bench_slack=900
wait_benchmark() {
  local deadline=$((SECONDS + bench_slack + seconds * 2)) phase="" last="" said=$SECONDS t0=$SECONDS
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
# The table comes from the kubectl plugin (operator/cmd/kubectl-zns, built above), the same one users run.
say "result (kubectl zns report ${bench}; kubectl -n ${ns} get benchmark ${bench} -o yaml has it all, the series in ConfigMaps)"
bin/kubectl-zns --kubeconfig "$kubeconfig" -n "$ns" report "$bench"
echo
echo "(${flavor} images; ratios are against innodb-baseline; ${seconds}s of ${workload} on $(nproc) cores with every"
echo " database in one kind node: this shows the stack works end to end, not how a ZNS drive compares)"

# --- 5. the zoned part on a Kubernetes node under QEMU -------------------------------------------------------
if [[ -n "$zoned_why" && -z "$node_why" ]]; then
  say "zoned part: ${zoned_why}, and a kind node shares this kernel. It runs on a Kubernetes node whose kernel has zoned devices, in a QEMU guest (hack/qemu/zoned-node.sh)"
  t0=$SECONDS
  # a fresh node: its devices start empty (a database made earlier on them would keep its data and password)
  export ZNS_NODE_OWNER=$$ ZNS_NODE_OWNER_WHAT="make demo in ${PWD}"
  hack/qemu/zoned-node.sh down || die "the zoned node is another run's (above); DEMO_ZONED=0 skips this part"
  hack/qemu/zoned-node.sh up >/dev/null || die "the zoned node did not come up (above); hack/qemu/zoned-node.sh up alone tries again, DEMO_ZONED=0 skips this part"
  record "zoned node up (QEMU)" "$t0"
  eval "$(hack/qemu/zoned-node.sh env)"
  ((ZNS_E2E_TIME_SCALE == 1)) || note "the guest runs under TCG (emulation; zoned-node said why above), where this part takes about half an hour here"
  kind_kubeconfig=$kubeconfig kind_ns=$ns kind_bench=$bench
  on=node chart_timeout=$((5 * ZNS_E2E_TIME_SCALE))m probe_period=${ZNS_E2E_PROBE_PERIOD:-}
  kubeconfig=$ZNS_E2E_KUBECONFIG
  tag=$ZNS_E2E_TAG
  timed "helm upgrade --install (node)" install_chart
  ns=${ns}-zoned
  say "databases in namespace ${ns} on the zoned node (config/samples/zoned-node)"
  kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >&2
  note "myrocks-zoned: MyRocks on btrfs in zoned mode, null_blk zoned nullb0"
  note "innodb-zoned: InnoDB on btrfs in zoned mode, emulated NVMe ZNS nvme0n1 (64 MiB zones)"
  note "innodb-small-zones: the same on nvme0n2, 16 MiB zones on nvme0n1's drive (zone size is a variable of the comparison)"
  note "innodb-zxfs, myrocks-zxfs: InnoDB and MyRocks on zoned XFS, null_blk zoned nullb3 and nullb4 (their first 8 zones conventional)"
  note "innodb-baseline: InnoDB on ext4 on the node's conventional NVMe namespace nvme1n1, preconditioned whole (baseline)"
  targets=(myrocks-zoned innodb-zoned innodb-small-zones innodb-zxfs myrocks-zxfs innodb-baseline)
  # the baseline's reformat token, new for each namespace, confirms that its preconditioning destroys what is on
  # nvme1n1; the time scale stretches the Benchmark's common start and timeout for emulation's slow pod starts
  place=(-scenario zoned-node -memory "$memory" -reformat-token "demo-${ns}" -time-scale "$ZNS_E2E_TIME_SCALE")
  bench_name="zoned-vs-conv"
  apply_scenario "${place[@]}" -only "$(IFS=,; echo "${targets[*]}")" -print databases
  # emulation: a process start takes about a second, so the waits are longer and the run smaller
  available_minutes=$((10 * ZNS_E2E_TIME_SCALE)) bench_slack=$((900 * ZNS_E2E_TIME_SCALE))
  timed "databases Available (node)" wait_available
  kubectl -n "$ns" get znsdatabases -o wide >&2
  seconds=${DEMO_NODE_SECONDS:-30} tables=1 table_size=${DEMO_NODE_TABLE_SIZE:-2000} threads=2
  # the drives' own counters and the FTL model at 7% and 28% over-provisioning, and the write-only phase on the
  # conventional baseline before the run (docs/write-amplification.md, docs/benchmark.md): the scenario's
  apply_benchmark
  timed "Benchmark (node)" wait_benchmark
  say "result on the zoned node (kubectl zns report ${bench})"
  bin/kubectl-zns --kubeconfig "$kubeconfig" -n "$ns" report "$bench"
  echo
  say "one stack, two zone geometries on one drive: innodb-zoned (nvme0n1, 64 MiB zones) against innodb-small-zones (nvme0n2, 16 MiB zones)"
  bin/kubectl-zns --kubeconfig "$kubeconfig" -n "$ns" compare "$bench" | grep -E '^(BENCHMARK|[^ ]+ +innodb-(zoned|small-zones) )' || true
  echo
  steady=$(kubectl -n "$ns" get benchmark "$bench" -o jsonpath='{range .status.targets[*]}{.name}{": "}{.steadyState.reached}{" "}{.steadyState.skipped}{"\n"}{end}')
  say "steady state before the run (the write-only phase; zoned targets need none):"
  while IFS= read -r line; do
    case $line in
      *": true"*) echo "  ${line%% *} reached steady state" ;;
      *": false ") echo "  ${line%% *} did not settle in its rounds: its results are marked \"not in steady state\"" ;;
      *) echo "  ${line%% *} needs none (zoned)" ;;
    esac
  done <<<"$steady"
  echo
  echo "(MariaDB images, no ZenFS: that needs the Percona image from repo.percona.com; ${seconds}s of ${workload}"
  echo " in a QEMU guest under $(cat "${cache}/zoned-node/accel" 2>/dev/null || echo tcg): the device bytes per transaction are"
  echo " the figure to read; TPS under emulation is not a drive's. The drives are emulated: no FTL behind them, so"
  echo " their measured media bytes equal host bytes; the MODELLED columns are what a conventional SSD's garbage"
  echo " collection would add at 7% and 28% over-provisioning, a model's figures, not a measurement)"
  if [[ "${DEMO_KEEP_ZONED_NODE:-0}" == 1 ]]; then
    note "the zoned node stays up (DEMO_KEEP_ZONED_NODE=1): hack/qemu/zoned-node.sh kubectl -n ${ns} get znsdatabases; hack/qemu/zoned-node.sh down stops it"
  else
    hack/qemu/zoned-node.sh down
    note "the zoned node is stopped (its devices lived in its memory); DEMO_KEEP_ZONED_NODE=1 make demo keeps it up"
  fi
  kubeconfig=$kind_kubeconfig ns=$kind_ns bench=$kind_bench
fi

say "timings"
printf '  %s\n' "${timings[@]}" "$(printf '%-34s %5ss' total "$(($(date +%s) - t_start))")"
cat <<EOF

The cluster stays up:
  export KUBECONFIG=${kubeconfig}
  hack/kind/cluster.sh kubectl -n ${ns} get znsdatabases,benchmarks
  bin/kubectl-zns -n ${ns} report ${bench}          # also: compare, export, plot, watch
  make demo-clean      # delete the cluster$( ((${#devices[@]})) && printf ' and the null_blk devices %s' "${devices[*]}")
EOF
