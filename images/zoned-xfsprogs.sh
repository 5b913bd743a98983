#!/bin/sh
# images/zoned-xfsprogs.sh SUITE XFSPROGS_VERSION: put a newer Debian suite's mkfs.xfs, with the libraries it
# needs and that suite's own loader, under /opt/zoned-xfs, for a build stage of the MySQL images.
#
# Zoned XFS needs xfsprogs >= 6.15; the images are bookworm (6.1) and trixie has 6.13, so the packages come from
# SUITE (versions.mk's XFS_USERLAND_SUITE, sid). They are unpacked (dpkg -x), not installed: sid's mkfs.xfs
# needs sid's glibc, which runs here only through its own loader (/opt/zoned-xfs/bin/mkfs.xfs says so). The
# image's own mkfs.xfs stays bookworm's, for a conventional XFS that older kernels mount (7.x's defaults make
# file systems 6.1 cannot). znsdb uses mkfs.xfs-zoned (a link to the wrapper) for zoned XFS only.
#
# The suite's Release file is checked against Debian's archive keys as usual; its Valid-Until is not, since a
# mirror snapshot older than a week (this machine's) would otherwise be refused for sid.
set -eu
suite=$1 version=$2
uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
[ -n "$uri" ] || { echo "zoned-xfsprogs: no URIs: line in /etc/apt/sources.list.d/debian.sources" >&2; exit 1; }
printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\nCheck-Valid-Until: no\n' \
  "$uri" "$suite" >/etc/apt/sources.list.d/zoned-xfs.sources
apt-get update -qq
mkdir -p /tmp/debs /opt/zoned-xfs/bin /opt/zoned-xfs/sbin
chown _apt /tmp/debs
cd /tmp/debs
# mkfs.xfs's NEEDED libraries (ldd in the suite: libblkid, libuuid, libinih, liburcu, libc) and xfsprogs itself
apt-get download -qq "xfsprogs=$version" "libc6/$suite" "libblkid1/$suite" "libuuid1/$suite" "libinih1/$suite" \
  "liburcu8t64/$suite"
mkdir -p /tmp/root
for d in *.deb; do dpkg -x "$d" /tmp/root; done
lib=/tmp/root/usr/lib/x86_64-linux-gnu
mkdir -p /opt/zoned-xfs/lib
cp "$lib/ld-linux-x86-64.so.2" "$lib/libc.so.6" "$lib/libblkid.so.1" "$lib/libuuid.so.1" "$lib/libinih.so.1" \
  "$lib/liburcu.so.8" /opt/zoned-xfs/lib/
# under its own name: mkfs.xfs prints it in its messages and in -V
cp /tmp/root/usr/sbin/mkfs.xfs /opt/zoned-xfs/sbin/mkfs.xfs
for d in *.deb; do dpkg-deb -f "$d" Package Version | paste -sd' ' -; done >/opt/zoned-xfs/VERSIONS
cat >/opt/zoned-xfs/bin/mkfs.xfs <<'WRAPPER'
#!/bin/sh
# mkfs.xfs of a newer Debian suite (images/zoned-xfsprogs.sh), run through that suite's own loader and libraries
exec /opt/zoned-xfs/lib/ld-linux-x86-64.so.2 --library-path /opt/zoned-xfs/lib /opt/zoned-xfs/sbin/mkfs.xfs "$@"
WRAPPER
chmod 0755 /opt/zoned-xfs/bin/mkfs.xfs
cd /
rm -rf /tmp/debs /tmp/root /etc/apt/sources.list.d/zoned-xfs.sources /var/lib/apt/lists/*
printed=$(/opt/zoned-xfs/bin/mkfs.xfs -V)
case "$printed" in
  "mkfs.xfs version ${version%%-*}") echo "zoned-xfsprogs: $printed from $suite" ;;
  *) echo "zoned-xfsprogs: /opt/zoned-xfs/bin/mkfs.xfs -V printed '$printed', want ${version%%-*}" >&2; exit 1 ;;
esac
