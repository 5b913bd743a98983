package main

import (
	"reflect"
	"strings"
	"testing"
)

func namespaces(t *testing.T, opts ...string) []Namespace {
	t.Helper()
	var out []Namespace
	for i := 0; i < len(opts); i += 2 {
		ns, err := parseNamespace(opts[i], opts[i+1], out)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ns)
	}
	return out
}

// The zoned node's drives: a ZNS controller with two namespaces (64 and 16 MiB zones), a conventional one with
// the OCP log, and an FDP one; the names and serials are what the guest waits for.
func TestNVMeArgsNumberControllersInOptionOrder(t *testing.T) {
	ns := namespaces(t, "--zns", "default", "--zns", "controller=previous,zone_size=16M,zone_capacity=16M,size=1G",
		"--nvme", "default", "--nvme", "fdp=on,lbs=512,ocp=off")
	args, lay := nvmeArgs(ns, []string{"i0", "i1", "i2", "i3"})
	want := []string{
		"-device", "nvme,serial=zns0,id=nvme0",
		"-drive", "file=i0,id=zns0,format=raw,if=none",
		"-device", "nvme-ns,drive=zns0,bus=nvme0,nsid=1,logical_block_size=4096,physical_block_size=4096,zoned=true,zoned.zone_size=64M,zoned.zone_capacity=60M,zoned.max_open=14,zoned.max_active=14",
		"-drive", "file=i1,id=zns0ns2,format=raw,if=none",
		"-device", "nvme-ns,drive=zns0ns2,bus=nvme0,nsid=2,logical_block_size=4096,physical_block_size=4096,zoned=true,zoned.zone_size=16M,zoned.zone_capacity=16M,zoned.max_open=14,zoned.max_active=14",
		"-device", "nvme,id=nvme1,ocp=on,serial=conv1",
		"-drive", "file=i2,id=nvmeimg1,format=raw,if=none",
		"-device", "nvme-ns,drive=nvmeimg1,bus=nvme1,nsid=1,logical_block_size=4096,physical_block_size=4096",
		"-device", "nvme-subsys,id=subsys2,nqn=zns-fdp2,fdp=on,fdp.runs=96M,fdp.nrg=1,fdp.nruh=8",
		"-device", "nvme,id=nvme2,serial=fdp2,subsys=subsys2",
		"-drive", "file=i3,id=nvmeimg2,format=raw,if=none",
		"-device", "nvme-ns,drive=nvmeimg2,bus=nvme2,nsid=1,logical_block_size=512,physical_block_size=512,fdp.ruhs=0-7",
	}
	if !reflect.DeepEqual(args, want) {
		t.Errorf("argv:\n%s\nwant:\n%s", strings.Join(args, "\n"), strings.Join(want, "\n"))
	}
	if w := (nvmeLayout{Names: []string{"nvme0n1", "nvme0n2", "nvme1n1", "nvme2n1"}, Serials: []string{"zns0", "conv1", "fdp2"}, Controllers: 3}); !reflect.DeepEqual(lay, w) {
		t.Errorf("layout %+v, want %+v", lay, w)
	}
	if ns[1].Size != "1G" || ns[0].Size != "2560M" || ns[2].Size != "1G" {
		t.Errorf("sizes %s %s %s", ns[0].Size, ns[1].Size, ns[2].Size)
	}
}

func TestQEMUArgsForEveryOption(t *testing.T) {
	c, err := parseArgs([]string{"--share", "/s", "--userland", "--smp", "2", "--mem", "4096", "--accel", "kvm", "--append", "x=1",
		"--hostfwd", "16443:6443", "--hostfwd", "2222:22", "--guestfwd", "10.0.2.100:16443=/b/zonednode pipe 127.0.0.1:16443,x",
		"--nvme", "size=512M", "--disk", "d.img,snapshot", "--", "true"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := qemuArgs(c, Boot{Kernel: "/g/vmlinux", Initramfs: "/g/initramfs.cpio", Sysroot: "/g/sysroot", Ctl: "/t/ctl",
		DataDirs: []string{"/q/share/qemu"}, CPU: "Westmere-v2", Images: []string{"/t/nvme0.img"}})
	want := "qemu-system-x86_64 -accel kvm -M q35 -cpu Westmere-v2 -smp 2 -m 4096 -nographic -nodefaults -serial stdio -no-reboot " +
		"-kernel /g/vmlinux -initrd /g/initramfs.cpio " +
		"-append console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init mitigations=off cryptomgr.notests no_timer_check x=1 " +
		"-virtfs local,path=/g/sysroot,mount_tag=znsroot,security_model=none,readonly=on,multidevs=remap " +
		"-virtfs local,path=/t/ctl,mount_tag=znsctl,security_model=none,multidevs=remap " +
		"-L /q/share/qemu " +
		"-virtfs local,path=/s,mount_tag=host0,security_model=none,multidevs=remap " +
		"-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap " +
		"-netdev user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:16443-:6443,hostfwd=tcp:127.0.0.1:2222-:22," +
		"guestfwd=tcp:10.0.2.100:16443-cmd:/b/zonednode pipe 127.0.0.1:16443,,x " +
		"-device virtio-net-pci,netdev=net0,romfile= " +
		"-device nvme,id=nvme0,ocp=on,serial=conv0 -drive file=/t/nvme0.img,id=nvmeimg0,format=raw,if=none " +
		"-device nvme-ns,drive=nvmeimg0,bus=nvme0,nsid=1,logical_block_size=4096,physical_block_size=4096 " +
		"-drive file=d.img,id=disk0,format=raw,if=none,snapshot=on -device virtio-blk-pci,drive=disk0,romfile="
	if strings.Join(got, " ") != want {
		t.Errorf("argv:\n%s\nwant:\n%s", strings.Join(got, " "), want)
	}
	// TCG's code cache and the monitor
	tcg, err := parseArgs([]string{"--monitor", "/t/m.sock", "--", "true"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = qemuArgs(tcg, Boot{Kernel: "k", Initramfs: "i", Sysroot: "s", Ctl: "c", CPU: "max", TBSizeMiB: 2048})
	for _, want := range []string{"-accel tcg,tb-size=2048 -M q35", "-no-reboot -kernel k -initrd i -append console=ttyS0", "-monitor unix:/t/m.sock,server=on,wait=off -virtfs"} {
		if !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("argv %v lacks %q", got, want)
		}
	}
	// without --share, --userland, --hostfwd, --monitor, a code cache or devices: none of their arguments
	bare, _ := qemuArgs(defaults(), Boot{Kernel: "k", Initramfs: "i", Sysroot: "s", Ctl: "c", CPU: "max"})
	for _, absent := range []string{"host0", "hostroot", "-netdev", "-L", "nvme", "virtio-blk", "-monitor", "tb-size"} {
		if strings.Contains(strings.Join(bare, " "), absent) {
			t.Errorf("%s in a bare command line: %v", absent, bare)
		}
	}
}

func TestSizeBytes(t *testing.T) {
	for s, want := range map[string]int64{"512": 512, "4K": 4096, "2560M": 2560 << 20, "1G": 1 << 30} {
		if got, err := sizeBytes(s); err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "1.5G", "G", "-1M", "1T"} {
		if _, err := sizeBytes(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
