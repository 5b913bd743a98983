#!/bin/bash
# In the QEMU guest (hack/qemu/run.sh --userland, started by hack/qemu/zoned-node.sh): a single-node Kubernetes
# on the guest's zoned kernel, from the binaries the project builds. Arguments: the Kubernetes binaries, the
# kind node image's parts, the shared directory (token, pause.tar, images.tar, images.list, image-disk; the
# image disk, when the host attached one, is /dev/vda). Lines starting "zoned-node:" are its progress, read by
# the host; "zoned-node: ready" means Ready with the images imported. It then stays up until the host stops
# QEMU. Test-grade: one bearer token (system:masters) for every component.
set -uo pipefail
A=$1 P=$2 S=$3
D=/mnt/k # tmpfs: the node's state lives and dies with the guest
NODE=zns-guest IP=10.0.2.15
t0=$(date +%s.%N)
say() { printf 'zoned-node: %s (%.1fs)\n' "$*" "$(echo "$(date +%s.%N) - $t0" | bc)"; }
fail() {
  say "FAILED: $*"
  for f in "$D"/*.log; do [[ -s $f ]] && { echo "--- last lines of $f"; tail -n 15 "$f"; }; done
  exit 1
}
# the guest boots without a host name ("(none)"), which the API server puts in its identity Lease's labels: the
# Lease is refused (422) and retried every 10 s
hostname "$NODE"
say "start: $(nproc) CPUs, $(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo) MiB, kernel $(uname -r)"
part() { compgen -G "$P/$1" | head -n1; }
CONTAINERD=$(dirname "$(part 'containerd-v*/containerd')") RUNC=$(part 'runc-v*/runc') CNI=$(part 'cni-plugins-v*')
COREDNS=$(part 'coredns-v*/coredns')
[[ -x $CONTAINERD/containerd && -x $RUNC && -d $CNI && -x $COREDNS ]] || fail "missing node parts under $P"
mkdir -p $D/certs $D/cni /run/containerd
# The host's root is read-only here: the kubelet, the CNI plugins and the pods' logs write below these.
for d in /var/lib /var/log; do mount -t tmpfs tmpfs $d || fail "cannot mount a tmpfs on $d"; done
mount --make-rshared / 2>/dev/null # as on a systemd host: the kubelet's mounts reach the containers
mount -t cgroup2 none /sys/fs/cgroup || fail "cannot mount cgroup2"
# as systemd mounts it: the Benchmarks' drive sidecar traces the block layer there (docs/write-amplification.md)
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing || fail "cannot mount tracefs"
echo "+cpu +memory +pids +io +cpuset" >/sys/fs/cgroup/cgroup.subtree_control || fail "cannot enable the cgroup controllers"
sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.route_localnet=1 || fail "cannot set the forwarding sysctls"
# What udev does on a real node (the guest has none): block devices root:disk 0660. Without it the device is
# root-only and the format Job, as uid 999 with the disk group, is refused ("permission denied opening").
for b in /dev/nullb[0-9]* /dev/nvme[0-9]*n[0-9]*; do [[ -b $b ]] && chgrp disk "$b" && chmod 0660 "$b"; done
# and the udev rule the operator asks for: zoned devices on mq-deadline (QEMU's NVMe namespace comes up on none)
for b in /sys/block/*; do
  [[ $(cat "$b/queue/zoned" 2>/dev/null) == host-managed ]] && echo mq-deadline >"$b/queue/scheduler"
done
for b in /sys/block/nullb* /sys/block/nvme*; do
  [[ -e $b ]] && say "device ${b##*/}: zoned=$(cat "$b/queue/zoned") zones=$(cat "$b/queue/nr_zones") size=$(($(cat "$b/size") / 2048))MiB"
done

