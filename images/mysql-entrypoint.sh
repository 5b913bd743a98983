#!/usr/bin/env bash
# zns-mysql-entrypoint: the ENTRYPOINT of the MySQL images (Percona Server + ZenFS, and the MariaDB stand-in).
#
# The operator's pod runs the image with no command and the arguments `--defaults-file=/etc/zns-mysql/my.cnf`.
# This script then
#   1. finds the datadir (the config's datadir, or a --datadir= argument),
#   2. initialises it when it is empty: the flavor's install step (for MariaDB a copy of the image's empty
#      system schema when it has one), then a private server (no TCP, its socket in a temporary directory)
#      that sets the root password from $MYSQL_ROOT_PASSWORD for root@localhost and root@'%', then stops,
#   3. execs the server with the same arguments, as PID 1, without the password in its environment.
#
# The datadir is a subdirectory of the mounted volume (a fresh ext4 volume holds lost+found), so its state is
# kept next to it in "<parent>/.<name>.zns-init" ("started", then "done"): a pod killed half way through step 2
# resumes it on the next start instead of serving a database whose root has no password. A non-empty datadir
# this script did not start is used as it is when it holds a system schema (mysql/), refused otherwise.
# The password is never printed and never on a command line: SQL goes to the client on stdin.
#
# Environment: ZNS_MYSQL_FLAVOR (percona | mariadb; the image sets its own), MYSQL_ROOT_PASSWORD (needed to
# initialise), ZNS_INIT_TIMEOUT (seconds the private server may take to come up, default 900: ZenFS mounts
# and RocksDB recovery can be slow, and under QEMU's emulation seven first starts at once took more than 300), ZNS_MARIADB_DATADIR_TEMPLATE (mariadb: an empty system schema to copy in
# place of the install step, used when it holds .zns-template; default the image's
# /usr/local/share/zns-mysql/mariadb-datadir; empty: always run mariadb-install-db). Runs as any uid that owns
# the datadir's parent (999 in the images).
# A first argument that is not an option is run as a command instead (`docker run IMAGE bash`).
set -euo pipefail

log() { printf '%s [zns-mysql-entrypoint] %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ $# -gt 0 && $1 != -* ]]; then
  exec "$@"
fi

flavor=${ZNS_MYSQL_FLAVOR:-}
pick() { local c; for c in "$@"; do command -v "$c" >/dev/null 2>&1 && { echo "$c"; return; }; done; }
case "$flavor" in
  percona)
    server=$(pick mysqld)
    client=$(pick mysql)
    groups=(mysqld server)
    ;;
  mariadb)
    server=$(pick mariadbd mysqld)
    client=$(pick mariadb mysql)
    install_db=$(pick mariadb-install-db mysql_install_db)
    groups=(mysqld server mariadb mariadbd)
    ;;
  *) die "ZNS_MYSQL_FLAVOR must be percona or mariadb, got '${flavor}'" ;;
esac
[[ -n $server ]] || die "no server binary on PATH for flavor $flavor"
[[ -n $client ]] || die "no client binary on PATH for flavor $flavor"

# Options that only print something: run the server directly.
for a in "$@"; do
  case "$a" in
    --help | -\? | --version | -V | --initialize | --initialize-insecure | --bootstrap) exec "$server" "$@" ;;
  esac
done

# The defaults file must be the first option of the server and of the install tools.
defaults=""
args=()
for a in "$@"; do
  case "$a" in
    --defaults-file=* | --no-defaults) defaults=$a ;;
    *) args+=("$a") ;;
  esac
done
server_args=(${defaults:+"$defaults"} "${args[@]}")

