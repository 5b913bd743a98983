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

// Problem codes of refusals (Judge, Preflight, AccessProblem, BusyProblem).
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
	CodeDeviceBusy           = "DeviceBusy"
	CodeNoDeviceNode         = "NoDeviceNode"
	CodeDeviceNotAccessible  = "DeviceNotAccessible"
)

// Codes of warnings (Advise): the device is accepted.
const (
	CodeFewOpenZones   = "FewOpenZones"
	CodeFewActiveZones = "FewActiveZones"
)

// ZenFS's own limits, from fs/zbd_zenfs.cc.
const (
	// MinZones is ZENFS_MIN_ZONES: Open refuses a device with fewer zones.
	MinZones = 32
	// ReservedZones is reserved_zones in ZonedBlockDevice::Open: one zone for
	// the metadata log and one for extent migration are taken out of the
	// device's open and active limits before any file gets a zone.
	ReservedZones = 2
	// Scheduler is the only scheduler ZenFS accepts (CheckScheduler looks
	// for "[mq-deadline]" in queue/scheduler).
	Scheduler = "mq-deadline"
)

// Open and active zone limits: what ZenFS with RocksDB needs.
//
// From ZenFS (westerndigitalcorporation/zenfs 919c2eb): every file being
// written holds one "open IO zone token" from its first write until it is
// closed or its zone fills (ZoneFile::AllocateNewZone -> AllocateIOZone;
// released in ZoneFile::CloseActiveZone, fs/io_zenfs.cc). There are
// max_open-2 tokens (ReservedZones), WAL files (".log") may take all of them,
// every other file only max_open-3: WaitForOpenIOZoneToken keeps the last one
// for the WAL. The wait is a condition variable with no timeout and no error,
// so a writer that never gets a token hangs silently. The same count is shared
// by all files, WAL or not.
//
// Who holds a token for long: the MANIFEST (open for the life of the DB), the
// current WAL, and each older WAL until the flush of its memtable completes.
// A flush (a non-WAL writer) can start only while fewer than max_open-3
// tokens are held, so with W WAL files holding zones it needs
// max_open-3 > 1+W, i.e. max_open >= 5+W.
//
// The runs (RocksDB 7.8.3, its defaults: max_write_buffer_number 2, one flush
// and one compaction at a time; shared/zenfs-real/followup/D-limits and
// limits2): max_open 4 (non-WAL limit 1): the MANIFEST takes it and DB::Open
// never returns (the OPTIONS file waits). 5 (limit 2): MANIFEST + WAL, the
// first flush never finishes. 6 (limit 3): ran 40,000 puts, then with
// 300,000 puts stalled when a second memtable filled while the first flush
// and a compaction were running; the zone report at the stall shows three
// open IO zones, the limit, consistent with the MANIFEST and two WALs, and
// every thread sat in a futex wait. 14 completed 600,000 puts. So W reached 2
// and the floor that every run supports is 5+2 = 7: below it RocksDB's own
// default settings deadlock. MinOpenZones refuses below that. (7 itself was
// not run: it is the floor the arithmetic and the stalls justify, not a
// measured success.)
//
// Above the floor the count depends on the settings: the my.cnf this project
// generates lets MyRocks keep up to 8 memtables (max_write_buffer_number=8),
// hence up to about 8 live WALs, which by the same arithmetic needs 13, and
// runs 8 background jobs whose outputs compete for the rest. Nothing between
// 7 and 13 was run, and 14 is the only limit seen to complete (it is also
// what the common ZNS drives and QEMU's default namespace offer), so a device
// below RecommendedOpenZones is accepted with a warning, not refused.
const (
	// MinOpenZones: refused below (see above).
	MinOpenZones = 7
	// MinActiveZones: every zone a writer holds is open and therefore also
	// active, and AllocateIOZone spins in FinishCheapestIOZone when no active
	// token is left and every active zone is held by a writer, so the active
	// limit needs the same floor.
	MinActiveZones = MinOpenZones
	// RecommendedOpenZones and RecommendedActiveZones: the smallest limit
	// seen to work; below it, down to the minimum, Advise warns.
	RecommendedOpenZones   = 14
	RecommendedActiveZones = RecommendedOpenZones
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
			"%s allows only %d open zones; ZenFS with RocksDB needs at least %d: ZenFS reserves %d (metadata "+
				"log, extent migration) and keeps one for WAL writes, and the MANIFEST and the live WAL files "+
				"hold theirs, so with fewer a flush waits forever for a zone and the database hangs without an "+
				"error (seen at 4, 5 and 6). Use a device or namespace with max_open_zones of %d or more "+
				"(%d recommended), or no limit (null_blk: zone_max_open).",
			d.Name, d.MaxOpenZones, MinOpenZones, ReservedZones, MinOpenZones, RecommendedOpenZones)})
	}
	if d.MaxActiveZones != 0 && d.MaxActiveZones < MinActiveZones {
		ps = append(ps, Problem{CodeTooFewActiveZones, fmt.Sprintf(
			"%s allows only %d active zones; ZenFS with RocksDB needs at least %d (every zone being written is "+
				"also active; see the open-zone minimum). Use a device or namespace with max_active_zones of "+
				"%d or more (%d recommended), or no limit (null_blk: zone_max_active).",
			d.Name, d.MaxActiveZones, MinActiveZones, MinActiveZones, RecommendedActiveZones)})
	}
	return ps
}

