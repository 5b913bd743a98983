package resources

import (
	"strconv"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/ycsb"
)

// YCSBDatabase is the database go-ycsb's table lives in, beside sysbench's sbtest.
const YCSBDatabase = "ycsb"

// Where a target's usable capacity was read, for status.targets[].ycsb.usableFrom.
const (
	UsableFromZenFS     = "status.filesystem.zenfs"
	UsableFromZones     = "status.device.zones"
	UsableFromDevice    = "status.device.capacity"
	UsableFromVolume    = "spec.storage.volume.size"
	ycsbRunnerSubPrefix = "ycsb-"
)

// YCSBUsable is how many bytes the target's storage leaves for data, as its ZNSDatabase reports it: ZenFS's
// free, used and reclaimable space (zenfs df); zones x zone capacity of another zoned device (what the zoned file
// system is made on); the capacity of a storage.device; the requested size of a storage.volume. 0 when the
// status does not say yet.
func YCSBUsable(db *v1alpha1.ZNSDatabase) (int64, string) {
	st := db.Status
	if db.UsesZenFS() {
		if fs := st.Filesystem; fs != nil && fs.ZenFS != nil && fs.ZenFS.Free != nil && fs.ZenFS.Used != nil {
			n := fs.ZenFS.Free.Value() + fs.ZenFS.Used.Value()
			if fs.ZenFS.Reclaimable != nil {
				n += fs.ZenFS.Reclaimable.Value()
			}
			return n, UsableFromZenFS
		}
		return 0, ""
	}
	if db.IsZoned() {
		if d := st.Device; d != nil && d.Zones > 0 && d.ZoneCapacity != nil {
			zcap := d.ZoneCapacity.Value()
			if zcap > 0 && d.Zones <= (1<<62)/zcap {
				return d.Zones * zcap, UsableFromZones
			}
		}
		return 0, ""
	}
	if db.Spec.Storage.Device != nil {
		if d := st.Device; d != nil && d.Capacity != nil && d.Capacity.Value() > 0 {
			return d.Capacity.Value(), UsableFromDevice
		}
		return 0, ""
	}
	if v := db.Spec.Storage.Volume; v != nil && v.Size.Value() > 0 {
		return v.Size.Value(), UsableFromVolume
	}
	return 0, ""
}

// YCSBRecords resolves spec.ycsb.recordCount for one target: the number given, or the share of its usable
// capacity. The error says what is missing.
func YCSBRecords(spec *v1alpha1.YCSBSpec, db *v1alpha1.ZNSDatabase) (*v1alpha1.YCSBTargetStatus, error) {
	rc, err := ycsb.ParseRecordCount(spec.RecordCount.String())
	if err != nil {
		return nil, err
	}
	st := &v1alpha1.YCSBTargetStatus{}
	var usable int64
	if rc.Percent > 0 {
		usable, st.UsableFrom = YCSBUsable(db)
		st.UsableBytes = usable
	}
	st.RecordCount, err = rc.Resolve(usable, int64(spec.FieldCount), int64(spec.FieldLength))
	if err != nil {
		return nil, err
	}
	return st, nil
}

// ycsbSubcommand is the runner's subcommand for a phase of a YCSB Benchmark.
func ycsbSubcommand(phase string) (string, bool) {
	switch phase {
	case BenchPhasePrepare:
		return ycsbRunnerSubPrefix + "load", true
	case BenchPhaseVerify:
		return ycsbRunnerSubPrefix + "verify", true
	case BenchPhaseRun:
		return ycsbRunnerSubPrefix + "run", true
	}
	return "", false
}

// ycsbRunnerArgs is the runner's command line for a YCSB Benchmark's phase. The record count is the one the
// Benchmark resolved for the target before its load (status.targets[].ycsb), so that load, verify and run agree
// even when the device's figures move. No secret: the password comes from the environment.
func ycsbRunnerArgs(b *v1alpha1.Benchmark, in BenchJobInput) []string {
	s, y, db := b.Spec, b.Spec.YCSB, in.DB
	sub, _ := ycsbSubcommand(in.Phase)
	var records int64
	for _, ts := range b.Status.Targets {
		if ts.Name == db.Name && ts.YCSB != nil {
			records = ts.YCSB.RecordCount
		}
	}
	threads := int32(ycsb.LoadThreads(string(db.Spec.Engine), int(y.LoadThreads)))
	if in.Phase == BenchPhaseRun {
		threads, _ = s.RunThreads(in.Iteration)
	}
	args := []string{runnerBinary, sub,
		"--target", db.Name,
		"--workload", y.Workload,
		"--record-count", strconv.FormatInt(records, 10),
		"--field-count", strconv.Itoa(int(y.FieldCount)),
		"--field-length", strconv.Itoa(int(y.FieldLength)),
		"--distribution", y.RequestDistribution,
		"--threads", strconv.Itoa(int(threads)),
		"--mysql-host", db.ServiceName() + "." + db.Namespace + ".svc",
		"--mysql-port", strconv.Itoa(v1alpha1.MySQLPort),
		"--mysql-user", "root",
		"--mysql-db", YCSBDatabase,
		"--storage-engine", string(db.Spec.Engine),
	}
	switch in.Phase {
	case BenchPhasePrepare:
		if in.ObserverURL != "" {
			args = append(args, "--observer", in.ObserverURL)
		}
	case BenchPhaseVerify:
		if db.MetricsEnabled() {
			args = append(args, "--metrics-url", MetricsURL(db), "--usable-source", UsableSource(db))
		}
	case BenchPhaseRun:
		args = append(args,
			"--iteration", strconv.Itoa(int(in.Iteration)),
			"--time", strconv.Itoa(int(s.DurationSeconds)),
			"--report-interval", strconv.Itoa(int(s.ReportIntervalSeconds)),
		)
		if y.TargetOpsPerSecond > 0 {
			args = append(args, "--target-ops", strconv.Itoa(int(y.TargetOpsPerSecond)))
		}
		if y.OperationCount > 0 {
			args = append(args, "--operation-count", strconv.FormatInt(y.OperationCount, 10))
		}
		args = append(args, startArgs()...)
		args = append(args, in.deviceArgs()...)
	}
	return args
}
