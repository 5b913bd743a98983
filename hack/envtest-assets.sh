#!/usr/bin/env bash
# hack/envtest-assets.sh: build (once, cached) and print the directory envtest takes as KUBEBUILDER_ASSETS.
#
#   export KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"                    # shell
#   test: ; KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" go test ./...   # Makefile
# (In a recipe a failed build stops make; a global `$(shell ...)` would run on every make invocation and turn a
# failure into an empty value.)
#
# controller-runtime's envtest needs kube-apiserver and etcd (kubectl is handy for debugging). They are the
# project's one pinned Kubernetes (K8S_VERSION, ETCD_VERSION in versions.mk), built by hack/kubernetes.sh into
# the directory the kind node image takes its binaries from, so that nothing is built twice. stdout carries
# exactly one line, the directory; progress goes to stderr.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/kubernetes.sh" envtest
