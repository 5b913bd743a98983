#!/bin/bash
# In the guest, after node.sh: the images, the operator (the host's build, as a process), and a ZNSDatabase on the
# zoned null_blk nullb0 with btrfs, until it is Available. Arguments: as node.sh, then the repository.
A=$1; P=$2; S=$3; R=$4; OUT=$S/progress.log
exec > >(tee -a $OUT) 2>&1
D=/mnt/k; K="$A/kubectl --kubeconfig $D/kc.yaml"
ts() { date +%s.%N; }
el() { echo "$(echo "$(ts) - $1" | bc)"; }
t=$(ts); $P/containerd-v2.0.14/ctr -n k8s.io images import $S/images.tar >/dev/null && echo "MEASURE images import (583 MB: mariadb, bench) $(el $t) s"
$K get --raw /api/v1/nodes/zns-guest/proxy/stats/summary >/dev/null 2>&1
# What udev does on a real node (the guest has none): block devices root:disk 0660. Without it the device is
# root-only and the format Job, as uid 999 with the disk group, is refused ("permission denied opening").
chgrp disk /dev/nullb0 && chmod 0660 /dev/nullb0
ls -la /dev/nullb0 && cat /sys/block/nullb0/queue/{zoned,nr_zones,max_active_zones,scheduler}
$K apply --server-side -f $R/config/crd/bases >/dev/null && echo "CRDs applied"
KUBECONFIG=$D/kc.yaml $S/manager --metrics-bind-address=0 --health-probe-bind-address=:18081 \
  --mariadb-image=zns-mysql/mariadb-myrocks:guest --bench-image=zns-mysql/bench:guest \
  --preflight-retry=10s --blocked-retry=5s >$D/operator.log 2>&1 &
$K create namespace zoned >/dev/null
t=$(ts)
cat <<DB | $K apply -f - >/dev/null
apiVersion: zns-mysql.dev/v1alpha1
kind: ZNSDatabase
metadata: {name: inno, namespace: zoned}
spec:
  flavor: mariadb
  engine: innodb
  storage: {zonedDevice: {nodeName: zns-guest, deviceName: nullb0, filesystem: btrfs}}
  resources: {limits: {memory: 1Gi}}
DB
n=0; until [[ $($K -n zoned get znsdatabase inno -o jsonpath='{.status.conditions[?(@.type=="Available")].status}') == True ]]; do
  sleep 3; n=$((n+1)); ((n % 5 == 0)) && echo "waiting for Available $(el $t) s: $($K -n zoned get znsdatabase inno -o jsonpath='{range .status.conditions[*]}{.type}={.status}/{.reason} {end}') | $($K -n zoned get pods --no-headers 2>&1 | tr '\n' ';') | $($K -n zoned get events --field-selector type=Warning -o custom-columns=O:.involvedObject.name,R:.reason,M:.message --no-headers 2>&1 | tail -2 | cut -c1-300 | tr '\n' ';')"
  ((n > 300)) && { $K -n zoned describe znsdatabase inno | tail -30; $K -n zoned get events | tail -20; tail -20 $D/operator.log; exit 1; }
done
echo "MEASURE zoned btrfs InnoDB database Available $(el $t) s"
$K -n zoned get znsdatabase inno -o wide; $K -n zoned get pods,pvc; $K get pv
grep nullb0 /proc/mounts
$K -n zoned get znsdatabase inno -o jsonpath='{.status.filesystem}'; echo
