#!/usr/bin/env bash
# hack/install-deps.sh: install the Debian packages the test tiers and the demo use, on a Debian bookworm
# machine. Idempotent: packages already present are not downloaded again, and a second run says so.
# Needs root or passwordless sudo when something is missing; says which packages and what to run otherwise.
#
#   mariadb-server mariadb-plugin-rocksdb   a real MySQL-compatible server with MyRocks, started privately by
#   mariadb-client                          the tests (test/mysqltest); the product image is Percona
#   sysbench fio                            the benchmark tools, run for real on loopback
#   qemu-system-x86 busybox-static cpio kmod the QEMU guest with real zoned devices (hack/qemu); its kernel is
#   xz-utils                                fetched with apt-get download, never installed on the host.
#                                           QEMU at versions.mk's QEMU_VERSION, from bookworm-backports
#                                           (bookworm's 7.2 has neither the OCP SMART log nor FDP of the NVMe
#                                           log tests): the script adds that suite in a file of its own under
#                                           /etc/apt/sources.list.d when no apt source names it
#   debootstrap                             the images' Debian base and the kind node's rootfs, made locally
#                                           (no registry is reachable)
#   libseccomp-dev libc6-dev gcc            runc and pause for the offline kind node image (hack/kind)
#   btrfs-progs f2fs-tools                  zoned btrfs and f2fs, made by znsdb in the QEMU guest (make demo-zoned)
#   xfsprogs e2fsprogs                      xfs and ext4 on a conventional device (storage.device), made by znsdb
#                                           in the QEMU guest and on the zoned node
#   prometheus prometheus-mysqld-exporter   the e2e suite's real Prometheus, and the exporter the entrypoint test
#                                           logs in with (the images carry the same exporter)
#   the linter shellcheck                   make lint's check of the shell scripts, at bookworm's 0.9.0-1 (versions.mk's
#                                           SHELLCHECK_VERSION, which make lint-shell checks)
#
#   hack/install-deps.sh         everything above (make test)
#   hack/install-deps.sh demo    only what make demo needs on the host: the image and node builds (debootstrap,
#                                gcc, libseccomp-dev, busybox-static), the null_blk script (kmod), and the
#                                zoned node in the QEMU guest, which runs the host's programs (qemu-system-x86,
#                                cpio, btrfs-progs, f2fs-tools; iptables for kube-proxy, openssl, bc)
#
# Environment: ZNS_EXTRA_PACKAGES adds packages; ZNS_POLICY_RC_D (tests only) moves policy-rc.d; ZNS_ETC (tests
# only) moves /etc for the apt sources and os-release.
set -euo pipefail
TOOL_NAME=install-deps
# shellcheck source=hack/lib/progress.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/progress.sh"
explain_failures

say() { printf 'install-deps: %s\n' "$*" >&2; }
fail() {
  printf 'install-deps: ERROR: %s\n' "$1" >&2
  [[ -z "${2:-}" ]] || printf 'install-deps: what to do: %s\n' "$2" >&2
  exit 1
}

# both sets also install QEMU, at its pin (below)
case "${1:-all}" in
  all)
    packages=(git make gcc ca-certificates mariadb-server mariadb-plugin-rocksdb mariadb-client sysbench fio
      busybox-static cpio kmod xz-utils debootstrap libseccomp-dev libc6-dev util-linux
      btrfs-progs f2fs-tools xfsprogs e2fsprogs prometheus prometheus-mysqld-exporter iptables openssl bc shellcheck)
    ;;
  demo) packages=(git make gcc ca-certificates busybox-static kmod xz-utils debootstrap libseccomp-dev libc6-dev util-linux
    cpio btrfs-progs f2fs-tools xfsprogs e2fsprogs iptables openssl bc) ;;
  *) fail "unknown set '${1}'" "hack/install-deps.sh [all|demo]" ;;
esac
read -r -a extra <<<"${ZNS_EXTRA_PACKAGES:-}"

versions_file="$(dirname "${BASH_SOURCE[0]}")/../versions.mk"
qemu_version=$(sed -nE 's/^[[:space:]]*QEMU_VERSION[[:space:]]*:?=[[:space:]]*([^[:space:]#]+).*/\1/p' "$versions_file" 2>/dev/null | tail -n 1)
[[ -n "$qemu_version" ]] || fail "${versions_file} has no 'QEMU_VERSION := <version>' line" "restore it: git checkout versions.mk"
# qemu-system-x86 depends on exactly its own version of these two
qemu_packages=(qemu-system-x86 qemu-system-common qemu-system-data)
etc=${ZNS_ETC:-/etc}
codename=$(sed -nE 's/^VERSION_CODENAME=//p' "$etc/os-release" 2>/dev/null | tr -d '"')

# shellcheck disable=SC2015 # fail when either command is missing
command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 ||
  fail "this is not a Debian-based machine (no dpkg-query/apt-get)" \
    "install the equivalents of: ${packages[*]}; or use Debian bookworm, as CI does"

