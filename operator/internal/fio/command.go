package fio

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RW is fio's rw= access pattern.
type RW string

// Access patterns the project uses.
const (
	SeqWrite  RW = "write"
	SeqRead   RW = "read"
	RandWrite RW = "randwrite"
	RandRead  RW = "randread"
)

// Defaults of the seed methodology's fio scripts (fio_zns_write.sh and
// precondition-conv-fio.sh: 128 KiB writes at queue depth 32).
const (
	DefaultBlockSize = 128 << 10
	DefaultIODepth   = 32
	DefaultIOEngine  = "libaio"
	// PreconditionPasses is how often the seed methodology writes the whole
	// conventional drive before measuring it.
	PreconditionPasses = 2
)

// Job is one fio job on one block device. Sizes are in bytes; zero values
// take the defaults above (Size 0 means up to the end of the device).
type Job struct {
	Name     string
	Filename string
	RW       RW
	// BlockSize, Offset and Size must be multiples of 512: the I/O is direct.
	BlockSize int64
	Offset    int64
	Size      int64
	IODepth   int
	IOEngine  string
	// NumJobs > 1 runs that many clones reported as one (group_reporting).
	NumJobs int
	// Loops repeats the whole Offset..Size range.
	Loops int
	// Runtime bounds the job; with TimeBased it runs that long, wrapping
	// around the range.
	Runtime   time.Duration
	TimeBased bool
	// Zoned runs with zonemode=zbd: fio reads the zone layout, writes at
	// each zone's write pointer, respects zone capacity, and resets zones it
	// has to write again. Required on host-managed devices.
	Zoned bool
	// MaxOpenZones caps the zones fio keeps open (zoned only; 0 means the
	// device's own limit).
	MaxOpenZones int
	// FreshRandom makes a random job draw new offsets on every run
	// (randrepeat=0; fio's default repeats the same sequence) and keep no map
	// of the blocks it wrote (norandommap: on a 4 TB device the map takes
	// about 120 MB, and a time-bound job need not cover every block).
	FreshRandom bool
	// OffsetIncrement moves each clone of a NumJobs > 1 job this many bytes
	// further than the one before (fio's offset_increment), so that clones
	// write regions of their own: with zone-aligned regions, one zone open
	// per clone.
	OffsetIncrement int64
	// RateBytes caps the job's bandwidth in bytes per second (fio's rate);
	// 0 means no cap.
	RateBytes int64
}

// Precondition is the seed methodology's step for conventional drives:
// write the entire device sequentially PreconditionPasses times, so that the
// measurement starts from a drive in steady state rather than fresh out of
// the box. Never run it on a zoned device: it is not zoned-aware and the
// data on the device is destroyed.
func Precondition(device string) Job {
	return Job{
		Name:      "precondition",
		Filename:  device,
		RW:        SeqWrite,
		BlockSize: DefaultBlockSize,
		IODepth:   DefaultIODepth,
		Loops:     PreconditionPasses,
	}
}

// PreconditionRandomBlockSize is the write size of the random rounds of a
// device precondition: 4 KiB, the smallest page of the drives in question
// and what SNIA's steady-state tests write.
const PreconditionRandomBlockSize = 4 << 10

// WholeDevicePass writes the whole conventional device once, sequentially,
// in writes of blockSize bytes at queue depth 32: one pass of a device
// precondition, run as a job of its own so that each pass reports its own
// figures. It destroys everything on the device.
func WholeDevicePass(device string, blockSize int64) Job {
	return Job{
		Name:      "precondition-pass",
		Filename:  device,
		RW:        SeqWrite,
		BlockSize: blockSize,
		IODepth:   DefaultIODepth,
	}
}

// RandomRound writes 4 KiB blocks at random offsets over the whole
// conventional device for runtime, at queue depth 32: one round of a device
// precondition after its sequential passes, whose write IOPS the
// steady-state rule judges. It destroys the device's contents.
func RandomRound(device string, runtime time.Duration) Job {
	return Job{
		Name:        "precondition-round",
		Filename:    device,
		RW:          RandWrite,
		BlockSize:   PreconditionRandomBlockSize,
		IODepth:     DefaultIODepth,
		Runtime:     runtime,
		TimeBased:   true,
		FreshRandom: true,
	}
}

// ZonedSeqWrite writes size bytes of zones from offset (both zone-aligned
// for a whole-zone write) at each zone's write pointer.
func ZonedSeqWrite(device string, offset, size int64) Job {
	return Job{
		Name:      "zoned-seqwrite",
		Filename:  device,
		RW:        SeqWrite,
		BlockSize: DefaultBlockSize,
		IODepth:   DefaultIODepth,
		Offset:    offset,
		Size:      size,
		Zoned:     true,
	}
}

// ZonedRandRead reads 4 KiB blocks at random from offset..offset+size for
// runtime. In zonemode=zbd fio reads only below the write pointers, so the
// range must have been written first.
func ZonedRandRead(device string, offset, size int64, runtime time.Duration) Job {
	return Job{
		Name:      "zoned-randread",
		Filename:  device,
		RW:        RandRead,
		BlockSize: 4 << 10,
		IODepth:   DefaultIODepth,
		Offset:    offset,
		Size:      size,
		Runtime:   runtime,
		TimeBased: true,
		Zoned:     true,
	}
}

// Command is Args preceded by "fio".
func (j Job) Command() ([]string, error) {
	args, err := j.Args()
	if err != nil {
		return nil, err
	}
	return append([]string{"fio"}, args...), nil
}

