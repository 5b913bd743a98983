package benchplan

import (
	"reflect"
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
)

// The runner's figures (numbers, latencies in ns) become the API's decimal strings in microseconds, a direction
// without I/O stays absent, and the block layer's bytes go to the drive figures.
func TestFioTargetStatus(t *testing.T) {
	written := int64(1 << 30)
	rep := fio.RunnerReport{Device: "nvme0n2", Zoned: true, Found: "empty", BlockLayerWrittenBytes: &written,
		Results: []fio.Result{
			{Profile: fio.Profile("seqwrite-open-zones"), Write: &fio.Direction{Bytes: 1 << 30, BWBytes: 524288000, IOPS: 4000.25, P50Ns: 12345, P99Ns: 250000, P999Ns: 1000001}},
			{Profile: fio.Profile("grid"), Point: "bs=4096 jobs=1 qd=1", Read: &fio.Direction{Bytes: 4096, BWBytes: 4096, IOPS: 1}},
		}}
	got := FioTargetStatus(rep, "node-a", "t1")
	want := &v1alpha1.FioTargetStatus{Node: "node-a", Device: "nvme0n2", Zoned: true, Found: "empty", WriteToken: "t1",
		Results: []v1alpha1.FioRunResult{
			{Profile: v1alpha1.FioSeqWriteOpenZones, Write: &v1alpha1.FioDirection{Bytes: 1 << 30, BytesPerSec: "524288000", IOPS: "4000.25",
				LatencyP50Us: "12.345", LatencyP99Us: "250", LatencyP999Us: "1000.001"}},
			{Profile: v1alpha1.FioGrid, Point: "bs=4096 jobs=1 qd=1", Read: &v1alpha1.FioDirection{Bytes: 4096, BytesPerSec: "4096", IOPS: "1.00"}},
		},
		Drive: &v1alpha1.DriveFigures{Device: "nvme0n2", BlockLayerWrittenBytes: "1073741824"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FioTargetStatus =\n%+v\nwant\n%+v", got, want)
	}
	if st := FioTargetStatus(fio.RunnerReport{Device: "nullb0"}, "n", ""); st.Drive != nil || st.Results != nil {
		t.Errorf("an empty report gives %+v", st)
	}
}