# option_value NAME: the last value the config gives to a server option, overridden by a --NAME= argument.
option_value() {
  local name=$1 value="" file a
  if [[ $defaults == --defaults-file=* ]]; then
    file=${defaults#--defaults-file=}
    [[ -r $file ]] || die "cannot read $file"
    if command -v my_print_defaults >/dev/null 2>&1; then
      value=$(my_print_defaults "--defaults-file=$file" "${groups[@]}" | sed -n "s/^--${name}=//p" | tail -n1)
    else
      value=$(sed -n "s/^[[:space:]]*${name}[[:space:]]*=[[:space:]]*//p" "$file" | tail -n1)
    fi
  fi
  for a in "${args[@]}"; do
    [[ $a == --${name}=* ]] && value=${a#--"${name}"=}
  done
  printf '%s' "$value"
}

# The datadir.
datadir=$(option_value datadir)
datadir=${datadir:-/var/lib/mysql}
datadir=${datadir%/}
parent=$(dirname "$datadir")
state_file="$parent/.$(basename "$datadir").zns-init"

state=""
[[ -f $state_file ]] && state=$(<"$state_file")
has_system_schema() { [[ -d $datadir/mysql ]]; }
is_empty() { [[ -z $(ls -A "$datadir" 2>/dev/null) ]]; }
set_state() { printf '%s\n' "$1" >"$state_file.tmp" && mv -f "$state_file.tmp" "$state_file"; }

run_dir=""
server_pid=""
stop_private_server() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
cleanup() {
  stop_private_server
  [[ -n $run_dir ]] && rm -rf "$run_dir"
  return 0
}
trap cleanup EXIT
trap 'log "interrupted during initialisation"; exit 143' TERM INT

install_system_schema() {
  log "initialising $datadir ($flavor)"
  case "$flavor" in
    percona)
      # --initialize-insecure: root@localhost without a password; the private server sets it right after.
      # InnoDB as the default engine while the system schema is made (the data dictionary is InnoDB anyway);
      # the configured default engine applies from the first real start on.
      "$server" "${server_args[@]}" --default-storage-engine=InnoDB --initialize-insecure >&2 ||
        die "$server --initialize-insecure failed"
      ;;
    mariadb)
      # The image's empty system schema (Dockerfile.mariadb), when it has one: a copy takes seconds where
      # mariadb-install-db takes minutes on a slow or emulated node. The first start resizes its redo log to the
      # configuration's, and the private server below sets the root password and drops the other root accounts.
      local template=${ZNS_MARIADB_DATADIR_TEMPLATE-/usr/local/share/zns-mysql/mariadb-datadir}
      if [[ -n $template && -f $template/.zns-template ]]; then
        log "copying the image's empty system schema from $template ($(<"$template/.zns-template"))"
        cp -R "$template/." "$datadir/" || die "copying $template into $datadir failed"
        rm -f "$datadir/.zns-template"
        return 0
      fi
      [[ -n $install_db ]] || die "mariadb-install-db not on PATH"
      # normal authentication: root@localhost by password (the default, unix_socket, would need the OS user
      # to be named root).
      "$install_db" "${server_args[@]}" "--datadir=$datadir" --auth-root-authentication-method=normal \
        --skip-test-db >&2 || die "$install_db failed"
      ;;
  esac
}

sql_quote() { # a MySQL string literal: backslashes and quotes escaped (sql_mode is reset first)
  local s=${1//\\/\\\\}
  s=${s//\'/\\\'}
  printf "'%s'" "$s"
}

set_root_password() {
  [[ -n ${MYSQL_ROOT_PASSWORD:-} ]] || die "MYSQL_ROOT_PASSWORD is empty: it is needed to initialise $datadir"
  run_dir=$(mktemp -d "${TMPDIR:-/tmp}/zns-init.XXXXXX")
  local socket=$run_dir/mysqld.sock
  local extra=(--skip-networking "--socket=$socket" "--pid-file=$run_dir/mysqld.pid")
  [[ $flavor == percona ]] && extra+=(--mysqlx=OFF)
  log "starting a private server (no networking) to set the root password"
  "$server" "${server_args[@]}" "${extra[@]}" >&2 &
  server_pid=$!

  # no client is started before the server has made its socket: under emulation each start costs about a
  # second of CPU, taken from the server it waits for
  local deadline=$((SECONDS + ${ZNS_INIT_TIMEOUT:-900}))
  until [[ -S $socket ]] && { "$client" --no-defaults --protocol=socket "--socket=$socket" -uroot -e 'SELECT 1' >/dev/null 2>&1 ||
    MYSQL_PWD=$MYSQL_ROOT_PASSWORD "$client" --no-defaults --protocol=socket "--socket=$socket" -uroot \
      -e 'SELECT 1' >/dev/null 2>&1; }; do
    kill -0 "$server_pid" 2>/dev/null || { server_pid=""; die "the private server exited during initialisation (its log is above)"; }
    ((SECONDS < deadline)) || die "the private server did not answer within ${ZNS_INIT_TIMEOUT:-900}s"
    sleep 0.5
  done

  local pw auth="" sql
  pw=$(sql_quote "$MYSQL_ROOT_PASSWORD")
  # mysql_native_password on Percona: every client (sysbench with libmariadb, the Go driver) authenticates
  # with it without TLS or RSA key exchange; the generated config turns TLS off.
  [[ $flavor == percona ]] && auth="WITH mysql_native_password "
  sql="SET SESSION sql_mode='';
SET SESSION sql_log_bin=0;
ALTER USER 'root'@'localhost' IDENTIFIED ${auth}BY $pw;
CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED ${auth}BY $pw;
ALTER USER 'root'@'%' IDENTIFIED ${auth}BY $pw;
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
FLUSH PRIVILEGES;"
  # First start: root has no password yet. A resumed start may find it set already.
  local -a as_root=("$client" --no-defaults --protocol=socket "--socket=$socket" -uroot)
  if ! "${as_root[@]}" -e 'SELECT 1' >/dev/null 2>&1; then
    export MYSQL_PWD=$MYSQL_ROOT_PASSWORD
  fi
  # Other root accounts and anonymous ones have no password (mariadb-install-db makes root@<hostname>,
  # root@127.0.0.1 and root@::1): drop them, so that root@localhost and root@'%' are the only ways in.
  local drops
  drops=$("${as_root[@]}" -N -B -e "SELECT CONCAT('DROP USER ', QUOTE(user), '@', QUOTE(host), ';') FROM mysql.user
    WHERE (user = 'root' AND host NOT IN ('localhost', '%')) OR user = ''") || die "listing the accounts failed"
  printf '%s\n%s\n' "$sql" "$drops" | "${as_root[@]}" || die "setting the root password failed"
  unset MYSQL_PWD
  log "root password set for root@localhost and root@'%'; stopping the private server"
  stop_private_server
  rm -rf "$run_dir"
  run_dir=""
}

[[ -d $parent && -w $parent ]] || die "$parent (the datadir's parent) must exist and be writable by uid $(id -u)"
mkdir -p "$datadir"
chmod 0750 "$datadir" 2>/dev/null || true

case "$state" in
  done) ;;
  started)
    log "resuming an initialisation that did not finish"
    if ! has_system_schema; then
      # Our own install step was cut short: nothing but its partial output is in the datadir.
      find "$datadir" -mindepth 1 -delete
      install_system_schema
    fi
    set_root_password
    set_state "done"
    ;;
  "")
    if is_empty; then
      [[ -n ${MYSQL_ROOT_PASSWORD:-} ]] || die "MYSQL_ROOT_PASSWORD is empty: it is needed to initialise $datadir"
      set_state started
      install_system_schema
      set_root_password
      set_state "done"
      log "initialisation done"
    elif has_system_schema; then
      log "$datadir holds a database this entrypoint did not create: using it as it is (root password unchanged)"
    else
      die "$datadir is not empty and holds no system schema (mysql/): refusing to initialise over it"
    fi
    ;;
  *) die "unknown initialisation state '$state' in $state_file" ;;
