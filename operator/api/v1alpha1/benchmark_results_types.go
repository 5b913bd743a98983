package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DataSize is a database's data on disk as the runner read it from the server: for MyRocks the SST files of
// its RocksDB instance (data, index and filter blocks, compressed; what still sits in memtables is not on
// disk yet), for InnoDB the tablespace files of the sysbench tables.
type DataSize struct {
	// Source says what was measured: rocksdb-sst or innodb-tablespace.
	// +optional
	Source string `json:"source,omitempty"`
	// AfterPrepareBytes is the size once the tables were loaded (read with the row check, in the workload
	// profile).
	// +optional
	AfterPrepareBytes int64 `json:"afterPrepareBytes,omitempty"`
	// AfterRunBytes is the size after the last run.
	// +optional
	AfterRunBytes int64 `json:"afterRunBytes,omitempty"`
}

// SweepPoint is one target's result at one thread count of a sweep.
type SweepPoint struct {
	// Threads is the thread count.
	Threads int32 `json:"threads"`
	// Mean is the mean over the runs at this count.
	// +optional
	Mean *RunFigures `json:"mean,omitempty"`
	// VsBaseline compares Mean with the baseline target's at the same count.
	// +optional
	VsBaseline *Ratios `json:"vsBaseline,omitempty"`
}

// LiveFigures are the figures of the last report interval of a run in progress.
type LiveFigures struct {
	// Iteration is the run the interval belongs to.
	Iteration int32 `json:"iteration"`
	// Seconds is the end of the interval, in seconds since the run started.
	// +optional
	Seconds string `json:"seconds,omitempty"`
	// TPS over the interval.
	// +optional
	TPS string `json:"tps,omitempty"`
	// LatencyPctMs is the latency at spec.percentile over the interval, in milliseconds.
	// +optional
	LatencyPctMs string `json:"latencyPctMs,omitempty"`
	// ReadAt is when the operator read it.
	// +optional
	ReadAt metav1.Time `json:"readAt,omitempty"`
}

// IterationResult is one run of one target.
type IterationResult struct {
	// Iteration is 1-based.
	Iteration int32 `json:"iteration"`
	// Threads the run used.
	// +optional
	Threads    int32 `json:"threads,omitempty"`
	RunFigures `json:",inline"`
	// Transactions in the run.
	// +optional
	Transactions int64 `json:"transactions,omitempty"`
	// DataBytes is the database's data on disk right after the run (see DataSize).
	// +optional
	DataBytes int64 `json:"dataBytes,omitempty"`
	// Drive is what the drive under the target wrote during the run (spec.drive).
	// +optional
	Drive *DriveFigures `json:"drive,omitempty"`
	// SeriesConfigMap holds the per-interval series of this run (kubectl get configmap NAME -o yaml).
	// +optional
	SeriesConfigMap string `json:"seriesConfigMap,omitempty"`
	// StartTime and EndTime of the run as the runner saw them.
	// +optional
	StartTime string `json:"startTime,omitempty"`
	// +optional
	EndTime string `json:"endTime,omitempty"`
	// DurationSec is sysbench's own measured time of the run ("total time"), in seconds: its clock started at
	// about EndTime minus DurationSec, after it had connected its threads.
	// +optional
	DurationSec string `json:"durationSec,omitempty"`
}

// RunFigures are the measured figures of a run, as decimal strings.
type RunFigures struct {
	// TPS is transactions per second.
	// +optional
	TPS string `json:"tps,omitempty"`
	// QPS is queries per second.
	// +optional
	QPS string `json:"qps,omitempty"`
	// LatencyAvgMs is the mean transaction latency in milliseconds.
	// +optional
	LatencyAvgMs string `json:"latencyAvgMs,omitempty"`
	// LatencyPctMs is the latency at spec.percentile, in milliseconds.
	// +optional
	LatencyPctMs string `json:"latencyPctMs,omitempty"`
	// LatencyMaxMs is the maximum latency in milliseconds.
	// +optional
	LatencyMaxMs string `json:"latencyMaxMs,omitempty"`
	// LatencyP50Ms, LatencyP95Ms, LatencyP99Ms and LatencyP999Ms are the latency distribution of the whole run
	// (p50, p95, p99, p99.9, in milliseconds), from sysbench's --histogram output.
	// +optional
	LatencyP50Ms string `json:"latencyP50Ms,omitempty"`
	// +optional
	LatencyP95Ms string `json:"latencyP95Ms,omitempty"`
	// +optional
	LatencyP99Ms string `json:"latencyP99Ms,omitempty"`
	// +optional
	LatencyP999Ms string `json:"latencyP999Ms,omitempty"`
	// ErrorsPerSec are ignored errors (lock conflicts MyRocks reports) per second.
	// +optional
	ErrorsPerSec string `json:"errorsPerSec,omitempty"`
	// ReconnectsPerSec are reconnects per second.
	// +optional
	ReconnectsPerSec string `json:"reconnectsPerSec,omitempty"`
	// TPSRelDevPct is the relative deviation of TPS across report intervals, in percent (the QoS figure).
	// +optional
	TPSRelDevPct string `json:"tpsRelDevPct,omitempty"`
	// LatencyRelDevPct is the relative deviation of the percentile latency across intervals, in percent.
	// +optional
	LatencyRelDevPct string `json:"latencyRelDevPct,omitempty"`
	// DeviceWrittenBytes is what the kernel counted as written to the target's device during the run; empty
	// when the device was not visible to the runner.
	// +optional
	DeviceWrittenBytes string `json:"deviceWrittenBytes,omitempty"`
	// BytesPerTransaction is DeviceWrittenBytes / transactions.
	// +optional
	BytesPerTransaction string `json:"bytesPerTransaction,omitempty"`
}

// Ratios compare a target with the baseline: target / baseline.
type Ratios struct {
	// TPS ratio: above 1 is faster than the baseline.
	// +optional
	TPS string `json:"tps,omitempty"`
	// LatencyPct ratio: below 1 is lower latency than the baseline.
	// +optional
	LatencyPct string `json:"latencyPct,omitempty"`
	// LatencyAvg ratio.
	// +optional
	LatencyAvg string `json:"latencyAvg,omitempty"`
	// BytesPerTransaction ratio: below 1 writes less to the device per transaction.
	// +optional
	BytesPerTransaction string `json:"bytesPerTransaction,omitempty"`
}
