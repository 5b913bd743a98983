#!/usr/bin/env bash
# hack/images/go-binaries.sh: build the scratch image of the project's Go binaries ($GO_BINARIES_IMAGE,
# zns-mysql/go-binaries:dev) that the Dockerfiles copy znsdb, znsbench and manager from.
#
#   GO_BUILD=host   (default) the host's Go compiles them (CGO_ENABLED=0, static), images/go-binaries.Dockerfile
#                   wraps them; needs only go on PATH. Incremental: a second run takes seconds.
#   GO_BUILD=docker images/go-build.Dockerfile compiles them inside GO_IMAGE (default golang:1.26-bookworm,
#                   so a registry; any local image with the go.mod Go works too) with the Go module proxy.
#                   GO_IMAGE=host makes that image first from the base image and the host's GOROOT
#                   (images/go-toolchain.Dockerfile, tagged zns-mysql/golang:<host go version>).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_docker
root=$(images_repo_root)
cd "$root"

GO_BUILD=${GO_BUILD:-host}
start=$(now)
case "$GO_BUILD" in
  host)
    command -v go >/dev/null 2>&1 || die "GO_BUILD=host needs go on PATH (or GO_BUILD=docker with a Go image)"
    arch=${TARGETARCH:-$(go env GOARCH)}
    ctx=$(mktemp -d "${TMPDIR:-/tmp}/zns-gobin.XXXXXX")
    trap 'rm -rf "$ctx"' EXIT
    log "building znsdb, znsbench and manager with the host's $(go env GOVERSION)"
    heartbeat "go build of znsdb, znsbench, manager" "" \
      env CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -ldflags='-s -w' -o "$ctx/" \
      ./operator/cmd/znsdb ./operator/cmd/znsbench ./operator/cmd/manager
    TARGETARCH=$arch hack/images/go-ycsb.sh "$ctx"
    "$DOCKER" build -q -f images/go-binaries.Dockerfile -t "$GO_BINARIES_IMAGE" "$ctx" >/dev/null
    ;;
  docker)
    if [[ ${GO_IMAGE:-} == host ]]; then
      command -v go >/dev/null 2>&1 || die "GO_IMAGE=host needs go on PATH"
      GO_IMAGE=$IMAGE_REPO/golang:$(go env GOVERSION | sed 's/^go//')
      if ! image_exists "$GO_IMAGE"; then
        hack/images/base-image.sh
        ctx=$(mktemp -d "${TMPDIR:-/tmp}/zns-goroot.XXXXXX")
        trap 'rm -rf "$ctx"' EXIT
        cp -a "$(go env GOROOT)" "$ctx/go"
        cp images/go-toolchain.Dockerfile "$ctx/"
        "$DOCKER" build -q -f "$ctx/go-toolchain.Dockerfile" --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$GO_IMAGE" "$ctx" >/dev/null
        log "Go image $GO_IMAGE from the host's $(go env GOROOT) ($(image_size "$GO_IMAGE"))"
      fi
    fi
    tar -c go.mod go.sum operator images/go-build.Dockerfile |
      "$DOCKER" build -q -f images/go-build.Dockerfile ${GO_IMAGE:+--build-arg GO_IMAGE="$GO_IMAGE"} --build-arg "YCSB_VERSION=$YCSB_VERSION" \
        -t "$GO_BINARIES_IMAGE" - >/dev/null
    ;;
  *) die "GO_BUILD must be host or docker, got '$GO_BUILD'" ;;
esac
log "Go binaries image $GO_BINARIES_IMAGE ($GO_BUILD build, $(image_size "$GO_BINARIES_IMAGE")) in $(elapsed "$start")"
