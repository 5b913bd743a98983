package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// Config is every knob of hack/qemu/zoned-node.sh, read once from the environment (parseConfig). Each field's
// env tag names its variable; usage, which --help prints, describes every one of them (a test checks it).
type Config struct {
	// CacheRoot: ZNS_CACHE_DIR, else $XDG_CACHE_HOME/zns-mysql, else $HOME/.cache/zns-mysql.
	CacheRoot string `env:"ZNS_CACHE_DIR"`
	// Accel: auto (KVM when /dev/kvm works and is not PVM, else TCG), kvm or tcg.
	Accel string `env:"ZNS_NODE_ACCEL"`
	// MemMiB: the guest's memory.
	MemMiB int `env:"ZNS_NODE_MEM"`
	// BootTimeout: from the start of up until the node is Ready with the images.
	BootTimeout time.Duration `env:"ZNS_NODE_BOOT_TIMEOUT"`
	// ImageDisk: keep the imported images on a disk image that later boots mount (ZNS_NODE_IMAGE_DISK=0: off).
	ImageDisk bool `env:"ZNS_NODE_IMAGE_DISK"`
	// ImageDiskOnHost: the host makes that disk (ZNS_NODE_IMAGE_DISK_ON_HOST=0: the guest imports the images).
	ImageDiskOnHost bool `env:"ZNS_NODE_IMAGE_DISK_ON_HOST"`
	// Owner, OwnerWhat: the run that uses the node (a PID, and what it is).
	Owner     string `env:"ZNS_NODE_OWNER"`
	OwnerWhat string `env:"ZNS_NODE_OWNER_WHAT"`
	// HostControlPlane: etcd, the API server, the controller-manager and the scheduler run on the host
	// (ZNS_NODE_CONTROL_PLANE=host, the default) or in the guest (guest).
	HostControlPlane bool `env:"ZNS_NODE_CONTROL_PLANE"`
	// Kernel: ZNS_QEMU_KERNEL, read by hack/qemu/build-guest.sh (current or 6.1); checked here.
	Kernel string `env:"ZNS_QEMU_KERNEL"`
	// ProgressEvery: the interval of the "still booting" lines.
	ProgressEvery time.Duration `env:"ZNS_PROGRESS_EVERY"`
}

const usage = `hack/qemu/zoned-node.sh: a Kubernetes node whose kernel has zoned block devices, for machines whose own
kernel has none (a kind node shares the host's kernel). The QEMU guest (hack/qemu/run.sh --userland: a Debian
kernel with null_blk zoned and NVMe ZNS, by default versions.mk's current one, or bookworm's 6.1 with
ZNS_QEMU_KERNEL=6.1; the host's root read-only over 9p) runs a single-node cluster from what the project
already builds: etcd and the control plane, kubelet and kube-proxy (hack/kubernetes.sh), containerd, runc, the
CNI plugins, CoreDNS and pause (the offline kind node image's parts). Unless ZNS_NODE_CONTROL_PLANE=guest, etcd,
the API server, the controller-manager and the scheduler run natively on the host instead: the guest reaches the API
server through QEMU's user network at 10.0.2.100 (a guest forward, each connection a 'zonednode pipe' on the
host), and the API server reaches the kubelet (logs, exec, port-forward) through its egress selector, a proxy in
'zonednode serve' that leads to the kubelet's host forward and nowhere else. No registry: the images are imported once
per set of images onto a disk image that later boots mount copy-on-write. docs/zoned-node.md has the why and the
figures.

  hack/qemu/zoned-node.sh up       boot it in the background and wait until the node is Ready with the images
                                   imported; stdout: the kubeconfig (API server forwarded to 127.0.0.1 only)
  hack/qemu/zoned-node.sh env      the settings for the e2e suite and the demo, as export lines
  hack/qemu/zoned-node.sh down     stop it (the devices are memory-backed: their data goes with the guest)
  hack/qemu/zoned-node.sh status
  hack/qemu/zoned-node.sh kubectl ARGS...   kubectl on the node's cluster

The node is named zns-guest. Its devices: nullb0 (zoned, 32 zones of 64 MiB), nullb1 (zoned, 16 MiB zones with
16 conventional zones: f2fs needs them), nullb2 (conventional), nullb3 and nullb4 (zoned, 64 MiB zones, the first
8 conventional: zoned XFS's metadata section), all memory-backed, 2 GiB each; nvme0n1 (emulated NVMe ZNS, 40
zones of 64 MiB, 14 open/active), nvme0n2 (a second ZNS namespace of nvme0n1's controller, 64 zones of 16 MiB:
two devices of one drive) and nvme1n1 (emulated conventional NVMe, 1 GiB, its controller with the OCP SMART
extended log: needs QEMU >= 9, versions.mk's QEMU_VERSION). Device nodes are root:disk 0660, as udev makes them;
tracefs is mounted at /sys/kernel/tracing (the drive sidecar's block trace).

There is one node per machine: while its owner is alive, up and down from another owner refuse, saying whose it
is; without ZNS_NODE_OWNER, down stops it whoever uses it. QEMU and the control plane run in a process group of
their own, whose leader ('zonednode serve', or hack/qemu/run.sh with the control plane in the guest) has its PID
in $ZNS_CACHE_DIR/zoned-node/pid: down stops that group. The control plane's logs are in
$ZNS_CACHE_DIR/zoned-node/control-plane/. Progress goes to stderr at least every 30 s; the
guest's output is in $ZNS_CACHE_DIR/zoned-node/guest.log, QEMU's monitor on the unix socket
$ZNS_CACHE_DIR/zoned-node/monitor.sock ('info jit': TCG's code cache and its flushes).

Environment:
  ZNS_NODE_ACCEL               auto (default: KVM when /dev/kvm works and is not PVM, else TCG), kvm or tcg
  ZNS_NODE_MEM                 the guest's memory in MiB (default 8192)
  ZNS_NODE_BOOT_TIMEOUT        seconds from up's start until the node is Ready with the images (default 2700)
  ZNS_NODE_IMAGE_DISK=0        import the images on every boot instead of keeping them on a disk image
                               ($ZNS_CACHE_DIR/zoned-node-images/, sparse, one at a time)
  ZNS_NODE_IMAGE_DISK_ON_HOST=0  the guest imports the images into a new disk instead of the host
                               (hack/qemu/image-disk.sh, when root)
  ZNS_NODE_CONTROL_PLANE       host (default: etcd, the API server, the controller-manager and the scheduler
                               natively on the host) or guest (all of them in the guest, under emulation)
  ZNS_NODE_OWNER               the run that uses the node: its PID (make test and make demo set it)
  ZNS_NODE_OWNER_WHAT          what that run is, for the refusal's message ("make test in DIR")
  ZNS_QEMU_KERNEL              current (default) or 6.1: the guest kernel (hack/qemu/build-guest.sh)
  ZNS_PROGRESS_EVERY           seconds between two progress lines (default 30)
  ZNS_CACHE_DIR                cache root (default $XDG_CACHE_HOME/zns-mysql, else ~/.cache/zns-mysql)
`

