#!/bin/sh
# images/verify-zenfs.sh: fail the Percona image's build unless MyRocks really has ZenFS.
#
#   verify-zenfs.sh [PLUGIN [ZENFS [MYSQLD]]]
#     PLUGIN  ha_rocksdb.so (default /usr/lib/mysql/plugin/ha_rocksdb.so)
#     ZENFS   the zenfs utility (default /usr/bin/zenfs, where the operator's znsdb calls it)
#     MYSQLD  the server (default: mysqld on PATH)
#
# What counts as proof, and why:
# - zenfs exists, its libraries all resolve (ldd) and it runs: with no arguments ZenFS's utility answers
#   "You need to specify a command." (util/zenfs.cc), which nothing else prints.
# - ha_rocksdb.so contains string literals that only ZenFS's zoned-device backend compiles in
#   (fs/zbdlib_zenfs.cc, fs/zbd_zenfs.cc in older releases): "Failed to open zoned block device" and the
#   scheduler check's "mq-deadline". A MyRocks built without -DROCKSDB_PLUGINS=zenfs has no zoned-device
#   code at all. Symbols are no proof: packages are stripped and MySQL builds plugins with hidden visibility,
#   and rocksdb_fs_uri exists in every MyRocks (it takes any custom file system URI).
# - the plugin's and the server's libraries resolve too (libzbd is linked statically into the plugin by
#   Percona's builds).
# grep -a reads the binary directly, so no binutils are needed in the image.
set -eu
plugin=${1:-/usr/lib/mysql/plugin/ha_rocksdb.so}
zenfs=${2:-/usr/bin/zenfs}
mysqld=${3:-mysqld}

fail() { echo "verify-zenfs: $*" >&2; exit 1; }

[ -f "$plugin" ] || fail "$plugin is missing: MyRocks is not installed"
[ -x "$zenfs" ] || fail "$zenfs is missing: the package or build has no ZenFS utility (-DWITH_ZENFS_UTILITY=ON)"
server=$(command -v "$mysqld" || true)
[ -n "$server" ] || fail "$mysqld not found"
for f in "$zenfs" "$plugin" "$server"; do
  missing=$(ldd "$f" 2>&1 | grep 'not found' || true)
  [ -z "$missing" ] || fail "$f has unresolved libraries: $missing"
done
out=$("$zenfs" 2>&1 || true)
case "$out" in
  *"specify a command"*) ;;
  *) fail "$zenfs did not answer like ZenFS's utility: $out" ;;
esac
for marker in "Failed to open zoned block device" "mq-deadline"; do
  grep -aqF "$marker" "$plugin" || fail "$plugin lacks ZenFS (no \"$marker\"): built without -DROCKSDB_PLUGINS=zenfs"
done
version=$("$mysqld" --version 2>&1) || fail "$mysqld --version failed: $version"
echo "verify-zenfs: ok: $version; $plugin has ZenFS; $zenfs runs"
