#!/usr/bin/env bash
# hack/kind/build-node-image.sh: build (once) the kind node image without any image registry; print its name.
#
#   image=$(hack/kind/build-node-image.sh)     # e.g. zns-mysql/kind-node:v1.36.3
#   hack/kind/build-node-image.sh --help       # what the image holds, its cache, every knob (ZNS_KIND_*, ...)
#
# The work is hack/nodeimage's, in Go; this builds it once for each version of its sources, under
# $ZNS_CACHE_DIR/bin, and hands the command line over. Progress and step timings go to stderr; stdout carries
# exactly one line, the image name.
set -euo pipefail
# the program runs in the repository: a relative cache directory is the caller's
if [[ -n "${ZNS_CACHE_DIR:-}" && "$ZNS_CACHE_DIR" != /* ]]; then export ZNS_CACHE_DIR="$PWD/$ZNS_CACHE_DIR"; fi
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=hack/lib/go-program.sh
source hack/lib/go-program.sh
mapfile -t sources < <(go_sources hack/nodeimage/*.go hack/internal/stagerun/*.go)
bin=$(go_program build-node-image hack/nodeimage "${sources[@]}")
exec "$bin" "$@"
