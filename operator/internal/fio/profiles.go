package fio

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Profile names one measurement of a raw device: the set zoned-storage
// benchmarks run on ZNS drives (writes across the open-zone limit, random
// read latency alone and under a capped write load, the 128 KiB QD32
// sequential read of the ZNS drive demo, and a block size x jobs x queue
// depth grid).
type Profile string

const (
	// ProfileSeqWriteOpenZones writes sequentially with one job per zone the
	// drive keeps open at once, each job in a region of its own.
	ProfileSeqWriteOpenZones Profile = "seqwrite-open-zones"
	// ProfileRandRead4K reads 4 KiB blocks at random, queue depth 32.
	ProfileRandRead4K Profile = "randread-4k"
	// ProfileRandReadUnderWrites reads 4 KiB blocks at random while a second
	// job writes sequentially at a capped rate elsewhere on the device.
	ProfileRandReadUnderWrites Profile = "randread-rate-limited-writes"
	// ProfileSeqRead128KQD32 reads sequentially in 128 KiB blocks at queue
	// depth 32 (seed 001's raw throughput figure).
	ProfileSeqRead128KQD32 Profile = "seqread-128k-qd32"
	// ProfileGrid runs one access pattern at every block size x jobs x
	// queue depth point of a bounded grid.
	ProfileGrid Profile = "grid"
)

// Profiles lists every profile in the order Plan runs them: the write comes
// first because on a zoned device fio reads only below the write pointers,
// so the reads need the zones it wrote.
var Profiles = []Profile{
	ProfileSeqWriteOpenZones, ProfileRandRead4K, ProfileRandReadUnderWrites, ProfileSeqRead128KQD32, ProfileGrid,
}

// Limits and defaults of the profiles.
const (
	// MaxGridPoints bounds the grid: each point is a fio run of its own.
	MaxGridPoints = 27
	// DefaultWriters is the number of writers of ProfileSeqWriteOpenZones
	// where the device states no open-zone limit (a conventional device, or
	// a zoned one with no limit): enough to exercise parallel streams
	// without making the regions tiny.
	DefaultWriters = 8
	// MaxWriters caps the writers whatever the device's limit: a drive with
	// hundreds of open zones would otherwise get hundreds of fio processes.
	MaxWriters = 32
	// DefaultWriteRate is the writer's cap in ProfileRandReadUnderWrites
	// when none is given: 64 MiB/s, a load that a drive sustains while the
	// reads show what it does to their latency.
	DefaultWriteRate = 64 << 20
	// conventionalAlign aligns the regions of a conventional device.
	conventionalAlign = 1 << 20
)

// Device is what the profiles need to know of the device they run on (what
// the operator reads from sysfs into a ZNSDatabase's status.device).
type Device struct {
	// Path is the device node, e.g. /dev/nvme0n2.
	Path      string
	SizeBytes int64
	// Zoned devices (host-managed) get zonemode=zbd and zone-aligned regions.
	Zoned             bool
	ZoneSizeBytes     int64
	ZoneCapacityBytes int64
	Zones             int64
	// MaxOpenZones and MaxActiveZones are the device's limits; 0 means none.
	MaxOpenZones   int
	MaxActiveZones int
}

// Bounds keep every run of a plan finite.
type Bounds struct {
	// Runtime is the length of each fio run (a profile, or one grid point).
	// The write profile also stops when its regions are full.
	Runtime time.Duration
	// SpanBytes is how much of the device, from its start, the profiles
	// use; 0 means all of it. On a zoned device it is rounded down to whole
	// zones.
	SpanBytes int64
	// WriteRateBytes caps the writer of ProfileRandReadUnderWrites, in bytes
	// per second; 0 means DefaultWriteRate.
	WriteRateBytes int64
}

// Grid is the block size x jobs x queue depth grid of ProfileGrid.
type Grid struct {
	// RW is the access pattern at every point. A zoned device takes read,
	// randread or write (random writes are refused there).
	RW         RW
	BlockSizes []int64
	NumJobs    []int
	IODepths   []int
}

