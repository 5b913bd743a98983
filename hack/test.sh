#!/usr/bin/env bash
# hack/test.sh: the README's test command (`make test`): sets up everything the test tiers need on a fresh
# Debian machine with Go and a Docker Engine, then runs every tier CI runs, the end-to-end suite included.
#
#   1 Debian packages          hack/install-deps.sh (MariaDB + MyRocks, sysbench, fio, QEMU, debootstrap, ...)
#   2 Go modules               go mod download
#   3 generated files, gofmt, go vet, make lint (shellcheck on the shell scripts, staticcheck on the Go code)
#   4 builds, side by side     hack/kubernetes.sh (envtest and the kind node share one build), the kind node
#                              image, helm, the QEMU guest, the bench/MariaDB/operator images; cached under
#                              $ZNS_CACHE_DIR (rebuilt when missing); each background build logs to a file
#   5 waiting for them         with their progress; meanwhile zloop.ko for the guest's kernel when it needs one
#                              (hack/qemu/build-zloop-module.sh --for-guest; cached), for the zloop tests
#   6 tests                    pure Go, real MariaDB on loopback, envtest, chart, QEMU guest, images
#   7 end to end               a kind cluster of its own (zns-test; a loop device for the refusal test when
#                              root), the images loaded, test/e2e, then the cluster deleted
#   8 zoned end to end         this kernel has no zoned devices and a kind node shares it: a Kubernetes node in
#                              the QEMU guest (hack/qemu/zoned-node.sh), the e2e suite's zoned flow against it
# Tests 6 to 8 end in one summary: "N passed, N failed, N skipped", every skip with what it needs.
#
# Environment:
#   ZNS_E2E_KUBECONFIG       run the e2e suite on this cluster instead of creating one (load the images first:
#                            `make e2e-cluster` prints the settings; ZNS_E2E_TAG is their tag)
#   ZNS_E2E=0                no cluster, no e2e suite (it then reports itself skipped, with the reason)
#   ZNS_TEST_KEEP_CLUSTER=1  keep the cluster this run created (hack/kind/cluster.sh down removes it)
#   ZNS_REQUIRE_QEMU=1, ZNS_REQUIRE_IMAGES=1, ZNS_REQUIRE_E2E=1   what CI sets: a tier that would skip for
#                            want of its setup fails instead
#   GO_TEST_FLAGS (default -count=1), TEST_TIMEOUT (default 45m, per package), E2E_TIMEOUT (default 40m),
#   ZONED_E2E_TIMEOUT (default 75m: stage 8 under emulation),
#   ZNS_TEST_BUDGET_MIN      the whole run's time limit in minutes (.ci/run: CI's 90): stage 8's go test gets at
#                            most what is left of it less 4 minutes, so that a stall ends in go test's report of
#                            what was running, not in CI killing the run without a summary
#   ZLOOP_MODULE             a zloop.ko for the QEMU guest's kernel, used instead of building one
#   ZNS_CACHE_DIR
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TOOL_NAME="test"
# shellcheck source=hack/lib/tool-common.sh
source hack/lib/tool-common.sh

T0=$SECONDS
STAGES=8
# Each stage's start, for the table of stage timings at the end (testsummary stages): written to a file
# because stages 6 to 8 run in the pipeline's subshell.
stage_log="$cache_root/last-test-stages.tsv"
mkdir -p "$cache_root"
: >"$stage_log"
# stage N NAME: a banner a person can find in a long log, with the time since the start.
stage() {
  printf '\n==> [%s/%s] %s (%s since the start)\n' "$1" "$STAGES" "$2" "$(mmss $((SECONDS - T0)))" >&2
  printf '%s\t%s\t%s\n' "$1" "$2" "$((SECONDS - T0))" >>"$stage_log"
}
# fail STAGE WHAT-TO-DO: stop, naming the stage that failed and what the user can do.
fail() {
  printf '\ntest: ERROR in stage %s. %s\n' "$1" "$2" >&2
  exit 1
}

GO_TEST_FLAGS=${GO_TEST_FLAGS:--count=1}
TEST_TIMEOUT=${TEST_TIMEOUT:-45m}
E2E_TIMEOUT=${E2E_TIMEOUT:-40m}
# the zoned flow under emulation took 28 min here: room for a slower machine
ZONED_E2E_TIMEOUT=${ZONED_E2E_TIMEOUT:-75m}
E2E_PACKAGE=github.com/zns-mysql/zns-mysql/test/e2e
read -r -a go_test_flags <<<"$GO_TEST_FLAGS"

mkdir -p "$cache_root/tools"
docker_ok=0
command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 && docker_ok=1

