package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/blocktrace"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/nvmelog"
)

// driveFlags configure the drive sidecar.
type driveFlags struct {
	phase, target, device, dir       string
	counters                         bool
	countersUnavailable              string
	modelOPs                         []int
	modelUnavailable, tracefs        string
	modelCache                       string
	sysBlock, devDir, terminationLog string
}

// driveCmd is the drive sidecar of a benchmark Job: it reads the drive's NVMe counters and starts the block
// trace, opens the gate for the runner beside it, waits until the kubelet stops it (the runner has ended),
// then reads the counters again, runs the rest of the trace through the FTL model, and leaves the report as its
// termination message. It never exits before it is stopped: the kubelet restarts a sidecar that does.
func driveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code := parseDriveFlags(args, stderr)
	if code >= 0 {
		return code
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "znsbench drive: "+format+"\n", a...) }
	d := startDrive(f, logf)
	<-ctx.Done()
	rep := d.finish(logf)
	b, err := rep.Encode()
	if err != nil {
		b, _ = drivereport.Report{Phase: f.phase, Device: f.device, CountersUnavailable: "report too large: " + err.Error(),
			ModelUnavailable: "report too large"}.Encode()
	}
	if f.terminationLog != "" {
		if err := os.WriteFile(f.terminationLog, b, 0o644); err != nil {
			logf("termination log not written (%v); the report is on stdout", err)
		}
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}

func parseDriveFlags(args []string, stderr io.Writer) (driveFlags, int) {
	var f driveFlags
	fs := flag.NewFlagSet("znsbench drive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.phase, "phase", "", "the phase the runner beside runs (precondition, prepare, run)")
	fs.StringVar(&f.target, "target", "", "target name, for the log")
	fs.StringVar(&f.device, "device", "", "kernel name of the target's device (nvme0n1)")
	fs.StringVar(&f.dir, "dir", "", "directory shared with the runner")
	fs.BoolVar(&f.counters, "counters", false, "read the drive's NVMe logs (needs CAP_SYS_ADMIN and /dev/<device>)")
	fs.StringVar(&f.countersUnavailable, "counters-unavailable", "", "why the counters cannot be read (reported as is)")
	fs.Func("model-op", "comma-separated over-provisioning percentages to model the drive at (needs tracefs)", func(v string) error {
		for _, s := range strings.Split(v, ",") {
			op, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || op < 1 || op > 100 {
				return fmt.Errorf("%q is not a percentage from 1 to 100", s)
			}
			f.modelOPs = append(f.modelOPs, op)
		}
		return nil
	})
	fs.StringVar(&f.modelUnavailable, "model-unavailable", "", "why the drive is not modelled (reported as is)")
	fs.StringVar(&f.tracefs, "tracefs", blocktrace.DefaultTracefs, "the node's tracefs")
	fs.StringVar(&f.modelCache, "model-cache", "", "a directory on the node that keeps settled models for later phases (none: each phase settles its own)")
	fs.StringVar(&f.sysBlock, "sys-block", "/sys/block", "sysfs block directory")
	fs.StringVar(&f.devDir, "dev-dir", "/dev", "where the device node is")
	fs.StringVar(&f.terminationLog, "termination-log", "/dev/termination-log", "where to write the report (skipped if not writable)")
	if err := fs.Parse(args); err != nil {
		return f, 2
	}
	if f.device == "" || f.dir == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "znsbench drive: --device and --dir are required, and no arguments")
		return f, 2
	}
	return f, -1
}

// driveRun is one phase's readings.
type driveRun struct {
	f     driveFlags
	start time.Time
	// invalid, when set, voids every figure (the sidecar restarted, the phase began before it was ready).
	invalid string

	statBefore blockstat.Stat
	statOK     bool

	nvmeBefore *nvmelog.Snapshot
	nvmeErr    error

	tracer *blocktrace.Tracer
	models *modelSet
	// traceErr says why the model has no trace.
	traceErr error
}

