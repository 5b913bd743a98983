# versions.mk: the one place that pins the project's tool versions.
#
# Included by the Makefile and read by shell scripts (hack/envtest-assets.sh),
# so keep every pin a plain `NAME := value` line: no Make functions, no quotes,
# a trailing `# comment` is allowed. Everything here is built from the Go module
# proxy (the usual download sites are not reachable from our machines).

# Kubernetes of the envtest API server (kube-apiserver, kubectl), built from
# k8s.io/kubernetes v1.36.3 with its staging modules (k8s.io/api, apimachinery,
# apiserver, client-go, ...) replaced by v0.36.3. Matches the k8s.io/* v0.36.x
# libraries in go.mod. Written without a leading "v", as setup-envtest does.
ENVTEST_K8S_VERSION := 1.36.3

# etcd for envtest, built from go.etcd.io/etcd/server/v3 (etcdmain.Main).
# 3.6.8 is the etcd that Kubernetes v1.36.3 itself pins: build/dependencies.yaml,
# hack/lib/etcd.sh and kubeadm's DefaultEtcdVersion (3.6.8-0), and the
# go.etcd.io/etcd/* v3.6.8 client libraries in its go.mod. No leading "v".
ETCD_VERSION := 3.6.8

# controller-gen (sigs.k8s.io/controller-tools/cmd/controller-gen). v0.23.0 is
# the newest release on the module proxy (go list -m -versions); builds with
# Go 1.26 and generates for the k8s.io v0.36 API machinery.
CONTROLLER_TOOLS_VERSION := v0.23.0

# kustomize (sigs.k8s.io/kustomize/kustomize/v5). v5.8.3 needs go >= 1.27;
# v5.8.2 (go 1.26.0 in its go.mod) is the newest that `go install`s with Go 1.26.
KUSTOMIZE_VERSION := v5.8.2

# Helm (helm.sh/helm/v3/cmd/helm): newest v3 release on the module proxy,
# go 1.26.0 in its go.mod. Pinned only here so far.
HELM_VERSION := v3.22.0

# QEMU test guest kernel (hack/qemu/build-guest.sh).
# Debian bookworm's kernel, fetched with `apt-get download` and unpacked with
# `dpkg -x`, never installed on the host. 6.1.0-50 (6.1.176-1) is both the
# current point release in bookworm/main and in bookworm-security, so it stays
# downloadable after the security archive moves on. Its config has
# CONFIG_BLK_DEV_ZONED=y and CONFIG_MQ_IOSCHED_DEADLINE=y; null_blk, nvme,
# configfs, virtio and 9p are modules. When Debian drops this version,
# build-guest.sh says so: pick another with
#   apt-cache search '^linux-image-6\.1\.0-[0-9]+-amd64$'; apt-cache madison <name>
QEMU_GUEST_KERNEL_PACKAGE := linux-image-6.1.0-50-amd64
QEMU_GUEST_KERNEL_VERSION := 6.1.176-1