# Under TCG every idle loop of the control plane costs ten to twenty times its native CPU, and the node has two
# vCPUs: a starved guest (load average 41, docs/performance.md) gave the control plane 1.9 cores and the pods 0.2.
# So by default the host runs etcd, the API server, the controller-manager and the scheduler (hack/zonednode's
# serve: the marker control-plane in the share says so; the host made the token file, the keys, and the kubeconfig
# that reaches the API server at 10.0.2.100, a guest forward). With ZNS_NODE_CONTROL_PLANE=guest they run here.
# Either way this node runs what the flows use and no more: the controllers they need, no API priority and
# fairness (one client set, nothing to be fair between), no eviction manager's stats sweep every 10 s (no
# thresholds are set), cAdvisor's housekeeping every 30 s instead of 10, the node's status every 20 s (posted
# every 5 min unless it changes, as by default), container logs checked for rotation every minute, kube-proxy's
# full resync every 2 minutes, and a Go heap allowed to grow further before each collection (8 GiB here; a
# collection walks the whole heap under emulation). docs/zoned-node.md has the figures.
export GOGC=400
K="$A/kubectl --kubeconfig $D/kc.yaml"
guest_control_plane() {
  local token
  token=$(cat "$S/token") || fail "no token in $S"
  printf '%s,zns-admin,zns-admin,system:masters\n' "$token" >$D/tokens.csv
  openssl genrsa -out $D/sa.key 2048 2>/dev/null || fail "openssl genrsa"
  # The API server's client certificate for the kubelet (logs, exec, port-forward), from a CA of this node's life.
  # shellcheck disable=SC2015 # fail when any of the three steps fails
  openssl req -x509 -newkey rsa:2048 -nodes -keyout $D/ca.key -out $D/ca.crt -days 7 -subj /CN=zns-guest-ca 2>/dev/null &&
    openssl req -newkey rsa:2048 -nodes -keyout $D/kubelet-client.key -out $D/kubelet-client.csr \
      -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" 2>/dev/null &&
    openssl x509 -req -in $D/kubelet-client.csr -CA $D/ca.crt -CAkey $D/ca.key -CAcreateserial \
      -out $D/kubelet-client.crt -days 7 2>/dev/null || fail "cannot make the kubelet client certificate"
  cat >$D/kc.yaml <<KC
apiVersion: v1
kind: Config
clusters: [{name: g, cluster: {server: "https://$IP:6443", insecure-skip-tls-verify: true}}]
users: [{name: a, user: {token: "$token"}}]
contexts: [{name: g, context: {cluster: g, user: a}}]
current-context: g
KC
  chmod 0600 $D/kc.yaml $D/tokens.csv
  "$A/etcd" --data-dir $D/etcd --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --unsafe-no-fsync >$D/etcd.log 2>&1 &
  "$A/kube-apiserver" --etcd-servers http://127.0.0.1:2379 --cert-dir $D/certs --service-account-key-file $D/sa.key \
    --service-account-signing-key-file $D/sa.key --service-account-issuer https://kubernetes.default.svc \
    --authorization-mode Node,RBAC --token-auth-file $D/tokens.csv --service-cluster-ip-range 10.96.0.0/16 \
    --kubelet-client-certificate $D/kubelet-client.crt --kubelet-client-key $D/kubelet-client.key \
    --kubelet-preferred-address-types InternalIP \
    --enable-priority-and-fairness=false \
    --secure-port 6443 --bind-address 0.0.0.0 --advertise-address $IP >$D/apiserver.log 2>&1 &
}
# kcm_controllers: as hack/zonednode's kcmControllers (controlplane.go says why each is off).
kcm_controllers() {
  local off=(nodeipam taint-eviction-controller resourcequota horizontalpodautoscaling cronjob
    disruption replicationcontroller endpointslicemirroring csrsigning csrapproving csrcleaner ttl
    persistentvolume-expander ephemeral-volume storage-version-gc legacy-service-account-token-cleaner)
  local IFS=,
  echo "*,${off[*]/#/-}"
}
if [[ -f $S/control-plane ]]; then
  { cp "$S/kc.yaml" $D/kc.yaml && cp "$S/ca.crt" $D/ca.crt && chmod 0600 $D/kc.yaml; } || fail "no kc.yaml or ca.crt in $S"
  say "the control plane runs on the host: $(grep -o 'server: "[^"]*"' $D/kc.yaml)"
else
  guest_control_plane
fi
n=0
until $K get --raw /readyz >/dev/null 2>&1; do
  sleep 1; n=$((n + 1)); ((n % 30 == 0)) && say "waiting for the API server"; ((n < 600)) || fail "the API server is not ready after 600 s"
done
say "API server ready"
if [[ ! -f $S/control-plane ]]; then
  "$A/kube-controller-manager" --kubeconfig $D/kc.yaml --service-account-private-key-file $D/sa.key --leader-elect=false \
    --use-service-account-credentials=false --root-ca-file $D/certs/apiserver.crt --controllers "$(kcm_controllers)" >$D/kcm.log 2>&1 &
  "$A/kube-scheduler" --kubeconfig $D/kc.yaml --leader-elect=false >$D/scheduler.log 2>&1 &
fi
# Services: kube-proxy (iptables); names: CoreDNS on the node's address, which the kubelet gives the pods.
cat >$D/kube-proxy.yaml <<KP
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $D/kc.yaml}
hostnameOverride: $NODE
clusterCIDR: 10.244.0.0/24
mode: iptables
iptables: {syncPeriod: 2m, minSyncPeriod: 5s}
conntrack: {maxPerCore: 0}
KP
"$A/kube-proxy" --config $D/kube-proxy.yaml >$D/kube-proxy.log 2>&1 &
cat >$D/Corefile <<CF
.:53 {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $D/kc.yaml
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
}
CF
$COREDNS -conf $D/Corefile >$D/coredns.log 2>&1 &

