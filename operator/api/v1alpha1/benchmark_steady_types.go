package v1alpha1

// The write-only phase of the methodology: after the tables are loaded and before the timed runs, the conventional
// targets run a write workload in rounds until their throughput settles (the seeds' "execute sysbench write-only
// workload until the steady state is reached (for conventional drives only)"), judged by the SNIA PTS rule.

// SteadyStateSpec configures the write-only phase.
//
// +kubebuilder:validation:XValidation:rule="!has(self.window) || !has(self.maxRounds) || self.window <= self.maxRounds",message="steadyState.window must be at most steadyState.maxRounds: the rule judges the last window of rounds, and a window longer than the rounds allowed is never judged"
type SteadyStateSpec struct {
	// Workload is the sysbench script of the rounds. Default: oltp_write_only.
	// +kubebuilder:validation:Enum=oltp_update_index;oltp_update_non_index;oltp_write_only;oltp_read_write;oltp_insert;oltp_delete
	// +kubebuilder:default=oltp_write_only
	// +optional
	Workload string `json:"workload,omitempty"`

	// RoundSeconds is the length of one round, in seconds. Default: 60.
	// +kubebuilder:validation:Minimum=4
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=60
	// +optional
	RoundSeconds int32 `json:"roundSeconds,omitempty"`

	// MaxRounds is how many rounds a target runs at most; one that has not settled by then goes on to the runs,
	// marked "not in steady state". Default: 20.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=20
	// +optional
	MaxRounds int32 `json:"maxRounds,omitempty"`

	// Threads is sysbench's --threads for the rounds. Default: spec.threads (the first count of a sweep).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +optional
	Threads int32 `json:"threads,omitempty"`

	// Window is how many consecutive rounds the steady-state rule judges together (SNIA PTS: 5). Default: 5.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=5
	// +optional
	Window int32 `json:"window,omitempty"`

	// MaxRangePercent bounds max - min of the window's TPS, in percent of its average (SNIA PTS: 20). Default: 20.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=20
	// +optional
	MaxRangePercent int32 `json:"maxRangePercent,omitempty"`

	// MaxSlopeExcursionPercent bounds how far the least-squares line of the window's TPS moves from its first
	// round to its last, in percent of the average (SNIA PTS: 10). Default: 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=10
	// +optional
	MaxSlopeExcursionPercent int32 `json:"maxSlopeExcursionPercent,omitempty"`

	// AllTargets runs the phase on zoned targets too. The methodology runs it on conventional drives only: a
	// ZNS drive has no garbage collection to age. Default: false.
	// +optional
	AllTargets bool `json:"allTargets,omitempty"`
}

// SteadyStateStatus is what the write-only phase found for one target.
type SteadyStateStatus struct {
	// Required is true for a target the methodology wants in steady state before its runs: a conventional one
	// (every target with spec.steadyState.allTargets). Its results are marked when Reached is false.
	// +optional
	Required bool `json:"required,omitempty"`
	// Reached is true once the rule held over the last window of rounds.
	Reached bool `json:"reached"`
	// Skipped says why the target ran no rounds (a zoned target, or no spec.steadyState).
	// +optional
	Skipped string `json:"skipped,omitempty"`
	// Reason is the rule's verdict on the last window, with its figures.
	// +optional
	Reason string `json:"reason,omitempty"`
	// WindowStart is the first round (1-based) of the window that held.
	// +optional
	WindowStart int32 `json:"windowStart,omitempty"`
	// Rounds are the rounds' TPS, oldest first.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Rounds []SteadyStateRound `json:"rounds,omitempty"`
}

// SteadyStateRound is one round of the write-only phase.
type SteadyStateRound struct {
	// Round is 1-based.
	Round int32 `json:"round"`
	// TPS of the round.
	// +optional
	TPS string `json:"tps,omitempty"`
	// DeviceWrittenBytes is what the block layer sent to the target's device during the round.
	// +optional
	DeviceWrittenBytes string `json:"deviceWrittenBytes,omitempty"`
}
