package nvmelog

import (
	"errors"
	"fmt"
	"time"
)

// Change is what a drive says it did between two snapshots.
type Change struct {
	Device   string
	Interval time.Duration

	// From the SMART log, which counts the whole controller (every namespace).
	DataUnitsWritten uint64
	// HostBytes is DataUnitsWritten x DataUnitBytes. The drive rounds its
	// count up, so the host really sent more than HostBytes -
	// HostBytesResolution and less than HostBytes + HostBytesResolution: a
	// phase that wrote a few MB is known only roughly.
	HostBytes           uint64
	HostBytesResolution uint64
	HostWriteCommands   uint64

	OCP *OCPChange // nil unless both snapshots have the OCP log
	FDP *FDPChange // nil unless both snapshots have FDP statistics

	// WA is the drive's write amplification, nil when the drive reports no
	// media bytes (NoWA then says why).
	WA   *WriteAmplification
	NoWA error
}

// OCPChange is the difference of the OCP log's counters, in bytes as the OCP
// specification defines them.
type OCPChange struct{ MediaBytesWritten, MediaBytesRead uint64 }

// FDPChange is the difference of the FDP statistics of the namespace's
// endurance group (every namespace in it).
type FDPChange struct{ HostBytes, MediaBytes, MediaBytesErased uint64 }

// WriteAmplification is media bytes over host bytes, both from the drive.
type WriteAmplification struct {
	HostBytes, MediaBytes uint64
	// HostBytesResolution: 1 when the host bytes come from FDP statistics,
	// DataUnitBytes when from SMART.
	HostBytesResolution uint64
	Source              string // "fdp" or "smart+ocp"
	Ratio               float64
}

// Delta compares two snapshots of one device, before then after. A counter
// that went backwards, or a drive whose serial changed, is ErrCounterReset;
// a SMART log missing from either snapshot is an error carrying the reason.
func Delta(before, after *Snapshot) (*Change, error) {
	if before == nil || after == nil {
		return nil, errors.New("nvmelog: Delta needs two snapshots")
	}
	if before.Device != after.Device {
		return nil, fmt.Errorf("nvmelog: snapshots of %s and %s", before.Device, after.Device)
	}
	if after.Taken.Before(before.Taken) {
		return nil, fmt.Errorf("nvmelog: %s: the snapshot taken at %s comes before the one at %s", after.Device,
			after.Taken.Format(time.RFC3339Nano), before.Taken.Format(time.RFC3339Nano))
	}
	if before.Controller.Serial != after.Controller.Serial {
		return nil, fmt.Errorf("%w: %s: serial %q became %q", ErrCounterReset, after.Device, before.Controller.Serial, after.Controller.Serial)
	}
	for _, s := range []*Snapshot{before, after} {
		if s.SMART == nil {
			if r := s.Reason(PageSMART); r != nil {
				return nil, r
			}
			return nil, fmt.Errorf("nvmelog: %s: a snapshot without its SMART log", s.Device)
		}
	}
	d := &Change{Device: after.Device, Interval: after.Taken.Sub(before.Taken), HostBytesResolution: DataUnitBytes}
	var err error
	if d.DataUnitsWritten, err = sub("Data Units Written", before.SMART.DataUnitsWritten, after.SMART.DataUnitsWritten); err != nil {
		return nil, err
	}
	if d.DataUnitsWritten > ^uint64(0)/DataUnitBytes {
		return nil, fmt.Errorf("nvmelog: %s: %d data units do not fit 64 bits of bytes", d.Device, d.DataUnitsWritten)
	}
	d.HostBytes = d.DataUnitsWritten * DataUnitBytes
	if d.HostWriteCommands, err = sub("Host Write Commands", before.SMART.HostWriteCommands, after.SMART.HostWriteCommands); err != nil {
		return nil, err
	}
	if before.OCP != nil && after.OCP != nil {
		o := &OCPChange{}
		if o.MediaBytesWritten, err = sub("Physical Media Units Written", before.OCP.PhysicalMediaUnitsWritten, after.OCP.PhysicalMediaUnitsWritten); err != nil {
			return nil, err
		}
		if o.MediaBytesRead, err = sub("Physical Media Units Read", before.OCP.PhysicalMediaUnitsRead, after.OCP.PhysicalMediaUnitsRead); err != nil {
			return nil, err
		}
		d.OCP = o
	}
	if before.FDP != nil && after.FDP != nil {
		if before.EnduranceGroup != after.EnduranceGroup {
			return nil, fmt.Errorf("nvmelog: %s: endurance group %d became %d", d.Device, before.EnduranceGroup, after.EnduranceGroup)
		}
		f := &FDPChange{}
		if f.HostBytes, err = sub("Host Bytes with Metadata Written", before.FDP.HostBytesWritten, after.FDP.HostBytesWritten); err != nil {
			return nil, err
		}
		if f.MediaBytes, err = sub("Media Bytes with Metadata Written", before.FDP.MediaBytesWritten, after.FDP.MediaBytesWritten); err != nil {
			return nil, err
		}
		if f.MediaBytesErased, err = sub("Media Bytes Erased", before.FDP.MediaBytesErased, after.FDP.MediaBytesErased); err != nil {
			return nil, err
		}
		d.FDP = f
	}
	d.WA, d.NoWA = d.amplification(before, after)
	return d, nil
}

// amplification prefers FDP (host and media bytes from one log, exact) over
// OCP media bytes against SMART's rounded host bytes.
func (d *Change) amplification(before, after *Snapshot) (*WriteAmplification, error) {
	var w WriteAmplification
	switch {
	case d.FDP != nil:
		w = WriteAmplification{HostBytes: d.FDP.HostBytes, MediaBytes: d.FDP.MediaBytes, HostBytesResolution: 1, Source: "fdp"}
	case d.OCP != nil:
		w = WriteAmplification{HostBytes: d.HostBytes, MediaBytes: d.OCP.MediaBytesWritten, HostBytesResolution: DataUnitBytes, Source: "smart+ocp"}
	default:
		reason := errors.New("the drive reports no media bytes written (no OCP log, no FDP statistics)")
		for _, s := range []*Snapshot{before, after} {
			if r := s.Reason(PageOCPSMART); r != nil {
				reason = fmt.Errorf("%w; %w", reason, r)
				break
			}
		}
		return nil, reason
	}
	if w.HostBytes == 0 {
		return nil, fmt.Errorf("nvmelog: %s: the drive counted no host writes in the interval", d.Device)
	}
	w.Ratio = float64(w.MediaBytes) / float64(w.HostBytes)
	return &w, nil
}
