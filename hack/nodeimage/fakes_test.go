package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

// TestMain runs the program itself when a test starts the test binary as the builder or its background save
// (NODEIMAGE_TEST_MAIN=1), with the fake host's files.
func TestMain(m *testing.M) {
	if os.Getenv("NODEIMAGE_TEST_MAIN") == "1" {
		if root := os.Getenv("FAKE_ROOT"); root != "" {
			hostSeccompHeader, hostBusybox = filepath.Join(root, "host/seccomp.h"), filepath.Join(root, "host/busybox")
		}
		main()
	}
	os.Exit(m.Run())
}

// fakeScripts are the tools and scripts a build runs, as small shell scripts that log their calls to $CALLS and
// keep their state under $FAKE_ROOT. The FAKE_* variables make them slow or fail.
var fakeScripts = map[string]string{
	// docker: images are files under docker/images (image=, recipe=, id=); a container's imported refs are
	// docker/containers/NAME.refs
	"bin/docker": `echo "docker $*" >>"$CALLS"
st=$FAKE_ROOT/docker; mkdir -p "$st/images" "$st/containers"
key() { printf '%s' "$1" | tr '/:' '__'; }
case "$1" in
info) [ -z "$FAKE_DOCKER_DOWN" ] ;;
image) f="$st/images/$(key "$5")"; [ -f "$f" ] || { echo "Error: No such image: $5" >&2; exit 1; }
  case "$4" in *recipe*) sed -n 's/^recipe=//p' "$f" ;; *Id*) sed -n 's/^id=//p' "$f" ;; *Size*) echo 987654321 ;; esac ;;
load) f=$(mktemp); gzip -dcf "$3" >"$f" || exit 1; img=$(sed -n 's/^image=//p' "$f"); mv "$f" "$st/images/$(key "$img")"; echo "Loaded image: $img" ;;
save) if [ -n "$FAKE_SAVE_SLEEP" ]; then echo "$PPID" >"$st/save.pid"; exec sleep "$FAKE_SAVE_SLEEP"; fi; cat "$st/images/$(key "$2")" ;;
import) cat >"$st/import.tar"; printf 'image=%s\nrecipe=\nid=sha256:base\n' "$5" >"$st/images/$(key "$5")" ;;
run) touch "$st/containers/$4"; echo 0123abcd ;;
exec) shift; [ "$1" = -i ] && shift; c=$1; shift
  case "$*" in
  "bash -c nohup containerd"*) touch "$st/containers/$c.up" ;;
  "ctr version") [ -f "$st/containers/$c.up" ] ;;
  *"images import"*) [ -z "$FAKE_IMPORT_FAIL" ] || exit 1; sed -n 's/^ref=//p' | tee -a "$st/refs" >>"$st/containers/$c.refs" ;;
  *"images list -q") echo sha256:0123; cat "$st/containers/$c.refs" ;;
  "pgrep -x containerd") exit 1 ;;
  esac ;;
commit) f="$st/images/$(key "$9")"; [ ! -f "$f" ] || mv "$f" "$st/images/dangling-$(date +%s%N)"
  printf 'image=%s\nrecipe=%s\nid=sha256:%s\n' "$9" "$(printf '%s' "$7" | sed -n 's/.*recipe=\([^ ]*\).*/\1/p')" "$(date +%s%N)" >"$st/images/$(key "$9")"
  printf '%s\n' "$3" "$5" "$7" >"$st/commit-changes" ;;
rm) rm -f "$st/containers/$4" "$st/containers/$4".* ;;
rmi) for f in "$st"/images/*; do
    if [ "$(sed -n 's/^id=//p' "$f")" = "$2" ] || [ "$f" = "$st/images/$(key "$2")" ]; then rm -f "$f"; exit 0; fi
  done; exit 1 ;;
esac`,
	// go: module downloads from $FAKE_ROOT/mods; builds and installs write scripts that print their name; the
	// build of hack/imagearchive writes a fake one that lists the image's files (and keeps a copy in archives/)
	"bin/go": `echo "go $* [CGO_ENABLED=$CGO_ENABLED GOFLAGS=$GOFLAGS GOTOOLCHAIN=$GOTOOLCHAIN GOWORK=$GOWORK]" >>"$CALLS"
case "$*" in *"$FAKE_GO_SLOW"*) [ -z "$FAKE_GO_SLOW" ] || sleep 0.3 ;; esac
case "$*" in *"$FAKE_GO_FAIL"*) [ -z "$FAKE_GO_FAIL" ] || { echo "go: build failed: $FAKE_GO_FAIL" >&2; exit 1; } ;; esac
prog() { printf '#!/bin/sh\necho "%s $*"\n' "$2" >"$1"; chmod 755 "$1"; }
case "$1" in
mod) m=${4%@*}; v=${4#*@}
  [ -d "$FAKE_ROOT/mods/$4" ] || { printf '{\n\t"Path": "%s",\n\t"Version": "%s",\n\t"Error": "not found"\n}\n' "$m" "$v"; exit 1; }
  echo "go: downloading $m $v" >&2
  printf '{\n\t"Path": "%s",\n\t"Version": "%s",\n\t"Dir": "%s",\n\t"Origin": {\n\t\t"VCS": "git",\n\t\t"Hash": "0123456789abcdef0123456789abcdef01234567"\n\t}\n}\n' "$m" "$v" "$FAKE_ROOT/mods/$4" ;;
build) out=; names=
  while [ $# -gt 0 ]; do
    [ "$1" = -o ] && out=$2
    case "$1" in ./hack/imagearchive) cp "$FAKE_ROOT/host/imagearchive" "$out"; exit 0 ;; ./cmd/*) names="$names ${1#./cmd/}" ;; esac
    shift
  done
  [ ! -d vendor ] || echo "go build: vendor/ present" >>"$CALLS"
  for n in $names; do prog "$out$n" "$n"; done ;;
install) for a in "$@"; do case "$a" in *@*) p=${a%@*}; prog "$GOBIN/${p##*/}" "${p##*/}" ;; esac; done ;;
esac`,
	"host/imagearchive": `while [ $# -gt 0 ]; do case "$1" in -o) o=$2 ;; -ref) r=$2 ;; -rootfs) d=$2 ;; -config) c=$2 ;; esac; shift 2; done
{ echo "ref=$r"; echo "config=$c"
  (cd "$d" && find . | LC_ALL=C sort | while read -r f; do
    if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; else echo "$f $(stat -c %a "$f")"; fi
  done); } >"$o"
mkdir -p "$FAKE_ROOT/archives" && cp "$o" "$FAKE_ROOT/archives/"`,
	"bin/gcc": `echo "gcc $*" >>"$CALLS"
case "$1" in -print-file-name=libseccomp.a) echo "$FAKE_ROOT/host/libseccomp.a"; exit 0 ;; esac
while [ $# -gt 0 ]; do [ "$1" = -o ] && { printf '#!/bin/sh\necho pause\n' >"$2"; chmod 755 "$2"; }; shift; done`,
	// debootstrap SUITE DIR MIRROR (after three options): a merged-/usr tree with the iptables packages' lists
	"bin/debootstrap": `echo "debootstrap $*" >>"$CALLS"
echo "I: Retrieving InRelease"
if [ -n "$FAKE_DEBOOTSTRAP_SLEEP" ]; then echo $$ >"$FAKE_ROOT/debootstrap.pid"; sleep "$FAKE_DEBOOTSTRAP_SLEEP"; fi
[ -z "$FAKE_DEBOOTSTRAP_FAIL" ] || { echo "E: Couldn't download packages: systemd"; exit 1; }
r=$5
mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib/x86_64-linux-gnu/xtables" "$r/usr/lib64" "$r/etc/systemd/system/multi-user.target.wants" \
  "$r/usr/lib/systemd/system/sysinit.target.wants" "$r/usr/lib/systemd/system/multi-user.target.wants" "$r/var/lib/dpkg/info" \
  "$r/var/cache/apt/archives" "$r/debootstrap" "$r/tmp" "$r/var/log"
ln -s usr/bin "$r/bin"; ln -s usr/sbin "$r/sbin"; ln -s usr/lib "$r/lib"; ln -s usr/lib64 "$r/lib64"
touch "$r/var/cache/apt/archives/x.deb" "$r/usr/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service" \
  "$r/usr/lib/systemd/system/multi-user.target.wants/getty.target" "$r/usr/lib/systemd/systemd" "$r/etc/systemd/journald.conf"
for x in xtables-legacy-multi xtables-nft-multi; do printf '#!/bin/sh\n' >"$r/usr/sbin/$x"; chmod 755 "$r/usr/sbin/$x"; done
echo libc >"$r/usr/lib/x86_64-linux-gnu/libc.so.6"; echo ld >"$r/usr/lib64/ld-linux-x86-64.so.2"
echo xt >"$r/usr/lib/x86_64-linux-gnu/libxtables.so.12.7.0"; ln -s libxtables.so.12.7.0 "$r/usr/lib/x86_64-linux-gnu/libxtables.so.12"
echo ext >"$r/usr/lib/x86_64-linux-gnu/xtables/libxt_mark.so"
printf '/.\n/usr\n/usr/sbin\n/usr/sbin/xtables-legacy-multi\n/usr/sbin/xtables-nft-multi\n/usr/lib/x86_64-linux-gnu/xtables\n/usr/lib/x86_64-linux-gnu/xtables/libxt_mark.so\n/usr/share/doc/iptables/copyright\n' >"$r/var/lib/dpkg/info/iptables.list"
printf '/.\n/usr/lib/x86_64-linux-gnu/libxtables.so.12.7.0\n/usr/lib/x86_64-linux-gnu/libxtables.so.12\n' >"$r/var/lib/dpkg/info/libxtables12.list"
for p in libip4tc2 libip6tc2 libnftnl11 libmnl0 libnfnetlink0; do echo "/." >"$r/var/lib/dpkg/info/$p.list"; done
echo "/." >"$r/var/lib/dpkg/info/libnetfilter-conntrack3:amd64.list"
echo "I: Base system installed successfully."`,
	// chroot DIR xargs -r ldd: libc and the loader for each file; chroot DIR BINARY: it must be there
	"bin/chroot": `echo "chroot $*" >>"$CALLS"
d=$1; shift
if [ "$1" = xargs ]; then
  while read -r f; do [ -n "$f" ] && printf '%s:\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n' "$f"; done
  exit 1
fi
[ -x "$d$1" ] || { echo "chroot: failed to run command '$1': No such file or directory" >&2; exit 127; }
echo "iptables v1.8.9 (fake)"`,
	"bin/dpkg-query": `printf '%s' "${FAKE_BUSYBOX_STATUS-install ok installed 1:1.35.0-4+deb12u1+b1}"`,
	"bin/apt-cache":  `printf 'Package: busybox-static\nVersion: 1:1.36.1-9~bpo12+1\nArchitecture: amd64\n'`,
	"bin/apt-get":    `echo "apt-get $*" >>"$CALLS"; printf 'deb' >"busybox-static_1%%3a1.36.1-9~bpo12+1_amd64.deb"`,
	"bin/dpkg-deb":   `mkdir -p "$3/bin" && cp "$FAKE_ROOT/host/busybox" "$3/bin/busybox"`,
	"bin/ldd":        `echo "	not a dynamic executable"; exit 1`,
	"bin/strip":      `exit 0`,
	// install as root would do it, for a test run that is not root: without -o and -g
	"bin/install": `[ "$(id -u)" = 0 ] && exec /usr/bin/install "$@"
n=$#; i=0
while [ $i -lt $n ]; do a=$1; shift; i=$((i+1)); case "$a" in -o|-g) shift; i=$((i+1)) ;; *) set -- "$@" "$a" ;; esac; done
exec /usr/bin/install "$@"`,
	"bin/sudo": `[ "$1" = -n ] && shift
[ "$1" = true ] && exit "${FAKE_SUDO_RC:-0}"
echo "sudo $*" >>"$CALLS"
exec "$@"`,
	"host/busybox":              `case "$1" in --list) printf 'busybox\nsh\nls\ncat\n' ;; true) exit 0 ;; esac`,
	"host/libseccomp.a":         ``,
	"host/seccomp.h":            ``,
	"hack/nodeimage/a.go":       `package main`,
	"hack/imagearchive/main.go": `package main`,
	// hack/kubernetes.sh node: the binaries, kubeadm printing its image list; FAKE_KUBE_AFTER: it ends only once
	// a call matching it was made (a part built meanwhile)
	"hack/kubernetes.sh": `echo "kubernetes $1" >>"$CALLS"
echo "kubernetes: compiled 10 of at most 20 packages" >&2
if [ -n "$FAKE_KUBE_SLEEP" ]; then echo $$ >"$FAKE_ROOT/kube.pid"; sleep "$FAKE_KUBE_SLEEP"; fi
if [ -n "$FAKE_KUBE_AFTER" ]; then while ! grep -q -- "$FAKE_KUBE_AFTER" "$CALLS"; do sleep 0.05; done; fi
[ -z "$FAKE_KUBE_FAIL" ] || { echo "kubernetes: ERROR: go build failed" >&2; exit 1; }
d=$ZNS_CACHE_DIR/kubernetes/v1.36.3_etcd-3.6.8; mkdir -p "$d"
for b in kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubectl etcd; do
  printf '#!/bin/sh\necho %s\n' "$b" >"$d/$b"; chmod 755 "$d/$b"
done
cat >"$d/kubeadm" <<EOF
#!/bin/sh
[ "\$*" = "config images list --kubernetes-version v1.36.3" ] || exit 1
cat <<'LIST'
registry.k8s.io/kube-apiserver:v1.36.3
registry.k8s.io/kube-controller-manager:v1.36.3
registry.k8s.io/kube-scheduler:v1.36.3
registry.k8s.io/kube-proxy:v1.36.3
registry.k8s.io/coredns/coredns:v1.14.2
registry.k8s.io/pause:3.10.2
registry.k8s.io/etcd:${FAKE_ETCD_TAG:-3.6.8-0}
LIST
EOF
chmod 755 "$d/kubeadm"
echo "$d"`,
}

