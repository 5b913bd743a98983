package fio

import "github.com/zns-mysql/zns-mysql/operator/internal/drivereport"

// WriteTokenEnv carries a fio Benchmark's spec.fio.writeToken to znsbench fio (its --write-token default).
const WriteTokenEnv = "ZNS_FIO_WRITE_TOKEN"

// RunnerReport is what znsbench fio prints as one JSON line (stdout and the termination log): what the device
// held, why nothing ran or which run failed, and each run's figures.
type RunnerReport struct {
	Device string `json:"device"`
	Zoned  bool   `json:"zoned"`
	// Found is what the device held before: "empty", or what was found.
	Found string `json:"found,omitempty"`
	// Refused says why nothing ran; the exit status is then 1.
	Refused string `json:"refused,omitempty"`
	// Failed says which run failed and why; the results before it are kept.
	Failed  string   `json:"failed,omitempty"`
	Results []Result `json:"results,omitempty"`
	// BlockLayerWrittenBytes and BlockLayerReadBytes are /sys/block/<dev>/stat's over all the runs.
	BlockLayerWrittenBytes *int64 `json:"blockLayerWrittenBytes,omitempty"`
	BlockLayerReadBytes    *int64 `json:"blockLayerReadBytes,omitempty"`
	// Counters are the NVMe drive's (--counters), CountersUnavailable why there are none.
	Counters            *drivereport.Counters `json:"counters,omitempty"`
	CountersUnavailable string                `json:"countersUnavailable,omitempty"`
}