cat >$D/containerd.toml <<CT
version = 3
root = "$D/containerd"
state = "/run/containerd"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "zns.local/pause:1"
[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dir = "$CNI"
  conf_dir = "$D/cni"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  BinaryName = "$RUNC"
CT
# ipMasq: a pod's way out of the node (the API server at 10.0.2.100, through the kubernetes Service) leaves with
# the node's address, the only one QEMU's user network answers.
cat >$D/cni/10-zns.conflist <<CN
{"cniVersion": "1.0.0", "name": "zns", "plugins": [{"type": "ptp", "ipMasq": true,
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
CN
CTR="$CONTAINERD/ctr -n k8s.io"
start_containerd() {
  PATH=$CONTAINERD:$PATH "$CONTAINERD/containerd" --config $D/containerd.toml >>$D/containerd.log 2>&1 &
  local n=0
  until $CTR version >/dev/null 2>&1; do sleep 0.5; n=$((n + 1)); ((n < 240)) || fail "containerd does not answer"; done
}
# The images: imported from the share (5 min under TCG), or found on the image disk the host keeps between boots
# (hack/qemu/zoned-node.sh), /dev/vda. "use": mounted as containerd's root (attached copy-on-write: this boot's
# writes are dropped). "fill": a new disk; this boot's imported images are written onto it for the next boots.
mode=$(cat "$S/image-disk" 2>/dev/null || echo none)
mkdir -p $D/containerd
if [[ $mode == use ]] && ! mount -t ext4 /dev/vda $D/containerd; then
  say "WARNING: cannot mount the image disk /dev/vda: importing the images instead"
  mode=none
fi
start_containerd
say "containerd up"
wanted() { echo zns.local/pause:1; cat "$S/images.list"; }
# has REF: whether containerd holds REF (under docker.io/ too: ctr's name for a short reference)
has() { grep -qE "(^|/)${1//./\\.}\$" <<<"$have"; }
missing_images() {
  local ref have
  have=$($CTR images ls -q)
  for ref in $(wanted); do has "$ref" || printf '%s ' "$ref"; done
}
lacking=$(missing_images)
if [[ $mode == use && -n $lacking ]]; then
  say "WARNING: the image disk lacks ${lacking}: importing the images"
  mode=none
fi
if [[ -z $lacking ]]; then
  say "images found on the image disk: $($CTR images ls -q | grep -c zns-mysql) zns-mysql images"
else
  t=$(date +%s)
  # said before it starts: the host's progress line repeats the guest's last line, and without this one it would
  # say "containerd up" for the five minutes of the import
  say "importing the images from the share ($(($(stat -c %s "$S/images.tar") >> 20)) MiB; about 5 min under TCG)"
  $CTR images import "$S/pause.tar" >/dev/null || fail "importing the pause image"
  $CTR images import "$S/images.tar" >/dev/null || fail "importing the images"
  lacking=$(missing_images)
  [[ -z $lacking ]] || fail "containerd lacks ${lacking} after the import"
  say "images imported in $(($(date +%s) - t))s: $($CTR images ls -q | grep -c zns-mysql) zns-mysql images"
fi
if [[ $mode == fill ]]; then
  # A copy of containerd's root as it is now, the images and nothing else (no pod has run yet); a failure here
  # costs the next boot an import, not this one its node.
  t=$(date +%s)
  pkill -x containerd
  n=0
  while pgrep -x containerd >/dev/null; do sleep 0.5; n=$((n + 1)); ((n < 60)) || fail "containerd does not stop"; done
  if mkfs.ext4 -q -F -L zns-images -E lazy_itable_init=1,lazy_journal_init=1 /dev/vda && mkdir -p /mnt/image-disk &&
    mount -t ext4 /dev/vda /mnt/image-disk && cp -a $D/containerd/. /mnt/image-disk/ && umount /mnt/image-disk; then
    say "image disk written: $(du -sm $D/containerd | cut -f1) MiB in $(($(date +%s) - t))s"
  else
    umount /mnt/image-disk 2>/dev/null
    say "WARNING: the image disk was not written (above): the next boot imports the images again"
  fi
  start_containerd
fi
cat >$D/kubelet.yaml <<KL
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $D/ca.crt}}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
evictionHard: {}
imageGCHighThresholdPercent: 100
clusterDNS: [$IP]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
localStorageCapacityIsolation: false
nodeStatusUpdateFrequency: 20s
nodeStatusReportFrequency: 5m
containerLogMonitorInterval: 60s
KL
"$A/kubelet" --kubeconfig $D/kc.yaml --config $D/kubelet.yaml --cert-dir /var/lib/kubelet/pki \
  --housekeeping-interval 30s --hostname-override $NODE --node-ip $IP >$D/kubelet.log 2>&1 &
n=0
until $K get node $NODE -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True; do
  sleep 2; n=$((n + 1))
  ((n % 15 == 0)) && say "waiting for the node to be Ready: $(grep -E '^E[0-9]{4}' $D/kubelet.log | tail -n1 | cut -c1-200)"
  ((n < 300)) || fail "the node is not Ready after 600 s"
done
say "node Ready"
$K get --raw /api/v1/namespaces/kube-system/services >/dev/null || fail "the API server stopped answering"
# The conventional device offered as an administrator would: a local PersistentVolume of its own class, which
# the kubelet formats (ext4) when a claim first uses it.
$K apply -f - >/dev/null <<EOF || fail "cannot create the conventional device's PersistentVolume"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zns-guest-local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: zns-guest-nullb2}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: zns-guest-local
  volumeMode: Filesystem
  local: {path: /dev/nullb2, fsType: ext4}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$NODE]}]}]