# What the e2e tier will run on: a given cluster, one of our own, or none (and why).
e2e_mode=own
e2e_why=""
if [[ "${ZNS_E2E:-}" == 0 ]]; then
  e2e_mode=none e2e_why="ZNS_E2E=0"
elif [[ -n "${ZNS_E2E_KUBECONFIG:-}" ]]; then
  e2e_mode=given
elif ((!docker_ok)); then
  e2e_mode=none e2e_why="no usable Docker Engine (docker info failed)"
  [[ "${ZNS_REQUIRE_E2E:-0}" != 1 ]] || fail 0 "ZNS_REQUIRE_E2E=1 but ${e2e_why}: start the Docker Engine"
fi

# --- 1-3 ---------------------------------------------------------------------------------------------------
stage 1 "Debian packages (hack/install-deps.sh)"
hack/install-deps.sh || fail 1 "the packages above are needed by the test tiers: install them (as root: hack/install-deps.sh) and run make test again"

stage 2 "Go modules (go mod download)"
heartbeat "go mod download" "" go mod download || fail 2 "go could not download the modules: check that the Go module proxy is reachable (go env GOPROXY)"

stage 3 "generated files, gofmt, go vet, shellcheck, staticcheck"
heartbeat "drift, gofmt, go vet, shellcheck, staticcheck" "go vet compiles the whole project the first time" make -s --no-print-directory check-generate fmt-check vet lint ||
  fail 3 "fix what is shown above: 'make generate' rewrites the generated files, 'gofmt -w operator test hack' formats, 'make lint-shell' reruns shellcheck on the shell scripts, 'make lint' reruns it and staticcheck"

# --- 4-5 ---------------------------------------------------------------------------------------------------
# The builds run side by side, each into its own log: the Go builds (Kubernetes, the node's parts, helm) use
# the CPUs while debootstrap, apt in docker and the kernel download wait on the network and the disk.
logs="$cache_root/last-test-logs"
mkdir -p "$logs"
rm -f "$logs/recap.txt"
declare -A bg_pid=() bg_log=()
# bg NAME CMD...: start CMD in the background, its output (stdout too) in $logs/NAME.log.
bg() {
  local name=$1
  shift
  bg_log[$name]="$logs/${name}.log"
  "$@" >"${bg_log[$name]}" 2>&1 &
  bg_pid[$name]=$!
  log "${name}: building in the background (log: ${bg_log[$name]})"
}
# bg_wait STAGE NAME WHAT-TO-DO: wait for NAME with progress lines; on failure show its log's end and stop.
bg_wait() {
  local stage=$1 name=$2 todo=$3 rc=0
  heartbeat --log "${bg_log[$name]}" "$name" "" wait "${bg_pid[$name]}" || rc=$?
  if ((rc != 0)); then
    tail -n 40 "${bg_log[$name]}" >&2
    fail "$stage" "${name} failed (exit ${rc}; above, the end of ${bg_log[$name]}). ${todo}"
  fi
  log "${name}: done"
}

stage 4 "builds: Kubernetes (envtest$([[ "$e2e_mode" == own ]] && printf ' and the kind node image')), helm, the QEMU guest$( ((docker_ok)) && printf ', the images')"
bg qemu-guest hack/qemu/build-guest.sh
if ((docker_ok)); then bg images hack/images/build.sh bench mariadb operator; fi
if [[ "$e2e_mode" == own ]]; then
  # the node image builds the Kubernetes binaries envtest uses too (hack/kubernetes.sh node)
  bg node-image hack/kind/build-node-image.sh
fi
helm=$(hack/helm.sh) || fail 4 "building helm failed (above); a rerun resumes from the Go build cache"
# the node set when the node image needs it too: whichever of the two calls gets the lock builds all of it
kube_set=envtest
[[ "$e2e_mode" == own ]] && kube_set=node
assets=$(hack/kubernetes.sh "$kube_set") ||
  fail 4 "building the Kubernetes binaries failed (above); a rerun resumes from the Go build cache"

stage 5 "waiting for the background builds"
# the guest tier skips (or, with ZNS_REQUIRE_QEMU=1, fails) and says what is missing when build-guest.sh
# exits 3: a prerequisite it names is missing
qemu_rc=0
heartbeat --log "${bg_log[qemu-guest]}" qemu-guest "" wait "${bg_pid[qemu-guest]}" || qemu_rc=$?
case "$qemu_rc" in
  0) log "qemu-guest: $(tail -n 1 "${bg_log[qemu-guest]}")" ;;
  3) tail -n 5 "${bg_log[qemu-guest]}" >&2; log "the QEMU guest cannot be built here (above); its tests will say what they need" ;;
  *) tail -n 40 "${bg_log[qemu-guest]}" >&2; fail 5 "building the QEMU guest failed (above; hack/qemu/build-guest.sh alone shows it again)" ;;
