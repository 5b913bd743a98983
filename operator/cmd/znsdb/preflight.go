package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// deviceFlags are shared by preflight and format.
type deviceFlags struct {
	device         string
	sysBlock       string
	devDir         string
	terminationLog string
	sysfsOnly      bool
	// filesystem is zenfs, or a zoned btrfs or f2fs, which need other things
	// of the device, or ext4 or xfs on a conventional device; with zoned, xfs
	// is zoned XFS, its metadata on the device's conventional zones or on
	// metadataDevice.
	filesystem     string
	zoned          bool
	metadataDevice string
}

func (f *deviceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.device, "device", "", "kernel name of the device, e.g. nullb0 or nvme0n2 (required)")
	fs.StringVar(&f.sysBlock, "sys-block", "/sys/block", "sysfs directory of block devices")
	fs.StringVar(&f.devDir, "dev-dir", "/dev", "directory of device nodes")
	fs.StringVar(&f.terminationLog, "termination-log", "/dev/termination-log",
		"file that receives the JSON report for the operator (empty: none)")
	fs.StringVar(&f.filesystem, "filesystem", "zenfs", "what the device is judged for: zenfs, btrfs or f2fs "+
		"(zoned mode, on a host-managed device), or ext4 or xfs (on a conventional device; xfs with --zoned: zoned XFS)")
	fs.BoolVar(&f.zoned, "zoned", false, "the device is host-managed: with --filesystem xfs, zoned XFS (Linux and xfsprogs 6.15 or later)")
	fs.StringVar(&f.metadataDevice, "metadata-device", "", "zoned XFS only: a conventional device of the same node for "+
		"its metadata and log (data section), for a zoned device without conventional zones such as an NVMe ZNS namespace")
}

// zonedFS is the zoned btrfs or f2fs asked for; ok is false for zenfs and
// for a conventional file system.
func (f *deviceFlags) zonedFS() (fs zonedfs.Filesystem, ok bool, err error) {
	if f.metadataDevice != "" && !f.zonedXFS() {
		return "", false, errors.New("--metadata-device is for zoned XFS only (--filesystem xfs --zoned)")
	}
	if f.zonedXFS() {
		return zonedfs.XFS, true, nil
	}
	if _, conventional := f.conventionalFS(); conventional || f.filesystem == "" || f.filesystem == "zenfs" {
		return "", false, nil
	}
	if fs, err = zonedfs.Parse(f.filesystem); err != nil {
		return "", false, fmt.Errorf("file system %q: want zenfs, btrfs or f2fs (zoned), or ext4 or xfs (conventional)", f.filesystem)
	}
	return fs, true, nil
}

// conventionalFS is the ext4 or xfs asked for: the device must then be a
// conventional one.
func (f *deviceFlags) conventionalFS() (zonedfs.Filesystem, bool) {
	if f.zoned {
		return "", false
	}
	fs, err := zonedfs.ParseConventional(f.filesystem)
	return fs, err == nil
}

func (f *deviceFlags) devPath() string { return filepath.Join(f.devDir, f.device) }

// parseFlags parses args; ok is false when the command should exit with code.
func parseFlags(fs *flag.FlagSet, args []string, d deps) (code int, ok bool) {
	fs.SetOutput(d.stderr)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(d.stderr, "znsdb %s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return exitUsage, false
	}
	return 0, true
}

func preflightCmd(ctx context.Context, args []string, d deps) int {
	var f deviceFlags
	fs := flag.NewFlagSet("preflight", flag.ContinueOnError)
	f.register(fs)
	fs.BoolVar(&f.sysfsOnly, "sysfs-only", false, "judge the device from sysfs alone, without opening it: for a pod "+
		"that has no access to the device node (format reads the zone report later, through the device's claim)")
	if code, ok := parseFlags(fs, args, d); !ok {
		return code
	}
	if cfs, ok := f.conventionalFS(); ok {
		report, _ := preflightConventional(f, cfs, d.devices, !f.sysfsOnly)
		return finish(report, f.terminationLog, d)
	}
	report, _ := preflight(ctx, f, d)
	return finish(report, f.terminationLog, d)
}

