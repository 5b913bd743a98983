#!/usr/bin/env bash
# hack/kind/load-images.sh: build the project's images and load them into the kind cluster; print their tag.
#
#   tag=$(hack/kind/load-images.sh [TARGET...])      default targets: bench mariadb operator
#   tag=$(hack/kind/load-images.sh --save FILE [TARGET...])
#
# --save FILE writes the tagged images to FILE (`docker save`) instead of loading them into kind: for a node
# that imports them itself (hack/qemu/zoned-node.sh). FILE is rewritten only when its images changed.
#
# TARGETs are hack/images/build.sh's (bench mariadb operator percona). Each image is built (cached by docker),
# then tagged with one tag derived from the images' content, "c-<hash of their image IDs>", and that tag is
# loaded with `hack/kind/cluster.sh load`. A content tag, not :latest or a fixed name, because:
#   - a tag other than latest makes pods default to imagePullPolicy IfNotPresent: nothing is ever pulled;
#   - a rebuilt image gets a new tag, so `helm upgrade --set image.tag=<tag>` rolls the operator onto it
#     (with a fixed tag helm sees no change and the old pod keeps running the old binary);
#   - unchanged images keep their tag and `kind load` skips what the node already has.
# Images loaded under earlier tags stay in the node until the cluster is deleted.
#
# The cluster must be up (hack/kind/cluster.sh up). stdout: the tag; progress and timings: stderr.
set -euo pipefail
exec 3>&1 1>&2

LOG_PREFIX=load-images
# shellcheck source=hack/kind/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/lib.sh"

T_START=$(now)
save=""
if [[ "${1:-}" == --save ]]; then
  save=${2:?--save needs a file}
  shift 2
fi
targets=("$@")
((${#targets[@]})) || targets=(bench mariadb operator)

# image_name TARGET: the name hack/images/build.sh gives it (its lib.sh, in a subshell: its log/now/elapsed
# would replace ours).
image_name() {
  # shellcheck source=hack/images/lib.sh
  (source "${REPO_ROOT}/hack/images/lib.sh" && case "$1" in
    bench) echo "$BENCH_IMAGE" ;;
    mariadb) echo "$MARIADB_IMAGE" ;;
    operator) echo "$OPERATOR_IMAGE" ;;
    percona) echo "$PERCONA_IMAGE" ;;
    *) exit 1 ;;
  esac)
}
images=()
for t in "${targets[@]}"; do
  images+=("$(image_name "$t")") || die "unknown target '${t}': bench, mariadb, operator or percona"
done

step "build images (${targets[*]})" "${REPO_ROOT}/hack/images/build.sh" "${targets[@]}"

ids=""
for i in "${images[@]}"; do
  ids+="$(docker image inspect -f '{{.Id}}' "$i")"$'\n' || die "no image ${i} after the build"
done
tag="c-$(printf '%s' "$ids" | sha256sum | cut -c1-12)"
tagged=()
for i in "${images[@]}"; do
  docker tag "$i" "${i%:*}:${tag}"
  tagged+=("${i%:*}:${tag}")
done
log "tagged ${tagged[*]}"
if [[ -n "$save" ]]; then
  if [[ -s "$save" && "$(cat "${save}.tags" 2>/dev/null)" == "${tagged[*]}" ]]; then
    log "${save} already holds ${tagged[*]}"
  else
    rm -f "${save}.tags"
    step "save to ${save}" docker save -o "${save}.part" "${tagged[@]}"
    mv "${save}.part" "$save"
    printf '%s\n' "${tagged[*]}" >"${save}.tags"
  fi
else
  step "load into the cluster" "${KIND_LIB_DIR}/cluster.sh" load "${tagged[@]}"
fi
log "$(printf 'total %ss' "$(elapsed "$T_START")")"
printf '%s\n' "$tag" >&3