// DefaultGrid is 4 KiB, 64 KiB and 128 KiB random reads by 1, 2 and 4 jobs at
// queue depths 1, 8 and 32: 27 points.
func DefaultGrid() Grid {
	return Grid{RW: RandRead, BlockSizes: []int64{4 << 10, 64 << 10, 128 << 10}, NumJobs: []int{1, 2, 4}, IODepths: []int{1, 8, 32}}
}

// Points is the number of fio runs of the grid.
func (g Grid) Points() int { return len(g.BlockSizes) * len(g.NumJobs) * len(g.IODepths) }

// Writes tells whether a profile writes to the device (and so destroys what
// is on it): read-only profiles need no consent to run on a device with data.
func Writes(p Profile, g Grid) bool {
	switch p {
	case ProfileSeqWriteOpenZones, ProfileRandReadUnderWrites:
		return true
	case ProfileGrid:
		return g.RW == SeqWrite || g.RW == RandWrite
	}
	return false
}

// Step is one fio run of a plan.
type Step struct {
	Profile Profile
	// Point is the grid point ("bs=4096 jobs=1 qd=1"); empty elsewhere.
	Point string
	// BlockSize, NumJobs and IODepth are the point's coordinates (grid only).
	BlockSize int64
	NumJobs   int
	IODepth   int
	// Writes is true when the run writes to the device.
	Writes bool
	// Args are fio's arguments, JSON report on stdout.
	Args []string
}

// Plan builds the fio runs of profiles on d, in the order of Profiles
// whatever the order asked (see Profiles). The grid is used only with
// ProfileGrid.
func Plan(d Device, profiles []Profile, b Bounds, g Grid) ([]Step, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	if len(profiles) == 0 {
		return nil, errors.New("no profile to run")
	}
	for _, p := range profiles {
		if !slices.Contains(Profiles, p) {
			return nil, fmt.Errorf("unknown profile %q: want one of %v", p, Profiles)
		}
	}
	if b.Runtime <= 0 {
		return nil, errors.New("a runtime is needed: every profile is bounded in time")
	}
	if b.SpanBytes < 0 || b.WriteRateBytes < 0 {
		return nil, errors.New("span and write rate cannot be negative")
	}
	lay, err := layout(d, b.SpanBytes)
	if err != nil {
		return nil, err
	}
	var steps []Step
	for _, p := range Profiles {
		if !slices.Contains(profiles, p) {
			continue
		}
		var add []Step
		switch p {
		case ProfileSeqWriteOpenZones:
			add, err = seqWriteOpenZones(d, lay, b)
		case ProfileRandRead4K:
			add, err = single(p, d, Job{Name: string(p), RW: RandRead, BlockSize: 4 << 10, IODepth: DefaultIODepth,
				Size: lay.span, Runtime: b.Runtime, TimeBased: true})
		case ProfileRandReadUnderWrites:
			add, err = readUnderWrites(d, lay, b)
		case ProfileSeqRead128KQD32:
			add, err = single(p, d, Job{Name: string(p), RW: SeqRead, BlockSize: DefaultBlockSize, IODepth: DefaultIODepth,
				Size: lay.span, Runtime: b.Runtime, TimeBased: true})
		case ProfileGrid:
			add, err = grid(d, lay, b, g)
		}
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", p, err)
		}
		steps = append(steps, add...)
	}
	return steps, nil
}

// region is the part of the device the profiles use, and its unit: a zone
// on a zoned device, 1 MiB on a conventional one.
type region struct {
	span, unit int64
}

func (r region) units() int64 { return r.span / r.unit }

func layout(d Device, spanBytes int64) (region, error) {
	span := d.SizeBytes
	if spanBytes > 0 && spanBytes < span {
		span = spanBytes
	}
	unit := int64(conventionalAlign)
	if d.Zoned {
		unit = d.ZoneSizeBytes
	}
	r := region{span: span / unit * unit, unit: unit}
	// two units at least: the mixed profile reads one and writes another
	if r.units() < 2 {
		return r, fmt.Errorf("the span of %d bytes holds fewer than 2 units of %d bytes (zones, or 1 MiB on a conventional device)", span, unit)
	}
	return r, nil
}

