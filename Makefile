# zns-mysql: MySQL/MyRocks on ZNS SSDs through ZenFS, on Kubernetes.
#
#   make demo    set up and run the main job (see README)
#   make test    set up and run everything CI runs (hack/test.sh): packages, caches, images, every test tier,
#                the end-to-end suite on a kind cluster it brings up and removes
#
# Faster targets for the inner loop (they set up only what they need and run a subset): make unit, make qemu,
# make e2e, make test-chart.
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
# envtest's default of 20 s for kube-apiserver to answer is too short on a loaded 2-core machine (measured: a
# start timed out at load 19 with the other tiers building beside it).
export KUBEBUILDER_CONTROLPLANE_START_TIMEOUT ?= 120s
GO_PACKAGES := ./...

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*##/ {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

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
	$(MAKE) -s --no-print-directory api-docs

.PHONY: api-docs
api-docs: ## Write the API reference, docs/api.md, from the API types (operator/cmd/apidocs).
	go run ./operator/cmd/apidocs operator/api/v1alpha1 > docs/api.md.tmp && mv docs/api.md.tmp docs/api.md

.PHONY: check-generate
check-generate: generate ## Fail when generated files differ from what is committed (or are untracked).
	@paths="operator/api config/crd config/rbac/role.yaml charts/zns-mysql/crds charts/zns-mysql/files/manager-role.yaml docs/api.md"; \
	if [ -n "$$(git status --porcelain -- $$paths)" ]; then \
		echo "generated files drifted from the sources; run 'make generate' and commit:"; \
		git status --porcelain -- $$paths; git --no-pager diff --stat; exit 1; fi
	@echo "generated files are in sync"

.PHONY: fmt-check
fmt-check: ## Fail on files gofmt would change.
	@out=$$(gofmt -l operator test hack); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: lint
lint: lint-shell ## shellcheck (lint-shell), then staticcheck (STATICCHECK_VERSION in versions.mk) on every package and on the tagged builds; clean, with each exception a //lint:ignore that says why.
	go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(GO_PACKAGES)
	go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags zns_guest,zns_userland ./operator/internal/qemuguest/
	go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags scale ./operator/internal/scale/
	go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags capture ./operator/internal/controller/ ./operator/internal/fio/ ./operator/internal/steadystate/ ./operator/internal/sysbench/ ./operator/internal/ycsb/

