package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// imageDisk chooses the image disk of this boot. Importing the images takes 5 min of a TCG boot: the host imports
// them with the node's containerd and writes its root onto a disk image (hack/qemu/image-disk.sh, root only), or
// else the guest imports them and copies containerd's root onto the disk once ("fill"). Later boots of the same
// images, pause and containerd mount it copy-on-write ("use": the file is never changed by them). New images make
// a new disk, which replaces the old one.
func (n *node) imageDisk(tag, parts string) error {
	_ = os.Remove(n.path("disk"))
	if !n.cfg.ImageDisk {
		n.Logf("image disk off (ZNS_NODE_IMAGE_DISK=0): the guest imports the images")
		return nil
	}
	pauseTar, err := os.ReadFile(n.path("pause.tar"))
	if err != nil {
		return err
	}
	containerd := first(parts, "containerd-v*")
	key := imageDiskKey(tag, pauseTar, filepath.Base(containerd))
	if err := os.MkdirAll(n.imagesDir, 0o755); err != nil {
		return err
	}
	n.removeDisks("*.img.part")
	img := filepath.Join(n.imagesDir, key+".img")
	use := func() error {
		if err := os.WriteFile(filepath.Join(n.share, "image-disk"), []byte("use\n"), 0o644); err != nil {
			return err
		}
		return n.write("disk", img+",snapshot\n")
	}
	if st, err := os.Stat(img); err == nil && st.Size() > 0 {
		n.Logf("images from the image disk of an earlier boot (%s)", img)
		return use()
	}
	if n.cfg.ImageDiskOnHost {
		c := n.Cmd(nil, "hack/qemu/image-disk.sh", img+".part", containerd, n.path("pause.tar"), n.path("images.tar"))
		if n.Heartbeat("image disk", "the images imported on the host", "", func() int { return n.Run(c) }) == 0 {
			n.removeDisks("*.img")
			if err := os.Rename(img+".part", img); err != nil {
				return err
			}
			n.Logf("images imported on the host into %s", img)
			return use()
		}
		_ = os.Remove(img + ".part")
		n.Logf("the image disk was not made on the host (above): the guest imports the images (about 5 min under TCG)")
	}
	f, err := os.Create(img + ".part")
	if err != nil {
		return err
	}
	if err := errors.Join(f.Truncate(16<<30), f.Close()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.share, "image-disk"), []byte("fill\n"), 0o644); err != nil {
		return err
	}
	n.Logf("no image disk for these images yet: the guest imports them and keeps them on %s", img)
	return n.write("disk", img+".part\n")
}

// removeDisks removes the image disks whose names match pattern.
func (n *node) removeDisks(pattern string) {
	old, _ := filepath.Glob(filepath.Join(n.imagesDir, pattern))
	for _, f := range old {
		_ = os.Remove(f)
	}
}

// keepImageDisk: after the guest wrote a new image disk, it replaces the old one for later boots; a disk the
// guest could not use is dropped.
func (n *node) keepImageDisk() {
	disk := n.read("disk")
	if disk == "" {
		return
	}
	log, _ := os.ReadFile(n.path("guest.log"))
	file := strings.TrimSuffix(disk, ",snapshot")
	switch judgeImageDisk(disk, string(log)) {
	case diskKept:
	case diskPromote:
		n.removeDisks("*.img")
		kept := strings.TrimSuffix(disk, ".part")
		if err := os.Rename(disk, kept); err != nil {
			n.Logf("cannot keep the image disk: %v", err)
			return
		}
		size := ""
		if st, err := os.Stat(kept); err == nil {
			size = fmt.Sprintf(" (%d MiB)", st.Size()>>20)
		}
		n.Logf("the images are kept on %s%s: the next boots skip the import", kept, size)
	case diskDrop:
		_ = os.Remove(file)
		if strings.HasSuffix(disk, ",snapshot") {
			n.Logf("the image disk %s was unusable (%s): removed", file, n.path("guest.log"))
		} else {
			n.Logf("the guest did not write the image disk (%s says why): the next boot imports the images again", n.path("guest.log"))
		}
	}
}

