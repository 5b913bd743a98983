package benchplan

import (
	"strconv"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
)

// FioTargetStatus turns znsbench fio's report into a fio target's status: fio.Result keeps numbers (latencies in
// ns), the API keeps decimal strings (latencies in microseconds), as Kubernetes APIs avoid floating point. node
// is the node the target resolved to (the report knows only the device); token the write token the Job was given.
func FioTargetStatus(rep fio.RunnerReport, node, token string) *v1alpha1.FioTargetStatus {
	st := &v1alpha1.FioTargetStatus{Node: node, Device: rep.Device, Zoned: rep.Zoned, Found: rep.Found, WriteToken: token}
	for _, r := range rep.Results {
		st.Results = append(st.Results, v1alpha1.FioRunResult{
			Profile: v1alpha1.FioProfile(r.Profile), Point: r.Point, Read: fioDirection(r.Read), Write: fioDirection(r.Write),
		})
	}
	if rep.BlockLayerWrittenBytes != nil || rep.Counters != nil || rep.CountersUnavailable != "" {
		st.Drive = DriveFiguresOf(drivereport.Report{
			Device: rep.Device, BlockLayerWrittenBytes: rep.BlockLayerWrittenBytes,
			Counters: rep.Counters, CountersUnavailable: rep.CountersUnavailable,
		}, 0)
	}
	return st
}

func fioDirection(d *fio.Direction) *v1alpha1.FioDirection {
	if d == nil {
		return nil
	}
	return &v1alpha1.FioDirection{
		Bytes:         d.Bytes,
		BytesPerSec:   strconv.FormatInt(d.BWBytes, 10),
		IOPS:          Decimal(d.IOPS),
		LatencyP50Us:  microseconds(d.P50Ns),
		LatencyP99Us:  microseconds(d.P99Ns),
		LatencyP999Us: microseconds(d.P999Ns),
	}
}

// microseconds writes a latency in ns as microseconds with the nanoseconds kept (12345 ns: "12.345"); "" when fio
// reported none (0).
func microseconds(ns int64) string {
	if ns <= 0 {
		return ""
	}
	return strconv.FormatFloat(float64(ns)/1000, 'f', -1, 64)
}
