package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// chooseAccel is the accelerator of a boot: what ZNS_NODE_ACCEL asks, or for auto KVM when /dev/kvm can be
// opened and is a hardware KVM. PVM (a KVM for CPUs without VMX/SVM, as in some cloud VMs) runs guest kernels
// built for it: the Debian guest kernel did not start under it in 120 s (measured), so auto does not spend them.
func chooseAccel(want string, kvmUsable, pvmOnly bool) (accel, note string) {
	switch {
	case want != "auto":
		return want, ""
	case !kvmUsable:
		return "tcg", ""
	case pvmOnly:
		return "tcg", "/dev/kvm is kvm_pvm here, which does not boot the Debian guest kernel: TCG (ZNS_NODE_ACCEL=kvm tries it anyway)"
	}
	return "kvm", ""
}

// envLine is what `zoned-node.sh env` prints: the e2e suite's and the demo's settings for the node. Under TCG a
// process takes about a second to start: the suite's waits are stretched, and each database's readiness probe
// (an exec) runs every 20 s instead of 5.
func envLine(accel, kubeconfig, tag string) string {
	scale, probe := 1, 5
	if accel != "kvm" {
		scale, probe = 4, 20
	}
	return fmt.Sprintf("export ZNS_E2E=1 ZNS_E2E_KUBECONFIG=%s ZNS_E2E_TAG=%s ZNS_E2E_ZONED_NODE=zns-guest ZNS_E2E_TIME_SCALE=%d ZNS_E2E_PROBE_PERIOD=%d\n",
		shellQuote(kubeconfig), shellQuote(tag), scale, probe)
}

// shellQuote quotes s for bash's eval, as printf %q would need it: as is when it holds only safe characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=+,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// kubeconfigYAML reaches the node's API server at the host's forwarded port, with the node's bearer token.
func kubeconfigYAML(port int, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: zns-guest, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: zns-guest-admin, user: {token: "%s"}}]
contexts: [{name: zns-guest, context: {cluster: zns-guest, user: zns-guest-admin}}]
current-context: zns-guest
`, port, token)
}

// imageDiskKey names the image disk of a set of images: their tag, the pause image and containerd's build (its
// parts directory's name, containerd-vX.Y.Z: the disk holds containerd's root, which another containerd may not
// read). It is the key hack/qemu/zoned-node.sh's bash computed, so that disks made before stay good.
func imageDiskKey(tag string, pauseTar []byte, containerdName string) string {
	pause := sha256.Sum256(pauseTar)
	sum := sha256.Sum256([]byte(fmt.Sprintf("image disk v1\n%s\n%s  -\n%s\n", tag, hex.EncodeToString(pause[:]), containerdName)))
	return hex.EncodeToString(sum[:])[:16]
}

// Devices are the node's zoned and conventional devices, as hack/qemu/run.sh options (see usage).
var devices = []string{
	"--nullblk", "--first 0 --count 1 --size 2048 --zone-size 64 --memory-backed",
	"--nullblk", "--first 1 --count 1 --size 2048 --zone-size 16 --conv-zones 16 --memory-backed",
	"--nullblk", "--first 2 --count 1 --size 2048 --conventional --memory-backed",
	"--nullblk", "--first 3 --count 2 --size 2048 --zone-size 64 --conv-zones 8 --memory-backed",
	"--zns", "default", "--zns", "controller=previous,zone_size=16M,zone_capacity=16M,size=1G", "--nvme", "default",
}

// bootSpec is one boot of the guest.
type bootSpec struct {
	Accel, GuestDir, Share, Monitor string
	MemMiB, Port                    int    // Port: the API server's on the host's loopback
	Disk                            string // an image disk (FILE or FILE,snapshot), or ""
	Assets, Parts                   string // where the guest finds the Kubernetes binaries and the node's parts
	// HostControlPlane: the API server runs on the host at Port, which the guest reaches at apiGuestIP through
	// Self's pipe; KubeletFwd is the host's port of the kubelet's forward.
	HostControlPlane bool
	KubeletFwd       int
	Self             string
}

// bootArgs is hack/qemu/run.sh's command line for a boot: the host's userland, two CPUs, the forwards between
// the API server and the guest, the devices, and node.sh as the command. QEMU's own timeout is a day: down stops
// it.
func bootArgs(b bootSpec) []string {
	args := []string{"--userland", "--accel", b.Accel, "--guest-dir", b.GuestDir, "--share", b.Share,
		"--smp", "2", "--mem", strconv.Itoa(b.MemMiB), "--timeout", strconv.Itoa(24 * 3600)}
	if b.HostControlPlane {
		args = append(args, "--hostfwd", fmt.Sprintf("%d:%d", b.KubeletFwd, kubeletPort),
			"--guestfwd", fmt.Sprintf("%s:%d=%s pipe 127.0.0.1:%d", apiGuestIP, b.Port, shellQuote(b.Self), b.Port))
	} else {
		args = append(args, "--hostfwd", fmt.Sprintf("%d:6443", b.Port))
	}
	args = append(args, "--monitor", b.Monitor)
	args = append(args, devices...)
	if b.Disk != "" {
		args = append(args, "--disk", b.Disk)
	}
	return append(args, "--", "bash", b.Share+"/node.sh", b.Assets, b.Parts, b.Share)
}

// guestLine finds the guest's own lines ("zoned-node: ..."), which may follow the firmware's output on the same
// line ("Booting from ROM..zoned-node: start").
var guestLine = regexp.MustCompile(`zoned-node: [^\r\n]*`)

// lastGuestLine is the guest script's last line in its log, "" before its first.
func lastGuestLine(log string) string {
	all := guestLine.FindAllString(log, -1)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1]
}

// guestSaid: the guest script printed a line that begins with what.
func guestSaid(log, what string) bool {
	return strings.Contains(log, "zoned-node: "+what)
}

// firstGuestLine is the guest's first line that begins with what, "" when there is none.
func firstGuestLine(log, what string) string {
	for _, l := range guestLine.FindAllString(log, -1) {
		if strings.HasPrefix(l, "zoned-node: "+what) {
			return l
		}
	}
	return ""
}

// guestVisible: whether the guest sees a host path as it is. It sees the host's root read-only but has its own
// /tmp, /run, /dev, /proc and /sys.
func guestVisible(path string) bool {
	for _, own := range []string{"/tmp/", "/run/", "/dev/", "/proc/", "/sys/"} {
		if strings.HasPrefix(path, own) {
			return false
		}
	}
	return true
}

// imageDiskVerdict is what keepImageDisk does with this boot's disk, from the guest's log.
type imageDiskVerdict int

const (
	diskKept    imageDiskVerdict = iota // nothing to do: a disk mounted copy-on-write, which was fine
	diskDrop                            // the disk was unusable, or the guest did not write the new one: remove it
	diskPromote                         // the guest wrote a new disk: it replaces the old ones
)

// judgeImageDisk: a disk of an earlier boot (",snapshot") that the guest could not use is dropped; a new one the
// guest wrote is kept for later boots, one it did not write is dropped.
func judgeImageDisk(disk, log string) imageDiskVerdict {
	if strings.HasSuffix(disk, ",snapshot") {
		if guestSaid(log, "WARNING: cannot mount the image disk") || guestSaid(log, "WARNING: the image disk lacks") {
			return diskDrop
		}
		return diskKept
	}
	if guestSaid(log, "image disk written") {
		return diskPromote
	}
	return diskDrop
}
