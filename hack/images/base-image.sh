#!/usr/bin/env bash
# hack/images/base-image.sh: make the Debian base image the Dockerfiles start FROM, without a registry.
#
#   hack/images/base-image.sh            make $BASE_IMAGE (zns-mysql/debian:bookworm) unless it exists
#   hack/images/base-image.sh --force    make it again
#
# debootstrap --variant=minbase of $DEBIAN_RELEASE from the Debian mirror this machine's apt uses, trimmed the
# way Debian's own -slim images are (no docs, man pages or locales; apt lists and caches cleaned after every
# install), then `docker import`ed under the tag. Needs root (debootstrap) and installs debootstrap with apt
# when it is missing. Skipped when BASE_IMAGE is not a zns-mysql/ tag (a pullable image such as
# debian:bookworm-slim is used as it is). Serialised with flock: parallel builds make it once.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

force=0
case "${1:-}" in
  --force) force=1 ;;
  "") ;;
  *) echo "usage: $0 [--force]" >&2; exit 2 ;;
esac

need_docker
case "$BASE_IMAGE" in
  zns-mysql/*) ;;
  *) log "BASE_IMAGE=$BASE_IMAGE is not made here: using it as it is"; exit 0 ;;
esac

cache=${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/images
mkdir -p "$cache"
exec 9>"$cache/base-image.lock"
flock 9

if [[ $force -eq 0 ]] && image_exists "$BASE_IMAGE"; then
  log "base image $BASE_IMAGE present ($(image_size "$BASE_IMAGE"), made $("$DOCKER" image inspect -f '{{index .Config.Labels "org.zns-mysql.created"}}' "$BASE_IMAGE"))"
  exit 0
fi

SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
if ! command -v debootstrap >/dev/null 2>&1; then
  log "installing debootstrap (apt)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

# The mirror: $DEBIAN_MIRROR, else the first apt source of this machine that serves the release (deb822
# .sources or one-line sources.list), else deb.debian.org. The security archive likewise.
apt_uri() { # apt_uri SUITE: the URI of an enabled apt source that lists SUITE
  local suite=$1 f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    awk -v suite="$suite" '
      function flush() { if (uri != "" && has && !off) { print uri; found = 1; exit } uri = ""; has = 0; off = 0 }
      /^[[:space:]]*$/ { flush(); next }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) has = 1 }
      /^Enabled:[[:space:]]*no/ { off = 1 }
      END { if (!found) flush() }' "$f"
  done | head -n1
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    awk -v suite="$suite" '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { if ($(i+1) == suite) print $i; break } }' "$f"
  done | head -n1
}
mirror=${DEBIAN_MIRROR:-$(apt_uri "$DEBIAN_RELEASE" | head -n1)}
mirror=${mirror:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-$(apt_uri "$DEBIAN_RELEASE-security" | head -n1)}
security=${security:-http://deb.debian.org/debian-security}

root=$(mktemp -d "${TMPDIR:-/var/tmp}/zns-base.XXXXXX")
cleanup() {
  # debootstrap leaves /proc or /sys mounted when it fails half way.
  for m in proc sys dev/pts dev; do
    # shellcheck disable=SC2015 # the || true is for both: nothing mounted, or a failed unmount, does not stop the cleanup
    mountpoint -q "$root/$m" 2>/dev/null && $SUDO umount -l "$root/$m" || true
  done
  $SUDO rm -rf --one-file-system "$root"
}
trap cleanup EXIT

start=$(now)
log "debootstrap --variant=minbase $DEBIAN_RELEASE from $mirror (security: $security)"
: >"$cache/debootstrap.log"
if ! heartbeat --log "$cache/debootstrap.log" "debootstrap of the base image" "" \
  $SUDO debootstrap --variant=minbase --components=main "$DEBIAN_RELEASE" "$root" "$mirror"; then
  tail -n 20 "$cache/debootstrap.log" >&2
  die "debootstrap failed (full log: $cache/debootstrap.log)"
fi
log "debootstrap done in $(elapsed "$start")"

# Trim like the official slim images and make apt container-friendly.
$SUDO tee "$root/etc/dpkg/dpkg.cfg.d/zns-slim" >/dev/null <<'EOF'
# Files the images never need (as in Debian's -slim images).
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
force-unsafe-io
EOF
$SUDO tee "$root/etc/apt/apt.conf.d/zns-container" >/dev/null <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
Acquire::Retries "3";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
$SUDO rm -f "$root/etc/apt/sources.list"
$SUDO tee "$root/etc/apt/sources.list.d/debian.sources" >/dev/null <<EOF
Types: deb
URIs: $mirror
Suites: $DEBIAN_RELEASE $DEBIAN_RELEASE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $DEBIAN_RELEASE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
$SUDO find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete 2>/dev/null || true
$SUDO rm -rf "$root/usr/share/man/"* "$root/usr/share/info/"* "$root/usr/share/locale/"* \
  "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin "$root/var/cache/apt/archives/"*.deb \
  "$root/var/log/"*.log "$root/var/log/apt/"* "$root/dev/"* "$root/run/"* "$root/tmp/"* "$root/root/.bash_history"
echo "zns-mysql" | $SUDO tee "$root/etc/hostname" >/dev/null
version=$(cat "$root/etc/debian_version")

created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
$SUDO tar --numeric-owner --xattrs -C "$root" -c . | "$DOCKER" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["bash"]' \
  --change "LABEL org.zns-mysql.created=$created org.zns-mysql.debian-version=$version org.zns-mysql.debian-mirror=$mirror" \
  - "$BASE_IMAGE" >/dev/null
log "base image $BASE_IMAGE (Debian $version, $(image_size "$BASE_IMAGE")) made in $(elapsed "$start")"
