package resources

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func qty(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

// TestYCSBUsable: each kind of storage reports its usable capacity somewhere else; none known is 0.
func TestYCSBUsable(t *testing.T) {
	zenfs := &v1alpha1.ZNSDatabase{Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{
		ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n", DeviceName: "nvme0n2"}}}}
	btrfs := zenfs.DeepCopy()
	btrfs.Spec.Storage.ZonedDevice.Filesystem = v1alpha1.FilesystemBtrfs
	device := &v1alpha1.ZNSDatabase{Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{Device: &v1alpha1.DeviceSource{}}}}
	volume := &v1alpha1.ZNSDatabase{Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{Size: resource.MustParse("20Gi")}}}}
	for _, db := range []*v1alpha1.ZNSDatabase{zenfs, btrfs, device} {
		if n, from := YCSBUsable(db); n != 0 || from != "" {
			t.Errorf("no status yet: %d from %q", n, from)
		}
	}
	zenfs.Status.Device = &v1alpha1.DeviceStatus{Zones: 100, ZoneCapacity: qty("1Gi")}
	if n, _ := YCSBUsable(zenfs); n != 0 {
		t.Errorf("ZenFS without zenfs df figures: %d (the zones are not what ZenFS leaves for data)", n)
	}
	zenfs.Status.Filesystem = &v1alpha1.FilesystemStatus{Type: "zenfs", ZenFS: &v1alpha1.ZenFSSpaceStatus{Free: qty("90Gi"), Used: qty("5Gi"), Reclaimable: qty("1Gi")}}
	btrfs.Status.Device = &v1alpha1.DeviceStatus{Zones: 100, ZoneCapacity: qty("1Gi")}
	device.Status.Device = &v1alpha1.DeviceStatus{Capacity: qty("500Gi")}
	for _, tc := range []struct {
		db   *v1alpha1.ZNSDatabase
		want int64
		from string
	}{{zenfs, 96 << 30, UsableFromZenFS}, {btrfs, 100 << 30, UsableFromZones}, {device, 500 << 30, UsableFromDevice}, {volume, 20 << 30, UsableFromVolume}} {
		if n, from := YCSBUsable(tc.db); n != tc.want || from != tc.from {
			t.Errorf("%d from %q, want %d from %q", n, from, tc.want, tc.from)
		}
	}
	spec := &v1alpha1.YCSBSpec{RecordCount: intstr.FromString("60%"), FieldCount: 1, FieldLength: 4096}
	st, err := YCSBRecords(spec, volume)
	if err != nil || st.RecordCount != (20<<30)*60/100/4120 || st.UsableFrom != UsableFromVolume {
		t.Errorf("60%% of a 20Gi volume: %+v, %v", st, err)
	}
	if _, err := YCSBRecords(spec, &v1alpha1.ZNSDatabase{Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{Device: &v1alpha1.DeviceSource{}}}}); err == nil ||
		!strings.Contains(err.Error(), "not known yet") {
		t.Errorf("a device that reports no capacity: %v", err)
	}
	spec.RecordCount = intstr.FromInt32(1234)
	if st, err := YCSBRecords(spec, &v1alpha1.ZNSDatabase{}); err != nil || st.RecordCount != 1234 || st.UsableFrom != "" {
		t.Errorf("a number: %+v, %v", st, err)
	}
}

// TestYCSBRunnerArgs: the runner's command line per phase carries the record count resolved into status, one load
// thread for MyRocks, the common start, and no secret.
func TestYCSBRunnerArgs(t *testing.T) {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
		Spec: v1alpha1.BenchmarkSpec{Tool: v1alpha1.ToolYCSB, DurationSeconds: 60, ReportIntervalSeconds: 5, Threads: 16, Iterations: 1,
			ThreadSweep: []int32{4, 32},
			YCSB: &v1alpha1.YCSBSpec{Workload: "f", RecordCount: intstr.FromString("60%"), FieldCount: 10, FieldLength: 400,
				RequestDistribution: "zipfian", LoadThreads: 8, TargetOpsPerSecond: 2000, OperationCount: 1000000}},
		Status: v1alpha1.BenchmarkStatus{Targets: []v1alpha1.TargetStatus{{Name: "rocks", YCSB: &v1alpha1.YCSBTargetStatus{RecordCount: 777}},
			{Name: "inno", YCSB: &v1alpha1.YCSBTargetStatus{RecordCount: 888}}}}}
	db := func(name string, engine v1alpha1.Engine) *v1alpha1.ZNSDatabase {
		return &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: v1alpha1.ZNSDatabaseSpec{Engine: engine, Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}}}
	}
	arg := func(args []string, flag string) string {
		if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	for _, tc := range []struct {
		target  string
		engine  v1alpha1.Engine
		phase   string
		it      int32
		sub     string
		threads string
		records string
	}{
		{"rocks", v1alpha1.EngineRocksDB, BenchPhasePrepare, 0, "ycsb-load", "1", "777"},
		{"inno", v1alpha1.EngineInnoDB, BenchPhasePrepare, 0, "ycsb-load", "8", "888"},
		{"inno", v1alpha1.EngineInnoDB, BenchPhaseVerify, 0, "ycsb-verify", "8", "888"},
		{"rocks", v1alpha1.EngineRocksDB, BenchPhaseRun, 1, "ycsb-run", "4", "777"},
		{"inno", v1alpha1.EngineInnoDB, BenchPhaseRun, 2, "ycsb-run", "32", "888"},
	} {
		args := RunnerArgs(b, BenchJobInput{Phase: tc.phase, Iteration: tc.it, DB: db(tc.target, tc.engine)})
		if args[0] != "znsbench" || args[1] != tc.sub || arg(args, "--threads") != tc.threads || arg(args, "--record-count") != tc.records {
			t.Errorf("%s %s: %q; want %s, --threads %s, --record-count %s", tc.target, tc.phase, args, tc.sub, tc.threads, tc.records)
		}
		for flag, want := range map[string]string{"--workload": "f", "--field-count": "10", "--field-length": "400",
			"--distribution": "zipfian", "--mysql-db": YCSBDatabase, "--mysql-user": "root", "--storage-engine": string(tc.engine)} {
			if got := arg(args, flag); got != want {
				t.Errorf("%s %s: %s %q, want %q", tc.target, tc.phase, flag, got, want)
			}
		}
		run := tc.phase == BenchPhaseRun
		if (arg(args, "--start-file") == startFile) != run || (arg(args, "--target-ops") == "2000") != run ||
			(arg(args, "--time") == "60") != run || (arg(args, "--operation-count") == "1000000") != run {
			t.Errorf("%s %s: run flags wrong in %q", tc.target, tc.phase, args)
		}
		if slices.ContainsFunc(args, func(a string) bool { return strings.Contains(strings.ToLower(a), "password") }) {
			t.Errorf("%s %s: a password flag in %q", tc.target, tc.phase, args)
		}
	}
	// sysbench's phases of a sysbench Benchmark are untouched.
	b.Spec.Tool, b.Spec.YCSB = v1alpha1.ToolSysbench, nil
	if args := RunnerArgs(b, BenchJobInput{Phase: BenchPhasePrepare, DB: db("inno", v1alpha1.EngineInnoDB)}); args[1] != BenchPhasePrepare {
		t.Errorf("sysbench prepare: %q", args)
	}
}
