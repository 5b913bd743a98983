#!/usr/bin/env bash
# hack/images/build.sh: build the project's images, print how long each took and their sizes.
#
#   hack/images/build.sh [TARGET...]      default: all
#
#   all              bench mariadb operator percona (what `make images` builds)
#   bench            zns-mysql/bench            Dockerfile.bench
#   mariadb          zns-mysql/mariadb-myrocks  Dockerfile.mariadb (the MariaDB + MyRocks test stand-in)
#   operator         zns-mysql/operator         Dockerfile.operator
#   percona          zns-mysql/percona-zenfs    Dockerfile.percona-zenfs, Percona Server 8.0 with ZenFS
#                                               (Percona's packages: needs repo.percona.com)
#   percona84        zns-mysql/percona-84       the same with PERCONA_SERIES=8.4: Percona Server 8.4 LTS, no
#                                               ZenFS (repo.percona.com's ps-84-lts); not part of all
#   percona-runtime  zns-mysql/percona-zenfs-runtime: the same Dockerfile up to its first step beyond
#                    Debian (--target runtime); builds without Percona's repository
#   percona-source   zns-mysql/percona-zenfs    percona-runtime, then images/percona-zenfs-source.Dockerfile
#                                               (compiles Percona Server with ZenFS: needs github.com and
#                                               the Boost archive; hours)
#   check            `docker build --check` of every Dockerfile where the builder has it (BuildKit)
#
# Every image target first makes the base image (base-image.sh, cached) and the Go binaries image
# (go-binaries.sh, incremental). Settings and names: hack/images/lib.sh. Extra `docker build` flags:
# DOCKER_BUILD_ARGS (e.g. "--build-arg PERCONA_VERSION=8.0.43-34 --no-cache"). The Percona releases are
# versions.mk's PERCONA_80_VERSION and PERCONA_84_VERSION. Build logs are kept in
# $ZNS_CACHE_DIR/images/build-<target>.log. Exit status: 0 all built, 1 a build failed, 3 no Docker.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_docker
root=$(images_repo_root)
cd "$root"
cache=${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/images
mkdir -p "$cache"

targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(all)
expanded=()
for t in "${targets[@]}"; do
  case "$t" in
    all) expanded+=(bench mariadb operator percona) ;;
    bench | mariadb | operator | percona | percona84 | percona-runtime | percona-source | check) expanded+=("$t") ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown target '$t' (see $0 --help)" ;;
  esac
done

