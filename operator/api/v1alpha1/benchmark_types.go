package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkPhase is where a Benchmark is in the methodology.
// +kubebuilder:validation:Enum=Pending;WaitingForTargets;Preconditioning;Preparing;Verifying;SteadyState;Running;Completed;Failed
type BenchmarkPhase string

const (
	BenchmarkPending           BenchmarkPhase = "Pending"
	BenchmarkWaitingForTargets BenchmarkPhase = "WaitingForTargets"
	BenchmarkPreconditioning   BenchmarkPhase = "Preconditioning"
	BenchmarkPreparing         BenchmarkPhase = "Preparing"
	BenchmarkVerifying         BenchmarkPhase = "Verifying"
	// BenchmarkSteadyState runs the write-only rounds until the conventional targets settle (spec.steadyState).
	BenchmarkSteadyState BenchmarkPhase = "SteadyState"
	BenchmarkRunning     BenchmarkPhase = "Running"
	BenchmarkCompleted   BenchmarkPhase = "Completed"
	BenchmarkFailed      BenchmarkPhase = "Failed"
)

// Benchmark runs sysbench against one or more ZNSDatabases at once, following the seed methodology: prepare
// with the bulk-load profile, switch back to the workload profile, verify the row count, then run every target
// together (a common start time) for each iteration, and report per target and against a baseline.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=znsbench,categories=zns-mysql
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.status.workload`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Result",type=string,JSONPath=`.status.result`
// +kubebuilder:printcolumn:name="Started",type=date,JSONPath=`.status.startedAt`
// +kubebuilder:printcolumn:name="Took",type=string,JSONPath=`.status.elapsed`
// +kubebuilder:printcolumn:name="Targets",type=string,JSONPath=`.status.conditions[?(@.type=="TargetsReady")].reason`,priority=1
// +kubebuilder:printcolumn:name="Baseline",type=string,JSONPath=`.status.baseline`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must hold only lowercase letters, digits and '-' (no '.'): it starts the names of the Benchmark's Jobs"
// +kubebuilder:validation:XValidation:rule="self.spec.targets.all(t, size(self.metadata.name) + size(t.name) <= 49)",message="metadata.name and each target name must add up to at most 49 characters: the Job <benchmark>-precondition-<target> names its pods in a label, which must fit in 63"
type Benchmark struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BenchmarkSpec   `json:"spec"`
	Status BenchmarkStatus `json:"status,omitempty"`
}

// BenchmarkSpec is what to run. It cannot be changed once the benchmark started: results of one spec must not
// be mixed with another's.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a Benchmark cannot be changed; create a new one"
// +kubebuilder:validation:XValidation:rule="!has(self.baseline) || self.targets.exists(t, t.name == self.baseline)",message="baseline must name one of the targets"
// +kubebuilder:validation:XValidation:rule="!has(self.reportIntervalSeconds) || !has(self.durationSeconds) || 2 * self.reportIntervalSeconds <= self.durationSeconds",message="spec.reportIntervalSeconds must be at most half of spec.durationSeconds: the deviation figures are computed across report intervals and need at least two of them"
// +kubebuilder:validation:XValidation:rule="!has(self.tables) || !has(self.tableSize) || self.tables * self.tableSize <= 10000000000",message="spec.tables x spec.tableSize must be at most 10000000000 rows (about 2 TB of sysbench data)"
// +kubebuilder:validation:XValidation:rule="!has(self.measureInterference) || !self.measureInterference || size(self.targets) >= 2",message="spec.measureInterference needs two targets or more: with one, alone and together are the same runs"
// +kubebuilder:validation:XValidation:rule="!has(self.measureInterference) || !self.measureInterference || !has(self.threadSweep) && !has(self.workloads)",message="spec.measureInterference cannot be combined with spec.threadSweep or spec.workloads: it measures one workload at one thread count"
// +kubebuilder:validation:XValidation:rule="!has(self.measureInterference) || !self.measureInterference || (size(self.targets) + 1) * (has(self.iterations) ? self.iterations : 1) <= 100",message="spec.measureInterference: (targets + 1) x spec.iterations must be at most 100 runs"
// +kubebuilder:validation:XValidation:rule="!has(self.clients) || !has(self.tool) || self.tool != 'fio'",message="spec.clients does not apply to a fio Benchmark: fio runs on the node of the device it measures"
// +kubebuilder:validation:XValidation:rule="!has(self.workloads) || !has(self.threadSweep)",message="spec.workloads and spec.threadSweep cannot be combined: a thread sweep is of one workload; sweep each workload in a Benchmark of its own"
// +kubebuilder:validation:XValidation:rule="!has(self.workloads) || size(self.workloads) * (has(self.iterations) ? self.iterations : 1) <= 100",message="spec.workloads x spec.iterations must be at most 100 runs"
// +kubebuilder:validation:XValidation:rule="(has(self.tool) && self.tool == 'ycsb') == has(self.ycsb)",message="spec.ycsb goes with spec.tool ycsb, and spec.tool ycsb needs spec.ycsb"
// +kubebuilder:validation:XValidation:rule="!has(self.tool) || self.tool != 'ycsb' || !has(self.workloads) && !has(self.steadyState) && !(has(self.measureInterference) && self.measureInterference)",message="spec.tool ycsb runs one YCSB workload: spec.workloads, spec.steadyState (sysbench write-only rounds) and spec.measureInterference are sysbench's"
// +kubebuilder:validation:XValidation:rule="(has(self.tool) && self.tool == 'fio') == has(self.fio)",message="spec.fio goes with spec.tool fio, and spec.tool fio needs spec.fio"
// +kubebuilder:validation:XValidation:rule="has(self.tool) && self.tool == 'fio' ? self.targets.all(t, has(t.device) != has(t.database)) : self.targets.all(t, !has(t.device) && !has(t.database))",message="with spec.tool fio each target names either device (nodeName, deviceName) or database (a ZNSDatabase whose device it runs on), not both; other tools' targets are ZNSDatabases by name and name neither"
// +kubebuilder:validation:XValidation:rule="!has(self.tool) || self.tool != 'fio' || !has(self.workloads) && !has(self.steadyState) && !has(self.precondition) && !has(self.threadSweep) && !(has(self.measureInterference) && self.measureInterference)",message="spec.tool fio runs spec.fio's profiles on devices: spec.workloads, spec.threadSweep, spec.precondition, spec.steadyState and spec.measureInterference are for databases"
type BenchmarkSpec struct {
	// Targets are the ZNSDatabases (in the Benchmark's namespace) that run the workload together. The
	// Benchmark runs only with all of them: it waits for missing ones (failing after targetTimeoutSeconds) and
	// for databases another Benchmark is using (a database serves one Benchmark at a time).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	Targets []BenchmarkTarget `json:"targets"`

	// Tool is the load generator: sysbench (spec.workload, spec.tables, spec.tableSize), ycsb (spec.ycsb, through
	// go-ycsb), or fio (spec.fio: profiles on raw devices; targets name devices). Default: sysbench.
	// +kubebuilder:default=sysbench
	// +optional
	Tool BenchmarkTool `json:"tool,omitempty"`

	// YCSB is the YCSB workload, with spec.tool ycsb (benchmark_ycsb_types.go).
	// +optional
	YCSB *YCSBSpec `json:"ycsb,omitempty"`

	// Fio is what fio runs on each target device, with spec.tool fio (benchmark_fio_types.go).
	// +optional
	Fio *FioSpec `json:"fio,omitempty"`

	// Baseline is the target the others are compared with. Default: the first target.
	// +optional
	Baseline string `json:"baseline,omitempty"`

	// Workload is the sysbench OLTP script. Default: oltp_update_index (the seed's example).
	// +kubebuilder:validation:Enum=oltp_update_index;oltp_update_non_index;oltp_write_only;oltp_read_write;oltp_read_only;oltp_insert;oltp_point_select;oltp_delete
	// +kubebuilder:default=oltp_update_index
	// +optional
	Workload string `json:"workload,omitempty"`

	// Workloads runs several sysbench OLTP scripts over the same prepared data, each in turn on every target from
	// a common start, each repeated iterations times; workload is then unused. Results per workload are in
	// status.targets[].workloads; a target's mean and ratios are then those of the first workload. oltp_insert
	// adds rows, so it may only come last. At most 8, and workloads x iterations at most 100 runs.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Enum=oltp_update_index;oltp_update_non_index;oltp_write_only;oltp_read_write;oltp_read_only;oltp_insert;oltp_point_select;oltp_delete
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, y == x))",message="workloads must not repeat a workload"
	// +kubebuilder:validation:XValidation:rule="!self.exists(w, w == 'oltp_insert') || self[size(self) - 1] == 'oltp_insert'",message="oltp_insert adds rows: it may only be the last of workloads, so that the others run on the tables as prepared"
	// +optional
	Workloads []string `json:"workloads,omitempty"`

	// Tables is sysbench's --tables. Default: 4.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=4
	// +optional
	Tables int32 `json:"tables,omitempty"`

	// TableSize is sysbench's --table-size, rows per table (10 million rows are about 2 GB). tables x tableSize
	// may be at most 10 billion rows. Default: 10000.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000000
	// +kubebuilder:default=10000
	// +optional
	TableSize int64 `json:"tableSize,omitempty"`

	// Threads is sysbench's --threads for the run phase. Default: 16.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +kubebuilder:default=16
	// +optional
	Threads int32 `json:"threads,omitempty"`

	// ThreadSweep runs the workload at each of these thread counts in turn, over the same prepared data: one run
	// per count (repeated iterations times), every target together, giving latency against throughput as the
	// load rises. Results per count are in status.targets[].sweep; threads is then unused. At most 8 counts.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=4096
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, y == x))",message="threadSweep must not repeat a thread count"
	// +optional
	ThreadSweep []int32 `json:"threadSweep,omitempty"`

	// PrepareThreads is sysbench's --threads for the prepare phase (one table per thread). Default: 4.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=4
	// +optional
	PrepareThreads int32 `json:"prepareThreads,omitempty"`

	// DurationSeconds is the length of each run iteration, in seconds, at most 86400 (a day; repeat with
	// iterations for longer). Default: 60.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=60
	// +optional
	DurationSeconds int32 `json:"durationSeconds,omitempty"`

	// ReportIntervalSeconds is sysbench's --report-interval, in seconds: the intervals the deviation figures are
	// computed over; at most half of durationSeconds, so that a run has at least two. Default: 5.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=43200
	// +kubebuilder:default=5
	// +optional
	ReportIntervalSeconds int32 `json:"reportIntervalSeconds,omitempty"`

	// Percentile is the latency percentile sysbench reports (an integer: sysbench 1.0 accepts no other).
	// Default: 95.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=99
	// +kubebuilder:default=95
	// +optional
	Percentile int32 `json:"percentile,omitempty"`

	// Iterations is how many times the run phase is repeated over the same prepared data. Default: 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	Iterations int32 `json:"iterations,omitempty"`

	// Prepare creates the tables first (bulk-load profile, then back to workload, then a row count check).
	// The sysbench tables (sbtest<N>) an earlier Benchmark left in the database are dropped first, so every
	// Benchmark starts from fresh data; nothing else in the database is touched. Set it to false to run
	// against tables prepared before. Default: true.
	// +kubebuilder:default=true
	// +optional
	Prepare *bool `json:"prepare,omitempty"`

	// Precondition, when set, brings the drives under conventional targets (storage.volume) to steady state
	// before the tables are loaded, as the seed methodology does for conventional SSDs: fio writes the free
	// space of the target's volume sequentially, passes times, then removes its file. Zoned targets are never
	// preconditioned: a ZNS drive has no garbage collection to age.
	// +optional
	Precondition *PreconditionSpec `json:"precondition,omitempty"`

	// SteadyState runs a write-only phase on the conventional targets after the prepare and before the runs, in
	// rounds, until each one's TPS settles by the SNIA PTS rule or a round limit is reached, as the methodology
	// demands of a conventional baseline. Without it, a conventional target's results are marked "not in steady
	// state".
	// +optional
	SteadyState *SteadyStateSpec `json:"steadyState,omitempty"`

	// Drive reads the drive's half of write amplification around each phase that writes: the NVMe drive's own
	// counters (measured) and a model of a conventional SSD's garbage collection fed with the device's block
	// trace (modelled). Off when unset; it needs a sidecar with CAP_SYS_ADMIN (docs/write-amplification.md).
	// +optional
	Drive *DriveSpec `json:"drive,omitempty"`

	// MeasureInterference runs each target alone before the runs together (seed 001's "single" against
	// "double"): one target after another, each iterations times from its own start while the others stay held
	// and idle; then every target together as usual. status.targets[].alone holds each target's alone figures
	// and its interference, together over alone, with the significance of each difference. It needs two
	// targets or more, and no thread sweep or workloads; (targets + 1) x iterations is at most 100 runs.
	// +optional
	MeasureInterference bool `json:"measureInterference,omitempty"`

	// StartDelaySeconds is how far in the future the common start of a run is set once every target's runner
	// waits at the start barrier (its pod Ready; the wait is bounded by targetTimeoutSeconds): the time the start
	// takes to reach each runner (a pod annotation the kubelet writes into a file). Default: 20.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=20
	// +optional
	StartDelaySeconds int32 `json:"startDelaySeconds,omitempty"`

	// TargetTimeoutSeconds is how long the benchmark waits for a missing target to be created, and for a target
	// to become Available (at the start and after each profile switch), before it fails, in seconds. Waiting
	// for a database that another Benchmark is using does not count. Default: 600.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=600
	// +optional
	TargetTimeoutSeconds int32 `json:"targetTimeoutSeconds,omitempty"`

	// Image is the benchmark image (sysbench and the znsbench runner). Default: the operator's.
	// +optional
	Image string `json:"image,omitempty"`

	// Resources of the benchmark containers.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Clients places the sysbench or YCSB clients: on their databases' nodes (the default), on other nodes, or
	// by node selector. A fio Benchmark has no clients: fio runs on the device.
	// +optional
	Clients *BenchmarkClients `json:"clients,omitempty"`
}

// PreconditionSpec controls the fio preconditioning of conventional targets.
type PreconditionSpec struct {
	// Passes is how many times the free space is written. Default: 2 (the seed's "write the drive twice").
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=2
	// +optional
	Passes int32 `json:"passes,omitempty"`

	// FillPercent is the share of the volume's free space written, in percent; the rest stays free for the
	// database. Default: 90.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=99
	// +kubebuilder:default=90
	// +optional
	FillPercent int32 `json:"fillPercent,omitempty"`

	// MaxBytesPerPass caps what one pass writes, for volumes far bigger than the drive under them. Default: no
	// cap.
	// +optional
	MaxBytesPerPass *resource.Quantity `json:"maxBytesPerPass,omitempty"`
}

// BenchmarkTarget names a ZNSDatabase; with spec.tool fio, a device (device, or database: a ZNSDatabase's).
type BenchmarkTarget struct {
	// Name of the ZNSDatabase; with spec.tool fio, the target's own name in the results.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=46
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Device is the raw device a fio target runs on (spec.tool fio).
	// +optional
	Device *FioDevice `json:"device,omitempty"`

	// Database names a ZNSDatabase of the namespace whose device a fio target runs on (spec.tool fio). Its pod
	// must not exist while the Benchmark runs: a database that runs is refused.
	// +kubebuilder:validation:MaxLength=46
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Database string `json:"database,omitempty"`
}

// BenchmarkStatus is what the benchmark did and measured. Figures are decimal strings (Kubernetes APIs avoid
// floating-point fields): TPS and QPS per second, latencies in milliseconds, deviations and ratios as given.
type BenchmarkStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is the step of the methodology the benchmark is in.
	// +optional
	Phase BenchmarkPhase `json:"phase,omitempty"`

	// Progress is a short human summary, e.g. "run 2/3".
	// +optional
	Progress string `json:"progress,omitempty"`

	// Workload is what the runs run, for kubectl's column: spec.workload, or spec.workloads joined by commas.
	// +optional
	Workload string `json:"workload,omitempty"`

	// Iteration is the run in progress or last finished (1-based); with a thread sweep (or spec.workloads), runs
	// go through the thread counts (the workloads) in order, each repeated spec.iterations times.
	// +optional
	Iteration int32 `json:"iteration,omitempty"`

	// StartAt is the common start time of the current run iteration, set once every target's runner waits at the
	// start barrier; each runner is given it through an annotation on its pod.
	// +optional
	StartAt *metav1.Time `json:"startAt,omitempty"`

	// PhaseSince is when the current phase began, or, while waiting for targets, when the current reason to
	// wait began (timeouts count from it).
	// +optional
	PhaseSince *metav1.Time `json:"phaseSince,omitempty"`

	// Result is the comparison in one line, e.g. "myrocks 0.80x, p95 1.11x vs innodb" (TPS ratio, then latency
	// ratio, against the baseline; "no significant TPS difference" where the runs' noise covers it); failed
	// targets are named with their reason.
	// +optional
	Result string `json:"result,omitempty"`

	// Elapsed is the whole length of the benchmark once it ended ("4m05s"); empty while it is under way, when
	// kubectl shows the time since startedAt instead (so that a waiting Benchmark writes no status).
	// +optional
	Elapsed string `json:"elapsed,omitempty"`

	// EstimatedCompletionAt is when the runs should be over: set once the runs are scheduled (how long a prepare
	// takes depends on the drive), from the common start of the current run, its duration and the runs left.
	// +optional
	EstimatedCompletionAt *metav1.Time `json:"estimatedCompletionAt,omitempty"`

	// PhaseHistory is when each phase began, oldest first: the timeline the orchestration overhead is measured
	// from (docs/performance.md). At most 32 entries; the oldest go first.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	PhaseHistory []PhaseTransition `json:"phaseHistory,omitempty"`

	// StartedAt and CompletedAt bound the whole benchmark.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// Baseline is the target the ratios are computed against.
	// +optional
	Baseline string `json:"baseline,omitempty"`

	// Targets holds the results per target.
	// +listType=map
	// +listMapKey=name
	// +optional
	Targets []TargetStatus `json:"targets,omitempty"`

	// Conditions: TargetsReady (every target exists, is held by this Benchmark and is Available; its reason
	// says what the Benchmark waits for: TargetsMissing, TargetsBusy, TargetsUnavailable), SeriesKept (False,
	// reason SeriesMissing, once a finished run's interval series could not be kept, naming the last such run
	// and why), Completed, Failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MaxPhaseHistory bounds status.phaseHistory.
const MaxPhaseHistory = 32

// PhaseTransition is the moment a Benchmark entered a phase, to the microsecond (metav1.Time keeps seconds).
type PhaseTransition struct {
	Phase BenchmarkPhase   `json:"phase"`
	Time  metav1.MicroTime `json:"time"`
}

// TargetState is where one target is.
type TargetState string

const (
	TargetPending  TargetState = "Pending"
	TargetPrepared TargetState = "Prepared"
	TargetVerified TargetState = "Verified"
	TargetDone     TargetState = "Done"
	TargetFailed   TargetState = "Failed"
)

// TargetStatus is one target's progress and results.
type TargetStatus struct {
	// Name of the ZNSDatabase.
	Name string `json:"name"`
	// State of the target: Pending, Prepared, Verified, Done or Failed.
	// +optional
	State TargetState `json:"state,omitempty"`
	// Reason names why the target failed, from a fixed set (docs/benchmark.md lists them): AccessDenied,
	// ConnectionFailed, ConnectionLost, MissingTables, Crashed, Interrupted, StartMissed, RowCountMismatch,
	// SQLError, InvalidOutput, TimedOut, PodLost, TargetNotFound, TargetDeleted, TargetUnavailable,
	// JobRejected, ProfileChanged, TooFewConnections, RunnerNotReady or Other.
	// +kubebuilder:validation:Enum=AccessDenied;ConnectionFailed;ConnectionLost;MissingTables;Crashed;Interrupted;StartMissed;RowCountMismatch;SQLError;InvalidOutput;TimedOut;PodLost;TargetNotFound;TargetDeleted;TargetUnavailable;JobRejected;ProfileChanged;TooFewConnections;RunnerNotReady;Other
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is the detail of a failure: the cause, then what the step printed last.
	// +optional
	Message string `json:"message,omitempty"`
	// Notes are warnings about results that were kept, such as a run in which many transactions ended in an
	// error sysbench ignores.
	// +optional
	Notes []string `json:"notes,omitempty"`
	// Engine and Storage of the database, copied for the comparison table.
	// +optional
	Engine string `json:"engine,omitempty"`
	// +optional
	Storage string `json:"storage,omitempty"`
	// Filesystem is the file system on the target's device (zenfs, btrfs or f2fs in zoned mode; ext4 or xfs on a
	// storage.device), for the same table; empty for a volume.
	// +optional
	Filesystem string `json:"filesystem,omitempty"`
	// Zones is the zone geometry of a zoned target's device, copied from its ZNSDatabase's status.device when
	// the Benchmark took it: the seeds compare zone sizes (144 MiB against 9 GiB) and zone counts, so the
	// geometry is a variable of the comparison. Empty for a conventional target.
	// +optional
	Zones *ZoneGeometry `json:"zones,omitempty"`
	// Drive is the drive the target's device is part of, "<node>/<name>": the NVMe controller for a namespace
	// (the namespaces of one controller are one drive: they share its flash, controller and queues), the device
	// itself otherwise. Empty when the device is not known (a volume that is not a local device).
	// +optional
	Drive string `json:"drive,omitempty"`
	// SharesDriveWith names the other targets on the same drive: their figures include each other's load, which
	// is the point of a multitenant comparison and a confound of any other.
	// +optional
	SharesDriveWith []string `json:"sharesDriveWith,omitempty"`
	// ProfileSwitched records that the lease on the database names another profile than workload: the
	// Benchmark set bulkload for the prepare, or found the lease changed by hand while it held the database for
	// its runs (the target then failed with ProfileChanged). Cleared when the lease is set back to workload, or
	// when it ends (the Benchmark completes, fails or is deleted) and the database returns to its own profile.
	// +optional
	ProfileSwitched bool `json:"profileSwitched,omitempty"`
	// Preconditioned is true once the target's volume was preconditioned (or needs none).
	// +optional
	Preconditioned bool `json:"preconditioned,omitempty"`
	// PreconditionWrittenBytes is what fio wrote to precondition the target's volume.
	// +optional
	PreconditionWrittenBytes int64 `json:"preconditionWrittenBytes,omitempty"`
	// PreconditionDrive is what the drive wrote while the volume was preconditioned (spec.drive).
	// +optional
	PreconditionDrive *DriveFigures `json:"preconditionDrive,omitempty"`
	// PrepareDrive is what the drive wrote while the tables were loaded (spec.drive).
	// +optional
	PrepareDrive *DriveFigures `json:"prepareDrive,omitempty"`
	// SteadyState is what the write-only phase found (spec.steadyState).
	// +optional
	SteadyState *SteadyStateStatus `json:"steadyState,omitempty"`
	// Rows found by the verification after prepare.
	// +optional
	Rows int64 `json:"rows,omitempty"`
	// Size is the database's data on disk after the prepare and after the runs.
	// +optional
	Size *DataSize `json:"size,omitempty"`
	// Live is the last report interval of the target's run in progress, read from its runner's log.
	// +optional
	Live *LiveFigures `json:"live,omitempty"`
	// Iterations are the results of each run.
	// +optional
	Iterations []IterationResult `json:"iterations,omitempty"`
	// Mean is the mean over the iterations (with spec.measureInterference, over the runs together); with a thread sweep, over those at its last thread count; with
	// spec.workloads, over those of the first workload.
	// +optional
	Mean *RunFigures `json:"mean,omitempty"`
	// AcrossRuns is how the runs Mean is over differ from one another: the best run and the confidence
	// intervals of the mean.
	// +optional
	AcrossRuns *RunSpread `json:"acrossRuns,omitempty"`
	// DriveMean is the mean of the runs' drive figures (spec.drive): measured counters when every run has them,
	// and each modelled over-provisioning factor that every run has.
	// +optional
	DriveMean *DriveFigures `json:"driveMean,omitempty"`
	// YCSB is what a YCSB Benchmark loaded and measured per operation type (spec.tool ycsb).
	// +optional
	YCSB *YCSBTargetStatus `json:"ycsb,omitempty"`
	// Fio is what a fio Benchmark found and measured on the target's device (spec.tool fio).
	// +optional
	Fio *FioTargetStatus `json:"fio,omitempty"`
	// Capacity is how much of the target's device its stack leaves usable.
	// +optional
	Capacity *TargetCapacity `json:"capacity,omitempty"`
	// VsBaseline compares Mean with the baseline target's, best-to-best too, and says whether each
	// difference is larger than the runs' noise.
	// +optional
	VsBaseline *Ratios `json:"vsBaseline,omitempty"`
	// Sweep holds, with a thread sweep, the mean and the ratios at each thread count.
	// +listType=map
	// +listMapKey=threads
	// +optional
	Sweep []SweepPoint `json:"sweep,omitempty"`
	// Alone holds, with spec.measureInterference, the target's runs alone and how running together changed them.
	// +optional
	Alone *AloneResult `json:"alone,omitempty"`
	// Client is where the target's run clients ran, and whether they shared the database's node.
	// +optional
	Client *ClientNodes `json:"client,omitempty"`
	// Workloads holds, with spec.workloads, the mean, the spread and the ratios of each workload.
	// +listType=map
	// +listMapKey=workload
	// +optional
	Workloads []WorkloadPoint `json:"workloads,omitempty"`
}

// BenchmarkList is a list of Benchmark.
//
// +kubebuilder:object:root=true
type BenchmarkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Benchmark `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Benchmark{}, &BenchmarkList{})
}
