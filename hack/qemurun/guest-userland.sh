# shellcheck shell=bash disable=SC2154,SC2015,SC2016 # variables set before this part (hack/qemurun/guest.go); A && B || fail: either failing fails; the single-quoted $ are the chroot's bash's
# The guest's userland, after the --nullblk set-up and the cd to workdir: in_userland runs the command (hack/qemurun
# writes it into the guest's script).
if ((userland)); then
  # The host's programs on the guest's kernel: the host's root read-only, the
  # guest's own kernel file systems and scratch space over it. Modules are
  # loaded here: inside, modprobe would look for them on the host.
  modprobe -a btrfs f2fs xfs ext4 || fail "cannot load the file system modules"
  modprobe_present crc32c_generic xxhash_generic || fail "cannot load crc32c_generic and xxhash_generic"
  # zloop, where the kernel has it as a module (zloop-zoned.sh cannot modprobe it from inside; a ZLOOP_MODULE it
  # loads with insmod)
  modprobe_present zloop || fail "cannot load zloop"
  # veth, overlay, loop: pod interfaces, root file systems and block-volume pins of a kubelet in the guest
  # (docs/zoned-node.md)
  modprobe -a veth overlay loop || fail "cannot load veth, overlay and loop"
  # servers and clients on 127.0.0.1: the guest's loopback starts down
  ip link set lo up || fail "cannot bring up the loopback interface"
  u=/userland
  mkdir -p "$u"
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro hostroot "$u" ||
    fail "cannot mount the host's root (9p tag hostroot)"
  for d in proc sys dev run tmp; do mount -o rbind "/$d" "$u/$d" || fail "cannot bind /$d into the userland"; done
  for d in mnt var/tmp; do mount -t tmpfs tmpfs "$u/$d" || fail "cannot mount a tmpfs at /$d in the userland"; done
  if [[ -n "$share" ]]; then mount -o bind "$share" "$u$share" || fail "cannot bind ${share} into the userland"; fi
  # The userland becomes the root of the mount namespace, as switch_root does, not a chroot below it: a
  # process that joins a mount namespace (runc exec, kubectl exec, exec probes) starts at the namespace's
  # root; below a plain chroot that is the initramfs, where a container's working directory does not exist
  # ("chdir to cwd ... no such file or directory"). This shell keeps its own root (the initramfs).
  cd "$u" && mount --move . / || fail "cannot move the userland to /"
  in_userland() { chroot . /usr/bin/env PATH="$PATH" HOME=/tmp bash -c 'cd "$1" && shift && exec "$@"' userland "$workdir" "$@"; }
else
  in_userland() { "$@"; }
fi
