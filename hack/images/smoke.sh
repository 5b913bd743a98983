#!/usr/bin/env bash
# hack/images/smoke.sh: prove the bench and MariaDB images work together, the way the operator runs them.
#
#   hack/images/smoke.sh [--no-build]
#
# 1. builds zns-mysql/bench and zns-mysql/mariadb-myrocks (hack/images/build.sh; skipped with --no-build)
# 2. generates the config with the image's own `znsdb mycnf --flavor mariadb --engine rocksdb`
# 3. starts the MariaDB image like the operator's pod: no command, args --defaults-file=/etc/zns-mysql/my.cnf,
#    uid 999, read-only root filesystem, tmpfs at /tmp and /var/run/mysqld, the config mounted read-only, a
#    data volume that already holds lost+found (as a fresh ext4 volume does), MYSQL_ROOT_PASSWORD set
# 4. waits for `znsdb health` (the readiness probe), checks the entrypoint initialised the datadir, that root
#    needs the password, that MyRocks is the default engine and that mysqld does not hold the password in
#    its environment
# 5. runs the bench image's `znsbench prepare`, `verify` and `run` (2 tables x 1000 rows, 5 s) as uid 1000
#    with a read-only root filesystem, and checks the run's summary reports tps > 0
# 6. restarts the database: no second initialisation, the rows are still there
# 7. prints how long each step took and the image sizes
#
# Networking: the database container has no network but loopback (--network none) and the bench containers
# join its network namespace (--network container:...), as containers of one pod do: all traffic stays on
# 127.0.0.1. Everything it creates is removed at exit. Exit status: 0 passed, 1 failed, 3 no Docker.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_docker
root=$(images_repo_root)
cd "$root"

build=1
case "${1:-}" in
  --no-build) build=0 ;;
  "") ;;
  *) echo "usage: $0 [--no-build]" >&2; exit 2 ;;
esac

id="zns-smoke-$$-$RANDOM"
db="$id-db"
vol="$id-data"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zns-smoke.XXXXXX")
chmod 0755 "$tmp"
created_db=0 created_vol=0
# shellcheck disable=SC2317 # run by the EXIT trap; shellcheck 0.9.0 thinks it unreachable because the script ends in exit (koalaman/shellcheck#2542)
cleanup() {
  local rc=$?
  if [[ $rc -ne 0 && $created_db -eq 1 ]]; then
    echo "--- database container log (last 40 lines) ---" >&2
    "$DOCKER" logs --tail 40 "$db" >&2 2>&1 || true
  fi
  [[ $created_db -eq 1 ]] && "$DOCKER" rm -f "$db" >/dev/null 2>&1
  [[ $created_vol -eq 1 ]] && "$DOCKER" volume rm -f "$vol" >/dev/null 2>&1
  rm -rf "$tmp"
  return "$rc"
}
trap cleanup EXIT

t0=$(now)
steps=()
step_start=$(now)
step() { steps+=("$(printf '%-48s %8s' "$1" "$(elapsed "$step_start")")"); log "smoke: $1 ($(elapsed "$step_start"))"; step_start=$(now); }
fail() { log "smoke: FAILED: $*"; exit 1; }

if [[ $build -eq 1 ]]; then
  hack/images/build.sh bench mariadb
  step "build bench + mariadb images"
fi
for img in "$BENCH_IMAGE" "$MARIADB_IMAGE"; do
  image_exists "$img" || fail "$img is not built (hack/images/build.sh bench mariadb)"
done

# A password that needs quoting in SQL and in a shell.
password="Sm0ke'\"\\\$x-$RANDOM"

"$DOCKER" run --rm --network none "$MARIADB_IMAGE" \
  znsdb mycnf --flavor mariadb --engine rocksdb --memory 1Gi >"$tmp/my.cnf"
chmod 0644 "$tmp/my.cnf"
grep -q '^datadir=/var/lib/mysql/data$' "$tmp/my.cnf" || fail "unexpected config: $(head -c 400 "$tmp/my.cnf")"
step "config from the image's znsdb mycnf"

"$DOCKER" volume create "$vol" >/dev/null
created_vol=1
# The first mount copies the image's /var/lib/mysql (owner 999) into the volume; lost+found like ext4's.
"$DOCKER" run --rm --network none --user 0:0 -v "$vol:/var/lib/mysql" "$MARIADB_IMAGE" \
  sh -c 'mkdir /var/lib/mysql/lost+found && chmod 0700 /var/lib/mysql/lost+found'

db_args=(--name "$db" --network none --user 999:999 --read-only --cap-drop ALL
  --security-opt no-new-privileges
  --tmpfs "/tmp:rw,nosuid,nodev,mode=1777" --tmpfs "/var/run/mysqld:rw,nosuid,nodev,uid=999,gid=999,mode=0755"
  -v "$vol:/var/lib/mysql" -v "$tmp/my.cnf:/etc/zns-mysql/my.cnf:ro"
  -e MYSQL_ROOT_PASSWORD="$password" -e ZNS_MYSQL_FLAVOR=mariadb)
"$DOCKER" run -d "${db_args[@]}" "$MARIADB_IMAGE" --defaults-file=/etc/zns-mysql/my.cnf >/dev/null
created_db=1

wait_ready() { # wait_ready WHAT: the readiness probe's command until it passes
  local deadline=$((SECONDS + 180)) out
  until out=$("$DOCKER" exec "$db" znsdb health --socket /var/run/mysqld/mysqld.sock 2>&1); do
    [[ $("$DOCKER" inspect -f '{{.State.Running}}' "$db") == true ]] || fail "$1: the database container exited"
    ((SECONDS < deadline)) || fail "$1: znsdb health did not pass within 180s: $out"
    sleep 1
  done
  log "smoke: znsdb health: $out"
}
wait_ready "first start"
step "database initialised and ready (znsdb health)"

