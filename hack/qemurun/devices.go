package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Namespace is a --zns or --nvme: one emulated NVMe namespace.
type Namespace struct {
	Zoned bool
	// Spec is the option's value as given, for errors.
	Spec string
	// Size is its image's size as QEMU and truncate take it (2560M, 1G).
	Size string
	LBS  string
	// zoned
	ZoneSize, ZoneCapacity, MaxOpen, MaxActive string
	// OnPrevious puts the namespace on the controller of the --zns before it.
	OnPrevious bool
	// conventional
	OCP, FDP bool
}

var (
	znsKeys  = []string{"zone_size", "zone_capacity", "max_open", "max_active", "size", "lbs", "controller"}
	nvmeKeys = []string{"size", "lbs", "ocp", "fdp"}
	sizeRE   = regexp.MustCompile(`^[1-9][0-9]*[KMG]?$`)
)

// parseNamespace reads a --zns or --nvme SPEC: `default` or comma-separated key=value over the defaults, the
// last of a key winning. before are the namespaces of the options before it (controller=previous needs a --zns).
func parseNamespace(opt, spec string, before []Namespace) (Namespace, error) {
	if spec == "" {
		return Namespace{}, fmt.Errorf("%s needs a spec (or default)", opt)
	}
	zoned := opt == "--zns"
	keys := nvmeKeys
	ns := Namespace{Spec: spec, Zoned: zoned, Size: "1G", LBS: "4096", OCP: true}
	if zoned {
		keys = znsKeys
		ns = Namespace{Spec: spec, Zoned: true, Size: "2560M", LBS: "4096", ZoneSize: "64M", ZoneCapacity: "60M",
			MaxOpen: "14", MaxActive: "14"}
	}
	kv := map[string]string{}
	for _, item := range strings.Split(spec, ",") {
		if item == "default" || item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return ns, fmt.Errorf("%s '%s': '%s' is not key=value", opt, spec, item)
		}
		if !slices.Contains(keys, k) {
			return ns, fmt.Errorf("%s '%s': unknown key '%s' (%s)", opt, spec, k, strings.Join(keys, " "))
		}
		kv[k] = v
	}
	set := func(to *string, key string) {
		if v, ok := kv[key]; ok {
			*to = v
		}
	}
	set(&ns.Size, "size")
	set(&ns.LBS, "lbs")
	if zoned {
		set(&ns.ZoneSize, "zone_size")
		set(&ns.ZoneCapacity, "zone_capacity")
		set(&ns.MaxOpen, "max_open")
		set(&ns.MaxActive, "max_active")
		switch kv["controller"] {
		case "", "own":
		case "previous":
			if !slices.ContainsFunc(before, func(n Namespace) bool { return n.Zoned && !n.OnPrevious }) {
				return ns, fmt.Errorf("--zns '%s': controller=previous needs a --zns on a controller of its own before it", spec)
			}
			ns.OnPrevious = true
		default:
			return ns, fmt.Errorf("--zns '%s': controller takes own or previous", spec)
		}
		return ns, nil
	}
	if !sizeRE.MatchString(ns.Size) {
		return ns, fmt.Errorf("--nvme '%s': size takes a whole number of bytes with an optional K, M or G (e.g. 512M)", spec)
	}
	if ns.LBS != "512" && ns.LBS != "4096" {
		return ns, fmt.Errorf("--nvme '%s': lbs takes 512 or 4096", spec)
	}
	for _, f := range []struct {
		key string
		to  *bool
	}{{"ocp", &ns.OCP}, {"fdp", &ns.FDP}} {
		switch kv[f.key] {
		case "":
		case "on":
			*f.to = true
		case "off":
			*f.to = false
		default:
			return ns, fmt.Errorf("--nvme '%s': %s takes on or off", spec, f.key)
		}
	}
	return ns, nil
}