func (d Device) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if d.SizeBytes <= 0 {
		bad("device size %d: must be positive", d.SizeBytes)
	}
	if d.MaxOpenZones < 0 || d.MaxActiveZones < 0 {
		bad("open and active zone limits cannot be negative")
	}
	if d.Zoned {
		if d.ZoneSizeBytes <= 0 || d.ZoneSizeBytes%512 != 0 {
			bad("zone size %d: must be a positive multiple of 512", d.ZoneSizeBytes)
		}
		if d.ZoneCapacityBytes <= 0 || d.ZoneCapacityBytes > d.ZoneSizeBytes {
			bad("zone capacity %d: must be positive and at most the zone size %d", d.ZoneCapacityBytes, d.ZoneSizeBytes)
		}
		if d.Zones < 2 {
			bad("%d zones: the profiles need at least 2", d.Zones)
		}
	} else if d.ZoneSizeBytes != 0 || d.Zones != 0 || d.MaxOpenZones != 0 || d.MaxActiveZones != 0 {
		bad("a conventional device has no zones: zone size, count and limits must be 0")
	}
	return errors.Join(errs...)
}

// openLimit is how many zones the device lets a host keep open for writing:
// the smaller of its open and active limits (an open zone is also active).
func (d Device) openLimit() int {
	switch {
	case d.MaxOpenZones > 0 && d.MaxActiveZones > 0:
		return min(d.MaxOpenZones, d.MaxActiveZones)
	case d.MaxOpenZones > 0:
		return d.MaxOpenZones
	default:
		return d.MaxActiveZones
	}
}

// finish sets what every job of a plan shares: the device, and zonemode=zbd
// on a zoned device.
func finish(d Device, j Job) Job {
	j.Filename = d.Path
	j.Zoned = d.Zoned
	return j
}

func single(p Profile, d Device, j Job) ([]Step, error) {
	args, err := finish(d, j).Args()
	if err != nil {
		return nil, err
	}
	return []Step{{Profile: p, Writes: Writes(p, Grid{}), Args: args}}, nil
}

// seqWriteOpenZones writes with one job per zone the device keeps open at
// once, each in its own equal share of the span (whole zones), one write in
// flight per job: a zoned write at a higher queue depth needs the kernel to
// keep the writes of a zone in order (mq-deadline before Linux 6.10), one in
// flight per zone does not, and the open zones still take writes side by
// side. fio is told the limit (max_open_zones) so that it never opens more.
func seqWriteOpenZones(d Device, lay region, b Bounds) ([]Step, error) {
	writers := DefaultWriters
	if lim := d.openLimit(); d.Zoned && lim > 0 {
		writers = lim
	}
	writers = int(min(int64(min(writers, MaxWriters)), lay.units()))
	share := lay.units() / int64(writers) * lay.unit
	j := Job{Name: string(ProfileSeqWriteOpenZones), RW: SeqWrite, BlockSize: DefaultBlockSize, IODepth: 1,
		NumJobs: writers, Size: share, Runtime: b.Runtime}
	if writers > 1 {
		j.OffsetIncrement = share
	}
	if d.Zoned {
		j.MaxOpenZones = writers
	}
	args, err := finish(d, j).Args()
	if err != nil {
		return nil, err
	}
	return []Step{{Profile: ProfileSeqWriteOpenZones, NumJobs: writers, Writes: true, Args: args}}, nil
}

