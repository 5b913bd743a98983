package benchplan

import (
	"math"
	"strconv"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// RecordCapacity keeps, with the verify, how much of the target's device its stack leaves for data
// (status.targets[].capacity): what the device exports, what the database's storage makes of it (the runner read
// it from the database pod's metrics sidecar), and for a conventional drive the flash it would hold behind that
// at each over-provisioning factor of spec.drive (modelled).
func RecordCapacity(b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase, sum benchresult.Summary) {
	var ops []int32
	if b.Spec.Drive != nil {
		ops = b.Spec.Drive.ModelOverProvisioningPercent
	}
	ts.Capacity = targetCapacity(db, deviceBytes(db, ts), sum.UsableBytes, sum.UsableSource, ops)
}

// deviceBytes is what the target's device exports, 0 when unknown: zones x zone capacity of a zoned device (its
// conventional zones, if any, counted at that capacity too), or the size the drive sidecar read of a
// conventional target's device during the precondition or the prepare.
func deviceBytes(db *v1alpha1.ZNSDatabase, ts *v1alpha1.TargetStatus) int64 {
	if db.IsZoned() {
		d := db.Status.Device
		if d == nil || d.Zones <= 0 || d.ZoneCapacity == nil {
			return 0
		}
		zcap := d.ZoneCapacity.Value()
		if zcap <= 0 || d.Zones > (1<<62)/zcap {
			return 0
		}
		return d.Zones * zcap
	}
	for _, f := range []*v1alpha1.DriveFigures{ts.PrepareDrive, ts.PreconditionDrive} {
		if f == nil {
			continue
		}
		if n, err := strconv.ParseInt(f.DeviceBytes, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// maxModelledDeviceBytes keeps the raw flash at the largest factor (100%: twice the device) within an int64.
const maxModelledDeviceBytes = math.MaxInt64 / 2

// targetCapacity is the capacity status of a target; nil when nothing is known. A zoned target gets no modelled
// entries: a ZNS drive exports its flash as zones and keeps no spare of its own for garbage collection.
func targetCapacity(db *v1alpha1.ZNSDatabase, device, usable int64, source string, ops []int32) *v1alpha1.TargetCapacity {
	if device <= 0 && usable <= 0 {
		return nil
	}
	c := &v1alpha1.TargetCapacity{}
	if device > 0 {
		c.DeviceBytes = strconv.FormatInt(device, 10)
	}
	if usable > 0 {
		c.UsableBytes, c.UsableSource = strconv.FormatInt(usable, 10), source
	}
	if db.IsZoned() || device <= 0 || device > maxModelledDeviceBytes {
		return c
	}
	usableOrDevice := usable
	if usableOrDevice <= 0 {
		usableOrDevice = device
	}
	for _, op := range ops {
		if op < 1 || op > 100 {
			continue // admission keeps these out
		}
		// device x (100 + op) / 100, rounded down, without the product overflowing.
		raw := device/100*int64(100+op) + device%100*int64(100+op)/100
		c.Modelled = append(c.Modelled, v1alpha1.ModelledCapacity{
			OverProvisioningPercent: op,
			RawBytes:                strconv.FormatInt(raw, 10),
			UsableShare:             strconv.FormatFloat(float64(usableOrDevice)/float64(raw), 'f', 3, 64),
		})
	}
	return c
}
