package report

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// A fio Benchmark's report is its own table: the devices, then each run's figures per direction (MiB/s from the
// status's bytes per second, latencies as recorded in microseconds), a failed target's cause below; none of the
// database columns (TPS, ratios to a baseline) appear.
func TestFioTable(t *testing.T) {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "raw"},
		Spec: v1alpha1.BenchmarkSpec{Tool: v1alpha1.ToolFio, Targets: []v1alpha1.BenchmarkTarget{{Name: "zns"}, {Name: "conv"}},
			Fio: &v1alpha1.FioSpec{Profiles: []v1alpha1.FioProfile{v1alpha1.FioSeqWriteOpenZones, v1alpha1.FioRandReadUnderWrites}, RuntimeSeconds: 30}},
		Status: v1alpha1.BenchmarkStatus{Phase: v1alpha1.BenchmarkFailed, Targets: []v1alpha1.TargetStatus{
			{Name: "zns", State: v1alpha1.TargetDone, Fio: &v1alpha1.FioTargetStatus{Node: "node-a", Device: "nvme0n2", Zoned: true, Found: "empty",
				Drive: &v1alpha1.DriveFigures{BlockLayerWrittenBytes: "2147483648"},
				Results: []v1alpha1.FioRunResult{
					{Profile: v1alpha1.FioSeqWriteOpenZones, Write: &v1alpha1.FioDirection{BytesPerSec: "524288000", IOPS: "4000.00", LatencyP50Us: "150", LatencyP99Us: "900.5", LatencyP999Us: "2000"}},
					{Profile: v1alpha1.FioRandReadUnderWrites, Read: &v1alpha1.FioDirection{BytesPerSec: "41943040", IOPS: "10240.00", LatencyP50Us: "80", LatencyP99Us: "400", LatencyP999Us: "1200"},
						Write: &v1alpha1.FioDirection{BytesPerSec: "67108864", IOPS: "512.00"}},
				}}},
			{Name: "conv", State: v1alpha1.TargetFailed, Reason: "TargetUnavailable", Message: "znsbench fio refused the device: /dev/sdb is busy"},
		}}}
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Log("\n" + text)
	for _, want := range []string{
		"benchmark lab/raw: fio on 2 device(s), seqwrite-open-zones, randread-rate-limited-writes, 30 s a run; Failed",
		"/dev/nvme0n2 on node-a (zoned)", "2.00 GiB",
		"seqwrite-open-zones", "500.0", "900.5",
		"randread-rate-limited-writes  -      read   40.0",
		"randread-rate-limited-writes  -      write  64.0",
		"FAILED (TargetUnavailable)", "conv: FAILED (TargetUnavailable): znsbench fio refused the device: /dev/sdb is busy",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "TPS") {
		t.Errorf("database columns in a fio report:\n%s", text)
	}
}