// sizeBytes is a size of the form sizeRE takes (and truncate: K, M, G are powers of 1024).
func sizeBytes(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult = 1 << 10
	case strings.HasSuffix(s, "M"):
		mult = 1 << 20
	case strings.HasSuffix(s, "G"):
		mult = 1 << 30
	}
	n, err := strconv.ParseInt(strings.TrimRight(s, "KMG"), 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q: a whole number of bytes with an optional K, M or G", s)
	}
	return n * mult, nil
}

// nvmeLayout is what the guest waits for: its NVMe block devices (nvme<C>n<I>) and each controller's serial, in
// the order of the options, which is the order QEMU puts the controllers on the PCI bus.
type nvmeLayout struct {
	Names, Serials []string
	Controllers    int
}

// nvmeArgs is QEMU's arguments for the namespaces, whose images are images[i] for namespaces[i].
func nvmeArgs(namespaces []Namespace, images []string) ([]string, nvmeLayout) {
	var args []string
	var lay nvmeLayout
	ctrl, znsCtrl, znsNSID := 0, -1, 0
	for i, ns := range namespaces {
		img, lbs := images[i], ns.LBS
		blocks := fmt.Sprintf("logical_block_size=%s,physical_block_size=%s", lbs, lbs)
		if ns.Zoned {
			zoned := fmt.Sprintf("zoned=true,zoned.zone_size=%s,zoned.zone_capacity=%s,zoned.max_open=%s,zoned.max_active=%s",
				ns.ZoneSize, ns.ZoneCapacity, ns.MaxOpen, ns.MaxActive)
			if ns.OnPrevious {
				znsNSID++
				id := fmt.Sprintf("zns%dns%d", znsCtrl, znsNSID)
				args = append(args, "-drive", fmt.Sprintf("file=%s,id=%s,format=raw,if=none", img, id),
					"-device", fmt.Sprintf("nvme-ns,drive=%s,bus=nvme%d,nsid=%d,%s,%s", id, znsCtrl, znsNSID, blocks, zoned))
				lay.Names = append(lay.Names, fmt.Sprintf("nvme%dn%d", znsCtrl, znsNSID))
				continue
			}
			znsCtrl, znsNSID = ctrl, 1
			lay.Serials = append(lay.Serials, fmt.Sprintf("zns%d", ctrl))
			args = append(args, "-device", fmt.Sprintf("nvme,serial=zns%d,id=nvme%d", ctrl, ctrl),
				"-drive", fmt.Sprintf("file=%s,id=zns%d,format=raw,if=none", img, ctrl),
				"-device", fmt.Sprintf("nvme-ns,drive=zns%d,bus=nvme%d,nsid=1,%s,%s", ctrl, ctrl, blocks, zoned))
		} else {
			dev := fmt.Sprintf("nvme,id=nvme%d", ctrl)
			// named only when on: QEMU < 9 has no such property
			if ns.OCP {
				dev += ",ocp=on"
			}
			nsDev := fmt.Sprintf("nvme-ns,drive=nvmeimg%d,bus=nvme%d,nsid=1,%s", ctrl, ctrl, blocks)
			if ns.FDP {
				// FDP lives in an NVM subsystem's endurance group (QEMU has one, id 1)
				args = append(args, "-device", fmt.Sprintf("nvme-subsys,id=subsys%d,nqn=zns-fdp%d,fdp=on,fdp.runs=96M,fdp.nrg=1,fdp.nruh=8", ctrl, ctrl))
				dev += fmt.Sprintf(",serial=fdp%d,subsys=subsys%d", ctrl, ctrl)
				nsDev += ",fdp.ruhs=0-7"
				lay.Serials = append(lay.Serials, fmt.Sprintf("fdp%d", ctrl))
			} else {
				dev += fmt.Sprintf(",serial=conv%d", ctrl)
				lay.Serials = append(lay.Serials, fmt.Sprintf("conv%d", ctrl))
			}
			args = append(args, "-device", dev, "-drive", fmt.Sprintf("file=%s,id=nvmeimg%d,format=raw,if=none", img, ctrl),
				"-device", nsDev)
		}
		lay.Names = append(lay.Names, fmt.Sprintf("nvme%dn1", ctrl))
		ctrl++
	}
	lay.Controllers = ctrl
	return args, lay
}