// parseConfig reads the knobs from getenv with their defaults and refuses a value that would only fail later,
// naming the knob.
func parseConfig(getenv func(string) string) (Config, error) {
	c := Config{
		Accel:           stagerun.OrDefault(getenv("ZNS_NODE_ACCEL"), "auto"),
		ImageDisk:       getenv("ZNS_NODE_IMAGE_DISK") != "0",
		ImageDiskOnHost: getenv("ZNS_NODE_IMAGE_DISK_ON_HOST") != "0",
		Owner:           getenv("ZNS_NODE_OWNER"),
		OwnerWhat:       getenv("ZNS_NODE_OWNER_WHAT"),
		Kernel:          getenv("ZNS_QEMU_KERNEL"),
	}
	switch cp := getenv("ZNS_NODE_CONTROL_PLANE"); cp {
	case "", "host":
		c.HostControlPlane = true
	case "guest":
	default:
		return c, fmt.Errorf("ZNS_NODE_CONTROL_PLANE=%s: give host or guest", cp)
	}
	var err error
	if c.CacheRoot, err = stagerun.CacheRoot(getenv); err != nil {
		return c, err
	}
	switch c.Accel {
	case "auto", "kvm", "tcg":
	default:
		return c, fmt.Errorf("ZNS_NODE_ACCEL=%s: give auto, kvm or tcg", c.Accel)
	}
	switch c.Kernel {
	case "", "current", "6.1":
	default:
		return c, fmt.Errorf("ZNS_QEMU_KERNEL=%s: give current or 6.1", c.Kernel)
	}
	if c.MemMiB, err = positive(getenv, "ZNS_NODE_MEM", 8192, "the guest's memory in MiB (8192)"); err != nil {
		return c, err
	}
	secs, err := positive(getenv, "ZNS_NODE_BOOT_TIMEOUT", 2700, "seconds until the node is Ready (2700)")
	if err != nil {
		return c, err
	}
	c.BootTimeout = time.Duration(secs) * time.Second
	if c.Owner != "" {
		if _, err := strconv.Atoi(c.Owner); err != nil {
			return c, fmt.Errorf("ZNS_NODE_OWNER=%s: give the PID of the run that uses the node", c.Owner)
		}
	}
	if c.ProgressEvery, err = stagerun.ProgressEvery(getenv); err != nil {
		return c, err
	}
	return c, nil
}

// positive is the whole number a knob gives, def when it is unset.
func positive(getenv func(string) string, name string, def int, what string) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%s: give %s", name, v, what)
	}
	return n, nil
}
