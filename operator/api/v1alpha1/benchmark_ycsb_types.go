package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/intstr"
)

// BenchmarkTool is the program that generates a Benchmark's load.
// +kubebuilder:validation:Enum=sysbench;ycsb;fio
type BenchmarkTool string

const (
	// ToolSysbench runs sysbench's OLTP scripts (spec.workload, spec.tables, spec.tableSize).
	ToolSysbench BenchmarkTool = "sysbench"
	// ToolYCSB runs YCSB's core workloads through go-ycsb (spec.ycsb).
	ToolYCSB BenchmarkTool = "ycsb"
)

// YCSB operation types, as go-ycsb names them in its summary.
const (
	YCSBRead            = "READ"
	YCSBUpdate          = "UPDATE"
	YCSBInsert          = "INSERT"
	YCSBScan            = "SCAN"
	YCSBReadModifyWrite = "READ_MODIFY_WRITE"
)

// YCSBSpec is a YCSB workload (spec.tool ycsb). The load phase inserts the records on the bulk-load profile, as
// sysbench's prepare does; each run then runs the workload's operation mix for spec.durationSeconds with
// spec.threads (or each count of spec.threadSweep), every target from a common start. go-ycsb makes its table
// (usertable) with the server's default engine, which is the target's spec.engine.
//
// +kubebuilder:validation:XValidation:rule="!has(self.fieldCount) || !has(self.fieldLength) || self.fieldCount * (4 * self.fieldLength + (4 * self.fieldLength <= 255 ? 1 : 2)) + 258 <= 65535",message="fieldCount x fieldLength is above what MySQL and MariaDB accept in a row: go-ycsb makes each field a utf8mb4 VARCHAR(fieldLength), up to 4 bytes a character, and the columns' sizes with the 64-character key must add up to at most 65535 bytes (e.g. 1 x 16318, 4 x 4079, 10 x 1631)"
// +kubebuilder:validation:XValidation:rule="type(self.recordCount) == int ? int(self.recordCount) >= 1 : string(self.recordCount).matches('^([1-9][0-9]?|100)%$')",message="recordCount must be a number of records (at least 1) or a whole percent of the target's usable capacity from 1% to 100%, such as \"60%\""
type YCSBSpec struct {
	// Workload is YCSB's core workload: a (50% reads, 50% updates), b (95% reads, 5% updates), c (reads only),
	// d (95% reads, 5% inserts), e (95% short scans of 1-100 records, 5% inserts) or f (50% reads, 50%
	// read-modify-writes). Default: a.
	// +kubebuilder:validation:Enum=a;b;c;d;e;f
	// +kubebuilder:default=a
	// +optional
	Workload string `json:"workload,omitempty"`

	// RecordCount is how many records the load inserts: a number, or a share of the target's usable capacity
	// ("60%"), which the operator turns into a number per target from its status: ZenFS's free, used and
	// reclaimable space (status.filesystem.zenfs) or zones x zone capacity (status.device) of a zoned target,
	// the device's capacity (status.device) of a storage.device target, the requested size of a storage.volume.
	// One record counts as its fields plus its key (24 bytes); what the engine adds on disk is not counted.
	// +kubebuilder:validation:XIntOrString
	RecordCount intstr.IntOrString `json:"recordCount"`

	// FieldCount is the number of fields of a record. Default: 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	// +optional
	FieldCount int32 `json:"fieldCount,omitempty"`

	// FieldLength is the length of each field in bytes; a record holds fieldCount x fieldLength bytes (the study's
	// 4 KiB records: 1 x 4096, or 10 x 400 and the like). Default: 4096.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16318
	// +kubebuilder:default=4096
	// +optional
	FieldLength int32 `json:"fieldLength,omitempty"`

	// RequestDistribution is how the run picks the records it touches: uniform, zipfian (a few records are hot)
	// or latest (recently inserted records are hot, YCSB's choice for workload d). Default: uniform.
	// +kubebuilder:validation:Enum=uniform;zipfian;latest
	// +kubebuilder:default=uniform
	// +optional
	RequestDistribution string `json:"requestDistribution,omitempty"`

	// LoadThreads are go-ycsb's threads for the load of an InnoDB target. A MyRocks target loads with one: its
	// bulk load takes rows in key order per session and refused them from several sessions at once (error 4054,
	// measured on MariaDB's MyRocks). Default: 4.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=4
	// +optional
	LoadThreads int32 `json:"loadThreads,omitempty"`

	// TargetOpsPerSecond throttles each target's run to this many operations per second over all its threads
	// (go-ycsb's --target); unset runs as fast as the database answers.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	// +optional
	TargetOpsPerSecond int32 `json:"targetOpsPerSecond,omitempty"`

	// OperationCount ends a run after this many operations if that comes before spec.durationSeconds; unset,
	// the duration alone ends it.
	// +kubebuilder:validation:Minimum=1
	// +optional
	OperationCount int64 `json:"operationCount,omitempty"`
}

// YCSBOperation is one operation type's figures of a YCSB run (go-ycsb's summary line for it), as decimal
// strings: rates per second, latencies in milliseconds.
type YCSBOperation struct {
	// Operation is READ, UPDATE, INSERT, SCAN or READ_MODIFY_WRITE.
	Operation string `json:"operation"`
	// Count of operations that succeeded.
	// +optional
	Count int64 `json:"count,omitempty"`
	// OpsPerSec is the rate of successful operations.
	// +optional
	OpsPerSec string `json:"opsPerSec,omitempty"`
	// LatencyAvgMs and the percentiles are the latency of successful operations in milliseconds, as go-ycsb
	// measured them (its histogram has microsecond resolution).
	// +optional
	LatencyAvgMs string `json:"latencyAvgMs,omitempty"`
	// +optional
	LatencyP50Ms string `json:"latencyP50Ms,omitempty"`
	// +optional
	LatencyP90Ms string `json:"latencyP90Ms,omitempty"`
	// +optional
	LatencyP95Ms string `json:"latencyP95Ms,omitempty"`
	// +optional
	LatencyP99Ms string `json:"latencyP99Ms,omitempty"`
	// +optional
	LatencyP999Ms string `json:"latencyP999Ms,omitempty"`
	// +optional
	LatencyMaxMs string `json:"latencyMaxMs,omitempty"`
	// Errors is how many operations of this type failed (go-ycsb's <OPERATION>_ERROR line).
	// +optional
	Errors int64 `json:"errors,omitempty"`
}

// YCSBTargetStatus is what a YCSB Benchmark loaded into a target and measured there per operation type.
type YCSBTargetStatus struct {
	// RecordCount is the number of records loaded: spec.ycsb.recordCount, or the share of UsableBytes it names.
	// +optional
	RecordCount int64 `json:"recordCount,omitempty"`
	// UsableBytes is the usable capacity a share was computed from, and UsableFrom where the operator read it.
	// +optional
	UsableBytes int64 `json:"usableBytes,omitempty"`
	// +optional
	UsableFrom string `json:"usableFrom,omitempty"`
	// Operations is the mean of each operation type's figures over the runs Mean is over.
	// +listType=map
	// +listMapKey=operation
	// +optional
	Operations []YCSBOperation `json:"operations,omitempty"`
}

// Label names the workload where a sysbench Benchmark names its script (status.workload, the runs' workload):
// "ycsb-a" and the like.
func (y *YCSBSpec) Label() string { return "ycsb-" + y.Workload }
