#!/bin/sh
# images/verify-myrocks.sh: fail the Percona 8.4 image's build unless it has MyRocks and the series asked for.
#
#   verify-myrocks.sh PLUGIN MYSQLD SERIES
#     PLUGIN  ha_rocksdb.so (/usr/lib/mysql/plugin/ha_rocksdb.so in Percona's packages)
#     MYSQLD  the server (mysqld on PATH)
#     SERIES  the release series the server must report, e.g. 8.4
#
# Percona Server 8.4 has no ZenFS (removed in 8.1.0-1), so images/verify-zenfs.sh does not apply; what the
# operator needs from this image is MyRocks whose libraries resolve, and a server of the series the
# ZNSDatabase's mysqlVersion names (the generated my.cnf is written for it: options 8.4 removed are left out,
# options only 8.4 has are put in). `mysqld --version` prints "mysqld  Ver 8.4.11-11 for Linux ...".
set -eu
[ "$#" -eq 3 ] || { echo "usage: verify-myrocks.sh PLUGIN MYSQLD SERIES" >&2; exit 2; }
plugin=$1
mysqld=$2
series=$3

fail() { echo "verify-myrocks: $*" >&2; exit 1; }

[ -f "$plugin" ] || fail "$plugin is missing: MyRocks is not installed (percona-server-rocksdb)"
server=$(command -v "$mysqld" || true)
[ -n "$server" ] || fail "$mysqld not found"
for f in "$plugin" "$server"; do
  missing=$(ldd "$f" 2>&1 | grep 'not found' || true)
  [ -z "$missing" ] || fail "$f has unresolved libraries: $missing"
done
version=$("$server" --version 2>&1) || fail "$mysqld --version failed: $version"
case "$version" in
  *" Ver $series."*) ;;
  *) fail "$mysqld does not report series $series: $version" ;;
esac
echo "verify-myrocks: ok: $version; $plugin is installed"
