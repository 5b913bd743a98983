package v1alpha1

// The drive's half of write amplification. The block layer's count (RunFigures.deviceWrittenBytes) is what the
// host sent; what the drive wrote to its flash is larger on a conventional SSD by what its garbage collection
// copies. Two sources can tell it, never mixed: the drive's own NVMe counters (measured) and a model of a
// conventional SSD's flash translation layer fed with the device's block trace (modelled). docs/write-amplification.md
// says what each figure is and what emulation cannot show.

// DriveSpec asks a Benchmark for the drive's half of write amplification around every phase that writes
// (precondition, prepare, each run). Both parts run in a sidecar container of the phase's Job that holds
// CAP_SYS_ADMIN and no other capability (Linux admits NVMe Get Log Page and tracefs control only with it), so
// the namespace must admit such a pod (Pod Security Admission level privileged); nothing of it runs unless asked.
type DriveSpec struct {
	// Counters reads the NVMe drive's own logs before and after each phase: SMART / Health (02h) Data Units
	// Written and Host Write Commands, the OCP datacenter SMART extended log (C0h) Physical Media Units Written
	// when the drive has it, and the FDP statistics log (20h) when the namespace is in an FDP configuration. The
	// sidecar opens the target's device through the database's Block claim (zoned targets, storage.device);
	// other targets get a reason instead of figures. Default: false.
	// +optional
	Counters bool `json:"counters,omitempty"`

	// ModelOverProvisioningPercent models a conventional SSD under each conventional target at each of these
	// over-provisioning factors (spare flash over exported capacity, in percent; datacenter drives ship with
	// 7 to 28): a page-mapped FTL with greedy garbage collection, brought to steady state as the methodology
	// preconditions a drive, is fed the block trace of the target's device during the phase (captured from the
	// node's tracefs, mounted into the sidecar from /sys/kernel/tracing). The steady state is settled once per
	// node and sidecar build and kept in the node's /var/lib/zns-mysql/ftl-models, from which later phases start.
	// The figures are labelled modelled and are never shown where a measurement would be. Zoned targets need no
	// model: a ZNS drive does no garbage collection of its own. Empty: no model.
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=100
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, y == x))",message="modelOverProvisioningPercent must not repeat a value"
	// +listType=atomic
	// +optional
	ModelOverProvisioningPercent []int32 `json:"modelOverProvisioningPercent,omitempty"`
}

// Enabled reports whether the spec asks for anything.
func (d *DriveSpec) Enabled() bool {
	return d != nil && (d.Counters || len(d.ModelOverProvisioningPercent) > 0)
}

// DriveFigures are what the drive under a target wrote during one phase, as decimal strings. Measured and
// modelled figures stay apart: Counters come from the drive, Modelled from the FTL model.
type DriveFigures struct {
	// Device is the kernel name of the device the figures are of.
	// +optional
	Device string `json:"device,omitempty"`
	// DeviceBytes is the device's size as the kernel exports it (/sys/block/<dev>/size), read by the drive sidecar:
	// the capacity a conventional drive exports, behind which it keeps its spare flash.
	// +optional
	DeviceBytes string `json:"deviceBytes,omitempty"`
	// BlockLayerWrittenBytes is what the kernel's block layer sent to the device during the phase
	// (/sys/block/<dev>/stat): the host half, measured.
	// +optional
	BlockLayerWrittenBytes string `json:"blockLayerWrittenBytes,omitempty"`
	// Counters are the drive's own counters over the phase (measured).
	// +optional
	Counters *DriveCounters `json:"counters,omitempty"`
	// CountersUnavailable says why there are no counters, e.g. "nullb0 is not an NVMe device" or "needs
	// CAP_SYS_ADMIN"; never replaced by a zero.
	// +optional
	CountersUnavailable string `json:"countersUnavailable,omitempty"`
	// Modelled holds one estimate per over-provisioning factor of spec.drive (modelled, not measured).
	// +listType=map
	// +listMapKey=overProvisioningPercent
	// +optional
	Modelled []ModelledDrive `json:"modelled,omitempty"`
	// ModelUnavailable says why there is no model, e.g. "the trace lost 120 events" or "no tracefs on the node".
	// +optional
	ModelUnavailable string `json:"modelUnavailable,omitempty"`
}

