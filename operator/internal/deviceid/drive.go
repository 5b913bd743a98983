package deviceid

import "regexp"

// nvmeNamespace matches an NVMe namespace's kernel name: nvme<controller>n<namespace>, or with multipathing
// nvme<subsystem>c<controller>n<namespace>; the first number names the drive either way.
var nvmeNamespace = regexp.MustCompile(`^nvme([0-9]+)(c[0-9]+)?n[0-9]+$`)

// Drive names the drive the device is part of, "<node>/<name>": the namespaces of one NVMe controller (nvme0n1,
// nvme0n2) are one drive, nvme0, and share its flash, its controller and its queues; any other device is its
// own drive (a null_blk device is its own memory, a SATA disk its own). Empty when the device is unknown.
func (id ID) Drive() string {
	if id.Device == "" {
		return ""
	}
	name := id.Device
	if m := nvmeNamespace.FindStringSubmatch(name); m != nil {
		name = "nvme" + m[1]
	}
	if id.Node == "" {
		return name
	}
	return id.Node + "/" + name
}
