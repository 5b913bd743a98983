package zbd

import (
	"errors"
	"fmt"
	"os"
	"slices"
)

// Problem is one reason a device is unfit for ZenFS. Code is stable for
// machines; Message tells a person what is wrong and what to do.
type Problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Problem codes.
const (
	CodeInvalidName          = "InvalidDeviceName"
	CodeNoSuchDevice         = "NoSuchDevice"
	CodePartition            = "Partition"
	CodeNotHostManaged       = "NotHostManaged"
	CodeTooFewZones          = "TooFewZones"
	CodeWrongScheduler       = "WrongScheduler"
	CodeSchedulerUnavailable = "SchedulerUnavailable"
	CodeTooFewOpenZones      = "TooFewOpenZones"
	CodeTooFewActiveZones    = "TooFewActiveZones"
	CodeNoDeviceNode         = "NoDeviceNode"
	CodeDeviceNotAccessible  = "DeviceNotAccessible"
)

// ZenFS's own limits, from fs/zbd_zenfs.cc.
const (
	// MinZones is ZENFS_MIN_ZONES: Open refuses a device with fewer zones.
	MinZones = 32
	// ReservedZones is reserved_zones in ZonedBlockDevice::Open: one zone for
	// the metadata log and one for extent migration are taken out of the
	// device's open and active limits before any file gets a zone.
	ReservedZones = 2
	// MinOpenZones: of the max_open-2 zones left, non-WAL writers may hold
	// only max_open-3 (WaitForOpenIOZoneToken keeps one for WAL writes), so
	// at 3 flushes and compactions wait forever; at 2 or less the unsigned
	// arithmetic wraps, ZenFS stops respecting the device's limit and writes
	// fail (or WAL writes wait forever on a zero limit).
	MinOpenZones = ReservedZones + 2
	// MinActiveZones: every open zone is also active, so an active limit
	// below MinOpenZones caps the open zones below it too.
	MinActiveZones = MinOpenZones
	// Scheduler is the only scheduler ZenFS accepts (CheckScheduler looks
	// for "[mq-deadline]" in queue/scheduler).
	Scheduler = "mq-deadline"
)

// Judge lists every reason d is unfit for ZenFS; empty means fit.
// A device that is not host-managed gets only that problem: the zone checks
// say nothing useful about it.
func Judge(d Device) []Problem {
	if d.Model != ModelHostManaged {
		return []Problem{notHostManaged(d)}
	}
	var ps []Problem
	if d.NrZones < MinZones {
		ps = append(ps, Problem{CodeTooFewZones, fmt.Sprintf(
			"%s has %d zones; ZenFS needs at least %d. Use a larger device or a smaller zone size "+
				"(null_blk: raise size or lower zone_size in /sys/kernel/config/nullb/%s).",
			d.Name, d.NrZones, MinZones, d.Name)})
	}
	if p, ok := judgeScheduler(d); !ok {
		ps = append(ps, p)
	}
	if d.MaxOpenZones != 0 && d.MaxOpenZones < MinOpenZones {
		ps = append(ps, Problem{CodeTooFewOpenZones, fmt.Sprintf(
			"%s allows only %d open zones; ZenFS needs at least %d: it reserves %d (metadata log, "+
				"extent migration) and keeps one more for WAL writes, so with fewer the database "+
				"stalls or fails its first writes. Use a device or namespace with max_open_zones of %d or "+
				"more, or no limit (null_blk: zone_max_open).",
			d.Name, d.MaxOpenZones, MinOpenZones, ReservedZones, MinOpenZones)})
	}
	if d.MaxActiveZones != 0 && d.MaxActiveZones < MinActiveZones {
		ps = append(ps, Problem{CodeTooFewActiveZones, fmt.Sprintf(
			"%s allows only %d active zones; ZenFS needs at least %d (every open zone is also "+
				"active; see the open-zone minimum). Use a device or namespace with max_active_zones "+
				"of %d or more, or no limit (null_blk: zone_max_active).",
			d.Name, d.MaxActiveZones, MinActiveZones, MinActiveZones)})
	}
	return ps
}