esac
# zloop: no Debian kernel has it. When the guest runs the pinned current kernel, zloop.ko is built for it (about a
# minute cold, then cached) while the other builds finish, so that the QEMU tier's zloop tests run; when that fails
# they skip, saying which step failed (ZNS_ZLOOP_MODULE_ERROR). A ZLOOP_MODULE given is used as it is.
zloop_pid=""
if ((qemu_rc == 0)) && [[ -z "${ZLOOP_MODULE:-}" ]]; then
  if guest_dir=$(hack/qemu/build-guest.sh 2>/dev/null); then
    hack/qemu/build-zloop-module.sh --for-guest "$guest_dir" >"$logs/zloop-module.path" 2>"$logs/zloop-module.log" &
    zloop_pid=$!
    log "zloop-module: building zloop.ko in the background if the guest's kernel needs it (log: ${logs}/zloop-module.log)"
  fi
fi
if ((docker_ok)); then
  bg_wait 5 images "hack/images/build.sh bench mariadb operator alone shows it again; the build logs are in ${cache_root}/images"
  # the bench image's go-ycsb, which hack/images/go-ycsb.sh keeps in the cache: the loopback tier's YCSB test runs it
  ycsb_bin="${cache_root}/tools/go-ycsb-$(read_pin YCSB_VERSION)-linux-$(go env GOARCH)/go-ycsb"
  if [[ -z "${GO_YCSB:-}" && -x "$ycsb_bin" ]]; then
    export GO_YCSB=$ycsb_bin
    log "go-ycsb: ${GO_YCSB} (the bench image's): TestYCSBRealServer runs it"
  fi
else
  log "no usable Docker Engine: the images are not built; their tests and the e2e suite will skip and say so"
fi
if [[ "$e2e_mode" == own ]]; then
  bg_wait 5 node-image "ZNS_E2E=0 make test runs everything but the e2e tier"
fi
if [[ -n "$zloop_pid" ]]; then
  zloop_rc=0
  heartbeat --log "$logs/zloop-module.log" zloop-module "" wait "$zloop_pid" || zloop_rc=$?
  zloop_ko=$(cat "$logs/zloop-module.path" 2>/dev/null || true)
  if ((zloop_rc == 0)) && [[ -n "$zloop_ko" ]]; then
    export ZLOOP_MODULE=$zloop_ko
    log "zloop-module: ${zloop_ko}: the QEMU tier's zloop tests load it (ZLOOP_MODULE)"
  elif ((zloop_rc == 0)); then
    log "zloop-module: $(grep -v 'still running' "$logs/zloop-module.log" | tail -n 1 | sed 's/^build-zloop-module: //')"
  else
    zloop_why=$(grep -E '^build-zloop-module: (ERROR|MISSING): ' "$logs/zloop-module.log" | tail -n 1 | sed -E 's/^build-zloop-module: (ERROR|MISSING): //; s/ \(the log.s last lines above\)//; s/: fix what it says and run again \(finished steps are kept\)$//')
    export ZNS_ZLOOP_MODULE_ERROR="hack/qemu/build-zloop-module.sh exited ${zloop_rc}: ${zloop_why:-no message} (its log: ${logs}/zloop-module.log)"
    tail -n 20 "$logs/zloop-module.log" >&2
    log "zloop-module: building zloop.ko failed (above); the QEMU tier's zloop tests skip with that reason"
  fi
fi

# --- 6-7 ---------------------------------------------------------------------------------------------------
go build -o "$cache_root/tools/testsummary" ./hack/testsummary || fail 6 "building hack/testsummary failed (above)"
mapfile -t packages < <(go list ./... | grep -vxF "$E2E_PACKAGE")