// Advise lists what makes a device that Judge accepts risky: open or active
// zone limits between the minimum and the smallest limit seen to work
// (RecommendedOpenZones). Empty for a device Judge refuses.
func Advise(d Device) []Problem {
	if len(Judge(d)) > 0 {
		return nil
	}
	var ws []Problem
	if d.MaxOpenZones != 0 && d.MaxOpenZones < RecommendedOpenZones {
		ws = append(ws, Problem{CodeFewOpenZones, fmt.Sprintf(
			"%s allows %d open zones: above the %d at which RocksDB stalled on ZenFS, below the %d seen to work. "+
				"MyRocks as configured here keeps up to 8 memtables (and as many WAL files holding zones) and runs "+
				"8 background jobs, which by ZenFS's zone accounting needs about 13; when writers run out of zones "+
				"ZenFS hangs without an error. Prefer a device or namespace with max_open_zones of %d or more.",
			d.Name, d.MaxOpenZones, MinOpenZones-1, RecommendedOpenZones, RecommendedOpenZones)})
	}
	if d.MaxActiveZones != 0 && d.MaxActiveZones < RecommendedActiveZones {
		ws = append(ws, Problem{CodeFewActiveZones, fmt.Sprintf(
			"%s allows %d active zones, fewer than the %d seen to work with ZenFS and RocksDB; every zone being "+
				"written is active, so the same risk as a low open-zone limit applies.",
			d.Name, d.MaxActiveZones, RecommendedActiveZones)})
	}
	return ws
}

// NotHostManaged is the refusal of a device that is not host-managed, for
// callers that judge it for another file system than ZenFS.
func NotHostManaged(d Device) Problem { return notHostManaged(d) }

// JudgeScheduler is the scheduler check of Judge on its own (ok when it
// passes): the zoned modes of btrfs and f2fs rely on mq-deadline's ordering
// of writes to a zone just as ZenFS does.
func JudgeScheduler(d Device) (Problem, bool) { return judgeScheduler(d) }

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

// BusyProblem explains an exclusive open that failed with EBUSY.
func BusyProblem(devPath string, err error) Problem {
	return Problem{CodeDeviceBusy, fmt.Sprintf(
		"%s is busy: another holder has it open exclusively (%v): a mysqld or RocksDB still running on it "+
			"(in another pod, or one not yet stopped), a zenfs command, or a mounted filesystem. Nothing was "+
			"read or changed. Stop that process (on the node, `fuser -v %s` names it); the pod retries.",
		devPath, err, devPath)}
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