// up boots the node, unless it is up already, and prints its kubeconfig's path.
func (n *node) up() error {
	if err := n.refuseForeign("take over"); err != nil {
		return err
	}
	if n.running() && n.ready() {
		n.Logf("already up (%s); hack/qemu/zoned-node.sh down stops it", n.read("accel"))
		fmt.Fprintln(n.result, n.kubeconfig)
		return nil
	}
	if err := n.down(); err != nil {
		return err
	}
	t0 := n.Now()
	p, err := n.prepare()
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	token, err := os.ReadFile(filepath.Join(n.share, "token"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(n.kubeconfig, []byte(kubeconfigYAML(port, string(token))), 0o600); err != nil {
		return err
	}
	spec := bootSpec{Accel: n.accel(), GuestDir: p.guestDir, Share: n.share, Monitor: n.path("monitor.sock"),
		MemMiB: n.cfg.MemMiB, Port: port, Disk: n.read("disk"), Assets: p.assets, Parts: p.parts}
	if n.cfg.HostControlPlane {
		if err := n.hostControlPlane(&spec, string(token)); err != nil {
			return err
		}
	}
	if err := n.boot(spec); err != nil {
		return err
	}
	if spec.Accel == "kvm" && !n.waitStarted(120*time.Second) {
		n.Logf("under KVM the guest did not start its command within 120 s (a nested KVM guest can hang): TCG instead")
		if err := n.down(); err != nil {
			return err
		}
		spec.Accel = "tcg"
		if err := n.boot(spec); err != nil {
			return err
		}
	}
	if err := n.waitReady(t0); err != nil {
		return err
	}
	n.keepImageDisk()
	fmt.Fprintln(n.result, n.kubeconfig)
	return nil
}

// boot starts the guest in the background, in a process group of its own (setsid) whose leader's PID the pid
// file keeps: down stops QEMU and run.sh together by it.
func (n *node) boot(b bootSpec) error {
	if err := n.write("accel", b.Accel+"\n"); err != nil {
		return err
	}
	release, _ := os.ReadFile(filepath.Join(b.GuestDir, "kernel-release"))
	n.Logf("booting the node (QEMU, %s, 2 CPUs, %d MiB, kernel %s; API server forwarded to 127.0.0.1:%d; guest output: %s)",
		b.Accel, b.MemMiB, stagerun.TrimNewlines(string(release)), b.Port, n.path("guest.log"))
	// a new log: waitReady would otherwise find the last boot's "ready"
	log, err := os.Create(n.path("guest.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	c := n.Cmd([]string{"ZNS_QEMU_VERBOSE=1"}, "hack/qemu/run.sh", bootArgs(b)...)
	if b.HostControlPlane {
		// serve leads the group: the control plane and QEMU stop with it
		spec := serveSpec{ControlPlane: n.cp, Kubeconfig: n.kubeconfig, Token: n.cp.token, Boot: c.Args, Env: c.Env}
		spec.Boot[0] = c.Path
		js, err := json.Marshal(spec)
		if err != nil {
			return err
		}
		if err := os.WriteFile(n.cp.path("serve.json"), js, 0o600); err != nil {
			return err
		}
		c = n.Cmd(nil, b.Self, "serve", n.cp.path("serve.json"))
	}
	c.Stdin, c.Stdout, c.Stderr = nil, log, log
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return fmt.Errorf("cannot start hack/qemu/run.sh: %v", err)
	}
	n.guest, n.guestDone = c, make(chan struct{})
	go func(done chan struct{}) { _ = c.Wait(); close(done) }(n.guestDone)
	return n.write("pid", fmt.Sprintf("%d\n", c.Process.Pid))
}

// guestLog is the guest's output so far.
func (n *node) guestLog() string {
	b, _ := os.ReadFile(n.path("guest.log"))
	return string(b)
}

// waitStarted: whether the guest's script said it started within d.
func (n *node) waitStarted(d time.Duration) bool {
	for t := n.Now(); n.Now().Sub(t) < d; n.sleep(2 * time.Second) {
		if guestSaid(n.guestLog(), "start") {
			return true
		}
		if !n.running() {
			return false
		}
	}
	return false
}

// waitReady waits until the guest says the node is ready, saying where it is every ProgressEvery.
func (n *node) waitReady(t0 time.Time) error {
	last := n.Now()
	for {
		log := n.guestLog()
		if guestSaid(log, "ready") {
			break
		}
		elapsed := int(n.Now().Sub(t0) / time.Second)
		if !n.running() {
			n.showLogEnd()
			return fmt.Errorf("the guest stopped before the node was ready (above, the end of %s); hack/qemu/zoned-node.sh up tries again", n.path("guest.log"))
		}
		if n.Now().Sub(t0) > n.cfg.BootTimeout {
			n.showLogEnd()
			_ = n.down()
			return fmt.Errorf("the node was not ready within %ds (ZNS_NODE_BOOT_TIMEOUT); above, the end of %s", int(n.cfg.BootTimeout/time.Second), n.path("guest.log"))
		}
		if n.Now().Sub(last) >= n.ProgressEvery {
			last = n.Now()
			n.Logf("still booting, %s elapsed: %s", stagerun.Mmss(elapsed), stagerun.OrDefault(lastGuestLine(log), "the guest kernel is starting"))
		}
		n.sleep(2 * time.Second)
	}
	if err := n.write("ready", ""); err != nil {
		return err
	}
	if n.cfg.Owner != "" {
		if err := n.write("owner", n.cfg.Owner+" "+n.cfg.OwnerWhat+"\n"); err != nil {
			return err
		}
	}
	n.Logf("node Ready with the images after %s (%s)", stagerun.Mmss(int(n.Now().Sub(t0)/time.Second)), firstGuestLine(n.guestLog(), "ready"))
	return nil
}

// showLogEnd puts the guest log's last 40 lines on stderr.
func (n *node) showLogEnd() {
	end := stagerun.TailLines(n.path("guest.log"), 40)
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(end, "\n"), "\n") {
		b.WriteString("  | " + l + "\n")
	}
	io.WriteString(n.Out.Stderr(), b.String())
}
