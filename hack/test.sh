#!/usr/bin/env bash
# hack/test.sh: the README's test command (`make test`): sets up everything the test tiers need on a fresh
# Debian machine with Go and a Docker Engine, then runs every tier CI runs, the end-to-end suite included.
#
#   1 Debian packages          hack/install-deps.sh (MariaDB + MyRocks, sysbench, fio, QEMU, debootstrap, ...)
#   2 Go modules               go mod download
#   3 generated files, gofmt, go vet, make lint (shellcheck on the shell scripts, staticcheck on the Go code)
#   4 builds, side by side     hack/kubernetes.sh (envtest and the kind node share one build), the kind node
#                              image, helm, the QEMU guest, the bench/MariaDB/operator images; cached under
#                              $ZNS_CACHE_DIR (rebuilt when missing); each background build logs to a file
#   5 waiting for them         with their progress; meanwhile zloop.ko for the guest's kernel when it needs one
#                              (hack/qemu/build-zloop-module.sh --for-guest; cached), for the zloop tests
#   6 tests                    pure Go, real MariaDB on loopback, envtest, chart, QEMU guest, images
#   7 end to end               a kind cluster of its own (zns-test; a loop device for the refusal test when
#                              root), the images loaded, test/e2e, then the cluster deleted
#   8 zoned end to end         this kernel has no zoned devices and a kind node shares it: a Kubernetes node in
#                              the QEMU guest (hack/qemu/zoned-node.sh), the e2e tests that need it
#                              (test/e2e/tiers.go's ZonedNodeTests) against it
# Tests 6 to 8 end in one summary: "N passed, N failed, N skipped", every skip with what it needs.
#
# Its knobs are environment variables: `hack/test.sh --help` lists every one, with its default.
#
# The work is hack/testrun's, in Go (the stages, the background builds it tracks by their process, the cleanup of
# what it set up, the summary); this builds it once for each version of its sources, under $ZNS_CACHE_DIR/bin,
# and hands the command line over.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=hack/lib/go-program.sh
source hack/lib/go-program.sh
# its sources: hack/testrun, and what it imports of hack/internal/stagerun (the library it shares with
# hack/demorun) and of test/e2e (the list of the zoned tests)
mapfile -t sources < <(go_sources hack/testrun/*.go hack/internal/stagerun/*.go test/e2e/*.go)
bin=$(go_program test hack/testrun "${sources[@]}")
# exec: the run keeps this script's process, whose PID owns the zoned node (ZNS_NODE_OWNER)
exec "$bin" "$@"
