# zns-mysql: MySQL/MyRocks on ZNS SSDs through ZenFS, on Kubernetes.
#
#   make demo    set up and run the main job (see README)
#   make test    everything CI runs: generated-file drift, vet, unit, real-MariaDB and envtest suites
#
# Tool versions are pinned in versions.mk; tools are built from the Go module proxy into a cache that
# survives between runs on the same machine ($(ZNS_CACHE_DIR)) but is rebuilt when missing.

include versions.mk

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

ZNS_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/zns-mysql
export ZNS_CACHE_DIR
TOOLS_DIR := $(ZNS_CACHE_DIR)/tools
CONTROLLER_GEN := $(TOOLS_DIR)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GO_TEST_FLAGS ?= -count=1
GO_PACKAGES := ./...

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(CONTROLLER_GEN):
	@mkdir -p $(TOOLS_DIR)
	@echo "building controller-gen $(CONTROLLER_TOOLS_VERSION) (once; cached in $(TOOLS_DIR))"
	@tmp=$$(mktemp -d) && GOBIN=$$tmp go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION) && mv $$tmp/controller-gen $@ && rmdir $$tmp

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code, CRDs and RBAC from the API types and markers.
	$(CONTROLLER_GEN) object paths=./operator/api/...
	$(CONTROLLER_GEN) crd rbac:roleName=manager-role paths=./operator/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	rm -f charts/zns-mysql/crds/*.yaml && cp config/crd/bases/*.yaml charts/zns-mysql/crds/
	cp config/rbac/role.yaml charts/zns-mysql/files/manager-role.yaml

.PHONY: check-generate
check-generate: generate ## Fail when generated files differ from what is committed (or are untracked).
	@paths="operator/api config/crd config/rbac/role.yaml charts/zns-mysql/crds charts/zns-mysql/files/manager-role.yaml"; \
	if [ -n "$$(git status --porcelain -- $$paths)" ]; then \
		echo "generated files drifted from the sources; run 'make generate' and commit:"; \
		git status --porcelain -- $$paths; git --no-pager diff --stat; exit 1; fi
	@echo "generated files are in sync"

.PHONY: fmt-check
fmt-check: ## Fail on files gofmt would change.
	@out=$$(gofmt -l operator test); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet: ## go vet every package (the in-guest QEMU tests carry a build tag).
	go vet $(GO_PACKAGES)
	go vet -tags zns_guest ./operator/internal/qemuguest/

.PHONY: envtest-assets
envtest-assets: ## Build (once, cached) kube-apiserver and etcd for envtest.
	@hack/envtest-assets.sh >/dev/null

.PHONY: demo
demo: ## The README's main command: the seed methodology end to end, printing a comparison.
	hack/demo-local.sh

.PHONY: bench
bench: ## The runner must not cost throughput: bare sysbench vs the znsbench runner, same server, alternating.
	go test ./operator/cmd/znsbench/ -run '^$$' -bench BenchmarkRunnerOverhead -benchtime $(or $(BENCH_PAIRS),3)x -timeout 15m -v

.PHONY: qemu-guest
qemu-guest: ## Build (once, cached) the QEMU guest with zoned block device support.
	hack/qemu/build-guest.sh

.PHONY: testdata-qemu
testdata-qemu: ## Re-record the guest's real sysfs trees and fio output under operator/internal/qemuguest/testdata.
	ZNS_QEMU_UPDATE_TESTDATA=1 go test -count=1 ./operator/internal/qemuguest -run TestGuestSuite

IMAGES ?= all
.PHONY: images
images: ## Build the images (bench, MariaDB stand-in, operator, Percona+ZenFS: needs repo.percona.com); prints times and sizes.
	hack/images/build.sh $(IMAGES)

.PHONY: image-smoke
image-smoke: ## Build the bench and MariaDB images and run them together as the operator does (needs Docker).
	hack/images/smoke.sh

.PHONY: kind-image kind-up kind-down kind-status
kind-image: ## Build (once, cached) the offline kind node image (Debian packages + Go modules only).
	@hack/kind/build-node-image.sh >/dev/null
kind-up: ## Create (or keep) the single-node kind cluster zns-mysql from the offline node image.
	@hack/kind/cluster.sh up >/dev/null
kind-down: ## Delete the kind cluster.
	hack/kind/cluster.sh down
kind-status: ## Show the kind cluster's state.
	hack/kind/cluster.sh status

# Images loaded into kind carry a tag other than latest, so that pods use them without pulling.
E2E_TAG ?= e2e
.PHONY: e2e
e2e: ## The end-to-end suite on the offline kind cluster: images built and loaded, chart installed.
	hack/images/build.sh bench mariadb operator
	for i in bench mariadb-myrocks operator; do docker tag zns-mysql/$$i:latest zns-mysql/$$i:$(E2E_TAG); done
	@kc=$$(hack/kind/cluster.sh up) && \
		hack/kind/cluster.sh load zns-mysql/bench:$(E2E_TAG) zns-mysql/mariadb-myrocks:$(E2E_TAG) zns-mysql/operator:$(E2E_TAG) && \
		helm=$$(hack/helm.sh) && \
		KUBECONFIG=$$kc ZNS_E2E=1 ZNS_E2E_TAG=$(E2E_TAG) ZNS_HELM=$$helm go test -count=1 -v -timeout 40m ./test/e2e/

.PHONY: helm
helm: ## Build (once, cached) the pinned helm.
	@hack/helm.sh >/dev/null

.PHONY: test-chart
test-chart: ## Helm chart: lint, template, schema, strict dry-run and a real install against envtest.
	@assets=$$(hack/envtest-assets.sh) && helm=$$(hack/helm.sh) && \
		KUBEBUILDER_ASSETS=$$assets ZNS_HELM=$$helm go test $(GO_TEST_FLAGS) -v ./test/chart/

.PHONY: build
build: ## Build the operator and helper binaries into bin/.
	CGO_ENABLED=0 go build -o bin/ ./operator/cmd/...

.PHONY: test
test: check-generate fmt-check vet ## The README's test command: everything CI runs.
	@assets=$$(hack/envtest-assets.sh) && helm=$$(hack/helm.sh) && \
		echo "KUBEBUILDER_ASSETS=$$assets ZNS_HELM=$$helm" && \
		go build -o $(TOOLS_DIR)/testsummary ./hack/testsummary && \
		KUBEBUILDER_ASSETS=$$assets ZNS_HELM=$$helm go test -json $(GO_TEST_FLAGS) $(GO_PACKAGES) 2>&1 | tee $(ZNS_CACHE_DIR)/last-test.json | $(TOOLS_DIR)/testsummary
