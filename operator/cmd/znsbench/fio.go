package main

// znsbench fio: the runner of a fio Benchmark (spec.tool fio). It judges the device on its node before anything
// writes to it (held open or mounted: refused; holding data and writing profiles without a write token:
// refused), runs the profiles one fio at a time while holding the device O_EXCL (so nothing can mount or claim
// it mid-run), and prints one JSON report: each run's figures, the block layer's bytes over all of them and,
// with --counters on an NVMe device, the drive's own counters.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/nvmelog"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

const cmdFio = "fio"

// FioReport is what znsbench fio prints (stdout and the termination log); the operator decodes the same type.
type FioReport = fio.RunnerReport

type fioFlags struct {
	device, devDir, sysBlock, fioPath, terminationLog, writeToken string
	profiles, gridRW, gridBS, gridJobs, gridQD                    string
	runtime                                                       time.Duration
	span, writeRate                                               int64
	counters                                                      bool
}

func fioCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f fioFlags
	fs := flag.NewFlagSet("znsbench fio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.device, "device", "", "kernel name of the device (nullb0, nvme0n2)")
	fs.StringVar(&f.devDir, "dev-dir", "/dev", "where the device node is")
	fs.StringVar(&f.sysBlock, "sys-block", "/sys/block", "sysfs block directory")
	fs.StringVar(&f.fioPath, "fio", "fio", "fio binary")
	fs.StringVar(&f.terminationLog, "termination-log", "", "also write the JSON report here")
	fs.StringVar(&f.writeToken, "write-token", "", "consent to write to a device that holds data (default: $"+fio.WriteTokenEnv+")")
	fs.StringVar(&f.profiles, "profiles", "", "comma-separated profiles: "+joinProfiles())
	fs.DurationVar(&f.runtime, "runtime", time.Minute, "length of each fio run")
	fs.Int64Var(&f.span, "span", 0, "bytes of the device the profiles use from its start (0: all)")
	fs.Int64Var(&f.writeRate, "write-rate", 0, "bytes/s cap of the writer under which reads are measured (0: the default)")
	fs.StringVar(&f.gridRW, "grid-rw", string(fio.RandRead), "the grid's access pattern")
	fs.StringVar(&f.gridBS, "grid-bs", "", "the grid's block sizes in bytes, comma-separated")
	fs.StringVar(&f.gridJobs, "grid-jobs", "", "the grid's job counts, comma-separated")
	fs.StringVar(&f.gridQD, "grid-qd", "", "the grid's queue depths, comma-separated")
	fs.BoolVar(&f.counters, "counters", false, "read the NVMe drive's counters (needs CAP_SYS_ADMIN)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if f.writeToken == "" {
		// The operator hands the token in through the environment, so that the Job's command line is the same
		// whether or not one is given.
		f.writeToken = os.Getenv(fio.WriteTokenEnv)
	}
	profiles, g, err := f.plan()
	if err == nil {
		err = zbd.ValidateName(f.device)
	}
	if err != nil {
		fmt.Fprintf(stderr, "znsbench fio: %v\n", err)
		return 2
	}
	rep := runFio(ctx, f, profiles, g, func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) })
	out, _ := json.Marshal(rep)
	fmt.Fprintln(stdout, string(out))
	if f.terminationLog != "" {
		_ = os.WriteFile(f.terminationLog, out, 0o644)
	}
	if rep.Refused != "" || rep.Failed != "" {
		return 1
	}
	return 0
}

func joinProfiles() string {
	var s []string
	for _, p := range fio.Profiles {
		s = append(s, string(p))
	}
	return strings.Join(s, ", ")
}

func (f fioFlags) plan() ([]fio.Profile, fio.Grid, error) {
	var ps []fio.Profile
	for _, p := range strings.Split(f.profiles, ",") {
		if p = strings.TrimSpace(p); p != "" {
			ps = append(ps, fio.Profile(p))
		}
	}
	g := fio.Grid{RW: fio.RW(f.gridRW)}
	var err error
	if g.BlockSizes, err = int64s(f.gridBS); err != nil {
		return nil, g, fmt.Errorf("--grid-bs: %w", err)
	}
	var jobs, qd []int64
	if jobs, err = int64s(f.gridJobs); err != nil {
		return nil, g, fmt.Errorf("--grid-jobs: %w", err)
	}
	if qd, err = int64s(f.gridQD); err != nil {
		return nil, g, fmt.Errorf("--grid-qd: %w", err)
	}
	for _, j := range jobs {
		g.NumJobs = append(g.NumJobs, int(j))
	}
	for _, q := range qd {
		g.IODepths = append(g.IODepths, int(q))
	}
	return ps, g, nil
}

