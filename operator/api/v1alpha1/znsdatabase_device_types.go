package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A conventional (not zoned) block device as a database's storage: the seed methodology's baseline, an SSD with
// its own FTL, whose whole device can be preconditioned before its file system is made (storage.device).

// ConventionalFilesystem is the file system made on a conventional device.
// +kubebuilder:validation:Enum=ext4;xfs
type ConventionalFilesystem string

const (
	// FilesystemExt4 is ext4, made with its defaults (no discard, inode tables written at once).
	FilesystemExt4 ConventionalFilesystem = "ext4"
	// FilesystemXFS is XFS (the seeds' conventional baseline), made with its defaults (no discard).
	FilesystemXFS ConventionalFilesystem = "xfs"
)

// DeviceSource names a whole conventional block device by node and kernel name. The operator judges it (a
// read-only preflight Job), creates a local Block PersistentVolume pinned to the node, runs a format Job that
// may precondition the device and then makes the file system, and only then the Filesystem-mode volume the
// kubelet mounts as the datadir.
type DeviceSource struct {
	// NodeName is the node that has the device, as its kubernetes.io/hostname label names it: the device's
	// PersistentVolumes and the benchmark Jobs are pinned with that label, so it must be a valid label value.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	NodeName string `json:"nodeName"`

	// DeviceName is the kernel name of the whole device, without /dev/ (for example nvme1n1 or sdb). Partitions
	// are refused by the preflight: preconditioning writes the whole device, and the file system takes all of it.
	// A zoned device is refused too: use storage.zonedDevice for it.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=32
	DeviceName string `json:"deviceName"`

	// Filesystem is the file system the format Job makes on the device: ext4 or xfs. Default: ext4.
	// +kubebuilder:default=ext4
	// +optional
	Filesystem ConventionalFilesystem `json:"filesystem,omitempty"`

	// Precondition writes the whole device with fio before its file system is made, as the seed methodology
	// does with a conventional SSD so that it is measured in steady state, not fresh: sequential passes over
	// the whole device, then optionally rounds of random writes until the write IOPS settle. Preconditioning
	// DESTROYS EVERYTHING ON THE DEVICE, so it runs only when spec.format.reformatToken is set to a value not
	// applied to the device before (the applied token is recorded in the file system's label); without one an
	// empty device is formatted without preconditioning, and status.precondition says so. Runs in the format
	// Job, before mkfs; one that is interrupted leaves no file system, and the next format Job starts it over.
	// +optional
	Precondition *DevicePreconditionSpec `json:"precondition,omitempty"`
}

// DevicePreconditionSpec is how the whole device is written before its file system is made. Writes go to the raw
// device with direct I/O (fio, libaio) at queue depth 32.
//
// +kubebuilder:validation:XValidation:rule="(!has(self.sequentialPasses) || self.sequentialPasses > 0) || (has(self.randomRounds) && self.randomRounds > 0)",message="precondition with sequentialPasses 0 and randomRounds 0 writes nothing: remove precondition, or set one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.randomRounds) || self.randomRounds == 0 || (has(self.steadyState) && has(self.steadyState.window) ? self.steadyState.window : 5) <= self.randomRounds",message="steadyState.window (default 5) must be at most randomRounds: the rule judges the last window of rounds, and a window longer than the rounds allowed can never hold"
type DevicePreconditionSpec struct {
	// SequentialPasses is how many times the whole device is written sequentially (the seeds' "write the entire
	// drive two times"). 0 skips them. Default: 2.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=2
	// +optional
	SequentialPasses *int32 `json:"sequentialPasses,omitempty"`

	// SequentialBlockSize is the size of each write of the sequential passes, from 4Ki to 16Mi, a multiple of
	// 4Ki. Default: 128Ki (the seeds' fio scripts).
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isInteger() && quantity(string(self)).asInteger() >= 4096 && quantity(string(self)).asInteger() <= 16777216 && quantity(string(self)).asInteger() % 4096 == 0",message="sequentialBlockSize must be a whole number of bytes from 4Ki to 16Mi, a multiple of 4Ki"
	// +kubebuilder:default="128Ki"
	// +optional
	SequentialBlockSize *resource.Quantity `json:"sequentialBlockSize,omitempty"`

	// RandomRounds is the most rounds of random 4 KiB writes over the whole device that follow the sequential
	// passes; they stop early once the steady-state rule holds over the rounds' write IOPS. Default: 0 (none).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	// +optional
	RandomRounds int32 `json:"randomRounds,omitempty"`

	// RoundSeconds is the length of one random round, in seconds. Default: 60.
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=60
	// +optional
	RoundSeconds int32 `json:"roundSeconds,omitempty"`

	// DriveCounters reads the drive's own NVMe counters (SMART, the OCP extended log, FDP statistics) before and
	// after the format Job's writes, so that status.precondition.drive shows what the drive received and wrote to
	// its media while it was aged (docs/write-amplification.md). It runs in a sidecar of the format Job that holds
	// CAP_SYS_ADMIN and nothing else (the namespace must admit it: Pod Security Admission level privileged), with
	// the operator's bench image. Default: false.
	// +optional
	DriveCounters bool `json:"driveCounters,omitempty"`

	// SteadyState is the rule the random rounds' write IOPS are judged by. Default: SNIA PTS's (a window of 5
	// rounds, range within 20% and least-squares excursion within 10% of the window's average).
	// +optional
	SteadyState *PreconditionSteadyStateSpec `json:"steadyState,omitempty"`
}