# The pod's contract, checked from inside.
logs=$("$DOCKER" logs "$db" 2>&1)
grep -q 'initialisation done' <<<"$logs" || fail "the entrypoint did not report an initialisation"
grep -q "copying the image's empty system schema" <<<"$logs" ||
  fail "the entrypoint ran the install step instead of copying the image's empty system schema (Dockerfile.mariadb)"
[[ $("$DOCKER" exec "$db" id -u) == 999 ]] || fail "mysqld does not run as uid 999"
[[ $("$DOCKER" inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$db") == true ]] || fail "root filesystem not read-only"
listing=$("$DOCKER" exec "$db" ls -A /var/lib/mysql)
for want in data lost+found .data.zns-init; do
  grep -qx -- "$want" <<<"$listing" || fail "/var/lib/mysql lacks $want: $listing"
done
"$DOCKER" exec "$db" test -d /var/lib/mysql/data/mysql || fail "no system schema in /var/lib/mysql/data"
if "$DOCKER" exec "$db" sh -c 'tr "\0" "\n" </proc/1/environ' | grep -q '^MYSQL_ROOT_PASSWORD='; then
  fail "mysqld (PID 1) still has MYSQL_ROOT_PASSWORD in its environment"
fi
if "$DOCKER" exec "$db" mariadb --no-defaults -uroot -h127.0.0.1 -e 'SELECT 1' >/dev/null 2>&1; then
  fail "root logs in over TCP without a password"
fi
engines=$("$DOCKER" exec -e MYSQL_PWD="$password" "$db" mariadb --no-defaults -uroot -h127.0.0.1 -N -B \
  -e "SELECT CONCAT(ENGINE, ':', SUPPORT) FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB';
      SELECT CONCAT(user, '@', host) FROM mysql.user WHERE user = 'root' ORDER BY host")
[[ $(head -n1 <<<"$engines") == ROCKSDB:DEFAULT ]] || fail "MyRocks is not the default engine: $engines"
[[ $(tail -n +2 <<<"$engines" | tr '\n' ' ') == "root@% root@localhost " ]] ||
  fail "root accounts are not exactly root@% and root@localhost: $(tail -n +2 <<<"$engines" | tr '\n' ' ')"
step "contract checks (uid, read-only, auth, MyRocks)"

bench() { # bench PHASE [flags]: one znsbench phase as the operator's Job runs it; stdout to $tmp/PHASE.out
  local phase=$1
  shift
  "$DOCKER" run --rm --network "container:$db" --user 1000:1000 --read-only --cap-drop ALL \
    --security-opt no-new-privileges -e MYSQL_PASSWORD="$password" "$BENCH_IMAGE" \
    znsbench "$phase" --mysql-host 127.0.0.1 --mysql-port 3306 --mysql-user root --tables 2 --table-size 1000 \
    --storage-engine rocksdb --target smoke "$@" >"$tmp/$phase.out" 2>"$tmp/$phase.err" || {
    tail -n 20 "$tmp/$phase.out" "$tmp/$phase.err" >&2
    fail "znsbench $phase failed"
  }
  grep -qF -- "$password" "$tmp/$phase.out" "$tmp/$phase.err" && fail "znsbench $phase printed the password"
  return 0
}
summary() { sed -n "s/^ZNSBENCH-SUMMARY //p" "$tmp/$1.out" | grep "\"phase\":\"$1\"" | tail -n1; }
field() { sed -n "s/.*\"$2\":\([-0-9.eE+]*\).*/\1/p" <<<"$1"; }

# Nothing in the images creates the benchmark's database (znsbench prepare expects it, like sysbench).
"$DOCKER" exec -e MYSQL_PWD="$password" "$db" mariadb --no-defaults -uroot -h127.0.0.1 \
  -e 'CREATE DATABASE IF NOT EXISTS sbtest'
bench prepare
s=$(summary prepare)
[[ $s == *'"ok":true'* ]] || fail "prepare summary not ok: $s"
step "znsbench prepare (2 x 1000 rows)"

bench verify
s=$(summary verify)
[[ $s == *'"ok":true'* && $(field "$s" rowsFound) == 2000 ]] || fail "verify summary: $s"
step "znsbench verify"

bench run --time 5 --threads 2 --report-interval 1 --iteration 1
s=$(summary run)
tps=$(field "$s" tps)
# shellcheck disable=SC2015 # fail when either check fails
[[ $s == *'"ok":true'* ]] && awk -v t="${tps:-0}" 'BEGIN { exit !(t > 0) }' || fail "run summary without tps > 0: $s"
log "smoke: run summary: $s"
step "znsbench run (5 s, 2 threads)"

"$DOCKER" restart -t 60 "$db" >/dev/null
wait_ready "restart"
n=$("$DOCKER" logs "$db" 2>&1 | grep -c 'initialising /var/lib/mysql/data' || true)
[[ $n == 1 ]] || fail "the datadir was initialised $n times (want once)"
bench verify
s=$(summary verify)
[[ $(field "$s" rowsFound) == 2000 ]] || fail "after the restart verify found: $s"
step "restart: no re-initialisation, rows kept"

echo
echo "smoke test passed in $(elapsed "$t0"): tps=$tps"
printf '  %s\n' "${steps[@]}"
echo "image sizes:"
for img in "$BASE_IMAGE" "$BENCH_IMAGE" "$MARIADB_IMAGE" "$OPERATOR_IMAGE" "$PERCONA_IMAGE" "$PERCONA_RUNTIME_IMAGE"; do
  image_exists "$img" && printf '  %-48s %s\n' "$img" "$(image_size "$img")"
done
exit 0