esac

# The zns_exporter account of the metrics sidecar (ZNSDatabase spec.metrics): its password is made here once and
# kept in a client option file next to the datadir (0600, owned by this uid), which the sidecar reads from the same
# volume, so it is in no Secret, spec or environment. mysqld (re)creates the account from an init file at every
# start: a database initialised before the account existed gets it too. A failure here costs the metrics, never
# the database: it is logged and mysqld starts without the account. ZNS_EXPORTER_ACCOUNT=0 leaves it out.
exporter_account() {
  local cnf=$parent/.zns-exporter.cnf socket pw auth="" sql_file
  socket=$(option_value socket)
  socket=${socket:-/var/run/mysqld/mysqld.sock}
  if [[ ! -s $cnf ]]; then
    pw=$(head -c 24 /dev/urandom | base64 | tr -d '/+=\n')
    # shellcheck disable=SC2015 # the warning when the write or the rename fails
    (umask 077 && printf '[client]\nuser=zns_exporter\npassword=%s\nsocket=%s\n' "$pw" "$socket" >"$cnf.tmp") &&
      mv -f "$cnf.tmp" "$cnf" || { log "warning: cannot write $cnf: no metrics account"; return 0; }
  fi
  pw=$(sed -n 's/^password=//p' "$cnf" | tail -n1)
  [[ $pw =~ ^[A-Za-z0-9]{16,}$ ]] || { log "warning: $cnf holds no usable password (delete it and restart the pod): no metrics account"; return 0; }
  [[ $flavor == percona ]] && auth="WITH mysql_native_password "
  sql_file=$(dirname "$socket")/zns-exporter-init.sql
  (umask 077 && cat >"$sql_file" <<SQL
SET SESSION sql_log_bin=0;
CREATE USER IF NOT EXISTS 'zns_exporter'@'localhost' IDENTIFIED ${auth}BY '${pw}' WITH MAX_USER_CONNECTIONS 3;
ALTER USER 'zns_exporter'@'localhost' IDENTIFIED ${auth}BY '${pw}';
GRANT PROCESS, REPLICATION CLIENT, SELECT ON *.* TO 'zns_exporter'@'localhost';
SQL
  ) || { log "warning: cannot write $sql_file: no metrics account"; return 0; }
  server_args+=("--init-file=$sql_file")
  log "the metrics account zns_exporter@localhost is (re)made at start; its client options are in $cnf"
}
[[ ${ZNS_EXPORTER_ACCOUNT:-1} == 0 ]] || exporter_account

trap - EXIT TERM INT
unset MYSQL_ROOT_PASSWORD MYSQL_PWD
log "exec $server ${server_args[*]}"
exec "$server" "${server_args[@]}"
