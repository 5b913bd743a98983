package benchplan

import (
	"strconv"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
)

// DriveFiguresOf turns a sidecar report into status figures; transactions (0 outside runs) gives the per
// transaction figures.
func DriveFiguresOf(rep drivereport.Report, transactions int64) *v1alpha1.DriveFigures {
	f := &v1alpha1.DriveFigures{Device: rep.Device, CountersUnavailable: rep.CountersUnavailable, ModelUnavailable: rep.ModelUnavailable}
	if rep.DeviceBytes > 0 {
		f.DeviceBytes = strconv.FormatInt(rep.DeviceBytes, 10)
	}
	if rep.BlockLayerWrittenBytes != nil {
		f.BlockLayerWrittenBytes = strconv.FormatInt(*rep.BlockLayerWrittenBytes, 10)
	}
	if c := rep.Counters; c != nil {
		dc := &v1alpha1.DriveCounters{
			Logs:                       c.Logs,
			HostWrittenBytes:           strconv.FormatInt(c.HostWrittenBytes, 10),
			HostWrittenResolutionBytes: strconv.FormatInt(c.HostResolutionBytes, 10),
			HostWriteCommands:          strconv.FormatInt(c.HostWriteCommands, 10),
			HostBytesPerTransaction:    perTransaction(c.HostWrittenBytes, transactions),
			MediaUnavailable:           c.NoMedia,
		}
		if c.MediaWrittenBytes != nil {
			dc.MediaWrittenBytes = strconv.FormatInt(*c.MediaWrittenBytes, 10)
			dc.MediaSource = c.MediaSource
			dc.MediaBytesPerTransaction = perTransaction(*c.MediaWrittenBytes, transactions)
			if wa, ok := c.WriteAmplification(); ok {
				dc.WriteAmplification = strconv.FormatFloat(wa, 'f', 3, 64)
			}
		}
		f.Counters = dc
	}
	for _, m := range rep.Model {
		md := v1alpha1.ModelledDrive{
			OverProvisioningPercent:  int32(m.OverProvisioningPercent),
			Label:                    drivereport.Label(m.OverProvisioningPercent),
			HostWrittenBytes:         strconv.FormatInt(m.HostWrittenBytes, 10),
			MediaWrittenBytes:        strconv.FormatInt(m.MediaWrittenBytes, 10),
			MediaBytesPerTransaction: perTransaction(m.MediaWrittenBytes, transactions),
			SteadyState:              m.SteadyState,
		}
		if wa, ok := m.WriteAmplification(); ok {
			md.WriteAmplification = strconv.FormatFloat(wa, 'f', 3, 64)
		}
		f.Modelled = append(f.Modelled, md)
	}
	return f
}

func perTransaction(bytes, transactions int64) string {
	if v, ok := drivereport.PerTransaction(bytes, transactions); ok {
		return Decimal(v)
	}
	return ""
}

// meanDrive is the drive figures of a target's runs taken together: bytes summed over the runs (so that the
// write amplification is total media over total host, not a mean of ratios) and per transaction divided by all
// their transactions. Counters count only when every run has them, a modelled factor only when every run has it:
// a mean never silently covers part of the runs.
func meanDrive(its []v1alpha1.IterationResult) *v1alpha1.DriveFigures {
	if len(its) == 0 || its[0].Drive == nil {
		return nil
	}
	first := its[0].Drive
	out := &v1alpha1.DriveFigures{Device: first.Device, CountersUnavailable: first.CountersUnavailable, ModelUnavailable: first.ModelUnavailable}
	var tx int64
	for _, it := range its {
		tx += it.Transactions
	}
	if c, ok := sumCounters(its); ok {
		out.Counters = c
		host, _ := strconv.ParseInt(c.HostWrittenBytes, 10, 64)
		c.HostBytesPerTransaction = perTransaction(host, tx)
		if media, err := strconv.ParseInt(c.MediaWrittenBytes, 10, 64); err == nil {
			c.MediaBytesPerTransaction = perTransaction(media, tx)
			if host > 0 {
				c.WriteAmplification = strconv.FormatFloat(float64(media)/float64(host), 'f', 3, 64)
			}
		}
	} else if out.CountersUnavailable == "" && first.Counters != nil {
		out.CountersUnavailable = "not every run has drive counters"
	}
	for _, m := range first.Modelled {
		if md, ok := sumModelled(its, m.OverProvisioningPercent, tx); ok {
			out.Modelled = append(out.Modelled, md)
		}
	}
	return out
}

func sumCounters(its []v1alpha1.IterationResult) (*v1alpha1.DriveCounters, bool) {
	var host, media, cmds int64
	mediaKnown := true
	var base *v1alpha1.DriveCounters
	for _, it := range its {
		if it.Drive == nil || it.Drive.Counters == nil {
			return nil, false
		}
		c := it.Drive.Counters
		if base == nil {
			base = c
		}
		h, err1 := strconv.ParseInt(c.HostWrittenBytes, 10, 64)
		n, err2 := strconv.ParseInt(c.HostWriteCommands, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		host, cmds = host+h, cmds+n
		if m, err := strconv.ParseInt(c.MediaWrittenBytes, 10, 64); err == nil && c.MediaSource == base.MediaSource {
			media += m
		} else {
			mediaKnown = false
		}
	}
	out := &v1alpha1.DriveCounters{Logs: base.Logs, HostWrittenBytes: strconv.FormatInt(host, 10),
		HostWrittenResolutionBytes: base.HostWrittenResolutionBytes, HostWriteCommands: strconv.FormatInt(cmds, 10)}
	switch {
	case mediaKnown:
		out.MediaWrittenBytes, out.MediaSource = strconv.FormatInt(media, 10), base.MediaSource
	case base.MediaUnavailable != "":
		out.MediaUnavailable = base.MediaUnavailable
	default:
		out.MediaUnavailable = "not every run has the drive's media bytes"
	}
	return out, true
}

func sumModelled(its []v1alpha1.IterationResult, op int32, tx int64) (v1alpha1.ModelledDrive, bool) {
	out := v1alpha1.ModelledDrive{OverProvisioningPercent: op, Label: drivereport.Label(int(op)), SteadyState: true}
	var host, media int64
	for _, it := range its {
		if it.Drive == nil {
			return out, false
		}
		found := false
		for _, m := range it.Drive.Modelled {
			h, err1 := strconv.ParseInt(m.HostWrittenBytes, 10, 64)
			md, err2 := strconv.ParseInt(m.MediaWrittenBytes, 10, 64)
			if m.OverProvisioningPercent == op && err1 == nil && err2 == nil {
				host, media, found = host+h, media+md, true
				out.SteadyState = out.SteadyState && m.SteadyState
			}
		}
		if !found {
			return out, false
		}
	}
	out.HostWrittenBytes, out.MediaWrittenBytes = strconv.FormatInt(host, 10), strconv.FormatInt(media, 10)
	out.MediaBytesPerTransaction = perTransaction(media, tx)
	if host > 0 {
		out.WriteAmplification = strconv.FormatFloat(float64(media)/float64(host), 'f', 3, 64)
	}
	return out, true
}