// fakeFiles are the repository's and the module cache's files a build reads (not scripts).
var fakeFiles = map[string]string{
	"versions.mk": "K8S_VERSION := 1.36.3\nETCD_VERSION := 3.6.8\nKIND_VERSION := v0.33.0\nKIND_NODE_DEBIAN_SUITE := bookworm\n" +
		"KIND_CONTAINERD_VERSION := v2.0.14\nKIND_RUNC_VERSION := v1.2.9\nKIND_CNI_PLUGINS_VERSION := v1.9.1\n" +
		"KIND_LOCAL_PATH_PROVISIONER_VERSION := v0.0.30\n",
	"mods/k8s.io/kubernetes@v1.36.3/cmd/kubeadm/app/constants/constants.go":                                "package constants\n\n\tCoreDNSVersion = \"v1.14.2\"\n",
	"mods/k8s.io/kubernetes@v1.36.3/build/pause/linux/pause.c":                                             "int main() { return 0; }\n",
	"mods/github.com/containerd/containerd/v2@v2.0.14/go.mod":                                              "module github.com/containerd/containerd/v2\n",
	"mods/github.com/containerd/containerd/v2@v2.0.14/vendor/modules.txt":                                  "# empty\n",
	"mods/github.com/containerd/containerd/v2@v2.0.14/cmd/ctr/main.go":                                     "package main\n",
	"mods/github.com/opencontainers/runc@v1.2.9/go.mod":                                                    "module github.com/opencontainers/runc\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/usr/local/bin/entrypoint":                             "#!/bin/bash\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/usr/local/bin/clean-install":                          "#!/bin/sh\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/kind/README.txt":                                      "kind\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/kind/bin/mount-product-files.sh":                      "#!/bin/bash\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/LICENSES/README.txt":                                  "licenses\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/etc/crictl.yaml":                                      "runtime-endpoint: unix:///run/containerd/containerd.sock\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/etc/containerd/config.toml":                           "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  # use fixed sandbox image\n  sandbox_image = \"registry.k8s.io/pause:3.10\"\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/etc/default/kubelet":                                  "KUBELET_EXTRA_ARGS=\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/etc/sysctl.d/10-network-magic.conf":                   "net.ipv4.ip_forward=1\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/etc/systemd/system/kubelet.service":                   "[Unit]\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/etc/systemd/system/containerd.service":                "[Unit]\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/etc/systemd/system/undo-mount-hacks.service":          "[Unit]\n",
	"mods/sigs.k8s.io/kind@v0.33.0/images/base/files/etc/systemd/system/kubelet.service.d/10-kubeadm.conf": "[Service]\n",
}