# The zoned node is one per machine: this run names itself its owner (the stage and the cleanup alike), so that
# another run's down leaves it alone while this one uses it, and this one's leaves another's alone.
export ZNS_NODE_OWNER=$$ ZNS_NODE_OWNER_WHAT="make test in ${PWD}"
# What the e2e stage sets up runs in the pipeline's subshell below; it leaves notes here for the cleanup.
state=$(mktemp -d "${TMPDIR:-/tmp}/zns-test.XXXXXX")
# delete_cluster: delete the kind cluster this run created (unless ZNS_TEST_KEEP_CLUSTER=1), once.
delete_cluster() {
  local cluster
  cluster=$(cat "$state/cluster" 2>/dev/null || true)
  if [[ -n "$cluster" && "${ZNS_TEST_KEEP_CLUSTER:-0}" != 1 ]]; then
    log "deleting the test cluster ${cluster}"
    ZNS_KIND_CLUSTER=$cluster hack/kind/cluster.sh down >/dev/null ||
      log "could not delete it: ZNS_KIND_CLUSTER=${cluster} hack/kind/cluster.sh down"
    rm -f "$state/cluster"
  elif [[ -n "$cluster" ]]; then
    log "kept the test cluster ${cluster} (ZNS_TEST_KEEP_CLUSTER=1): ZNS_KIND_CLUSTER=${cluster} hack/kind/cluster.sh down removes it"
    rm -f "$state/cluster"
  fi
}
# shellcheck disable=SC2317 # run by the EXIT trap; shellcheck 0.9.0 thinks it unreachable because the script ends in exit (koalaman/shellcheck#2542)
cleanup() {
  local loopdev loopfile
  delete_cluster
  loopdev=$(cat "$state/loopdev" 2>/dev/null || true)
  loopfile=$(cat "$state/loopfile" 2>/dev/null || true)
  if [[ -n "$loopdev" && "${ZNS_TEST_KEEP_CLUSTER:-0}" != 1 ]]; then losetup -d "$loopdev" 2>/dev/null || true; fi
  if [[ -n "$loopfile" && "${ZNS_TEST_KEEP_CLUSTER:-0}" != 1 ]]; then rm -f "$loopfile"; fi
  if [[ -e "$state/zoned-node" ]]; then hack/qemu/zoned-node.sh down || true; fi
  rm -rf "$state"
}
trap cleanup EXIT

# e2e_cluster: bring up this run's own cluster with the images; exports the ZNS_E2E_* settings.
e2e_cluster() {
  export ZNS_KIND_CLUSTER=${ZNS_KIND_CLUSTER:-zns-test} ZNS_KIND_NODE=${ZNS_KIND_NODE:-offline}
  # A conventional block device for the refusal test (this kernel has no zoned ones): a loop device over a
  # file whose first MiB is random, so that any write to it shows. It must exist before the cluster: a kind
  # node keeps a static copy of /dev. Root only; the test says what it needs and skips otherwise.
  local loopfile loopdev
  if [[ $(id -u) -eq 0 ]] && command -v losetup >/dev/null; then
    loopfile=$(mktemp /var/tmp/zns-test-loop.XXXXXX)
    printf '%s\n' "$loopfile" >"$state/loopfile"
    truncate -s 128M "$loopfile"
    head -c 1048576 /dev/urandom | dd of="$loopfile" conv=notrunc status=none
    if loopdev=$(losetup -f --show "$loopfile" 2>&1) && [[ -b "$loopdev" ]]; then
      printf '%s\n' "$loopdev" >"$state/loopdev"
      export ZNS_KIND_DEVICES=$loopdev ZNS_E2E_CONVENTIONAL_DEVICE="${ZNS_KIND_CLUSTER}-control-plane:${loopdev#/dev/}"
      log "conventional test device: ${loopdev} over ${loopfile}"
    else
      log "no loop device (${loopdev}): the e2e refusal test will skip and say so"
    fi
  fi
  printf '%s\n' "$ZNS_KIND_CLUSTER" >"$state/cluster"
  ZNS_E2E_KUBECONFIG=$(hack/kind/cluster.sh up) || return 1
  ZNS_E2E_TAG=$(hack/kind/load-images.sh bench mariadb operator) || return 1
  export ZNS_E2E=1 ZNS_E2E_KUBECONFIG ZNS_E2E_TAG
}

