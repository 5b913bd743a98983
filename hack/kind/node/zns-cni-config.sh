#!/bin/sh
# /kind/bin/zns-cni-config.sh (run by zns-cni-config.service before containerd):
# write the node's CNI config. The offline node image has no kindnetd, so pods
# get a ptp veth and an address from host-local, as kindnetd would configure on
# a single node. The MTU follows the node's eth0 (the docker network's MTU).
# Each node of a cluster takes the /24 of kind's podSubnet 10.244.0.0/16 named
# by the last byte of its own address (172.18.0.3: 10.244.3.0/24), known at
# boot without the API and different on every node of a docker network; on a
# cluster of several nodes, hack/kind/cluster.sh then routes each node's /24
# to it from the others (what kindnetd does on kind's own image).
set -eu
addr=$(ip -4 -o addr show dev eth0 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}')
last=${addr##*.}
case $last in
  '' | *[!0-9]*) last=0 ;;
esac
subnet=${ZNS_POD_SUBNET:-10.244.${last}.0/24}
mtu=$(cat /sys/class/net/eth0/mtu 2>/dev/null || echo 1500)
dir=/etc/cni/net.d
mkdir -p "$dir"
cat >"$dir/.10-zns-ptp.conflist.tmp" <<CONF
{
  "cniVersion": "1.0.0",
  "name": "zns-ptp",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": true,
      "mtu": ${mtu},
      "ipam": {
        "type": "host-local",
        "dataDir": "/run/cni-ipam-state",
        "ranges": [[{ "subnet": "${subnet}" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
CONF
mv "$dir/.10-zns-ptp.conflist.tmp" "$dir/10-zns-ptp.conflist"
