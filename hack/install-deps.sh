#!/usr/bin/env bash
# hack/install-deps.sh: install the Debian packages the test tiers use, on a fresh Debian bookworm machine.
# Idempotent: packages already present are not downloaded again. Needs root (or sudo).
#
#   mariadb-server mariadb-plugin-rocksdb   a real MySQL-compatible server with MyRocks, started privately by
#                                           the tests (test/mysqltest); the product image is Percona
#   sysbench fio                            the benchmark tools, run for real on loopback
#   qemu-system-x86 busybox-static cpio kmod the QEMU guest with real zoned devices (hack/qemu); its kernel is
#                                           fetched with apt-get download, never installed on the host
#   debootstrap                             the images' Debian base, made locally (no registry is reachable)
#   libseccomp-dev libc6-dev                runc and pause for the offline kind node image (hack/kind)
set -euo pipefail

packages=(git make gcc ca-certificates mariadb-server mariadb-plugin-rocksdb mariadb-client sysbench fio
  qemu-system-x86 busybox-static cpio kmod xz-utils debootstrap libseccomp-dev libc6-dev)
extra=(${ZNS_EXTRA_PACKAGES:-})

missing=()
for p in "${packages[@]}" "${extra[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all Debian packages present"
  exit 0
fi

SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
# Package scripts must not start a system-wide MariaDB: the tests start their own, private ones.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod +x "$policy"
  created_policy=1
fi
cleanup() { [[ $created_policy -eq 1 ]] && $SUDO rm -f "$policy"; }
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
