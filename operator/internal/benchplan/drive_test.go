package benchplan

import (
	"strings"
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
)

func int64p(v int64) *int64 { return &v }

func TestDriveFiguresKeepMeasuredAndModelledApart(t *testing.T) {
	rep := drivereport.Report{
		Device: "nvme1n1", BlockLayerWrittenBytes: int64p(40960000),
		Counters: &drivereport.Counters{Logs: []string{"smart", "ocp"}, HostWrittenBytes: 40960000, HostResolutionBytes: 512000,
			HostWriteCommands: 10000, MediaWrittenBytes: int64p(40960000), MediaSource: "ocp"},
		Model: []drivereport.Modelled{{OverProvisioningPercent: 28, HostWrittenBytes: 40960000, MediaWrittenBytes: 81920000, SteadyState: true}},
	}
	f := DriveFiguresOf(rep, 1000)
	c := f.Counters
	if c.WriteAmplification != "1.000" || c.HostBytesPerTransaction != "40960.00" || c.MediaBytesPerTransaction != "40960.00" || c.MediaSource != "ocp" {
		t.Fatalf("counters: %+v", c)
	}
	m := f.Modelled[0]
	if m.WriteAmplification != "2.000" || m.MediaBytesPerTransaction != "81920.00" || !strings.HasPrefix(m.Label, "modelled") || !strings.Contains(m.Label, "OP 28%") {
		t.Fatalf("model: %+v", m)
	}
	// A drive without a media counter has host figures only: no write amplification, no zero.
	rep.Counters.MediaWrittenBytes, rep.Counters.MediaSource = nil, ""
	f = DriveFiguresOf(rep, 0)
	if f.Counters.MediaWrittenBytes != "" || f.Counters.WriteAmplification != "" || f.Counters.HostBytesPerTransaction != "" {
		t.Fatalf("figures without their source: %+v", f.Counters)
	}
}

func iteration(tx int64, host, media string, op int32, mHost, mMedia string) v1alpha1.IterationResult {
	it := v1alpha1.IterationResult{Transactions: tx, Drive: &v1alpha1.DriveFigures{Device: "nvme1n1"}}
	if host != "" {
		it.Drive.Counters = &v1alpha1.DriveCounters{HostWrittenBytes: host, HostWriteCommands: "10", MediaWrittenBytes: media, MediaSource: "ocp"}
	}
	if op > 0 {
		it.Drive.Modelled = []v1alpha1.ModelledDrive{{OverProvisioningPercent: op, HostWrittenBytes: mHost, MediaWrittenBytes: mMedia, SteadyState: true}}
	}
	return it
}

func TestMeanDriveSumsBytesOverRuns(t *testing.T) {
	its := []v1alpha1.IterationResult{
		iteration(100, "1000000", "1500000", 7, "1000000", "4000000"),
		iteration(300, "3000000", "3000000", 7, "3000000", "6000000"),
	}
	m := meanDrive(its)
	// WA over the runs is total media over total host (4.5/4), not the mean of 1.5 and 1.0.
	if c := m.Counters; c.HostWrittenBytes != "4000000" || c.MediaWrittenBytes != "4500000" || c.WriteAmplification != "1.125" ||
		c.HostBytesPerTransaction != "10000.00" || c.HostWriteCommands != "20" {
		t.Fatalf("counters mean: %+v", c)
	}
	if md := m.Modelled[0]; md.WriteAmplification != "2.500" || md.MediaBytesPerTransaction != "25000.00" {
		t.Fatalf("modelled mean: %+v", md)
	}
	// A run without counters takes the counters out of the mean, with a reason; the model stays.
	its = append(its, iteration(100, "", "", 7, "1", "1"))
	m = meanDrive(its)
	if m.Counters != nil || m.CountersUnavailable == "" || len(m.Modelled) != 1 {
		t.Fatalf("partial counters: %+v", m)
	}
	// A run without the model's factor takes that factor out.
	its = []v1alpha1.IterationResult{iteration(100, "1", "1", 7, "1", "2"), iteration(100, "1", "1", 0, "", "")}
	if m := meanDrive(its); len(m.Modelled) != 0 || m.Counters == nil {
		t.Fatalf("partial model: %+v", m)
	}
	if meanDrive(nil) != nil || meanDrive([]v1alpha1.IterationResult{{}}) != nil {
		t.Fatal("no drive figures, no mean")
	}
}
