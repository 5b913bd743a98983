#!/usr/bin/env bash
# hack/demo-local.sh: the seed methodology on this machine, without Kubernetes.
#
# Two private MariaDB 10.11 servers with MyRocks (Debian's packages, the project's stand-in for Percona
# Server), one per engine (rocksdb, innodb), configured by the operator's own generator (znsdb mycnf):
# prepare with the bulkload profile, restart with the workload profile, verify the row count, run a sysbench
# workload on both at the same time (a common start barrier, as the Benchmark does for tenants), and print
# the comparison. Everything listens on 127.0.0.1 only and is stopped at the end.
#
# Environment: DEMO_SECONDS (default 30), DEMO_THREADS (4), DEMO_TABLES (4), DEMO_TABLE_SIZE (20000),
# DEMO_WORKLOAD (oltp_update_index), DEMO_MEMORY (1Gi), DEMO_DIR (a fresh directory under /var/tmp),
# DEMO_TARGETS (default "rocksdb=rocksdb innodb=innodb"): the servers, as NAME=ENGINE[@DIR[@DEVICE]]; DIR holds
# the server's files (default DEMO_DIR/NAME), DEVICE is the block device under DIR whose written bytes the
# runner counts per transaction (hack/zoned-stacks.sh passes file systems on zoned devices this way),
# DEMO_SKIP_BUILD=1 (use bin/znsdb and bin/znsbench as they are; the QEMU guest cannot build them),
# DEMO_TEMPLATE_DATADIR (copy this empty datadir, made by mariadb-install-db, instead of running it per server).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${DEMO_SECONDS:-30}
threads=${DEMO_THREADS:-4}
tables=${DEMO_TABLES:-4}
table_size=${DEMO_TABLE_SIZE:-20000}
workload=${DEMO_WORKLOAD:-oltp_update_index}
memory=${DEMO_MEMORY:-1Gi}

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

tools=(mariadbd mariadb-install-db mariadb sysbench)
[[ "${DEMO_SKIP_BUILD:-0}" == 1 ]] || tools+=(go)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || {
    [[ $(id -u) -eq 0 ]] && hack/install-deps.sh && break
    die "$tool is missing: run hack/install-deps.sh as root (Debian: mariadb-server mariadb-plugin-rocksdb sysbench)"
  }
done
plugin_dir=$(mariadbd --no-defaults --verbose --help 2>/dev/null | awk '$1 == "plugin-dir" {print $2}')
[[ -f "${plugin_dir:-/usr/lib/mysql/plugin}/ha_rocksdb.so" ]] || die "MyRocks is missing: apt-get install mariadb-plugin-rocksdb"

if [[ "${DEMO_SKIP_BUILD:-0}" != 1 ]]; then
  say "building znsdb and znsbench"
  mkdir -p bin
  CGO_ENABLED=0 go build -o bin/ ./operator/cmd/znsdb ./operator/cmd/znsbench
fi

work=${DEMO_DIR:-$(mktemp -d /var/tmp/zns-demo.XXXXXX)}
mkdir -p "$work"
pids=()
cleanup() {
  # shellcheck disable=SC2015 # the || true is for both: an empty or finished pid is no error
  for p in "${pids[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  # shellcheck disable=SC2015 # the || true is for both: an empty pid or a failed server is no error
  for p in "${pids[@]:-}"; do [[ -n "$p" ]] && wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
as_root=()
[[ $(id -u) -eq 0 ]] && as_root=(--user=root)
password=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 20)
export MYSQL_PASSWORD=$password

