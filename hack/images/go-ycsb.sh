#!/usr/bin/env bash
# hack/images/go-ycsb.sh OUT_DIR: build go-ycsb (github.com/pingcap/go-ycsb, versions.mk's YCSB_VERSION) as a
# static binary OUT_DIR/go-ycsb with the host's Go, for the Go binaries image that Dockerfile.bench copies from.
# `go install github.com/pingcap/go-ycsb/cmd/go-ycsb@VERSION` refuses the module (its go.mod has a replace
# directive), so it is built as a main module from a copy of the module's files, which `go mod download` fetches
# (with go.sum checked against the checksum database) from the module proxy. Only its mysql and basic bindings are
# built in (images/go-ycsb-bindings.sed): the other database clients were most of a cold build.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

out=${1:?usage: hack/images/go-ycsb.sh OUT_DIR}
bindings=$(cd "$(dirname "$0")/../../images" && pwd)/go-ycsb-bindings.sed
[[ -n $YCSB_VERSION ]] || die "no YCSB_VERSION in versions.mk"
command -v go >/dev/null 2>&1 || die "go-ycsb.sh needs go on PATH"
arch=${TARGETARCH:-$(go env GOARCH)}
# Built once per version and architecture: a cold build compiles go-ycsb's whole dependency tree (every database
# client it ships), minutes on 2 cores, while the project's own binaries change with every commit. A missing or
# partial copy is built again; the cache is never required.
cache=${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/tools/go-ycsb-${YCSB_VERSION}-linux-${arch}
if [[ -x $cache/go-ycsb && -e $cache/.done ]]; then
  cp "$cache/go-ycsb" "$out/go-ycsb"
  log "go-ycsb $YCSB_VERSION from the cache ($cache)"
  exit 0
fi
mod=github.com/pingcap/go-ycsb
dir=$(go mod download -json "$mod@$YCSB_VERSION" | sed -nE 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')
[[ -d $dir ]] || die "go mod download $mod@$YCSB_VERSION gave no module directory"
src=$(mktemp -d "${TMPDIR:-/tmp}/zns-go-ycsb.XXXXXX")
trap 'rm -rf "$src"' EXIT
cp -r "$dir/." "$src/"
chmod -R u+w "$src"
sed -i -f "$bindings" "$src/cmd/go-ycsb/main.go"
kept=$(grep -cE '^[[:space:]]*_ "github\.com/pingcap/go-ycsb/db/' "$src/cmd/go-ycsb/main.go" || true)
[[ $kept == 2 ]] || die "go-ycsb $YCSB_VERSION: $kept database bindings left in cmd/go-ycsb/main.go after images/go-ycsb-bindings.sed, want mysql and basic: its imports changed, update the sed script"
log "building go-ycsb $YCSB_VERSION from its module with the host's $(go env GOVERSION)"
(cd "$src" && heartbeat "go build of go-ycsb $YCSB_VERSION" "" \
  env CGO_ENABLED=0 GOOS=linux GOARCH="$arch" \
  go build -trimpath -ldflags='-s -w' -o "$out/go-ycsb" ./cmd/go-ycsb)
mkdir -p "$cache"
rm -f "$cache/.done"
cp "$out/go-ycsb" "$cache/go-ycsb"
touch "$cache/.done"