EOF
say "ready"
# the node's own daemons, and the control plane's when it runs here (on the host, zonednode serve watches it)
components=(kubelet containerd kube-proxy coredns)
[[ -f $S/control-plane ]] || components=(kube-apiserver etcd kube-controller-manager kube-scheduler "${components[@]}")
# cpu_seconds: where the guest's CPU went since boot, in CPU-seconds: each component (with its reaped children),
# the pods (their cgroup), the rest (shims, runc, probes' execs, the kernel) and idle. Read on the host from the
# guest's log (zoned-node.sh down prints the last line): the control plane's share is what decides whether the
# databases start in time on a slow machine.
cpu_seconds() {
  local c pid st busy idle total=0 line="" pods=0 hz f
  hz=$(getconf CLK_TCK)
  for c in "${components[@]}"; do
    pid=$(pgrep -xo "${c:0:15}") || continue
    # utime stime cutime cstime: fields 14-17, the 12th to 15th after the command's closing parenthesis
    st=$(awk '{sub(/^.*\) /, ""); print $12 + $13 + $14 + $15}' "/proc/$pid/stat") || continue
    total=$((total + st)) line+=" ${c#kube-} $((st / hz))"
  done
  for f in /sys/fs/cgroup/kubepods/cpu.stat /sys/fs/cgroup/kubepods.slice/cpu.stat; do
    [[ -r $f ]] && pods=$(awk '$1 == "usage_usec" {print int($2 / 1000000)}' "$f")
  done
  read -r busy idle < <(awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6}' /proc/stat)
  printf '%s; pods %d; other %d; idle %d' "$line" "$pods" $(((busy - total) / hz - pods)) $((idle / hz))
}
# Stay up; the host stops QEMU (hack/qemu/zoned-node.sh down). Say it if a component dies.
n=0
while sleep 60; do
  for c in "${components[@]}"; do
    pgrep -x "${c:0:15}" >/dev/null || say "WARNING: $c is not running"
  done
  n=$((n + 1))
  ((n % 5 == 0)) && say "cpu since boot (CPU-s):$(cpu_seconds)"
done
