#!/usr/bin/env bash
# hack/demo.sh: the README's main command (`make demo`): a kind cluster, zoned devices (here, or on a Kubernetes
# node in a QEMU guest), the images, the chart, databases, a short Benchmark across all of them, and the
# comparison printed as a table. `hack/demo.sh clean` (make demo-clean) deletes the cluster and the demo's own
# null_blk devices.
#
# Its steps and its knobs (environment variables, with their defaults): `hack/demo.sh --help`.
#
# The work is hack/demorun's, in Go (which parts run and why, the background builds it tracks by their process,
# the waits with their progress, the timings); this builds it once for each version of its sources, under
# $ZNS_CACHE_DIR/bin, and hands the command line over.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=hack/lib/go-program.sh
source hack/lib/go-program.sh
# its sources: hack/demorun and the library it shares with hack/testrun
mapfile -t sources < <(go_sources hack/demorun/*.go hack/internal/stagerun/*.go)
bin=$(go_program demo hack/demorun "${sources[@]}")
# exec: the demo keeps this script's process, whose PID owns the QEMU node (ZNS_NODE_OWNER)
exec "$bin" "$@"
