package report

import (
	"fmt"
	"strconv"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// ExportDrive is what the drive under a target wrote during a phase (spec.drive): the drive's own counters
// (Measured) and the FTL model's estimates (Modelled) in separate places; a missing part is null with its reason.
type ExportDrive struct {
	Device                 string           `json:"device,omitempty"`
	DeviceBytes            *int64           `json:"deviceBytes"`
	BlockLayerWrittenBytes *int64           `json:"blockLayerWrittenBytes"`
	Measured               *ExportMeasured  `json:"measured"`
	MeasuredUnavailable    string           `json:"measuredUnavailable,omitempty"`
	Modelled               []ExportModelled `json:"modelled"`
	ModelUnavailable       string           `json:"modelUnavailable,omitempty"`
}

// ExportMeasured are the differences of the drive's NVMe counters over the phase.
type ExportMeasured struct {
	Logs                       []string `json:"logs"`
	HostWrittenBytes           *int64   `json:"hostWrittenBytes"`
	HostWrittenResolutionBytes *int64   `json:"hostWrittenResolutionBytes"`
	HostWriteCommands          *int64   `json:"hostWriteCommands"`
	MediaWrittenBytes          *int64   `json:"mediaWrittenBytes"`
	MediaSource                string   `json:"mediaSource,omitempty"`
	MediaUnavailable           string   `json:"mediaUnavailable,omitempty"`
	WriteAmplification         *float64 `json:"writeAmplification"`
	HostBytesPerTransaction    *float64 `json:"hostBytesPerTransaction"`
	MediaBytesPerTransaction   *float64 `json:"mediaBytesPerTransaction"`
}

// ExportModelled is the model's estimate at one over-provisioning factor.
type ExportModelled struct {
	OverProvisioningPercent  int32    `json:"overProvisioningPercent"`
	Label                    string   `json:"label"`
	HostWrittenBytes         *int64   `json:"hostWrittenBytes"`
	MediaWrittenBytes        *int64   `json:"mediaWrittenBytes"`
	WriteAmplification       *float64 `json:"writeAmplification"`
	MediaBytesPerTransaction *float64 `json:"mediaBytesPerTransaction"`
	SteadyState              bool     `json:"steadyState"`
}

// ExportCapacity is how much of a target's device its stack leaves usable: device and usable bytes measured,
// raw flash modelled.
type ExportCapacity struct {
	DeviceBytes  *int64                   `json:"deviceBytes"`
	UsableBytes  *int64                   `json:"usableBytes"`
	UsableSource string                   `json:"usableSource,omitempty"`
	Modelled     []ExportModelledCapacity `json:"modelled"`
}

// ExportModelledCapacity is a conventional drive's modelled raw flash at one over-provisioning factor.
type ExportModelledCapacity struct {
	OverProvisioningPercent int32    `json:"overProvisioningPercent"`
	RawBytes                *int64   `json:"rawBytes"`
	UsableShare             *float64 `json:"usableShare"`
}

// DriveSourcesExport says, in an export with drive figures, where their two parts come from.
var DriveSourcesExport = map[string]string{
	"measured": "the drive's own NVMe logs (SMART, OCP C0h, FDP); on emulated drives (QEMU, null_blk) media bytes equal host bytes",
	"modelled": "a page-mapped FTL with greedy GC fed the device's block trace; not a measurement",
}

func intOrNil(s string) *int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func floatOrNil(s string) *float64 {
	v, ok := num(s)
	if !ok {
		return nil
	}
	return &v
}

func exportDrive(d *v1alpha1.DriveFigures) *ExportDrive {
	if d == nil {
		return nil
	}
	e := &ExportDrive{Device: d.Device, DeviceBytes: intOrNil(d.DeviceBytes), BlockLayerWrittenBytes: intOrNil(d.BlockLayerWrittenBytes),
		MeasuredUnavailable: d.CountersUnavailable, ModelUnavailable: d.ModelUnavailable, Modelled: []ExportModelled{}}
	if c := d.Counters; c != nil {
		e.Measured = &ExportMeasured{Logs: c.Logs, HostWrittenBytes: intOrNil(c.HostWrittenBytes),
			HostWrittenResolutionBytes: intOrNil(c.HostWrittenResolutionBytes), HostWriteCommands: intOrNil(c.HostWriteCommands),
			MediaWrittenBytes: intOrNil(c.MediaWrittenBytes), MediaSource: c.MediaSource, MediaUnavailable: c.MediaUnavailable,
			WriteAmplification: floatOrNil(c.WriteAmplification), HostBytesPerTransaction: floatOrNil(c.HostBytesPerTransaction),
			MediaBytesPerTransaction: floatOrNil(c.MediaBytesPerTransaction)}
	}
	for _, m := range d.Modelled {
		e.Modelled = append(e.Modelled, ExportModelled{OverProvisioningPercent: m.OverProvisioningPercent, Label: m.Label,
			HostWrittenBytes: intOrNil(m.HostWrittenBytes), MediaWrittenBytes: intOrNil(m.MediaWrittenBytes),
			WriteAmplification: floatOrNil(m.WriteAmplification), MediaBytesPerTransaction: floatOrNil(m.MediaBytesPerTransaction),
			SteadyState: m.SteadyState})
	}
	return e
}

func exportCapacity(c *v1alpha1.TargetCapacity) *ExportCapacity {
	if c == nil {
		return nil
	}
	e := &ExportCapacity{DeviceBytes: intOrNil(c.DeviceBytes), UsableBytes: intOrNil(c.UsableBytes), UsableSource: c.UsableSource,
		Modelled: []ExportModelledCapacity{}}
	for _, m := range c.Modelled {
		e.Modelled = append(e.Modelled, ExportModelledCapacity{OverProvisioningPercent: m.OverProvisioningPercent,
			RawBytes: intOrNil(m.RawBytes), UsableShare: floatOrNil(m.UsableShare)})
	}
	return e
}

// The summary CSV's drive and capacity columns: measured ones named measured_*, modelled ones modelled_*_op<N>
// (one pair per factor of the Benchmark), capacity on the mean rows.

func driveHead(ops []int32) []string {
	head := []string{"measured_drive_host_bytes", "measured_drive_media_bytes", "measured_drive_host_bytes_per_tx",
		"measured_drive_media_bytes_per_tx", "measured_drive_wa", "measured_drive_wa_source", "measured_drive_unavailable"}
	for _, op := range ops {
		head = append(head, fmt.Sprintf("modelled_wa_op%d", op), fmt.Sprintf("modelled_media_bytes_per_tx_op%d", op))
	}
	head = append(head, "modelled_unavailable", "device_bytes", "usable_bytes", "usable_source")
	for _, op := range ops {
		head = append(head, fmt.Sprintf("modelled_raw_bytes_op%d", op), fmt.Sprintf("modelled_usable_share_op%d", op))
	}
	return head
}

// driveRecord is the drive columns of one row: d for the figures (a run's, or the mean of the runs), c for the
// capacity (mean rows only); either may be nil.
func driveRecord(d *v1alpha1.DriveFigures, c *v1alpha1.TargetCapacity, ops []int32) []string {
	rec := make([]string, 0, len(driveHead(ops)))
	if d == nil {
		d = &v1alpha1.DriveFigures{}
	}
	if m := d.Counters; m != nil {
		unavailable := ""
		if m.MediaWrittenBytes == "" {
			unavailable = m.MediaUnavailable
		}
		rec = append(rec, m.HostWrittenBytes, m.MediaWrittenBytes, m.HostBytesPerTransaction, m.MediaBytesPerTransaction,
			m.WriteAmplification, m.MediaSource, unavailable)
	} else {
		rec = append(rec, "", "", "", "", "", "", d.CountersUnavailable)
	}
	for _, op := range ops {
		wa, media := "", ""
		for _, m := range d.Modelled {
			if m.OverProvisioningPercent == op {
				wa, media = m.WriteAmplification, m.MediaBytesPerTransaction
			}
		}
		rec = append(rec, wa, media)
	}
	rec = append(rec, d.ModelUnavailable)
	if c == nil {
		c = &v1alpha1.TargetCapacity{}
	}
	rec = append(rec, c.DeviceBytes, c.UsableBytes, c.UsableSource)
	for _, op := range ops {
		raw, share := "", ""
		for _, m := range c.Modelled {
			if m.OverProvisioningPercent == op {
				raw, share = m.RawBytes, m.UsableShare
			}
		}
		rec = append(rec, raw, share)
	}
	return rec
}
