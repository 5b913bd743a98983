#!/usr/bin/env bash
# hack/qemu/guest-node.sh: boot the QEMU guest as a single Kubernetes node with a zoned null_blk device, run the
# operator against it and bring a ZNSDatabase up on btrfs in zoned mode; print each step's time. An experiment
# towards issue 15 (docs/zoned-node.md has what it measured); no test runs it yet.
# Needs what `make test` builds first: the Kubernetes binaries, the kind node image's parts, the images.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=${ZNS_CACHE_DIR:-$HOME/.cache/zns-mysql}
assets=$(ls -d "$cache"/kubernetes/v*_etcd-* | head -n1)
parts=$cache/kind/parts
[[ -x $assets/kubelet && -d $parts ]] || { echo "guest-node: build first: make test (or make envtest-assets kind-image)" >&2; exit 1; }
share=$(mktemp -d /tmp/zns-guest-node.XXXXXX)
echo "guest-node: working in $share (progress.log holds the MEASURE lines)" >&2
pause_dir=$share/pause-root
mkdir -p "$pause_dir" && cp "$parts"/kubernetes-*/pause "$pause_dir/pause"
tar -C "$pause_dir" -cf "$share/pause-root.tar" pause
docker import --change 'ENTRYPOINT ["/pause"]' "$share/pause-root.tar" zns.local/pause:1 >/dev/null
docker save zns.local/pause:1 -o "$share/pause.tar"
# A tag other than latest: the kubelet would try to pull :latest, and the guest has no registry.
docker tag zns-mysql/mariadb-myrocks:latest zns-mysql/mariadb-myrocks:guest
docker tag zns-mysql/bench:latest zns-mysql/bench:guest
docker save zns-mysql/mariadb-myrocks:guest zns-mysql/bench:guest -o "$share/images.tar"
go build -o "$share/manager" ./operator/cmd/manager
cp hack/qemu/guest-node/node.sh hack/qemu/guest-node/zoned.sh "$share/"
hack/qemu/run.sh --userland --share "$share" --smp 2 --mem 4096 --timeout 2400 \
  --nullblk '--count 1 --size 2048 --zone-size 64 --memory-backed' -- \
  bash -c "bash $share/node.sh $assets $parts $share && bash $share/zoned.sh $assets $parts $share $PWD"
grep MEASURE "$share/progress.log"