free_port() {
  local p
  for p in $(seq "$1" $(( $1 + 200 ))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  die "no free port near $1"
}

# cnf ENGINE PROFILE: the operator's configuration for a private server.
cnf() {
  local d=${dir[$1]}
  bin/znsdb mycnf --flavor mariadb --engine "${engine[$1]}" --profile "$2" --memory "$memory" \
    --datadir "$d/data" --socket "$d/mysqld.sock" --pid-file "$d/mysqld.pid" --port "${port[$1]}" >"$d/my.cnf"
}

start() {
  local e=$1 d=${dir[$1]}
  # a tmpdir of its own: a starting mariadbd deletes every #sql file of its tmpdir, another server's included
  mkdir -p "$d/tmp"
  mariadbd --defaults-file="$d/my.cnf" --bind-address=127.0.0.1 --tmpdir="$d/tmp" "${as_root[@]}" >>"$d/mysqld.log" 2>&1 &
  pid[$e]=$!
  pids+=("${pid[$e]}")
  for _ in $(seq 1 "${DEMO_START_TRIES:-120}"); do
    mariadb --no-defaults --socket="$d/mysqld.sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && return
    kill -0 "${pid[$e]}" 2>/dev/null || { tail -n 20 "$d/mysqld.log" >&2; die "mysqld ($e) exited"; }
    sleep 0.5
  done
  die "mysqld ($e) did not answer within 60 s"
}
# Under emulation (hack/qemu) a start takes longer; DEMO_START_TRIES stretches the wait.

stop() {
  # shellcheck disable=SC2015 # the || true is for both: a server already gone is no error
  kill "${pid[$1]}" && wait "${pid[$1]}" 2>/dev/null || true
}

sql() { mariadb --no-defaults --socket="${dir[$1]}/mysqld.sock" -uroot -N -e "$2"; }

bench() { # bench TARGET PHASE [flags...]
  local e=$1 phase=$2
  shift 2
  bin/znsbench "$phase" --target "$e" --workload "$workload" --tables "$tables" --table-size "$table_size" \
    --mysql-host 127.0.0.1 --mysql-port "${port[$e]}" --mysql-user bench --storage-engine "${engine[$e]}" \
    --termination-log "${dir[$e]}/$phase.json" "$@"
}

declare -A port pid engine dir device
engines=()
# Below Linux's ephemeral range (32768-60999 by default): a port in it can be the local end of a client's
# connection to another server by the time a server binds it ("Address already in use", seen in the QEMU tier).
next_port=23061
for spec in ${DEMO_TARGETS:-rocksdb=rocksdb innodb=innodb}; do
  [[ "$spec" =~ ^([a-z][-a-z0-9]*)=(rocksdb|innodb)(@([^@]+))?(@([a-z][a-z0-9]*(\+[a-z][a-z0-9]*)?))?$ ]] ||
    die "DEMO_TARGETS: '$spec' is not NAME=ENGINE[@DIR[@DEVICE]] (ENGINE rocksdb or innodb)"
  t=${BASH_REMATCH[1]}
  engines+=("$t")
  engine[$t]=${BASH_REMATCH[2]}
  dir[$t]=${BASH_REMATCH[4]:-$work/$t}
  device[$t]=${BASH_REMATCH[6]}
  port[$t]=$(free_port "$next_port")
  next_port=$(( ${port[$t]} + 1 ))
done

for e in "${engines[@]}"; do
  say "$e (${engine[$e]}): initialising a private datadir in ${dir[$e]}"
  mkdir -p "${dir[$e]}"
  cnf "$e" bulkload
  if [[ -n "${DEMO_TEMPLATE_DATADIR:-}" ]]; then
    # an empty datadir that mariadb-install-db made once: under emulation its bootstrap costs minutes per server
    cp -a "$DEMO_TEMPLATE_DATADIR" "${dir[$e]}/data"
  else
    mkdir -p "${dir[$e]}/tmp"
    mariadb-install-db --no-defaults --auth-root-authentication-method=socket --skip-test-db "${as_root[@]}" \
      --datadir="${dir[$e]}/data" --tmpdir="${dir[$e]}/tmp" >"${dir[$e]}/install.log" 2>&1 || { tail "${dir[$e]}/install.log"; die "mariadb-install-db failed"; }
  fi
  start "$e"
  sql "$e" "CREATE DATABASE sbtest; CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '$password';
            GRANT ALL ON sbtest.* TO 'bench'@'127.0.0.1';"
  say "$e: prepare with the bulkload profile (bulk load on, binary log off)"
  echo "   rocksdb_bulk_load=$(sql "$e" "SELECT @@rocksdb_bulk_load" 2>/dev/null || echo n/a) log_bin=$(sql "$e" "SELECT @@log_bin")"
  bench "$e" prepare --threads "$tables" >"${dir[$e]}/prepare.log"
  say "$e: restart with the workload profile (bulk load off, binary log on), then verify the rows"
  stop "$e"
  cnf "$e" workload
  start "$e"
  echo "   rocksdb_bulk_load=$(sql "$e" "SELECT @@rocksdb_bulk_load" 2>/dev/null || echo n/a) log_bin=$(sql "$e" "SELECT @@log_bin")"
  bench "$e" verify | tail -n 1
done

start_at=$(date -u -d "+5 seconds" +%Y-%m-%dT%H:%M:%SZ)
say "running $workload for ${seconds}s on every server at once (common start $start_at)"
run_pids=()
for e in "${engines[@]}"; do
  dev_flag=()
  [[ -n "${device[$e]}" ]] && dev_flag=(--device "${device[$e]}")
  bench "$e" run --threads "$threads" --time "$seconds" --report-interval 5 --start-at "$start_at" "${dev_flag[@]}" \
    >"${dir[$e]}/run.log" 2>&1 &
  run_pids+=($!)
  pids+=($!)
done
failed=0
for p in "${run_pids[@]}"; do wait "$p" || failed=1; done
if [[ $failed -ne 0 ]]; then
  for e in "${engines[@]}"; do tail -n 20 "${dir[$e]}/run.log"; done
  die "a run failed (logs above)"
fi

say "results (MariaDB 10.11 + MyRocks on loopback; a stand-in for Percona Server on a ZNS drive)"
summaries=()
for e in "${engines[@]}"; do summaries+=("${dir[$e]}/run.json"); done
bin/znsbench compare "${summaries[@]}"
echo
echo "logs and summaries: $work"