func int64s(s string) ([]int64, error) {
	var out []int64
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// runFio judges the device, then runs the plan. Nothing writes before the judgement passed.
func runFio(ctx context.Context, f fioFlags, profiles []fio.Profile, g fio.Grid, logf func(string, ...any)) FioReport {
	rep := FioReport{Device: f.device}
	d, err := zbd.Inspect(f.sysBlock, f.device)
	if err != nil {
		rep.Refused = fmt.Sprintf("cannot inspect %s: %v", f.device, err)
		return rep
	}
	rep.Zoned = d.Model == zbd.ModelHostManaged
	devPath := filepath.Join(f.devDir, f.device)
	// O_EXCL: EBUSY while a file system is mounted on it or a holder (RocksDB, zenfs, another runner) has it;
	// kept open for the whole run so that none can take it meanwhile. fio's own opens are not exclusive.
	held, err := zbd.OpenExclusive(devPath, false)
	if err != nil {
		if errors.Is(err, zbd.ErrBusy) {
			rep.Refused = zbd.BusyProblem(devPath, err).Message
		} else if errors.Is(err, os.ErrPermission) {
			rep.Refused = fmt.Sprintf("cannot open %s: %v: the runner (uid %d) needs the device node's group, which a host "+
				"gives as root:disk 0660: set the target's device.deviceGroupID (default 6, Debian's disk) or the database's "+
				"spec.deviceGroupID to it", devPath, err, os.Getuid())
		} else {
			rep.Refused = fmt.Sprintf("cannot open %s: %v", devPath, err)
		}
		return rep
	}
	defer held.Close()
	dev := fio.Device{Path: devPath, SizeBytes: d.CapacityBytes, Zoned: rep.Zoned}
	var zones []zbd.Zone
	if rep.Zoned {
		if zones, err = zbd.ReportZones(devPath, 0); err != nil {
			rep.Refused = fmt.Sprintf("cannot read the zone report of %s: %v", devPath, err)
			return rep
		}
		dev.ZoneSizeBytes, dev.ZoneCapacityBytes, dev.Zones = d.ZoneSizeBytes, zbd.ZoneCapacity(zones), d.NrZones
		dev.MaxOpenZones, dev.MaxActiveZones = int(d.MaxOpenZones), int(d.MaxActiveZones)
	}
	steps, err := fio.Plan(dev, profiles, fio.Bounds{Runtime: f.runtime, SpanBytes: f.span, WriteRateBytes: f.writeRate}, g)
	if err != nil {
		rep.Refused = err.Error()
		return rep
	}
	writes := false
	for _, s := range steps {
		writes = writes || s.Writes
	}
	empty, found, err := deviceEmpty(held, d.CapacityBytes, zones, rep.Zoned)
	if err != nil {
		rep.Refused = fmt.Sprintf("cannot tell whether %s is empty: %v", devPath, err)
		return rep
	}
	rep.Found = found
	if writes && !empty && f.writeToken == "" {
		rep.Refused = fmt.Sprintf("%s holds %s and the profiles write to it, destroying that: set spec.fio.writeToken to a fresh value to consent, or run read-only profiles only", devPath, found)
		return rep
	}
	before, statErr := blockstat.Sample(f.sysBlock, f.device)
	var nvmeBefore *nvmelog.Snapshot
	var nvmeErr error
	if f.counters {
		if nvmeBefore, nvmeErr = nvmelog.Read(f.devDir, f.device); nvmeErr != nil {
			rep.CountersUnavailable = countersReason(nvmeErr)
		}
	} else {
		rep.CountersUnavailable = "not asked for (spec.drive)"
	}
	for i, s := range steps {
		logf("run %d/%d: %s", i+1, len(steps), strings.TrimSpace(string(s.Profile)+" "+s.Point))
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(ctx, f.fioPath, s.Args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		runErr := cmd.Run()
		res, err := fio.ResultOf(s, out.Bytes())
		if runErr != nil || err != nil {
			rep.Failed = fmt.Sprintf("%s: fio: %v %v: %s", strings.TrimSpace(string(s.Profile)+" "+s.Point), runErr, err, lastLine(errb.String()))
			break
		}
		rep.Results = append(rep.Results, res)
	}
	if after, err := blockstat.Sample(f.sysBlock, f.device); err == nil && statErr == nil {
		if delta, err := blockstat.Delta(before, after); err == nil {
			w, r := int64(delta.WrittenBytes()), int64(delta.ReadBytes())
			rep.BlockLayerWrittenBytes, rep.BlockLayerReadBytes = &w, &r
		}
	}
	if f.counters && nvmeErr == nil {
		after, err := nvmelog.Read(f.devDir, f.device)
		if err == nil {
			var c *nvmelog.Change
			if c, err = nvmelog.Delta(nvmeBefore, after); err == nil {
				rep.Counters = countersOf(c)
			}
		}
		if err != nil {
			rep.CountersUnavailable = countersReason(err)
		}
	}
	return rep
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// emptyProbe is how much of each end of a conventional device must read back as zeros for it to be called
// empty: file systems, partition tables and ZenFS keep their signatures there (the format step's rule).
const emptyProbe = 1 << 20

// deviceEmpty tells whether the device holds nothing: zoned, no sequential zone written; conventional, both
// ends zeros.
func deviceEmpty(f *os.File, size int64, zones []zbd.Zone, zoned bool) (bool, string, error) {
	if zoned {
		if zbd.IsEmpty(zones) {
			return true, "empty", nil
		}
		written := 0
		for _, z := range zones {
			if z.Type.Sequential() && z.Cond != zbd.ZoneCondEmpty && z.Cond != zbd.ZoneCondOffline {
				written++
			}
		}
		return false, fmt.Sprintf("data (%d written zones)", written), nil
	}
	n := min(int64(emptyProbe), size)
	buf := make([]byte, n)
	for _, off := range []int64{0, size - n} {
		if _, err := f.ReadAt(buf, off); err != nil {
			return false, "", err
		}
		if !allZero(buf) {
			return false, "data (non-zero bytes in its first or last MiB)", nil
		}
	}
	return true, "empty", nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
