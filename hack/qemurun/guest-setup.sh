# shellcheck shell=bash disable=SC2154,SC2015 # variables set before this part (hack/qemurun/guest.go); A && B || fail: either failing fails
# The guest's set-up, before the command (hack/qemurun writes it into the guest's script after the variables
# share, n_nvme, n_disks, workdir, userland, network, nvme_names, nvme_serials and the function fail).
# modprobe_present MODULE...: load those of the modules this kernel has (the CRC helpers that 6.1 looks up
# by name are a built-in library from 6.14 on, and their modules are gone)
modprobe_present() {
  local m have=()
  for m; do grep -q "/${m}\.ko" "/lib/modules/$(uname -r)/modules.dep" && have+=("$m"); done
  ((${#have[@]} == 0)) || modprobe -a "${have[@]}"
}
if [[ -n "$share" ]]; then
  mkdir -p "$share" || fail "cannot create ${share}"
  # cache=loose: executables run from the share start 10-50x faster than with
  # cache=none; the host must not change the share while the guest runs, and
  # the guest's writes reach the host at the sync below
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose host0 "$share" || fail "cannot mount ${share} (9p tag host0)"
  [[ "$share" == /host ]] || ln -s "$share" /host
fi
if ((n_nvme > 0)); then
  # nvme-core finds its CRC helpers by algorithm name, not through modules.dep
  modprobe_present crc64_rocksoft_generic crct10dif_generic || fail "cannot load the CRC helpers of nvme"
  # QEMU 10 (not 7.2) sets CMIC bit 1 (more than one controller may reach the subsystem), for which a kernel with
  # NVMe multipath makes nvme<N>n1 a bio-based head device: no I/O scheduler (ZenFS needs mq-deadline),
  # no zone open/active limits and, on 6.1, no I/O statistics; the real disk is the hidden path device
  # nvme<N>c<N>n1. Without multipath the namespace is a plain disk, as a single-ported drive's is.
  modprobe nvme_core multipath=N || fail "cannot load nvme_core with multipath=N"
  # Each controller in its own subsystem: the kernel names a namespace nvme<N>n<I> with N the controller's
  # instance, given as the driver probes them. nvme probes asynchronously, so with autoprobe the instances can
  # come out of order (seen on 7.3 with two controllers: the conventional namespace became nvme0n1). Binding
  # one controller at a time, in PCI order (QEMU's, the order of the options), makes N that order.
  # I is the namespace's instance in its subsystem, given in the order the namespaces are found: 6.1 scans them
  # one after the other (I is the NSID), 7.3 all at once, so that a controller's NSID 2 can become nvme0n1 (7 of
  # 20 binds under TCG). A controller whose nvme<N>n<I> is not NSID I is unbound and bound again.
  echo 0 >/sys/bus/pci/drivers_autoprobe || fail "cannot turn off PCI autoprobe"
  modprobe nvme || fail "cannot load nvme"
  c=0
  for d in /sys/bus/pci/devices/*; do
    read -r class <"$d/class" && [[ "$class" == 0x010802 ]] || continue
    names=()
    for n in $nvme_names; do [[ "$n" == "nvme${c}n"* ]] && names+=("$n"); done
    for ((try = 1; ; try++)); do
      echo "${d##*/}" >/sys/bus/pci/drivers/nvme/bind || fail "cannot bind the NVMe controller ${d##*/} to nvme"
      in_order=1
      for n in "${names[@]}"; do
        for ((w = 0; w < 200; w++)); do [[ -e /sys/block/$n && -e /dev/$n ]] && break; sleep 0.05; done
        [[ -e /dev/$n ]] || fail "$n did not appear"
      done
      for n in "${names[@]}"; do
        read -r nsid <"/sys/block/$n/nsid" || fail "$n has no nsid in sysfs"
        [[ "$nsid" == "${n##*n}" ]] || in_order=0
      done
      ((in_order)) && break
      ((try < 20)) || fail "the namespaces of the NVMe controller nvme$c came up out of NSID order in 20 binds"
      echo "nvme$c: its namespaces came up out of NSID order: binding it again" >>"$ctl/setup.log"
      echo "${d##*/}" >/sys/bus/pci/drivers/nvme/unbind || fail "cannot unbind the NVMe controller ${d##*/}"
    done
    c=$((c + 1))
  done
  echo 1 >/sys/bus/pci/drivers_autoprobe || fail "cannot turn PCI autoprobe back on"
  # the serial is read with the controller's identify data, which is there once its namespaces are
  c=0
  for want in $nvme_serials; do
    read -r got <"/sys/class/nvme/nvme$c/serial" || got=missing
    [[ "$got" == "$want" ]] || fail "the NVMe controller nvme$c has serial '${got}', not ${want}: the namespaces are not in the order of the options"
    c=$((c + 1))
  done
fi
if ((n_disks > 0)); then
  modprobe virtio_blk || fail "cannot load virtio_blk"
  letters=abcdefghijklmnopqrstuvwxyz
  for ((i = 0; i < n_disks; i++)); do
    d=/dev/vd${letters:i:1}
    for ((w = 0; w < 200; w++)); do [[ -e $d ]] && break; sleep 0.05; done
    [[ -e $d ]] || fail "${d} (--disk) did not appear"
  done
fi
if ((network)); then
  # QEMU's user network: the guest is 10.0.2.15, the host side 10.0.2.2
  modprobe virtio_net || fail "cannot load virtio_net"
  # netfilter, for a kube-proxy in the guest (iptables-nft): inside the userland modprobe finds no modules
  modprobe -a nf_tables nft_compat nft_chain_nat nft_nat nft_masq nft_ct nft_reject_ipv4 nft_numgen nft_limit \
    nf_conntrack nf_nat xt_conntrack xt_comment xt_mark xt_MASQUERADE xt_addrtype xt_statistic xt_nat \
    xt_multiport xt_tcpudp ipt_REJECT || fail "cannot load the netfilter modules"
  for ((w = 0; w < 200; w++)); do [[ -e /sys/class/net/eth0 ]] && break; sleep 0.05; done
  ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2 ||
    fail "cannot configure eth0"
fi
# bash reads a script from the uncached control mount a few bytes at a
# time: a copy on tmpfs runs twice as fast
mkdir -p /run/bin && cp "$ctl"/bin/* /run/bin/ || fail "cannot copy the run's scripts to /run/bin"
export PATH="/run/bin:$PATH" ZNS_QEMU_GUEST=1 HOME=/root TMPDIR=/tmp