missing=()
for p in "${packages[@]}" ${extra[@]+"${extra[@]}"}; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
qemu_pinned() { [[ "$(dpkg-query -W -f='${Status} ${Version}' qemu-system-x86 2>/dev/null)" == "install ok installed ${qemu_version}" ]]; }
need_qemu=0
qemu_pinned || need_qemu=1
if ((${#missing[@]} == 0 && need_qemu == 0)); then
  say "all Debian packages present"
  exit 0
fi

shown=(${missing[@]+"${missing[@]}"})
((need_qemu)) && shown+=("qemu-system-x86=${qemu_version}")
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  # shellcheck disable=SC2015 # fail when either check fails
  command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null ||
    fail "missing Debian packages: ${shown[*]}, and this is neither root nor passwordless sudo" \
      "run this script as root (or: sudo apt-get install --no-install-recommends ${missing[*]}; QEMU: see versions.mk)"
  SUDO=(sudo -n)
fi

say "installing ${shown[*]}"
# Package scripts must not start a system-wide MariaDB: the tests start their own, private ones. A
# policy-rc.d that was already there (Docker's base images ship one) is left exactly as it was.
policy=${ZNS_POLICY_RC_D:-/usr/sbin/policy-rc.d}
created_policy=0
cleanup() {
  if ((created_policy)); then "${SUDO[@]}" rm -f "$policy" || say "could not remove ${policy}; remove it by hand"; fi
  return 0 # the script's status is decided by its steps, never by this cleanup
}
trap cleanup EXIT
if [[ ! -e "$policy" ]]; then
  # shellcheck disable=SC2015 # fail when the write or the chmod fails
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null &&
    "${SUDO[@]}" chmod +x "$policy" || fail "cannot write ${policy}" "run as root"
  created_policy=1
fi

# QEMU comes from bookworm-backports: an apt source of its own, unless one names that suite already
target=()
if ((need_qemu)) && [[ "$codename" == bookworm ]]; then
  target=(--target-release=bookworm-backports)
  if ! grep -rqsE --include='*.list' --include='*.sources' '^[^#]*bookworm-backports' "$etc/apt/sources.list" "$etc/apt/sources.list.d"; then
    src="$etc/apt/sources.list.d/bookworm-backports.sources"
    printf '%s\n' "# added by zns-mysql's hack/install-deps.sh for QEMU ${qemu_version} (versions.mk)" "Types: deb" \
      "URIs: http://deb.debian.org/debian" "Suites: bookworm-backports" "Components: main" \
      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | "${SUDO[@]}" tee "$src" >/dev/null ||
      fail "cannot write ${src}" "run as root"
    say "added the bookworm-backports suite: ${src}"
  fi
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX")
t0=$SECONDS
"${SUDO[@]}" apt-get update -qq >"$log" 2>&1 || {
  tail -n 20 "$log" >&2
  fail "apt-get update failed (above)" "check that this machine reaches its Debian mirror (/etc/apt/sources.list*), then run again"
}
if ((${#missing[@]})); then
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1 || {
    tail -n 30 "$log" >&2
    fail "apt-get install failed (above; full log: ${log})" "fix the cause shown, or install by hand: apt-get install --no-install-recommends ${missing[*]}"
  }
fi
if ((need_qemu)); then
  # backports keep only the newest build of a package: a pin goes stale when Debian updates QEMU there
  madison=$(apt-cache madison qemu-system-x86 2>/dev/null || true)
  if ! grep -qF "| ${qemu_version} |" <<<"$madison"; then
    offered=$(awk -F'|' 'NF > 2 { gsub(/ /, "", $2); printf "%s ", $2 }' <<<"$madison")
    fail "apt offers no qemu-system-x86 ${qemu_version} (versions.mk's QEMU_VERSION); it offers: ${offered:-nothing}" \
      "set QEMU_VERSION in versions.mk to the newest bookworm-backports version of those (apt-cache policy qemu-system-x86), check the QEMU guest tier with it (make qemu), and run this script again"
  fi
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends ${target[@]+"${target[@]}"} "${qemu_packages[@]/%/=${qemu_version}}" >>"$log" 2>&1 || {
    tail -n 30 "$log" >&2
    fail "apt-get install of QEMU ${qemu_version} failed (above; full log: ${log})" \
      "fix the cause shown, or install by hand: apt-get install ${target[*]} ${qemu_packages[*]/%/=${qemu_version}}"
  }
fi
rm -f "$log"
still=()
for p in "${missing[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || still+=("$p")
done
qemu_pinned || still+=("qemu-system-x86=${qemu_version}")
((${#still[@]} == 0)) || fail "apt-get said it installed them, but these are not installed: ${still[*]}" \
  "apt-get install --no-install-recommends ${still[*]}"
say "done in $((SECONDS - t0))s"
