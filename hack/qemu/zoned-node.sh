#!/usr/bin/env bash
# hack/qemu/zoned-node.sh: a Kubernetes node whose kernel has zoned block devices, in the QEMU guest, for
# machines whose own kernel has none (a kind node shares the host's kernel). docs/zoned-node.md has the why and
# the figures.
#
#   hack/qemu/zoned-node.sh up       boot it in the background and wait until the node is Ready with the images
#                                    imported; stdout: the kubeconfig (API server forwarded to 127.0.0.1 only)
#   hack/qemu/zoned-node.sh env      the settings for the e2e suite and the demo, as export lines
#   hack/qemu/zoned-node.sh down     stop it (the devices are memory-backed: their data goes with the guest)
#   hack/qemu/zoned-node.sh status
#   hack/qemu/zoned-node.sh kubectl ARGS...   kubectl on the node's cluster
#   hack/qemu/zoned-node.sh --help   the node's devices and every knob (ZNS_NODE_*)
#
# The work is hack/zonednode's, in Go; this builds it once for each version of its sources, under
# $ZNS_CACHE_DIR/bin, and hands the command line over. The guest's side, guest-node/node.sh, is the guest's init.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=hack/lib/go-program.sh
source hack/lib/go-program.sh
mapfile -t sources < <(go_sources hack/zonednode/*.go hack/internal/stagerun/*.go)
bin=$(go_program zoned-node hack/zonednode "${sources[@]}")
exec "$bin" "$@"