// DriveCounters are the differences of the drive's NVMe counters over a phase (measured by the drive).
type DriveCounters struct {
	// Logs are the log pages read: smart, ocp, fdp.
	// +optional
	Logs []string `json:"logs,omitempty"`
	// HostWrittenBytes is what the drive received: SMART Data Units Written x 512000 (the drive counts in
	// units of 1000 sectors, rounded up, so the figure moves in steps of 512000 bytes), or the FDP log's host
	// bytes with metadata written when present.
	// +optional
	HostWrittenBytes string `json:"hostWrittenBytes,omitempty"`
	// HostWrittenResolutionBytes is the step of HostWrittenBytes (512000 from SMART, 1 from FDP).
	// +optional
	HostWrittenResolutionBytes string `json:"hostWrittenResolutionBytes,omitempty"`
	// HostWriteCommands is SMART's Host Write Commands over the phase.
	// +optional
	HostWriteCommands string `json:"hostWriteCommands,omitempty"`
	// MediaWrittenBytes is what the drive wrote to its media: the OCP log's Physical Media Units Written or the
	// FDP log's media bytes with metadata written; empty when the drive reports neither.
	// +optional
	MediaWrittenBytes string `json:"mediaWrittenBytes,omitempty"`
	// MediaSource names the logs the write amplification comes from: smart+ocp (SMART's host bytes, the OCP
	// log's media bytes) or fdp (both from the FDP statistics log).
	// +optional
	MediaSource string `json:"mediaSource,omitempty"`
	// MediaUnavailable says why there is no media figure, e.g. "the drive reports no media bytes written (no
	// OCP log, no FDP statistics)".
	// +optional
	MediaUnavailable string `json:"mediaUnavailable,omitempty"`
	// WriteAmplification is MediaWrittenBytes / HostWrittenBytes: the drive's write amplification.
	// +optional
	WriteAmplification string `json:"writeAmplification,omitempty"`
	// HostBytesPerTransaction and MediaBytesPerTransaction divide by the run's transactions.
	// +optional
	HostBytesPerTransaction string `json:"hostBytesPerTransaction,omitempty"`
	// +optional
	MediaBytesPerTransaction string `json:"mediaBytesPerTransaction,omitempty"`
}

// ModelledDrive is the FTL model's estimate at one over-provisioning factor (modelled, not measured).
type ModelledDrive struct {
	// OverProvisioningPercent is the model's spare flash over exported capacity, in percent.
	OverProvisioningPercent int32 `json:"overProvisioningPercent"`
	// Label says what the figures are, e.g. "modelled (page-mapped FTL, greedy GC, OP 7%)".
	// +optional
	Label string `json:"label,omitempty"`
	// HostWrittenBytes is what the trace fed the model (block-layer writes, whole pages).
	// +optional
	HostWrittenBytes string `json:"hostWrittenBytes,omitempty"`
	// MediaWrittenBytes is what the model wrote to its flash: the host's pages plus garbage-collection copies.
	// +optional
	MediaWrittenBytes string `json:"mediaWrittenBytes,omitempty"`
	// WriteAmplification is MediaWrittenBytes / HostWrittenBytes.
	// +optional
	WriteAmplification string `json:"writeAmplification,omitempty"`
	// MediaBytesPerTransaction divides MediaWrittenBytes by the run's transactions.
	// +optional
	MediaBytesPerTransaction string `json:"mediaBytesPerTransaction,omitempty"`
	// SteadyState is false when the model's own preconditioning stopped at its round limit before its write
	// amplification settled: the figure then flatters the drive.
	// +optional
	SteadyState bool `json:"steadyState,omitempty"`
}

// TargetCapacity is how much of a target's device its stack leaves for data: the seeds' "more usable capacity"
// of ZNS, where a conventional SSD keeps spare flash (over-provisioning) for its garbage collection.
type TargetCapacity struct {
	// DeviceBytes is what the device exports (measured): for a zoned device, zones x zone capacity from the
	// ZNSDatabase's status.device (conventional zones count at that capacity too); for a conventional one, the
	// block device's size as the drive sidecar read it, so only under spec.drive and when the volume is a device
	// the operator knows (a local PersistentVolume), empty otherwise.
	// +optional
	DeviceBytes string `json:"deviceBytes,omitempty"`
	// UsableBytes is the size of the file system on it (statfs), or ZenFS's free, used and reclaimable space
	// (zenfs df: its data zones, less what sits dead in zones still being written), measured by the database
	// pod's metrics sidecar when the tables were verified; empty when it could not be read (spec.metrics off).
	// +optional
	UsableBytes string `json:"usableBytes,omitempty"`
	// UsableSource says how UsableBytes was measured: statfs or zenfs.
	// +optional
	UsableSource string `json:"usableSource,omitempty"`
	// Modelled gives, for a conventional device and each over-provisioning factor of spec.drive, the flash the
	// drive would hold behind what it exports and the share of it that is usable (modelled, not measured).
	// +listType=map
	// +listMapKey=overProvisioningPercent
	// +optional
	Modelled []ModelledCapacity `json:"modelled,omitempty"`
}

// ModelledCapacity is a conventional drive's raw flash at one over-provisioning factor (modelled).
type ModelledCapacity struct {
	// OverProvisioningPercent is spare flash over exported capacity, in percent.
	OverProvisioningPercent int32 `json:"overProvisioningPercent"`
	// RawBytes is DeviceBytes x (1 + over-provisioning).
	// +optional
	RawBytes string `json:"rawBytes,omitempty"`
	// UsableShare is UsableBytes (or DeviceBytes when the file system's size is unknown) over RawBytes.
	// +optional
	UsableShare string `json:"usableShare,omitempty"`
}