// readUnderWrites reads at random from the first half of the span (written by
// ProfileSeqWriteOpenZones on a zoned device) while a writer, capped at the
// write rate, writes the second half sequentially (on a zoned device fio
// resets those zones as it comes back to them). They run in one fio process,
// reported apart.
func readUnderWrites(d Device, lay region, b Bounds) ([]Step, error) {
	half := lay.units() / 2 * lay.unit
	rate := b.WriteRateBytes
	if rate == 0 {
		rate = DefaultWriteRate
	}
	reader := finish(d, Job{Name: "reader", RW: RandRead, BlockSize: 4 << 10, IODepth: DefaultIODepth,
		Size: half, Runtime: b.Runtime, TimeBased: true})
	writer := finish(d, Job{Name: "writer", RW: SeqWrite, BlockSize: DefaultBlockSize, IODepth: 1,
		Offset: half, Size: lay.span - half, Runtime: b.Runtime, TimeBased: true, RateBytes: rate})
	if lim := d.openLimit(); d.Zoned && lim > 0 {
		// The device's own limit, on both jobs: fio refuses jobs of one process whose max_open_zones differ
		// ("Different 'max_open_zones' values"), and with a limit of 1 the writer wrote nothing over the zones
		// the open-zone writers had left open (both seen in the QEMU tier, null_blk zoned and NVMe ZNS). One
		// sequential job fills one zone after another all the same.
		writer.MaxOpenZones, reader.MaxOpenZones = lim, lim
	}
	args, err := MultiArgs(reader, writer)
	if err != nil {
		return nil, err
	}
	return []Step{{Profile: ProfileRandReadUnderWrites, Writes: true, Args: args}}, nil
}

func grid(d Device, lay region, b Bounds, g Grid) ([]Step, error) {
	switch {
	case g.Points() == 0:
		return nil, errors.New("the grid needs at least one block size, job count and queue depth")
	case g.Points() > MaxGridPoints:
		return nil, fmt.Errorf("%d points (%d block sizes x %d job counts x %d queue depths): at most %d",
			g.Points(), len(g.BlockSizes), len(g.NumJobs), len(g.IODepths), MaxGridPoints)
	case d.Zoned && g.RW == RandWrite:
		return nil, errors.New("random writes cannot run on a zoned device: its zones take writes only at their write pointers")
	}
	var steps []Step
	for _, bs := range g.BlockSizes {
		for _, jobs := range g.NumJobs {
			for _, qd := range g.IODepths {
				if bs <= 0 || jobs <= 0 || qd <= 0 {
					return nil, fmt.Errorf("point bs=%d jobs=%d qd=%d: every coordinate must be positive", bs, jobs, qd)
				}
				j := finish(d, Job{Name: string(ProfileGrid), RW: g.RW, BlockSize: bs, IODepth: qd, NumJobs: jobs,
					Size: lay.span, Runtime: b.Runtime, TimeBased: true})
				if g.RW == RandWrite || g.RW == RandRead {
					j.FreshRandom = true
				}
				if g.RW == SeqWrite && jobs > 1 {
					// clones writing the same range would overwrite one another (and on a zoned device
					// collide at the write pointers): each gets its share
					share := lay.units() / int64(jobs) * lay.unit
					if share == 0 {
						return nil, fmt.Errorf("point bs=%d jobs=%d qd=%d: the span has fewer units than jobs", bs, jobs, qd)
					}
					j.Size, j.OffsetIncrement = share, share
				}
				if d.Zoned && g.RW == SeqWrite {
					if lim := d.openLimit(); lim > 0 && jobs > lim {
						return nil, fmt.Errorf("point bs=%d jobs=%d qd=%d: %d writers need more open zones than the device's limit of %d", bs, jobs, qd, jobs, lim)
					}
					j.MaxOpenZones = jobs
				}
				args, err := j.Args()
				if err != nil {
					return nil, err
				}
				steps = append(steps, Step{Profile: ProfileGrid, Point: PointName(bs, jobs, qd), BlockSize: bs,
					NumJobs: jobs, IODepth: qd, Writes: Writes(ProfileGrid, g), Args: args})
			}
		}
	}
	return steps, nil
}

// PointName names a grid point.
func PointName(bs int64, jobs, qd int) string {
	return fmt.Sprintf("bs=%d jobs=%d qd=%d", bs, jobs, qd)
}
