#!/bin/bash
# In the guest (hack/qemu/run.sh --userland): a single-node Kubernetes on the guest's zoned kernel, from the
# binaries the project builds: etcd, kube-apiserver, controller-manager, scheduler, containerd, runc, CNI, kubelet.
# Each step's time goes to $S/progress.log (MEASURE lines). An experiment towards issue 15 (docs/zoned-node.md):
# not yet run by any test. Arguments: the Kubernetes binaries, the kind node image's parts, the shared directory.
A=$1; P=$2; S=$3; OUT=$S/progress.log
exec > >(tee -a $OUT) 2>&1
D=/mnt/k; mkdir -p $D/certs $D/cni /run/containerd
ts() { date +%s.%N; }
el() { echo "$(echo "$(ts) - $1" | bc)"; }
T0=$(ts)
echo "start $(date) nproc=$(nproc) mem=$(awk '/MemTotal/{print $2}' /proc/meminfo)kB"
ip addr add 10.10.0.1/32 dev lo; ip route add default dev lo
# The host root is read-only in the guest: the kubelet, CNI and pod logs write below /var/lib and /var/log.
for d in /var/lib /var/log; do mount -t tmpfs tmpfs $d || echo "no tmpfs on $d"; done
# The kubelet's volume mounts reach the containers that use them (as on a systemd host: shared).
mount --make-rshared / || echo "cannot make / rshared"; mount --make-rshared /var/lib
mount -t cgroup2 none /sys/fs/cgroup && echo "+cpu +memory +pids +io +cpuset" > /sys/fs/cgroup/cgroup.subtree_control; echo "cgroup controllers: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
echo "measure-token,admin,admin,system:masters" > $D/tokens.csv
openssl genrsa -out $D/sa.key 2048 2>/dev/null
cat > $D/kc.yaml <<KC
apiVersion: v1
kind: Config
clusters: [{name: g, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: a, user: {token: measure-token}}]
contexts: [{name: g, context: {cluster: g, user: a}}]
current-context: g
KC
K="$A/kubectl --kubeconfig $D/kc.yaml"
$A/etcd --data-dir $D/etcd --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --unsafe-no-fsync >$D/etcd.log 2>&1 &
$A/kube-apiserver --etcd-servers http://127.0.0.1:2379 --cert-dir $D/certs --service-account-key-file $D/sa.key \
  --service-account-signing-key-file $D/sa.key --service-account-issuer https://kubernetes.default.svc \
  --authorization-mode Node,RBAC --token-auth-file $D/tokens.csv --service-cluster-ip-range 10.96.0.0/16 \
  --secure-port 6443 --bind-address 0.0.0.0 --advertise-address 10.10.0.1 >$D/apiserver.log 2>&1 &
until $K get --raw /readyz >/dev/null 2>&1; do sleep 1; done
echo "MEASURE api ready $(el $T0) s"
$A/kube-controller-manager --kubeconfig $D/kc.yaml --service-account-private-key-file $D/sa.key --leader-elect=false \
  --use-service-account-credentials=false --controllers '*,-nodeipam' >$D/kcm.log 2>&1 &
$A/kube-scheduler --kubeconfig $D/kc.yaml --leader-elect=false >$D/sched.log 2>&1 &
cat > $D/containerd.toml <<CT
version = 3
root = "$D/containerd"
state = "/run/containerd"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "zns.local/pause:1"
[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dir = "$P/cni-plugins-v1.9.1"
  conf_dir = "$D/cni"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  BinaryName = "$P/runc-v1.2.9/runc"
CT
cat > $D/cni/10-zns.conflist <<CN
{"cniVersion": "1.0.0", "name": "zns", "plugins": [{"type": "ptp", "ipMasq": false,
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
CN
PATH=$P/containerd-v2.0.14:$PATH $P/containerd-v2.0.14/containerd --config $D/containerd.toml >$D/containerd.log 2>&1 &
until $P/containerd-v2.0.14/ctr version >/dev/null 2>&1; do sleep 0.5; done
echo "MEASURE containerd up $(el $T0) s"
t=$(ts); $P/containerd-v2.0.14/ctr -n k8s.io images import $S/pause.tar >/dev/null && echo "MEASURE pause import $(el $t) s"
cat > $D/kubelet.yaml <<KL
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication: {anonymous: {enabled: false}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
evictionHard: {}
resolvConf: /etc/resolv.conf
KL
$A/kubelet --kubeconfig $D/kc.yaml --config $D/kubelet.yaml --cert-dir /var/lib/kubelet/pki \
  --hostname-override zns-guest --node-ip 10.10.0.1 >$D/kubelet.log 2>&1 &
n=0; until $K get node zns-guest -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True; do
  sleep 2; n=$((n+1)); ((n % 10 == 0)) && echo "waiting for Node Ready $(el $T0) s: $($K get node zns-guest --no-headers 2>&1 | head -1) | $(grep -E 'E[0-9]{4}' $D/kubelet.log | tail -1 | cut -c1-220)"
  ((n > 450)) && { tail -40 $D/kubelet.log; exit 1; }
done
echo "MEASURE node Ready $(el $T0) s"
$K get nodes -o wide
# A pod on the host network, then one on the pod network (ptp: a veth pair per pod).
t=$(ts)
$K run hostpod --image zns.local/pause:1 --image-pull-policy Never --overrides '{"spec":{"hostNetwork":true}}' >/dev/null
until [[ $($K get pod hostpod -o jsonpath='{.status.phase}' 2>/dev/null) == Running ]]; do sleep 1; done
echo "MEASURE hostNetwork pod Running $(el $t) s"
t=$(ts)
$K run netpod --image zns.local/pause:1 --image-pull-policy Never >/dev/null
for i in $(seq 60); do ph=$($K get pod netpod -o jsonpath='{.status.phase}'); [[ $ph == Running ]] && break; sleep 1; done
echo "pod-network pod after $(el $t) s: phase $ph; $($K get events --field-selector involvedObject.name=netpod -o custom-columns=R:.reason,M:.message --no-headers | tail -2 | cut -c1-250)"
