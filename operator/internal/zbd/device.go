// Package zbd inspects zoned block devices through sysfs and the zone report
// ioctl, and judges whether a device is fit for ZenFS.
//
// Every function takes the sysfs directory or the device path as a parameter so
// the same code runs against recorded trees in tests and real devices in a VM.
package zbd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Zone models reported by queue/zoned.
const (
	ModelNone        = "none"
	ModelHostAware   = "host-aware"
	ModelHostManaged = "host-managed"
)

// sectorSize is the unit of size, chunk_sectors and the zone report: the
// kernel counts in 512-byte sectors whatever the device's logical block size.
const sectorSize = 512

// Device is what sysfs says about a block device, in bytes and counts.
type Device struct {
	Name string `json:"name"`
	// Model is queue/zoned: "none", "host-aware" or "host-managed".
	Model   string `json:"model"`
	NrZones int64  `json:"nrZones,omitempty"`
	// ZoneSizeBytes is queue/chunk_sectors * 512.
	ZoneSizeBytes int64 `json:"zoneSizeBytes,omitempty"`
	// ZoneCapacityBytes comes from a zone report; 0 when unknown, because
	// sysfs does not expose it.
	ZoneCapacityBytes int64 `json:"zoneCapacityBytes,omitempty"`
	// MaxOpenZones and MaxActiveZones are 0 when the device has no limit.
	MaxOpenZones   int64 `json:"maxOpenZones"`
	MaxActiveZones int64 `json:"maxActiveZones"`
	// Scheduler is the active I/O scheduler (the bracketed entry).
	Scheduler           string   `json:"scheduler"`
	AvailableSchedulers []string `json:"availableSchedulers,omitempty"`
	// CapacityBytes is size * 512.
	CapacityBytes    int64 `json:"capacityBytes"`
	LogicalBlockSize int64 `json:"logicalBlockSize"`
}

// ErrNoDevice means sysfs has no block device of that name.
var ErrNoDevice = errors.New("no such block device")

// ErrPartition means the name is a partition, not a whole device.
var ErrPartition = errors.New("is a partition")

// ErrInvalidName means the name is not a bare kernel device name.
var ErrInvalidName = errors.New("invalid block device name")

// maxNameLen is the kernel's DISK_NAME_LEN less its terminating NUL.
const maxNameLen = 31

// ValidateName accepts only a bare kernel block device name such as "nullb0"
// or "nvme0n2". The name ends up in "/dev/<name>", "/sys/block/<name>" and on
// a zenfs command line, so separators, "..", a leading dash (read as a flag)
// and anything outside the kernel's naming alphabet are refused.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidName)
	case len(name) > maxNameLen:
		return fmt.Errorf("%w %q: longer than %d characters", ErrInvalidName, name, maxNameLen)
	case strings.HasPrefix(name, "-"):
		return fmt.Errorf("%w %q: starts with a dash", ErrInvalidName, name)
	case name == "." || strings.Contains(name, ".."):
		return fmt.Errorf("%w %q: contains \"..\"", ErrInvalidName, name)
	case strings.Contains(name, "/"):
		return fmt.Errorf("%w %q: give the kernel name (e.g. nvme0n2), not a path", ErrInvalidName, name)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '-' || r == '_' || r == '.'
		if !ok {
			return fmt.Errorf("%w %q: character %q", ErrInvalidName, name, r)
		}
	}
	return nil
}

// Inspect reads /sys/block/<name> (sysBlockDir is normally "/sys/block").
// A missing device wraps ErrNoDevice; a partition wraps ErrPartition.
func Inspect(sysBlockDir, name string) (Device, error) {
	if err := ValidateName(name); err != nil {
		return Device{}, err
	}
	dir := filepath.Join(sysBlockDir, name)
	if _, err := os.Stat(dir); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return Device{}, err
		}
		// /sys/block lists whole devices only; a partition lives under its
		// parent (/sys/block/nvme0n1/nvme0n1p1).
		if parent, ok := partitionParent(sysBlockDir, name); ok {
			return Device{}, fmt.Errorf("%s %w of %s", name, ErrPartition, parent)
		}
		return Device{}, fmt.Errorf("%s: %w", name, ErrNoDevice)
	}
	// Under /sys/class/block partitions sit beside disks, marked by a
	// "partition" file.
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		return Device{}, fmt.Errorf("%s %w", name, ErrPartition)
	}

	r := attrReader{dir: dir}
	d := Device{Name: name}
	d.Model = r.str("queue/zoned", true)
	// Bio-based queues (zram, null_blk queue_mode=0) have no scheduler file
	// on recent kernels: they run without one.
	d.Scheduler, d.AvailableSchedulers = ParseScheduler(r.str("queue/scheduler", false))
	if d.Scheduler == "" {
		d.Scheduler = "none"
	}
	d.CapacityBytes = r.int("size", true) * sectorSize
	d.LogicalBlockSize = r.int("queue/logical_block_size", true)
	// Zone attributes read 0 on conventional devices, or are hidden there on
	// recent kernels; max_open/active_zones appeared in 5.9. A missing file
	// means the kernel knows no limit.
	d.NrZones = r.int("queue/nr_zones", false)
	d.ZoneSizeBytes = r.int("queue/chunk_sectors", false) * sectorSize
	d.MaxOpenZones = r.int("queue/max_open_zones", false)
	d.MaxActiveZones = r.int("queue/max_active_zones", false)
	if r.err != nil {
		return Device{}, r.err
	}
	return d, nil
}

func partitionParent(sysBlockDir, name string) (string, bool) {
	matches, _ := filepath.Glob(filepath.Join(sysBlockDir, "*", name, "partition"))
	if len(matches) == 0 {
		return "", false
	}
	return filepath.Base(filepath.Dir(filepath.Dir(matches[0]))), true
}

// ParseScheduler splits queue/scheduler into the active scheduler and the
// list of available ones. Kernels print either "[mq-deadline] kyber bfq none"
// (older) or "none [mq-deadline] kyber " (newer, "none" first, trailing
// space); a queue that cannot take a scheduler prints a bare "none".
func ParseScheduler(s string) (active string, available []string) {
	for _, f := range strings.Fields(s) {
		if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
			f = strings.TrimSuffix(strings.TrimPrefix(f, "["), "]")
			active = f
		}
		available = append(available, f)
	}
	if active == "" && len(available) == 1 {
		active = available[0]
	}
	return active, available
}

// attrReader keeps the first error so Inspect reads like a list of fields.
type attrReader struct {
	dir string
	err error
}

func (r *attrReader) str(rel string, required bool) string {
	if r.err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(r.dir, rel))
	if err != nil {
		if !required && errors.Is(err, os.ErrNotExist) {
			return ""
		}
		r.err = err
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (r *attrReader) int(rel string, required bool) int64 {
	s := r.str(rel, required)
	if s == "" || r.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.err = fmt.Errorf("%s: %w", filepath.Join(r.dir, rel), err)
		return 0
	}
	return v
}