# The e2e tests that need the zoned node; stage 7 leaves them to stage 8.
# TestZonedFioBenchmark first: a fio Job on nvme0n2 while the node is otherwise idle (about 2 minutes)
ZONED_E2E_TESTS='(TestZonedFioBenchmark|TestZonedFilesystemFlow)'
# zoned_e2e: boot the zoned node, run the zoned e2e tests on it, stop it. Where it cannot run, the tests run
# without it and report themselves skipped with what they need (with ZNS_REQUIRE_QEMU=1, it fails instead).
zoned_e2e() {
  local why="" rc=0
  if ((qemu_rc != 0)); then
    why="the QEMU guest cannot be built here (stage 5 said why)"
  elif ((!docker_ok)); then
    why="no usable Docker Engine for the images"
  elif [[ "$e2e_why" == "ZNS_E2E=0" ]]; then # stage 7 has unset ZNS_E2E by now
    why="ZNS_E2E=0"
  fi
  if [[ -n "$why" ]]; then
    [[ "${ZNS_REQUIRE_QEMU:-0}" != 1 ]] || fail 8 "ZNS_REQUIRE_QEMU=1 but ${why}"
    log "no zoned node: ${why}; its tests report themselves skipped"
    (unset ZNS_E2E ZNS_REQUIRE_E2E ZNS_E2E_ZONED_NODE && go test -json "${go_test_flags[@]}" -run "^${ZONED_E2E_TESTS}\$" ./test/e2e/)
    return
  fi
  printf 'zoned-node\n' >"$state/zoned-node"
  # a fresh node: what an earlier run left on its devices and volumes would be in the tests' way
  hack/qemu/zoned-node.sh down || fail 8 "the zoned node is another run's (above)"
  hack/qemu/zoned-node.sh up >/dev/null ||
    fail 8 "the zoned node did not come up (above; its log: ${cache_root}/zoned-node/guest.log); hack/qemu/zoned-node.sh up alone tries again, ZNS_E2E=0 make test skips it"
  (
    eval "$(hack/qemu/zoned-node.sh env)"
    timeout=$ZONED_E2E_TIMEOUT
    if [[ -n "${ZNS_TEST_BUDGET_MIN:-}" ]]; then
      left=$((ZNS_TEST_BUDGET_MIN * 60 - (SECONDS - T0) - 240))
      ((left > 60)) || left=60
      # ZONED_E2E_TIMEOUT in whole seconds, minutes or hours, as go test takes it
      case $ZONED_E2E_TIMEOUT in
        *h) want=$((${ZONED_E2E_TIMEOUT%h} * 3600)) ;;
        *m) want=$((${ZONED_E2E_TIMEOUT%m} * 60)) ;;
        *s) want=${ZONED_E2E_TIMEOUT%s} ;;
        *) fail 8 "ZONED_E2E_TIMEOUT=${ZONED_E2E_TIMEOUT}: give whole seconds, minutes or hours (4500s, 75m, 2h)" ;;
      esac
      timeout="$((want < left ? want : left))s"
      log "stage 8's tests get ${timeout} (ZONED_E2E_TIMEOUT ${ZONED_E2E_TIMEOUT}; ${ZNS_TEST_BUDGET_MIN} min budget, $(mmss $((SECONDS - T0))) gone)"
    fi
    ZNS_HELM=$helm go test -json "${go_test_flags[@]}" -timeout "$timeout" -run "^${ZONED_E2E_TESTS}\$" ./test/e2e/
  ) || rc=$?
  hack/qemu/zoned-node.sh down || true
  rm -f "$state/zoned-node"
  return "$rc"
}

status=0
{
  stage 6 "tests: pure Go, real MariaDB on loopback, envtest, chart, QEMU guest, images"
  # the QEMU package boots guests that run MariaDB under emulation: more than go test's default 10 minutes
  KUBEBUILDER_ASSETS=$assets ZNS_HELM=$helm go test -json "${go_test_flags[@]}" -timeout "$TEST_TIMEOUT" "${packages[@]}" || status=$?
  stage 7 "end to end on kind"
  case "$e2e_mode" in
    own)
      if ! e2e_cluster; then
        fail 7 "the test cluster did not come up (above); hack/kind/cluster.sh status shows it, ZNS_E2E=0 make test skips this tier"
      fi
      ;;
    given) export ZNS_E2E=1 ;;
    none)
      log "no e2e cluster: ${e2e_why}; the suite reports itself skipped"
      unset ZNS_E2E
      ;;
  esac
  ZNS_HELM=$helm go test -json "${go_test_flags[@]}" -timeout "$E2E_TIMEOUT" -skip "^${ZONED_E2E_TESTS}\$" ./test/e2e/ || status=$?
  # the kind cluster's node would take CPU from the emulated one
  delete_cluster
  stage 8 "zoned end to end: a Kubernetes node with zoned devices under QEMU"
  zoned_e2e || status=$?
  exit "$status"
} 2>&1 | tee "$cache_root/last-test.json" | "$cache_root/tools/testsummary" --recap "$logs/recap.txt" || status=$?
"$cache_root/tools/testsummary" stages "$stage_log" $((SECONDS - T0)) >&2 || log "no stage timings (above)"
# the failed tests' last words once more, last: a long log is often read by its tail alone
[[ ! -s "$logs/recap.txt" ]] || cat "$logs/recap.txt" >&2
log "total $(mmss $((SECONDS - T0)))"
exit "$status"
