package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
	// AcrossRuns is how the runs at this count differ from one another.
	// +optional
	AcrossRuns *RunSpread `json:"acrossRuns,omitempty"`
	// Operations are a YCSB sweep's mean figures per operation type at this thread count: the tail latency of
	// each operation type against the throughput as the load rises.
	// +listType=map
	// +listMapKey=operation
	// +optional
	Operations []YCSBOperation `json:"operations,omitempty"`
	// VsBaseline compares Mean with the baseline target's at the same count.
	// +optional
	VsBaseline *Ratios `json:"vsBaseline,omitempty"`
}

// AloneResult is a target's runs alone (spec.measureInterference) against its runs together with the others.
type AloneResult struct {
	// Mean is the mean over the target's runs alone.
	// +optional
	Mean *RunFigures `json:"mean,omitempty"`
	// AcrossRuns is how the runs alone differ from one another.
	// +optional
	AcrossRuns *RunSpread `json:"acrossRuns,omitempty"`
	// Interference is together over alone: a TPS below 1 and a latency above 1 are what the other targets cost
	// this one. Its verdicts say whether each difference is larger than the runs' noise (Better means better
	// together).
	// +optional
	Interference *Ratios `json:"interference,omitempty"`
}

// WorkloadPoint is one target's result for one workload of spec.workloads.
type WorkloadPoint struct {
	// Workload is the sysbench script.
	Workload string `json:"workload"`
	// Mean is the mean over the workload's runs.
	// +optional
	Mean *RunFigures `json:"mean,omitempty"`
	// AcrossRuns is how the workload's runs differ from one another.
	// +optional
	AcrossRuns *RunSpread `json:"acrossRuns,omitempty"`
	// DriveMean is the mean of the workload's runs' drive figures (spec.drive).
	// +optional
	DriveMean *DriveFigures `json:"driveMean,omitempty"`
	// VsBaseline compares Mean with the baseline target's for the same workload.
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
	Threads int32 `json:"threads,omitempty"`
	// Workload is the sysbench script the run used.
	// +optional
	Workload string `json:"workload,omitempty"`
	// Alone marks a run of this target alone (spec.measureInterference), the others idle.
	// +optional
	Alone      bool `json:"alone,omitempty"`
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
	// Operations are a YCSB run's figures per operation type (spec.tool ycsb); the run's TPS is then all
	// successful operations per second and its latencies those of the slowest operation type.
	// +listType=map
	// +listMapKey=operation
	// +optional
	Operations []YCSBOperation `json:"operations,omitempty"`
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
	// BestTPS is best-to-best: the target's best run's TPS over the baseline's best run's.
	// +optional
	BestTPS string `json:"bestTPS,omitempty"`
	// BestLatencyPct is best-to-best for the percentile latency (each side's lowest).
	// +optional
	BestLatencyPct string `json:"bestLatencyPct,omitempty"`
	// TPSVerdict says whether the TPS difference is larger than the runs' noise: Welch's two-sided t-test of
	// the target's runs against the baseline's, at the 5% level (docs/benchmark.md, "Is the difference real?").
	// +optional
	TPSVerdict Verdict `json:"tpsVerdict,omitempty"`
	// TPSPValue is that test's p-value.
	// +optional
	TPSPValue string `json:"tpsPValue,omitempty"`
	// LatencyPctVerdict is the same test for the percentile latency (lower is better).
	// +optional
	LatencyPctVerdict Verdict `json:"latencyPctVerdict,omitempty"`
	// LatencyPctPValue is that test's p-value.
	// +optional
	LatencyPctPValue string `json:"latencyPctPValue,omitempty"`
}

// Verdict is what the significance test says of a target's figure against the baseline's.
// +kubebuilder:validation:Enum=Better;Worse;NoSignificantDifference;TooFewRuns
type Verdict string

const (
	// VerdictBetter and VerdictWorse: the difference is larger than the runs' noise (p < 0.05).
	VerdictBetter Verdict = "Better"
	VerdictWorse  Verdict = "Worse"
	// VerdictNoSignificantDifference: the runs' noise covers the difference; the ratio is not a difference.
	VerdictNoSignificantDifference Verdict = "NoSignificantDifference"
	// VerdictTooFewRuns: the target or the baseline has fewer than two runs, so nothing can be said.
	VerdictTooFewRuns Verdict = "TooFewRuns"
)

// RunSpread is how a target's runs differ from one another: the best run, and the 95% confidence interval of
// the mean (Student's t over the runs).
type RunSpread struct {
	// Runs is how many runs the figures are over.
	Runs int32 `json:"runs"`
	// BestIteration is the run with the highest TPS.
	// +optional
	BestIteration int32 `json:"bestIteration,omitempty"`
	// BestTPS is the highest TPS of the runs.
	// +optional
	BestTPS string `json:"bestTPS,omitempty"`
	// BestLatencyPctMs is the lowest percentile latency of the runs, in milliseconds.
	// +optional
	BestLatencyPctMs string `json:"bestLatencyPctMs,omitempty"`
	// TPSCI95 is the half-width of the 95% confidence interval of the mean TPS; empty with one run.
	// +optional
	TPSCI95 string `json:"tpsCI95,omitempty"`
	// LatencyPctCI95Ms is the same for the mean percentile latency, in milliseconds.
	// +optional
	LatencyPctCI95Ms string `json:"latencyPctCI95Ms,omitempty"`
	// TPSRunRelDevPct is the run-to-run noise: the sample standard deviation of the runs' TPS over their mean,
	// in percent (the interval figure TPSRelDevPct is the noise within a run).
	// +optional
	TPSRunRelDevPct string `json:"tpsRunRelDevPct,omitempty"`
}

// ZoneGeometry is a zoned device's geometry as the preflight read it from sysfs.
type ZoneGeometry struct {
	// Device is the device, node/name.
	// +optional
	Device string `json:"device,omitempty"`
	// Count is the number of zones.
	// +optional
	Count int64 `json:"count,omitempty"`
	// Size is the size of a zone.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// Capacity is the writable part of a zone (NVMe ZNS zones may be smaller than their size).
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`
	// MaxOpen and MaxActive are the device's open and active zone limits; 0 means no limit.
	// +optional
	MaxOpen int64 `json:"maxOpen,omitempty"`
	// +optional
	MaxActive int64 `json:"maxActive,omitempty"`
}
