package benchplan

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// The geometry of the QEMU namespaces the project tests on (operator/internal/nvmelog/testdata/README.md): a
// zoned one of 40 zones of 64 MiB with 60 MiB capacity, a conventional one of 1 GiB.
const (
	mib         = 1 << 20
	qemuZones   = 40
	qemuZoneCap = 60 * mib
)

func zonedTarget(zoneCap *resource.Quantity) *v1alpha1.ZNSDatabase {
	db := &v1alpha1.ZNSDatabase{}
	db.Spec.Storage.ZonedDevice = &v1alpha1.ZonedDeviceSource{NodeName: "n1", DeviceName: "nvme0n1"}
	db.Status.Device = &v1alpha1.DeviceStatus{Path: "/dev/nvme0n1", Zones: qemuZones, ZoneSize: resource.NewQuantity(64*mib, resource.BinarySI), ZoneCapacity: zoneCap}
	return db
}

func volumeTarget() *v1alpha1.ZNSDatabase {
	db := &v1alpha1.ZNSDatabase{}
	db.Spec.Storage.Volume = &v1alpha1.VolumeSource{}
	return db
}

func TestCapacity(t *testing.T) {
	ops := &v1alpha1.DriveSpec{ModelOverProvisioningPercent: []int32{7, 28}}
	withSize := func(prepare, precondition string) *v1alpha1.TargetStatus {
		ts := &v1alpha1.TargetStatus{}
		if prepare != "" {
			ts.PrepareDrive = &v1alpha1.DriveFigures{DeviceBytes: prepare}
		}
		if precondition != "" {
			ts.PreconditionDrive = &v1alpha1.DriveFigures{DeviceBytes: precondition}
		}
		return ts
	}
	cases := []struct {
		name  string
		drive *v1alpha1.DriveSpec
		db    *v1alpha1.ZNSDatabase
		ts    *v1alpha1.TargetStatus
		sum   benchresult.Summary
		want  *v1alpha1.TargetCapacity
	}{
		{
			// 1 GiB x 1.07 = 1148903751.68 and x 1.28 = 1374389534.72, rounded down; 10^9 / each.
			name: "conventional, file system measured", drive: ops, db: volumeTarget(), ts: withSize("1073741824", ""),
			sum: benchresult.Summary{UsableBytes: 1e9, UsableSource: benchresult.UsableStatfs},
			want: &v1alpha1.TargetCapacity{DeviceBytes: "1073741824", UsableBytes: "1000000000", UsableSource: "statfs",
				Modelled: []v1alpha1.ModelledCapacity{
					{OverProvisioningPercent: 7, RawBytes: "1148903751", UsableShare: "0.870"},
					{OverProvisioningPercent: 28, RawBytes: "1374389534", UsableShare: "0.728"},
				}},
		},
		{
			// Without the file system's size the share is the device's: 1/1.07 and 1/1.28.
			name: "conventional, metrics off, size from the precondition", drive: ops, db: volumeTarget(), ts: withSize("", "1073741824"),
			want: &v1alpha1.TargetCapacity{DeviceBytes: "1073741824",
				Modelled: []v1alpha1.ModelledCapacity{
					{OverProvisioningPercent: 7, RawBytes: "1148903751", UsableShare: "0.935"},
					{OverProvisioningPercent: 28, RawBytes: "1374389534", UsableShare: "0.781"},
				}},
		},
		{
			name: "conventional without spec.drive: no device size, no model", db: volumeTarget(), ts: withSize("", ""),
			sum:  benchresult.Summary{UsableBytes: 1e9, UsableSource: benchresult.UsableStatfs},
			want: &v1alpha1.TargetCapacity{UsableBytes: "1000000000", UsableSource: "statfs"},
		},
		{
			// 40 x 60 MiB; no modelled raw flash for a zoned drive, whatever spec.drive asks.
			name: "zoned", drive: ops, db: zonedTarget(resource.NewQuantity(qemuZoneCap, resource.BinarySI)), ts: withSize("", ""),
			sum:  benchresult.Summary{UsableBytes: 2 * 1e9, UsableSource: benchresult.UsableZenFS},
			want: &v1alpha1.TargetCapacity{DeviceBytes: "2516582400", UsableBytes: "2000000000", UsableSource: "zenfs"},
		},
		{
			// The zone capacity comes from a zone report; without it the product is not guessed from the zone size.
			name: "zoned, zone capacity unknown", drive: ops, db: zonedTarget(nil), ts: withSize("", ""),
			sum:  benchresult.Summary{UsableBytes: 2 * 1e9, UsableSource: benchresult.UsableZenFS},
			want: &v1alpha1.TargetCapacity{UsableBytes: "2000000000", UsableSource: "zenfs"},
		},
		{name: "nothing known", drive: ops, db: volumeTarget(), ts: withSize("", "")},
		{
			name: "unreadable size", drive: ops, db: volumeTarget(), ts: withSize("-", "0"),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &v1alpha1.Benchmark{}
			b.Spec.Drive = c.drive
			RecordCapacity(b, c.ts, c.db, c.sum)
			if d := cmp.Diff(c.want, c.ts.Capacity); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// The raw flash is computed without overflowing, up to the largest device the factor can double.
func TestCapacityLargeDevices(t *testing.T) {
	c := targetCapacity(volumeTarget(), math.MaxInt64/2, 0, "", []int32{100})
	if len(c.Modelled) != 1 || c.Modelled[0].RawBytes != "9223372036854775806" || c.Modelled[0].UsableShare != "0.500" {
		t.Errorf("%+v", c.Modelled)
	}
	if c := targetCapacity(volumeTarget(), math.MaxInt64/2+1, 0, "", []int32{100}); len(c.Modelled) != 0 {
		t.Errorf("beyond the bound: %+v", c.Modelled)
	}
	db := zonedTarget(resource.NewQuantity(1<<40, resource.BinarySI))
	db.Status.Device.Zones = 1 << 30
	if n := deviceBytes(db, &v1alpha1.TargetStatus{}); n != 0 {
		t.Errorf("zones x capacity beyond 2^62 bytes: %d, want unknown", n)
	}
}
