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
