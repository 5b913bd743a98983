#!/bin/sh
# /kind/bin/zns-cni-config.sh (run by zns-cni-config.service before containerd):
# write the node's CNI config. The offline node image has no kindnetd, so pods
# get a ptp veth and an address from host-local, as kindnetd would configure on
# a single node. The MTU follows the node's eth0 (the docker network's MTU).
# The subnet must be the node's podCIDR: the first /24 of kind's default
# podSubnet 10.244.0.0/16, which hack/kind/cluster.sh sets explicitly.
set -eu
subnet=${ZNS_POD_SUBNET:-10.244.0.0/24}
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