// diskArgs is QEMU's arguments for the --disk files: virtio disks vda, vdb, ... in order.
func diskArgs(disks []Disk) []string {
	var args []string
	for i, d := range disks {
		opts := ""
		if d.Snapshot {
			opts = ",snapshot=on"
		}
		args = append(args, "-drive", fmt.Sprintf("file=%s,id=disk%d,format=raw,if=none%s", d.File, i, opts),
			"-device", fmt.Sprintf("virtio-blk-pci,drive=disk%d,romfile=", i))
	}
	return args
}

// netArgs gives the guest QEMU's user network with the forwards, restricted: it reaches nothing outside but
// the guest forwards' commands. QEMU's option syntax doubles a comma inside a value.
func netArgs(fwd []PortForward, gfwd []GuestForward) []string {
	if len(fwd)+len(gfwd) == 0 {
		return nil
	}
	netdev := "user,id=net0,restrict=on"
	for _, f := range fwd {
		netdev += fmt.Sprintf(",hostfwd=tcp:127.0.0.1:%d-:%d", f.Host, f.Guest)
	}
	for _, f := range gfwd {
		netdev += fmt.Sprintf(",guestfwd=tcp:%s:%d-cmd:%s", f.Addr, f.Port, strings.ReplaceAll(f.Command, ",", ",,"))
	}
	// romfile=: no iPXE option ROM (the kernel is booted directly)
	return []string{"-netdev", netdev, "-device", "virtio-net-pci,netdev=net0,romfile="}
}

// Boot is what the QEMU command line needs beside the Config: files of the run.
type Boot struct {
	Kernel, Initramfs, Sysroot, Ctl string
	DataDirs                        []string
	CPU                             string
	// TBSizeMiB is TCG's translated code cache (0: QEMU's default).
	TBSizeMiB int
	Images    []string
}

// qemuArgs is the whole QEMU command line.
func qemuArgs(c Config, b Boot) ([]string, nvmeLayout) {
	appendLine := "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init mitigations=off cryptomgr.notests no_timer_check"
	if c.Append != "" {
		appendLine += " " + c.Append
	}
	virtfs := func(path, tag string, readonly bool) []string {
		ro := ""
		if readonly {
			ro = ",readonly=on"
		}
		return []string{"-virtfs", fmt.Sprintf("local,path=%s,mount_tag=%s,security_model=none%s,multidevs=remap", path, tag, ro)}
	}
	accel := c.Accel
	if accel == "tcg" && b.TBSizeMiB > 0 {
		accel += ",tb-size=" + strconv.Itoa(b.TBSizeMiB)
	}
	args := []string{"qemu-system-x86_64", "-accel", accel, "-M", "q35", "-cpu", b.CPU, "-smp", strconv.Itoa(c.SMP),
		"-m", strconv.Itoa(c.MemMiB), "-nographic", "-nodefaults", "-serial", "stdio", "-no-reboot",
		"-kernel", b.Kernel, "-initrd", b.Initramfs, "-append", appendLine}
	if c.Monitor != "" {
		args = append(args, "-monitor", "unix:"+c.Monitor+",server=on,wait=off")
	}
	args = append(args, virtfs(b.Sysroot, "znsroot", true)...)
	args = append(args, virtfs(b.Ctl, "znsctl", false)...)
	for _, d := range b.DataDirs {
		args = append(args, "-L", d)
	}
	if c.Share != "" {
		args = append(args, virtfs(c.Share, "host0", false)...)
	}
	if c.Userland {
		args = append(args, virtfs("/", "hostroot", true)...)
	}
	args = append(args, netArgs(c.HostFwd, c.GuestFwd)...)
	nvme, lay := nvmeArgs(c.Namespaces, b.Images)
	args = append(args, nvme...)
	args = append(args, diskArgs(c.Disks)...)
	return args, lay
}
