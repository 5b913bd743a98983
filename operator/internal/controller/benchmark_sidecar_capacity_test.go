package controller

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
)

func volumeTarget() *v1alpha1.ZNSDatabase {
	db := &v1alpha1.ZNSDatabase{}
	db.Spec.Storage.Volume = &v1alpha1.VolumeSource{}
	return db
}

// The size the drive sidecar reads of a conventional target's device reaches the capacity through the drive
// figures: here a report the sidecar left in the QEMU guest (operator/internal/drivereport/testdata), of an
// emulated 1 GiB conventional namespace.
func TestCapacityFromTheSidecarsReport(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "drivereport", "testdata", "qemu-run-nvme1n1-ocp.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := drivereport.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	spec := &v1alpha1.DriveSpec{Counters: true, ModelOverProvisioningPercent: []int32{7, 28}}
	ts := &v1alpha1.TargetStatus{PreconditionDrive: benchplan.DriveFiguresOf(rep, 0)}
	if want := strconv.FormatInt(rep.DeviceBytes, 10); rep.DeviceBytes <= 0 || ts.PreconditionDrive.DeviceBytes != want {
		t.Fatalf("drive figures say %q, the report %d", ts.PreconditionDrive.DeviceBytes, rep.DeviceBytes)
	}
	b := &v1alpha1.Benchmark{}
	b.Spec.Drive = spec
	benchplan.RecordCapacity(b, ts, volumeTarget(), benchresult.Summary{})
	c := ts.Capacity
	if c == nil || c.DeviceBytes != ts.PreconditionDrive.DeviceBytes || len(c.Modelled) != 2 {
		t.Fatalf("capacity %+v", c)
	}
	for _, m := range c.Modelled {
		raw, _ := strconv.ParseInt(m.RawBytes, 10, 64)
		if want := rep.DeviceBytes * int64(100+m.OverProvisioningPercent) / 100; raw != want {
			t.Errorf("OP %d: raw %d, want %d", m.OverProvisioningPercent, raw, want)
		}
	}
	// A report without the size leaves it empty, not 0.
	rep.DeviceBytes = 0
	if f := benchplan.DriveFiguresOf(rep, 0); f.DeviceBytes != "" {
		t.Errorf("device bytes %q without a size", f.DeviceBytes)
	}
}
