# hack/images/lib.sh: shared settings of the image scripts (sourced, not run).
#
# Every name and pin the image build uses is here or a build argument in its Dockerfile; override any of
# these from the environment (or `make images VAR=value`).
# shellcheck shell=bash

# The Debian release all images are built on, and the local tag of its base image. With no registry the
# base is made here by base-image.sh (debootstrap + docker import); on a machine that can pull, set
# BASE_IMAGE=debian:bookworm-slim and the scripts use that instead.
DEBIAN_RELEASE=${DEBIAN_RELEASE:-bookworm}
BASE_IMAGE=${BASE_IMAGE:-zns-mysql/debian:${DEBIAN_RELEASE}}

# The Go binaries (znsdb, znsbench, manager) travel into the images inside a scratch image of this name,
# built by go-binaries.sh; the Dockerfiles copy from it (build argument GO_BINARIES).
GO_BINARIES_IMAGE=${GO_BINARIES_IMAGE:-zns-mysql/go-binaries:dev}

# Image names: the operator's defaults (operator/cmd/manager flags --percona-image, --percona-8.4-image,
# --mariadb-image, --bench-image) are these with :latest.
IMAGE_TAG=${IMAGE_TAG:-latest}
IMAGE_REPO=${IMAGE_REPO:-zns-mysql}
BENCH_IMAGE=${BENCH_IMAGE:-${IMAGE_REPO}/bench:${IMAGE_TAG}}
MARIADB_IMAGE=${MARIADB_IMAGE:-${IMAGE_REPO}/mariadb-myrocks:${IMAGE_TAG}}
PERCONA_IMAGE=${PERCONA_IMAGE:-${IMAGE_REPO}/percona-zenfs:${IMAGE_TAG}}
# The same Dockerfile with PERCONA_SERIES=8.4: Percona Server 8.4 LTS, no ZenFS (--percona-8.4-image).
PERCONA84_IMAGE=${PERCONA84_IMAGE:-${IMAGE_REPO}/percona-84:${IMAGE_TAG}}
# Dockerfile.percona-zenfs up to its first step that needs Percona's repository (and the from-source base).
PERCONA_RUNTIME_IMAGE=${PERCONA_RUNTIME_IMAGE:-${IMAGE_REPO}/percona-zenfs-runtime:${IMAGE_TAG}}
OPERATOR_IMAGE=${OPERATOR_IMAGE:-${IMAGE_REPO}/operator:${IMAGE_TAG}}
# Every image built is also tagged with the chart's appVersion, the tag the chart uses when none is given,
# so `make images` then `helm install` finds them on a node that shares this Docker Engine.
CHART_APP_VERSION=${CHART_APP_VERSION:-$(sed -nE 's/^appVersion:[[:space:]]*"?([^"[:space:]]+)"?.*/\1/p' \
  "$(dirname "${BASH_SOURCE[0]}")/../../charts/zns-mysql/Chart.yaml" 2>/dev/null)}

# The Percona Server releases of the two series: versions.mk's pins, passed to Dockerfile.percona-zenfs as build
# arguments (its defaults are the same, which test/images checks, so that a plain docker build agrees).
images_pin() {
  sed -nE "s/^$1[[:space:]]*:=[[:space:]]*([^[:space:]#]+).*/\1/p" "$(dirname "${BASH_SOURCE[0]}")/../../versions.mk"
}
PERCONA_80_VERSION=${PERCONA_80_VERSION:-$(images_pin PERCONA_80_VERSION)}
PERCONA_84_VERSION=${PERCONA_84_VERSION:-$(images_pin PERCONA_84_VERSION)}
# go-ycsb's module version for the bench image (hack/images/go-ycsb.sh, images/go-build.Dockerfile's default).
YCSB_VERSION=${YCSB_VERSION:-$(images_pin YCSB_VERSION)}

DOCKER=${DOCKER:-docker}

images_repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd; }

# now prints seconds since the epoch with milliseconds; elapsed START prints "12.3s".
now() { date +%s.%N; }
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1fs", e - s }'; }

log() { echo "images: $*" >&2; }
# heartbeat (progress lines while a long step runs; they are prefixed "images:")
LOG_PREFIX=images
# shellcheck source=hack/lib/progress.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/progress.sh"
explain_failures
die() { echo "images: $*" >&2; exit 1; }

# need_docker exits 3 (the "prerequisite missing" status the Go tests turn into a skip) without a daemon.
need_docker() {
  command -v "$DOCKER" >/dev/null 2>&1 || { echo "images: needs docker (not on PATH)" >&2; exit 3; }
  "$DOCKER" info >/dev/null 2>&1 || { echo "images: needs a running Docker daemon ('$DOCKER info' failed)" >&2; exit 3; }
}

image_exists() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

# image_size prints an image's size in MB.
image_size() { "$DOCKER" image inspect -f '{{.Size}}' "$1" | awk '{ printf "%.0f MB", $1 / 1000 / 1000 }'; }