// PreconditionSteadyStateSpec is the steady-state rule of SNIA's Solid State Storage Performance Test
// Specification, applied to the write IOPS of the random rounds.
type PreconditionSteadyStateSpec struct {
	// Window is how many consecutive rounds are judged together; at least 2, and at most randomRounds.
	// Default: 5.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=20
	// +kubebuilder:default=5
	// +optional
	Window int32 `json:"window,omitempty"`

	// MaxRangePercent bounds max - min of the window's write IOPS, in percent of the window's average.
	// Default: 20.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=20
	// +optional
	MaxRangePercent int32 `json:"maxRangePercent,omitempty"`

	// MaxSlopeExcursionPercent bounds how far the least-squares line of the window's write IOPS moves from its
	// first round to its last, in percent of the window's average. Default: 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=10
	// +optional
	MaxSlopeExcursionPercent int32 `json:"maxSlopeExcursionPercent,omitempty"`
}

// Bounds of the precondition's lists, in the spec, the status and the format Job's report.
const (
	MaxPreconditionPasses = 10
	MaxPreconditionRounds = 20
)

// DevicePreconditionStatus is what the format Job's preconditioning did. Figures are decimal strings
// (Kubernetes APIs avoid floating-point fields).
type DevicePreconditionStatus struct {
	// Preconditioned is true when every pass and round asked for ran to its end before the file system was made.
	Preconditioned bool `json:"preconditioned"`
	// Message says what was done, or why nothing was ("not preconditioned: ...").
	// +optional
	Message string `json:"message,omitempty"`
	// StartedAt and FinishedAt bound the preconditioning.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// WrittenBytes is what fio wrote to the device, passes and rounds together.
	// +optional
	WrittenBytes int64 `json:"writtenBytes,omitempty"`
	// Drive is what the drive's own counters say of the format Job's writes (the preconditioning and mkfs), with
	// precondition.driveCounters; measured by the drive, or the reason there are none.
	// +optional
	Drive *DriveFigures `json:"drive,omitempty"`
	// Passes are the sequential passes over the whole device, in order.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	Passes []PreconditionPass `json:"passes,omitempty"`
	// Rounds are the random rounds, in order.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	Rounds []PreconditionRound `json:"rounds,omitempty"`
	// SteadyState is true when the steady-state rule held over the last window of rounds.
	// +optional
	SteadyState bool `json:"steadyState,omitempty"`
	// SteadyStateReason is the rule's verdict on the last window, with its figures.
	// +optional
	SteadyStateReason string `json:"steadyStateReason,omitempty"`
}

// PreconditionPass is one sequential pass over the whole device.
type PreconditionPass struct {
	// Pass is 1-based.
	Pass int32 `json:"pass"`
	// Bytes fio wrote.
	Bytes int64 `json:"bytes"`
	// Seconds the pass took.
	Seconds string `json:"seconds"`
	// MBPerSecond is the pass's write throughput in MB/s (10^6 bytes per second).
	MBPerSecond string `json:"mbPerSecond"`
}

// PreconditionRound is one round of random 4 KiB writes.
type PreconditionRound struct {
	// Round is 1-based.
	Round int32 `json:"round"`
	// WriteIOPS of the round.
	WriteIOPS string `json:"writeIOPS"`
	// Bytes fio wrote.
	Bytes int64 `json:"bytes"`
	// Seconds the round ran.
	Seconds string `json:"seconds"`
}

// DeviceStatus describes the database's block device: a zoned one, or the conventional one of storage.device
// (model none, no zones).
type DeviceStatus struct {
	// Node the device is on.
	// +optional
	Node string `json:"node,omitempty"`
	// Path of the device inside the pod, equal to the host's (/dev/<name>).
	Path string `json:"path"`
	// Model is the kernel's zone model: host-managed, host-aware or none.
	// +optional
	Model string `json:"model,omitempty"`
	// Zones is the number of zones.
	// +optional
	Zones int64 `json:"zones,omitempty"`
	// ZoneSize is the size of a zone.
	// +optional
	ZoneSize *resource.Quantity `json:"zoneSize,omitempty"`
	// ZoneCapacity is the writable part of a zone (NVMe ZNS zones may be smaller than their size).
	// +optional
	ZoneCapacity *resource.Quantity `json:"zoneCapacity,omitempty"`
	// MaxOpenZones is the device's limit of open zones; 0 means no limit.
	// +optional
	MaxOpenZones int64 `json:"maxOpenZones,omitempty"`
	// MaxActiveZones is the device's limit of active zones; 0 means no limit.
	// +optional
	MaxActiveZones int64 `json:"maxActiveZones,omitempty"`
	// Scheduler is the active I/O scheduler; ZenFS needs mq-deadline.
	// +optional
	Scheduler string `json:"scheduler,omitempty"`
	// Capacity is the size of the device.
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`
	// MetadataDevice and MetadataCapacity are zoned XFS's conventional metadata device (its path) and its size.
	// +optional
	MetadataDevice string `json:"metadataDevice,omitempty"`
	// +optional
	MetadataCapacity *resource.Quantity `json:"metadataCapacity,omitempty"`
	// Problems are the reasons the device was refused, empty when it is fit for ZenFS.
	// +optional
	Problems []string `json:"problems,omitempty"`
	// Warnings are risks of an accepted device: open or active zone limits below the smallest seen to work
	// with ZenFS and RocksDB (14). The DeviceWarning condition carries them too.
	// +optional
	Warnings []string `json:"warnings,omitempty"`
}