# The shell scripts: every tracked *.sh, and every tracked file whose first line is a sh or bash shebang (.ci/run,
# hack/qemu/init, ...), so that a new script is checked without being listed. .shellcheckrc holds the project-wide
# settings; the exceptions are `# shellcheck disable=` lines in the scripts, each with its reason.
SHELLCHECK_WANT := $(firstword $(subst -, ,$(SHELLCHECK_VERSION)))
.PHONY: lint-shell
lint-shell: ## shellcheck (SHELLCHECK_VERSION in versions.mk, Debian's package) on every tracked shell script; clean, with each exception a `# shellcheck disable=` that says why.
	@v=$$(shellcheck --version 2>/dev/null | sed -n 's/^version: //p' || true); if [ "$$v" != "$(SHELLCHECK_WANT)" ]; then \
		echo "make lint-shell: needs shellcheck $(SHELLCHECK_WANT) (SHELLCHECK_VERSION in versions.mk), found: $${v:-none}." \
			"Run hack/install-deps.sh (as root: it installs Debian bookworm's shellcheck $(SHELLCHECK_VERSION))" >&2; exit 1; fi
	@shebang='^#!.*[/ ](ba|da)?sh([[:space:]]|$$)'; files=(); \
	while IFS= read -r -d '' f; do \
		[[ -f "$$f" ]] || continue; \
		first=; IFS= read -r first <"$$f" || true; \
		if [[ "$$f" == *.sh || "$$first" =~ $$shebang ]]; then files+=("$$f"); fi; \
	done < <(git ls-files -z); \
	(($${#files[@]})) || { echo "make lint-shell: no shell scripts found (they are listed with git ls-files: a git checkout is needed)" >&2; exit 1; }; \
	shellcheck "$${files[@]}" && echo "shellcheck $(SHELLCHECK_WANT): $${#files[@]} shell scripts clean"

.PHONY: vet
vet: ## go vet every package (the in-guest QEMU tests carry a build tag).
	go vet $(GO_PACKAGES)
	go vet -tags zns_guest ./operator/internal/qemuguest/
	go vet -tags scale ./operator/internal/scale/

.PHONY: envtest-assets
envtest-assets: ## Build (once, cached) kube-apiserver and etcd for envtest (hack/kubernetes.sh).
	@hack/envtest-assets.sh >/dev/null

.PHONY: demo demo-clean demo-local demo-zoned
demo: ## The README's main command: kind cluster, zoned devices (if the kernel can), images, chart, a Benchmark, a table.
	hack/demo.sh
demo-clean: ## Delete the demo's kind cluster and its null_blk devices.
	hack/demo.sh clean
demo-local: ## The seed methodology without Kubernetes: two private MariaDB servers on loopback, a comparison.
	hack/demo-local.sh
demo-zoned: ## The same on zoned devices, any machine: MyRocks and InnoDB on btrfs/f2fs (zoned) vs ext4, in the QEMU guest.
	hack/demo-zoned.sh

.PHONY: bench
bench: ## The runner's cost: its own CPU time per second of run and its instruction count (valgrind), then the TPS ratio bare vs runner with its 95% CI; the FTL model's speed, and settling a model against reading back the one a phase kept on the node.
	go test ./operator/cmd/znsbench/ -run '^$$' -bench BenchmarkRunnerCPU -benchtime $(or $(BENCH_CPU_RUNS),2)x -timeout 30m -v
	go test ./operator/cmd/znsbench/ -run '^$$' -bench BenchmarkRunnerOverhead -benchtime $(or $(BENCH_PAIRS),3)x -timeout 15m -v
	go test ./operator/internal/ftl/ -run '^$$' -bench BenchmarkFTL -benchtime 1x -timeout 30m -v
	go test ./operator/internal/ftl/ -run '^$$' -bench BenchmarkSettleOrReadBack -benchtime 1x -timeout 10m -v

# Two go test processes: each test's memory figures (peak RSS above all) are then its own.
.PHONY: bench-scale
bench-scale: ## The operator at scale on envtest: 500 ZNSDatabases, 100 Benchmarks; then the inventory of 200 simulated nodes x 4 devices and 100 databases placed by requirements. Reconcile p50/p99, API writes (publish, rescans, placement, idle), memory.
	@assets=$$(hack/envtest-assets.sh) && export KUBEBUILDER_ASSETS=$$assets && \
		go test -tags scale -count=1 -run '^TestScale$$' -timeout 40m -v ./operator/internal/scale/ && \
		go test -tags scale -count=1 -run '^TestInventoryScale$$' -timeout 30m -v ./operator/internal/scale/

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

# The e2e suite runs last, alone: it shares two cores with a whole cluster. `make test` brings up a cluster of its
# own for it (hack/test.sh); `make e2e` keeps one for the inner loop.
E2E_PACKAGE := github.com/zns-mysql/zns-mysql/test/e2e
E2E_TIMEOUT ?= 40m
E2E_IMAGES ?= bench mariadb operator
.PHONY: e2e-cluster
e2e-cluster: ## Bring up the kind cluster and load freshly built images; prints the ZNS_E2E_* settings to export.
	@kc=$$(hack/kind/cluster.sh up) && tag=$$(hack/kind/load-images.sh $(E2E_IMAGES)) && \
		printf 'export ZNS_E2E=1 ZNS_E2E_KUBECONFIG=%s ZNS_E2E_TAG=%s\n' "$$kc" "$$tag"

.PHONY: e2e
e2e: ## Inner loop: only the end-to-end suite, on the kind cluster (kept afterwards; make kind-down removes it).
	@settings=$$($(MAKE) -s --no-print-directory e2e-cluster) && eval "$$settings" && helm=$$(hack/helm.sh) && \
		ZNS_HELM=$$helm go test -count=1 -v -timeout $(E2E_TIMEOUT) ./test/e2e/

.PHONY: zoned-node-up zoned-node-down e2e-zoned
zoned-node-up: ## Boot (or keep) a Kubernetes node with zoned devices in the QEMU guest; prints its kubeconfig.
	@hack/qemu/zoned-node.sh up
zoned-node-down: ## Stop the zoned node.
	hack/qemu/zoned-node.sh down
e2e-zoned: ## Inner loop: the e2e suite's zoned flow on a fresh zoned node (kept afterwards; make zoned-node-down stops it).
	@hack/qemu/zoned-node.sh down && hack/qemu/zoned-node.sh up >/dev/null && settings=$$(hack/qemu/zoned-node.sh env) && eval "$$settings" && \
		helm=$$(hack/helm.sh) && ZNS_HELM=$$helm go test -count=1 -v -timeout $(E2E_TIMEOUT) -run '^TestZonedFilesystemFlow$$' ./test/e2e/

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
test: ## The README's test command: sets up and runs every tier CI runs (hack/test.sh).
	@hack/test.sh

UNIT_EXCLUDE := $(E2E_PACKAGE) github.com/zns-mysql/zns-mysql/test/qemu github.com/zns-mysql/zns-mysql/operator/internal/qemuguest github.com/zns-mysql/zns-mysql/test/images
.PHONY: unit
unit: fmt-check vet ## Inner loop: pure Go, real MariaDB on loopback, envtest and chart tests; no QEMU, images or kind.
	@assets=$$(hack/envtest-assets.sh) && helm=$$(hack/helm.sh) && \
		go build -o $(TOOLS_DIR)/testsummary ./hack/testsummary && \
		pkgs=$$(go list $(GO_PACKAGES) | grep -vxF $(foreach p,$(UNIT_EXCLUDE),-e $(p))) && \
		KUBEBUILDER_ASSETS=$$assets ZNS_HELM=$$helm go test -json $(GO_TEST_FLAGS) $$pkgs 2>&1 | $(TOOLS_DIR)/testsummary

.PHONY: qemu
qemu: ## Inner loop: only the QEMU guest tier (real zoned devices in a Debian guest).
	@guest=$$(hack/qemu/build-guest.sh) && go build -o $(TOOLS_DIR)/testsummary ./hack/testsummary && \
		{ [[ -n "$${ZLOOP_MODULE:-}" ]] || ZLOOP_MODULE=$$(hack/qemu/build-zloop-module.sh --for-guest "$$guest") || \
			ZNS_ZLOOP_MODULE_ERROR="hack/qemu/build-zloop-module.sh failed (above)"; } && export ZLOOP_MODULE ZNS_ZLOOP_MODULE_ERROR && \
		go test -json $(GO_TEST_FLAGS) -timeout 45m ./test/qemu/ ./operator/internal/qemuguest/ 2>&1 | $(TOOLS_DIR)/testsummary

# The kernel-sensitive part of the QEMU tier on bookworm's 6.1, the oldest kernel the guest pins: in the guest
# (TestGuestSuite) device inspection, preflight, zone reports, fio, NVMe logs, the block trace and the drive
# sidecar, zloop's refusal; zoned btrfs and f2fs with MariaDB (TestZonedFilesystems). Not in make test or CI.
QEMU_61_TESTS := ^(TestGuestSuite|TestZonedFilesystems)$$
.PHONY: qemu-6.1
qemu-6.1: ## Opt-in (not in make test, not in CI): the QEMU tier's kernel-sensitive tests on bookworm's 6.1 kernel.
	@export ZNS_QEMU_KERNEL=6.1 && hack/qemu/build-guest.sh >/dev/null && go build -o $(TOOLS_DIR)/testsummary ./hack/testsummary && \
		go test -json $(GO_TEST_FLAGS) -timeout 45m -run '$(QEMU_61_TESTS)' ./operator/internal/qemuguest/ 2>&1 | $(TOOLS_DIR)/testsummary
