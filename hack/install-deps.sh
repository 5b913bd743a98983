#!/usr/bin/env bash
# hack/install-deps.sh: install the Debian packages the test tiers and the demo use, on a Debian bookworm
# machine. Idempotent: packages already present are not downloaded again, and a second run says so.
# Needs root or passwordless sudo when something is missing; says which packages and what to run otherwise.
#
#   mariadb-server mariadb-plugin-rocksdb   a real MySQL-compatible server with MyRocks, started privately by
#   mariadb-client                          the tests (test/mysqltest); the product image is Percona
#   sysbench fio                            the benchmark tools, run for real on loopback
#   qemu-system-x86 busybox-static cpio kmod the QEMU guest with real zoned devices (hack/qemu); its kernel is
#   xz-utils                                fetched with apt-get download, never installed on the host
#   debootstrap                             the images' Debian base and the kind node's rootfs, made locally
#                                           (no registry is reachable)
#   libseccomp-dev libc6-dev gcc            runc and pause for the offline kind node image (hack/kind)
#   btrfs-progs f2fs-tools                  zoned btrfs and f2fs, made by znsdb in the QEMU guest (make demo-zoned)
#   prometheus prometheus-mysqld-exporter   the e2e suite's real Prometheus, and the exporter the entrypoint test
#                                           logs in with (the images carry the same exporter)
#
#   hack/install-deps.sh         everything above (make test)
#   hack/install-deps.sh demo    only what make demo needs on the host: the image and node builds (debootstrap,
#                                gcc, libseccomp-dev, busybox-static), the null_blk script (kmod), and the
#                                zoned node in the QEMU guest, which runs the host's programs (qemu-system-x86,
#                                cpio, btrfs-progs, f2fs-tools; iptables for kube-proxy, openssl, bc)
#
# Environment: ZNS_EXTRA_PACKAGES adds packages; ZNS_POLICY_RC_D (tests only) moves policy-rc.d.
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

case "${1:-all}" in
  all)
    packages=(git make gcc ca-certificates mariadb-server mariadb-plugin-rocksdb mariadb-client sysbench fio
      qemu-system-x86 busybox-static cpio kmod xz-utils debootstrap libseccomp-dev libc6-dev util-linux
      btrfs-progs f2fs-tools prometheus prometheus-mysqld-exporter iptables openssl bc)
    ;;
  demo) packages=(git make gcc ca-certificates busybox-static kmod xz-utils debootstrap libseccomp-dev libc6-dev util-linux
    qemu-system-x86 cpio btrfs-progs f2fs-tools iptables openssl bc) ;;
  *) fail "unknown set '${1}'" "hack/install-deps.sh [all|demo]" ;;
esac
read -r -a extra <<<"${ZNS_EXTRA_PACKAGES:-}"

command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 ||
  fail "this is not a Debian-based machine (no dpkg-query/apt-get)" \
    "install the equivalents of: ${packages[*]}; or use Debian bookworm, as CI does"

missing=()
for p in "${packages[@]}" ${extra[@]+"${extra[@]}"}; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  say "all Debian packages present"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null ||
    fail "missing Debian packages: ${missing[*]}, and this is neither root nor passwordless sudo" \
      "sudo apt-get install --no-install-recommends ${missing[*]}   (or run this script as root)"
  SUDO=(sudo -n)
fi

say "installing ${missing[*]}"
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
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null &&
    "${SUDO[@]}" chmod +x "$policy" || fail "cannot write ${policy}" "run as root"
  created_policy=1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX")
t0=$SECONDS
"${SUDO[@]}" apt-get update -qq >"$log" 2>&1 || {
  tail -n 20 "$log" >&2
  fail "apt-get update failed (above)" "check that this machine reaches its Debian mirror (/etc/apt/sources.list*), then run again"
}
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1 || {
  tail -n 30 "$log" >&2
  fail "apt-get install failed (above; full log: ${log})" "fix the cause shown, or install by hand: apt-get install --no-install-recommends ${missing[*]}"
}
rm -f "$log"
still=()
for p in "${missing[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || still+=("$p")
done
((${#still[@]} == 0)) || fail "apt-get said it installed them, but these are not installed: ${still[*]}" \
  "apt-get install --no-install-recommends ${still[*]}"
say "done in $((SECONDS - t0))s"
