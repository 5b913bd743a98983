// Package inventory decides what a node's inventory agent publishes: which block devices of a sysfs tree are
// worth a ZonedDevice (Scan), what each one's status says, and what changed since the objects the cluster holds
// (Diff). It is pure: it reads a sysfs directory given to it and returns values; the agent does the writing.
package inventory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// Identity is what sysfs says about which drive a device is. Every field may be empty: null_blk, zloop and loop
// devices have none of them.
type Identity struct {
	WWID        string
	Serial      string
	Model       string
	Firmware    string
	NamespaceID int64
}

// StableID is the kernel's wwid when there is one, else the serial with the NVMe namespace id, else "".
func (id Identity) StableID() string {
	switch {
	case id.WWID != "":
		return id.WWID
	case id.Serial != "" && id.NamespaceID > 0:
		return fmt.Sprintf("serial.%s-ns%d", id.Serial, id.NamespaceID)
	case id.Serial != "":
		return "serial." + id.Serial
	}
	return ""
}

// Device is one device the agent publishes.
type Device struct {
	zbd.Device
	Identity
	Candidate v1alpha1.ZonedDeviceCandidate
}

// Result is one scan: the devices to publish, sorted by name, and what was wrong with the candidates a user
// named (a name the node does not have, a partition), for the agent to log.
type Result struct {
	Devices  []Device
	Problems []string
}

// Scan lists sysRoot/block (sysRoot is normally "/sys") and keeps every whole device whose zone model is
// host-managed or host-aware, plus the conventional devices named in candidates. Loop, RAM and device-mapper
// devices are left out unless named: they are views of other devices (a zoned dm-linear would list one drive
// twice) or hold no data worth a database.
func Scan(sysRoot string, candidates []string) (Result, error) {
	blockDir := filepath.Join(sysRoot, "block")
	entries, err := os.ReadDir(blockDir)
	if err != nil {
		return Result{}, err
	}
	named := map[string]bool{}
	for _, c := range candidates {
		named[c] = true
	}
	var res Result
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		seen[name] = true
		if isVirtual(name) && !named[name] {
			continue
		}
		dev, err := zbd.Inspect(blockDir, name)
		if err != nil {
			// A device that vanished between the listing and the read, or one whose attributes a kernel lays out
			// differently, must not hide the node's other devices.
			if named[name] || !errors.Is(err, os.ErrNotExist) {
				res.Problems = append(res.Problems, fmt.Sprintf("%s: %v", name, err))
			}
			continue
		}
		var why v1alpha1.ZonedDeviceCandidate
		switch {
		case dev.Model == zbd.ModelHostManaged || dev.Model == zbd.ModelHostAware:
			why = v1alpha1.CandidateZoned
		case named[name]:
			why = v1alpha1.CandidateConventional
		default:
			continue
		}
		res.Devices = append(res.Devices, Device{Device: dev, Identity: readIdentity(filepath.Join(blockDir, name)), Candidate: why})
	}
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		// Inspect tells a partition (which lives under its disk) from a name the node does not have, and refuses
		// a name that is no kernel name at all.
		_, err := zbd.Inspect(blockDir, c)
		res.Problems = append(res.Problems, fmt.Sprintf("conventional candidate %v", err))
	}
	sort.Slice(res.Devices, func(i, j int) bool { return res.Devices[i].Name < res.Devices[j].Name })
	return res, nil
}

// isVirtual: loop, RAM disks (ram, zram) and device-mapper targets.
func isVirtual(name string) bool {
	for _, p := range []string{"loop", "ram", "zram", "dm-"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// readIdentity reads the identity attributes of Linux's sysfs ABI: an NVMe namespace has wwid and nsid beside
// its queue, and its controller (device/) serial, model and firmware_rev; a SCSI disk has device/wwid,
// device/model and device/rev; a virtio disk has serial. What is missing stays empty.
func readIdentity(dir string) Identity {
	first := func(rels ...string) string {
		for _, rel := range rels {
			if b, err := os.ReadFile(filepath.Join(dir, rel)); err == nil {
				// NVMe pads model and serial with spaces to their fixed width.
				if s := strings.TrimSpace(string(b)); s != "" {
					return s
				}
			}
		}
		return ""
	}
	id := Identity{
		WWID:     first("wwid", "device/wwid"),
		Serial:   first("device/serial", "serial"),
		Model:    first("device/model"),
		Firmware: first("device/firmware_rev", "device/rev"),
	}
	if n, err := strconv.ParseInt(first("nsid"), 10, 64); err == nil {
		id.NamespaceID = n
	}
	return id
}

// ParseCandidates splits the node annotation's comma-separated kernel names, dropping blanks and a /dev/ prefix
// a user may have typed.
func ParseCandidates(annotation string) []string {
	var out []string
	for _, f := range strings.Split(annotation, ",") {
		f = strings.TrimPrefix(strings.TrimSpace(f), "/dev/")
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}
