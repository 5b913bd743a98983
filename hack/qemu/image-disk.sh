#!/usr/bin/env bash
# hack/qemu/image-disk.sh: the zoned node's image disk, made on the host (hack/qemu/zoned-node.sh calls it).
#
#   hack/qemu/image-disk.sh OUT.img CONTAINERD-DIR IMAGE.tar...
#
# The node's containerd keeps its root (the images' content and their unpacked overlayfs snapshots) on an ext4
# disk image that its boots mount copy-on-write. Under TCG the guest's own `ctr images import` of the project's
# images took 315 s, and copying the result onto the disk more: this does the same import at the host's speed,
# with the same containerd binary (the guest runs the host's root), into a root of its own, then writes that root
# into OUT.img with `mkfs.ext4 -d` (ownership, device nodes, hard links and the overlay xattrs are kept; nothing
# is mounted). The guest checks that every image it needs is there and imports them itself when not.
#
# Needs root (containerd's overlayfs snapshotter mounts, and the images' files keep their owners) and an
# overlayfs-capable file system under OUT's directory; exits 3, saying why, when it cannot, so that the caller
# falls back to the guest's import. Progress to stderr.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

TOOL_NAME=image-disk
# shellcheck source=hack/lib/tool-common.sh
source hack/lib/tool-common.sh

(($# >= 3)) || die "usage: hack/qemu/image-disk.sh OUT.img CONTAINERD-DIR IMAGE.tar..."
out=$1 bin=$2
shift 2
cannot() { log "cannot make the image disk on the host: $*"; exit 3; }
[[ $(id -u) == 0 ]] || cannot "not root (containerd's overlayfs snapshots need mounts)"
[[ -x "$bin/containerd" && -x "$bin/ctr" ]] || die "no containerd and ctr in ${bin}"
command -v mkfs.ext4 >/dev/null || cannot "no mkfs.ext4 (Debian's e2fsprogs)"
grep -qw overlay /proc/filesystems || cannot "this kernel has no overlayfs"

work=$(mktemp -d "$(dirname "$out")/image-disk.XXXXXX")
pid=""
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # an import killed half way can leave a snapshot mounted under the root
  grep -F " $work/" /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Its own root, state and socket, beside whatever containerd the host runs (Docker's); the CRI plugins are off:
# this instance only imports. The snapshotter is the one the guest's CRI uses (hack/qemu/guest-node/node.sh).
mkdir -p "$work/root" "$work/state"
cat >"$work/config.toml" <<EOF
version = 3
root = "$work/root"
state = "$work/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.images", "io.containerd.cri.v1.runtime", "io.containerd.nri.v1.nri"]
[grpc]
  address = "$work/state/containerd.sock"
[ttrpc]
  address = "$work/state/containerd.sock.ttrpc"
EOF
PATH=$bin:$PATH "$bin/containerd" --config "$work/config.toml" >"$work/containerd.log" 2>&1 &
pid=$!
ctr=("$bin/ctr" --address "$work/state/containerd.sock" -n k8s.io)
n=0
until "${ctr[@]}" version >/dev/null 2>&1; do
  kill -0 "$pid" 2>/dev/null || { tail -n 20 "$work/containerd.log" >&2; cannot "containerd exited at start (above)"; }
  ((++n < 120)) || { tail -n 20 "$work/containerd.log" >&2; cannot "containerd does not answer after 60 s (above)"; }
  sleep 0.5
done
t=$(now)
for tarball in "$@"; do
  heartbeat "import $(basename "$tarball")" "ctr images import, at the host's speed" \
    "${ctr[@]}" images import --snapshotter overlayfs "$tarball" >/dev/null ||
    { tail -n 20 "$work/containerd.log" >&2; cannot "ctr images import ${tarball} failed (above)"; }
done
log "imported $("${ctr[@]}" images ls -q | wc -l) images in $(awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')s"
kill -TERM "$pid"
for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
kill -0 "$pid" 2>/dev/null && cannot "containerd does not stop"
pid=""
# the disk holds the root only: the guest mounts it as containerd's root (it is never written: copy-on-write)
t=$(now)
rm -f "$out"
truncate -s 16G "$out"
heartbeat "write ${out}" "mkfs.ext4 -d" mkfs.ext4 -q -F -L zns-images -E lazy_itable_init=1,lazy_journal_init=1 \
  -d "$work/root" "$out" || { rm -f "$out"; die "mkfs.ext4 -d failed (above)"; }
log "wrote ${out}: $(du -sm "$work/root" | cut -f1) MiB of containerd root in $(awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')s"