# The build context holds only what the Dockerfiles COPY from it: images/.
ctx=$(mktemp -d "${TMPDIR:-/tmp}/zns-images-ctx.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
cp -r images "$ctx/"

read -r -a extra <<<"${DOCKER_BUILD_ARGS:-}"
common=(--build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "GO_BINARIES=$GO_BINARIES_IMAGE"
  --build-arg "ZONED_XFS_SUITE=$(images_pin XFS_USERLAND_SUITE)"
  --build-arg "ZONED_XFSPROGS_VERSION=$(images_pin XFS_USERLAND_XFSPROGS_VERSION)")

prepared=0
prepare() {
  [[ $prepared -eq 1 ]] && return
  hack/images/base-image.sh
  hack/images/go-binaries.sh
  prepared=1
}

declare -a built=() failed=()
timing=()

# build NAME DOCKERFILE TAG [docker build flags...]
build() {
  local name=$1 file=$2 tag=$3
  shift 3
  prepare
  local log=$cache/build-$name.log start
  : >"$log"
  start=$(now)
  log "building $tag from $file $* (log: $log)"
  # The classic builder's deprecation notice is noise here: keep it out of the log's tail.
  if heartbeat --log "$log" "image $name" "" \
    "$DOCKER" build --force-rm -f "$file" "${common[@]}" "$@" ${extra[@]+"${extra[@]}"} -t "$tag" "$ctx"; then
    timing+=("$(printf '%-16s %-40s %8s  %s' "$name" "$tag" "$(elapsed "$start")" "$(image_size "$tag")")")
    built+=("$name")
    [[ -z "$CHART_APP_VERSION" || "${tag##*:}" == "$CHART_APP_VERSION" ]] || "$DOCKER" tag "$tag" "${tag%:*}:${CHART_APP_VERSION}"
    log "built $tag in $(elapsed "$start")"
  else
    timing+=("$(printf '%-16s %-40s %8s  %s' "$name" "$tag" "$(elapsed "$start")" "FAILED")")
    failed+=("$name")
    grep -v -e 'legacy builder is deprecated' -e 'Install the buildx component' -e 'docs.docker.com/go/buildx' \
      "$log" | tail -n 25 >&2
    local step
    step=$(grep -E '^Step [0-9]+/[0-9]+ :|^#[0-9]+ \[' "$log" | tail -n1 || true)
    log "FAILED: $tag after $(elapsed "$start"), at: ${step:-?}"
    case "$name" in
      percona)
        log "the Percona image needs, besides the Debian mirror: https://repo.percona.com/apt/ (the" \
          "percona-release package, then the ps-80 apt repository for $DEBIAN_RELEASE)" ;;
      percona84)
        log "the Percona 8.4 image needs, besides the Debian mirror: https://repo.percona.com/apt/ (the" \
          "percona-release package, then the ps-84-lts apt repository for $DEBIAN_RELEASE)" ;;
      percona-source)
        log "the source build needs, besides the Debian mirror: https://github.com/percona/percona-server" \
          "(the tag and its submodules) and the Boost archive cmake downloads (DOWNLOAD_BOOST)" ;;
    esac
  fi
}

check() {
  if ! "$DOCKER" build --help 2>/dev/null | grep -q -- '--check'; then
    log "check: this docker has no 'build --check' (it needs BuildKit through buildx >= 0.15): skipped;" \
      "every build still parses its whole Dockerfile before running a step"
    return
  fi
  local f
  for f in Dockerfile.bench Dockerfile.mariadb Dockerfile.operator Dockerfile.percona-zenfs \
    images/percona-zenfs-source.Dockerfile images/go-binaries.Dockerfile images/go-build.Dockerfile; do
    if "$DOCKER" build --check -f "$f" "${common[@]}" "$ctx"; then
      log "check: $f ok"
    else
      failed+=("check:$f")
    fi
  done
}

for t in "${expanded[@]}"; do
  case "$t" in
    bench) build bench Dockerfile.bench "$BENCH_IMAGE" ;;
    mariadb) build mariadb Dockerfile.mariadb "$MARIADB_IMAGE" ;;
    operator) build operator Dockerfile.operator "$OPERATOR_IMAGE" ;;
    percona)
      build percona Dockerfile.percona-zenfs "$PERCONA_IMAGE" --build-arg PERCONA_SERIES=8.0 \
        --build-arg "PERCONA_80_VERSION=$PERCONA_80_VERSION"
      ;;
    percona84)
      build percona84 Dockerfile.percona-zenfs "$PERCONA84_IMAGE" --build-arg PERCONA_SERIES=8.4 \
        --build-arg "PERCONA_84_VERSION=$PERCONA_84_VERSION"
      ;;
    percona-runtime) build percona-runtime Dockerfile.percona-zenfs "$PERCONA_RUNTIME_IMAGE" --target runtime ;;
    percona-source)
      build percona-runtime Dockerfile.percona-zenfs "$PERCONA_RUNTIME_IMAGE" --target runtime
      [[ " ${failed[*]} " == *" percona-runtime "* ]] ||
        build percona-source images/percona-zenfs-source.Dockerfile "$PERCONA_IMAGE" \
          --build-arg "RUNTIME_IMAGE=$PERCONA_RUNTIME_IMAGE"
      ;;
    check) check ;;
  esac
done

if [[ ${#timing[@]} -gt 0 ]]; then
  echo "images:"
  printf '  %s\n' "${timing[@]}"
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  log "failed: ${failed[*]}"
  exit 1
fi