func notHostManaged(d Device) Problem {
	var what string
	switch d.Model {
	case ModelNone:
		what = "a conventional (not zoned) block device"
	case ModelHostAware:
		what = "a host-aware zoned device"
	default:
		what = fmt.Sprintf("a device of zone model %q", d.Model)
	}
	return Problem{CodeNotHostManaged, fmt.Sprintf(
		"%s is %s; ZenFS needs a host-managed zoned device (queue/zoned = host-managed), such as "+
			"an NVMe ZNS namespace or a null_blk device created with zoned=1. For a conventional "+
			"device use a filesystem volume instead.", d.Name, what)}
}

func judgeScheduler(d Device) (Problem, bool) {
	if d.Scheduler == Scheduler {
		return Problem{}, true
	}
	path := fmt.Sprintf("/sys/block/%s/queue/scheduler", d.Name)
	if len(d.AvailableSchedulers) == 0 {
		return Problem{CodeSchedulerUnavailable, fmt.Sprintf(
			"%s has no I/O scheduler at all (a bio-based queue, no %s); ZenFS requires mq-deadline. "+
				"Use a blk-mq device (null_blk: queue_mode=2, the default).", d.Name, path)}, false
	}
	if !slices.Contains(d.AvailableSchedulers, Scheduler) {
		return Problem{CodeSchedulerUnavailable, fmt.Sprintf(
			"%s uses I/O scheduler %q and the kernel offers no mq-deadline for it (%s lists %v); "+
				"ZenFS requires mq-deadline. On the node run `modprobe mq-deadline`, then "+
				"`echo mq-deadline > %s`.",
			d.Name, d.Scheduler, path, d.AvailableSchedulers, path)}, false
	}
	return Problem{CodeWrongScheduler, fmt.Sprintf(
		"%s uses I/O scheduler %q; ZenFS requires mq-deadline. On the node run "+
			"`echo mq-deadline > %s`, and keep it across reboots with a udev rule, e.g. "+
			"/etc/udev/rules.d/60-zns-scheduler.rules containing: "+
			`ACTION=="add|change", KERNEL=="%s", ATTR{queue/scheduler}="mq-deadline"`,
		d.Name, d.Scheduler, path, d.Name)}, false
}

// Preflight inspects a device and judges it. A name that is invalid, absent
// or a partition is a problem for the user, not an error; err is reserved
// for failures to read sysfs.
func Preflight(sysBlockDir, name string) (*Device, []Problem, error) {
	d, err := Inspect(sysBlockDir, name)
	if err != nil {
		if p, ok := inspectProblem(name, err); ok {
			return nil, []Problem{p}, nil
		}
		return nil, nil, err
	}
	return &d, Judge(d), nil
}

// inspectProblem turns Inspect's user-facing errors into a Problem.
func inspectProblem(name string, err error) (Problem, bool) {
	switch {
	case errors.Is(err, ErrInvalidName):
		return Problem{CodeInvalidName, err.Error() + "."}, true
	case errors.Is(err, ErrPartition):
		return Problem{CodePartition, fmt.Sprintf(
			"%s is a partition (%v). Partitions are ignored on host-managed zoned devices and "+
				"ZenFS needs a whole device: name the device itself, or split a drive with NVMe "+
				"namespaces or separate null_blk devices.", name, err)}, true
	case errors.Is(err, ErrNoDevice):
		return Problem{CodeNoSuchDevice, fmt.Sprintf(
			"no such block device %q on this node (/sys/block/%s does not exist). Check the "+
				"device name and that the pod runs on the node that has it.", name, name)}, true
	}
	return Problem{}, false
}

// AccessProblem explains why the device node could not be opened.
func AccessProblem(devPath string, err error) Problem {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Problem{CodeNoDeviceNode, fmt.Sprintf(
			"%s does not exist in the container although sysfs shows the device. Pass the host "+
				"device into the pod (a hostPath volume of type BlockDevice mounted at the same "+
				"path); on kind, create the device before the cluster or mount it into the node.",
			devPath)}
	case errors.Is(err, os.ErrPermission):
		return Problem{CodeDeviceNotAccessible, fmt.Sprintf(
			"permission denied opening %s. Run with the device's group in supplementalGroups "+
				"(host device nodes are usually root:disk 0660) or enable containerd's "+
				"device_ownership_from_security_context; zone management needs kernel 5.14 or "+
				"later without CAP_SYS_ADMIN.", devPath)}
	}
	return Problem{CodeDeviceNotAccessible, fmt.Sprintf("cannot read %s: %v.", devPath, err)}
}