// fakeRepo is a repository with the fake scripts and files, hack/kind/node's real files, and the module cache's
// files read-only as Go leaves them.
func fakeRepo(t *testing.T) *stageruntest.Repo {
	t.Helper()
	repo := stageruntest.NewRepo(t, fakeScripts, "bin")
	for path, content := range fakeFiles {
		p := filepath.Join(repo.Root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(path, "mods/") {
			mode = 0o444
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.Glob("../kind/node/*")
	if err != nil || len(real) == 0 {
		t.Fatalf("hack/kind/node: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(repo.Root, "hack/kind/node"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range real {
		if err := copyFile(f, filepath.Join(repo.Root, "hack/kind/node", filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

// knobs are a build's environment in repo, with env over it.
func knobs(repo *stageruntest.Repo, env map[string]string) stageruntest.Knobs {
	k := repo.Knobs()
	k["FAKE_ROOT"] = repo.Root
	k["NODEIMAGE_TEST_MAIN"] = "1" // the background save is the test binary
	for n, v := range env {
		k[n] = v
	}
	return k
}

// fakeBuilder is a builder in repo, as root, with fast progress lines and polls.
func fakeBuilder(t *testing.T, repo *stageruntest.Repo, env map[string]string) (*builder, *stageruntest.SyncBuffer, *stageruntest.SyncBuffer) {
	t.Helper()
	k := knobs(repo, env)
	cfg := stageruntest.Config(t, parseConfig, k)
	pins, err := readPins(filepath.Join(repo.Root, "versions.mk"))
	if err != nil {
		t.Fatal(err)
	}
	out, errs := stageruntest.Outputs()
	b := newBuilder(cfg, pins, repo.Root, k.List(), out, errs)
	b.self = []string{os.Args[0]}
	b.euid = 0
	b.seccompHeader, b.hostBusybox = filepath.Join(repo.Root, "host/seccomp.h"), filepath.Join(repo.Root, "host/busybox")
	b.pollEvery = 10 * time.Millisecond
	b.ProgressEvery = 50 * time.Millisecond
	b.KillGrace = 2 * time.Second
	return b, out, errs
}

// build runs one whole build in repo, and fails the test when it does not end within a minute (a builder that
// waits for the wrong thing never does).
func build(t *testing.T, b *builder) int {
	t.Helper()
	rc := make(chan int, 1)
	go func() { rc <- b.main() }()
	select {
	case code := <-rc:
		return code
	case <-time.After(time.Minute):
		t.Fatal("the build did not end within a minute")
	}
	return -1
}