func startDrive(f driveFlags, logf func(string, ...any)) *driveRun {
	d := &driveRun{f: f, start: time.Now()}
	marker := filepath.Join(f.dir, drivereport.BeforeFile)
	if _, err := os.Stat(marker); err == nil {
		// A restarted sidecar lost its first readings and the trace so far: nothing it reports would cover the phase.
		d.invalid = "the drive sidecar restarted during the phase, losing its first readings and the trace before: no figures"
		logf("%s", d.invalid)
		_ = drivereport.OpenGate(f.dir)
		return d
	}
	if err := os.WriteFile(marker, []byte(d.start.UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		logf("cannot mark the start in %s: %v", f.dir, err)
	}
	d.statBefore, d.statOK = sampleStat(f, logf)
	if f.counters {
		d.nvmeBefore, d.nvmeErr = nvmelog.Read(f.devDir, f.device)
		if d.nvmeErr != nil {
			logf("counters: %v", d.nvmeErr)
		}
	}
	if len(f.modelOPs) > 0 {
		d.startModel(logf)
	}
	if err := drivereport.OpenGate(f.dir); err != nil {
		d.invalid = err.Error()
		logf("%s", d.invalid)
	} else {
		logf("ready: %s %s of target %s", f.phase, f.device, f.target)
	}
	return d
}

func sampleStat(f driveFlags, logf func(string, ...any)) (blockstat.Stat, bool) {
	st, err := blockstat.Sample(f.sysBlock, f.device)
	if err != nil {
		logf("block layer counters of %s not read: %v", f.device, err)
		return st, false
	}
	return st, true
}

func (d *driveRun) startModel(logf func(string, ...any)) {
	bytes, err := deviceBytes(d.f.sysBlock, d.f.device)
	if err != nil {
		d.traceErr = err
		return
	}
	d.models = newModelSet(bytes, d.f.modelOPs)
	if d.f.modelCache != "" {
		var why string
		if d.models.cache, why = openModelCache(d.f.modelCache); d.models.cache == nil {
			logf("models settle without the node's cache: %s", why)
		}
	}
	tr, err := blocktrace.Start(blocktrace.Options{Device: d.f.device, Tracefs: d.f.tracefs, SysBlock: d.f.sysBlock}, d.models.feed)
	if err != nil {
		d.traceErr = err
		d.models = nil
		logf("block trace: %v", err)
		return
	}
	d.tracer = tr
	go d.models.precondition(logf)
}

// deviceBytes is the device's size from sysfs (in 512-byte sectors whatever its block size).
func deviceBytes(sysBlock, dev string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(sysBlock, dev, "size"))
	if err != nil {
		return 0, fmt.Errorf("the size of %s: %w", dev, err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("the size of %s: %q is not a sector count", dev, strings.TrimSpace(string(b)))
	}
	return n * blockstat.SectorBytes, nil
}

// finish takes the last readings and builds the report.
func (d *driveRun) finish(logf func(string, ...any)) drivereport.Report {
	rep := drivereport.Report{Phase: d.f.phase, Device: d.f.device, StartTime: d.start.UTC().Format(time.RFC3339),
		EndTime: time.Now().UTC().Format(time.RFC3339), CountersUnavailable: d.f.countersUnavailable, ModelUnavailable: d.f.modelUnavailable}
	if n, err := deviceBytes(d.f.sysBlock, d.f.device); err == nil {
		rep.DeviceBytes = n
	}
	var traced blocktrace.Totals
	var traceStopErr error
	if d.tracer != nil {
		traced, traceStopErr = d.tracer.Stop()
	}
	if d.invalid != "" {
		if d.f.counters {
			rep.CountersUnavailable = d.invalid
		}
		if len(d.f.modelOPs) > 0 {
			rep.ModelUnavailable = d.invalid
		}
		return rep
	}
	if after, ok := sampleStat(d.f, logf); ok && d.statOK {
		if delta, err := blockstat.Delta(d.statBefore, after); err == nil {
			n := int64(delta.WrittenBytes())
			rep.BlockLayerWrittenBytes = &n
		} else {
			logf("block layer counters: %v", err)
		}
	}
	if d.f.counters {
		d.finishCounters(&rep, logf)
	}
	if len(d.f.modelOPs) > 0 {
		d.finishModel(&rep, traced, traceStopErr, logf)
	}
	return rep
}

func (d *driveRun) finishCounters(rep *drivereport.Report, logf func(string, ...any)) {
	if d.nvmeErr != nil {
		rep.CountersUnavailable = countersReason(d.nvmeErr)
		return
	}
	after, err := nvmelog.Read(d.f.devDir, d.f.device)
	if err != nil {
		rep.CountersUnavailable = countersReason(err)
		return
	}
	c, err := nvmelog.Delta(d.nvmeBefore, after)
	if err != nil {
		rep.CountersUnavailable = countersReason(err)
		rep.CountersReset = errors.Is(err, nvmelog.ErrCounterReset)
		logf("counters: %v", err)
		return
	}
	rep.Counters = countersOf(c)
}

// countersOf keeps what the drive said: host bytes from FDP when the namespace has it (exact), otherwise from
// SMART (in steps of 512000 bytes), and media bytes when a log reports them.
func countersOf(c *nvmelog.Change) *drivereport.Counters {
	out := &drivereport.Counters{Logs: []string{"smart"}, HostWrittenBytes: int64(c.HostBytes),
		HostResolutionBytes: int64(c.HostBytesResolution), HostWriteCommands: int64(c.HostWriteCommands)}
	if c.OCP != nil {
		out.Logs = append(out.Logs, "ocp")
	}
	if c.FDP != nil {
		out.Logs = append(out.Logs, "fdp")
	}
	if w := c.WA; w != nil {
		media := int64(w.MediaBytes)
		out.HostWrittenBytes, out.HostResolutionBytes = int64(w.HostBytes), int64(w.HostBytesResolution)
		out.MediaWrittenBytes, out.MediaSource = &media, w.Source
	} else if c.NoWA != nil {
		out.NoMedia = c.NoWA.Error()
	}
	return out
}

func countersReason(err error) string {
	msg := strings.TrimPrefix(err.Error(), "nvmelog: ")
	var ne *nvmelog.Error
	switch {
	case errors.Is(err, nvmelog.ErrCounterReset):
		return "drive counters dropped: " + msg
	case errors.As(err, &ne) && strings.HasPrefix(ne.Detail, "no drive counters"):
		return ne.Detail
	}
	return "no drive counters: " + msg
}

func (d *driveRun) finishModel(rep *drivereport.Report, traced blocktrace.Totals, stopErr error, logf func(string, ...any)) {
	switch {
	case d.traceErr != nil:
		rep.ModelUnavailable = "no model: the block trace could not start: " + d.traceErr.Error()
		return
	case stopErr != nil:
		rep.ModelUnavailable = fmt.Sprintf("no model: the block trace is incomplete (%v), and a model fed part of the writes flatters the drive", stopErr)
		return
	}
	results, err := d.models.results()
	if err != nil {
		rep.ModelUnavailable = "no model: " + err.Error()
		return
	}
	rep.Model = results
	logf("model: %d writes (%d bytes) and %d discards traced", traced.Writes, traced.WriteBytes, traced.Discards)
}