// preflight inspects and judges the device, then reads its zones: the zone
// capacity is only in the zone report, and reading it proves the device node
// is there and readable, which ZenFS will need. The zones are returned for
// format; they are nil when the report carries a problem or an error.
// A device without zones is judged unfit, so zones are never empty otherwise.
func preflight(ctx context.Context, f deviceFlags, d deps) (dbinit.Report, []zbd.Zone) {
	var r dbinit.Report
	zfs, zoned, err := f.zonedFS()
	if err != nil {
		r.Error = err.Error()
		return r, nil
	}
	meta, metaProblems, err := f.metadataDeviceOf()
	if err != nil {
		r.Error = err.Error()
		return r, nil
	}
	dev, problems, err := zbd.Preflight(f.sysBlock, f.device)
	if zoned && dev != nil {
		// zbd judged it for ZenFS; with a device at hand its problems are all that judgement's.
		problems = f.judgeZoned(zfs, *dev, -1, meta)
	}
	// What is not the device's own geometry: the metadata device, and the node's and image's versions.
	others := metaProblems
	if f.zonedXFS() {
		others = append(others, zonedXFSSupport(ctx, d)...)
	}
	problems = append(problems, others...)
	advise := func(d zbd.Device) []zbd.Problem {
		if zoned {
			return nil
		}
		return zbd.Advise(d)
	}
	r.Device, r.MetadataDevice, r.Problems = dev, meta, problems
	if err != nil {
		r.Error = fmt.Sprintf("inspecting %s: %v", f.device, err)
		return r, nil
	}
	if dev == nil || dev.Model != zbd.ModelHostManaged {
		return r, nil
	}
	if f.sysfsOnly {
		if len(problems) == 0 {
			r.Warnings = advise(*dev)
		}
		return r, nil
	}
	zones, err := d.devices.ReportZones(f.devPath())
	if err != nil {
		r.Problems = append(r.Problems, zbd.AccessProblem(f.devPath(), err))
		return r, nil
	}
	dev.ZoneCapacityBytes = zbd.ZoneCapacity(zones)
	if int64(len(zones)) != dev.NrZones {
		// ZenFS refuses such a device too ("Failed to list zones").
		r.Error = fmt.Sprintf("the zone report of %s lists %d zones, sysfs says %d", f.devPath(), len(zones), dev.NrZones)
		return r, nil
	}
	if zoned {
		r.Problems = append(f.judgeZoned(zfs, *dev, zonedfs.ConventionalZones(zones), meta), others...)
	}
	if len(r.Problems) > 0 {
		return r, nil
	}
	r.Warnings = advise(*dev)
	return r, zones
}

// finish writes the report where the operator and the user read it and
// returns the exit code: non-zero when the report holds a problem or an
// error, which are also printed on stderr.
func finish(r dbinit.Report, terminationLog string, d deps) int {
	b, err := r.Encode()
	if err != nil {
		fmt.Fprintf(d.stderr, "znsdb: encoding report: %v\n", err)
		return exitRefused
	}
	fmt.Fprintf(d.stdout, "%s\n", b)
	if terminationLog != "" {
		if err := os.WriteFile(terminationLog, b, 0o644); err != nil {
			fmt.Fprintf(d.stderr, "znsdb: warning: writing the report to %s: %v\n", terminationLog, err)
		}
	}
	code := exitOK
	for _, p := range r.Problems {
		fmt.Fprintf(d.stderr, "%s: %s\n", p.Code, p.Message)
		code = exitRefused
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(d.stderr, "warning: %s: %s\n", w.Code, w.Message)
	}
	if r.Filesystem != nil && r.Filesystem.Action == fsformat.ActionRefuse {
		fmt.Fprintf(d.stderr, "format refused: %s\n", r.Filesystem.Reason)
		code = exitRefused
	}
	if r.Error != "" {
		fmt.Fprintf(d.stderr, "error: %s\n", r.Error)
		code = exitRefused
	}
	return code
}