// Args returns fio's arguments for j, JSON output on stdout. Every value is
// its own argv element: nothing goes through a shell.
func (j Job) Args() ([]string, error) {
	if err := j.validate(); err != nil {
		return nil, err
	}
	bs := j.BlockSize
	if bs == 0 {
		bs = DefaultBlockSize
	}
	engine := j.IOEngine
	if engine == "" {
		engine = DefaultIOEngine
	}
	depth := max(j.IODepth, 1)
	args := []string{
		"--output-format=json",
		"--name=" + j.Name,
		"--filename=" + j.Filename,
		"--rw=" + string(j.RW),
		"--bs=" + strconv.FormatInt(bs, 10),
		"--ioengine=" + engine,
		"--iodepth=" + strconv.Itoa(depth),
		// Page cache would measure memory, and zoned writes must be direct.
		"--direct=1",
	}
	if j.NumJobs > 1 {
		args = append(args, "--numjobs="+strconv.Itoa(j.NumJobs), "--group_reporting")
	}
	if j.OffsetIncrement > 0 {
		args = append(args, "--offset_increment="+strconv.FormatInt(j.OffsetIncrement, 10))
	}
	if j.Offset > 0 {
		args = append(args, "--offset="+strconv.FormatInt(j.Offset, 10))
	}
	if j.Size > 0 {
		args = append(args, "--size="+strconv.FormatInt(j.Size, 10))
	}
	if j.Loops > 1 {
		args = append(args, "--loops="+strconv.Itoa(j.Loops))
	}
	if j.Runtime > 0 {
		args = append(args, "--runtime="+fioDuration(j.Runtime))
	}
	if j.TimeBased {
		args = append(args, "--time_based")
	}
	if j.FreshRandom {
		args = append(args, "--randrepeat=0", "--norandommap")
	}
	if j.RateBytes > 0 {
		args = append(args, "--rate="+strconv.FormatInt(j.RateBytes, 10))
	}
	if j.Zoned {
		args = append(args, "--zonemode=zbd")
		if j.MaxOpenZones > 0 {
			args = append(args, "--max_open_zones="+strconv.Itoa(j.MaxOpenZones))
		}
	}
	return args, nil
}

// MultiArgs returns fio's arguments for jobs that run side by side in one fio
// process (a reader and a rate-capped writer, say). fio reads the options
// after each --name as that job's own. Each job after the first starts a new
// reporting group (new_group), so that group_reporting of one job's clones
// never folds another job's figures into them: the report keeps one entry
// per job, in order.
func MultiArgs(jobs ...Job) ([]string, error) {
	if len(jobs) == 0 {
		return nil, errors.New("no fio job")
	}
	var out []string
	var errs []error
	for i, j := range jobs {
		args, err := j.Args()
		if err != nil {
			errs = append(errs, fmt.Errorf("job %d (%s): %w", i+1, j.Name, err))
			continue
		}
		if i > 0 {
			// --output-format is global: given once, first
			args = append(args[1:], "--new_group")
		}
		out = append(out, args...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// fioDuration writes d in fio's time syntax: whole seconds, else
// milliseconds (rounded up, so a short runtime never becomes 0, which fio
// reads as unbounded).
func fioDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return strconv.FormatInt(int64(ms), 10) + "ms"
}

func (j Job) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if j.Name == "" || strings.ContainsAny(j.Name, "\n\r") {
		bad("job name %q: must be one non-empty line", j.Name)
	}
	switch {
	case !strings.HasPrefix(j.Filename, "/"):
		bad("filename %q: give the device's absolute path, e.g. /dev/nullb0", j.Filename)
	case strings.Contains(j.Filename, ":"):
		// fio splits filename= on ':' into several files
		bad("filename %q: contains ':', which fio reads as a list of files", j.Filename)
	}
	switch j.RW {
	case SeqWrite, SeqRead, RandWrite, RandRead:
	default:
		bad("rw %q: want one of write, read, randwrite, randread", j.RW)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"block size", j.BlockSize}, {"offset", j.Offset}, {"size", j.Size}, {"offset increment", j.OffsetIncrement}} {
		if f.v < 0 || f.v%512 != 0 {
			bad("%s %d: must be a non-negative multiple of 512 (direct I/O)", f.name, f.v)
		}
	}
	if j.IODepth < 0 || j.NumJobs < 0 || j.Loops < 0 || j.MaxOpenZones < 0 || j.Runtime < 0 || j.RateBytes < 0 {
		bad("iodepth, numjobs, loops, max open zones, runtime and rate cannot be negative")
	}
	if j.OffsetIncrement > 0 && j.NumJobs < 2 {
		bad("offset increment %d applies to a job with numjobs > 1", j.OffsetIncrement)
	}
	if j.TimeBased && j.Runtime <= 0 {
		bad("time_based needs a runtime, or fio runs until it is killed")
	}
	if j.MaxOpenZones > 0 && !j.Zoned {
		bad("max open zones %d applies to zoned jobs only", j.MaxOpenZones)
	}
	if j.FreshRandom && j.RW != RandWrite && j.RW != RandRead {
		bad("fresh random offsets apply to random jobs only, not rw %q", j.RW)
	}
	if strings.ContainsAny(j.IOEngine, " \n=") {
		bad("ioengine %q: not an engine name", j.IOEngine)
	}
	return errors.Join(errs...)
}
