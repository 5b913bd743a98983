package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// ToolFio runs fio's profiles on raw devices (spec.fio): its targets are devices, not databases.
const ToolFio BenchmarkTool = "fio"

// FioProfile is one named measurement of a raw device (operator/internal/fio's profiles).
// +kubebuilder:validation:Enum=seqwrite-open-zones;randread-4k;randread-rate-limited-writes;seqread-128k-qd32;grid
type FioProfile string

const (
	// FioSeqWriteOpenZones writes sequentially with one 128 KiB writer per zone the device keeps open (its
	// max open / max active limit; 8 on a device without one), each in a zone-aligned share of the span.
	FioSeqWriteOpenZones FioProfile = "seqwrite-open-zones"
	// FioRandRead4K reads 4 KiB at random at queue depth 32.
	FioRandRead4K FioProfile = "randread-4k"
	// FioRandReadUnderWrites reads 4 KiB at random while a sequential writer, capped at writeRate, writes the
	// other half of the span.
	FioRandReadUnderWrites FioProfile = "randread-rate-limited-writes"
	// FioSeqRead128KQD32 reads sequentially in 128 KiB blocks at queue depth 32 (seed 001's figure).
	FioSeqRead128KQD32 FioProfile = "seqread-128k-qd32"
	// FioGrid runs spec.fio.grid's access pattern at every block size x jobs x queue depth point.
	FioGrid FioProfile = "grid"
)

// FioDevice names a raw block device on a node.
type FioDevice struct {
	// NodeName is the node that has the device (its kubernetes.io/hostname label).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	NodeName string `json:"nodeName"`
	// DeviceName is the kernel name of the whole device, without /dev/ (nullb0, nvme0n2); no partitions.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=32
	DeviceName string `json:"deviceName"`
	// DeviceGroupID is a supplemental group of the fio Job's pod so that its non-root runner can open the device
	// node, which a host owns as root:disk 0660 (disk is gid 6 on Debian and Ubuntu), as a ZNSDatabase's
	// spec.deviceGroupID. Not needed where the container runtime sets device ownership from the security context.
	// Default: 6.
	// +kubebuilder:default=6
	// +kubebuilder:validation:Minimum=0
	// +optional
	DeviceGroupID *int64 `json:"deviceGroupID,omitempty"`
}

// FioSpec is what a fio Benchmark (spec.tool fio) runs on each target device, one profile after another (a
// writing profile first: on a zoned device fio reads only what was written). A device that holds data is
// written only with writeToken; read-only profiles need none.
//
// +kubebuilder:validation:XValidation:rule="!self.profiles.exists(p, p == 'grid') || has(self.grid)",message="profile grid needs spec.fio.grid (its block sizes, job counts and queue depths)"
// +kubebuilder:validation:XValidation:rule="!has(self.grid) || self.profiles.exists(p, p == 'grid')",message="spec.fio.grid is used only by profile grid: add grid to spec.fio.profiles or remove spec.fio.grid"
type FioSpec struct {
	// Profiles to run, each once per target; they run in a fixed order whatever the order here: the write at the
	// open-zone limit first, then the reads, the reads under writes, the grid.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, y == x))",message="profiles must not repeat a profile"
	// +listType=atomic
	Profiles []FioProfile `json:"profiles"`

	// RuntimeSeconds bounds each fio run: each profile, and each point of the grid. The write at the open-zone
	// limit also ends when its share of the span is full. Default: 60.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=60
	// +optional
	RuntimeSeconds int32 `json:"runtimeSeconds,omitempty"`

	// Span is how much of each device, from its start, the profiles use (rounded down to whole zones on a zoned
	// device). Default: the whole device.
	// +optional
	Span *resource.Quantity `json:"span,omitempty"`

	// WriteRate caps the writer of randread-rate-limited-writes, in bytes per second. Default: 64Mi.
	// +optional
	WriteRate *resource.Quantity `json:"writeRate,omitempty"`

	// Grid is the block size x jobs x queue depth grid of profile grid: at most 27 points.
	// +optional
	Grid *FioGridSpec `json:"grid,omitempty"`

	// WriteToken is the consent to write to a device that holds data (a file system, a ZenFS, anything that is
	// not all zeros at its ends or, zoned, a written zone): the writing profiles DESTROY what is on the device.
	// Without it such a device is refused; an empty device needs none, nor do read-only profiles. It is
	// one-shot: a token another Benchmark already wrote a device with is refused on that device (use a fresh
	// value, for example a date). A device held by a ZNSDatabase whose pod exists or whose volumes are bound,
	// or one with a mounted file system or held open on its node, is refused whatever the token.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	WriteToken string `json:"writeToken,omitempty"`
}

// FioGridSpec is the grid of profile grid.
//
// +kubebuilder:validation:XValidation:rule="size(self.blockSizes) * size(self.numJobs) * size(self.ioDepths) <= 27",message="the grid is at most 27 points: blockSizes x numJobs x ioDepths, each point a fio run of runtimeSeconds"
type FioGridSpec struct {
	// RW is the access pattern at every point: randread, read, write, or randwrite (conventional devices
	// only: a zoned device takes writes only at its write pointers). Default: randread.
	// +kubebuilder:validation:Enum=randread;read;write;randwrite
	// +kubebuilder:default=randread
	// +optional
	RW string `json:"rw,omitempty"`
	// BlockSizes in bytes, multiples of 512 from 512 to 16 MiB.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=27
	// +kubebuilder:validation:items:Minimum=512
	// +kubebuilder:validation:items:Maximum=16777216
	// +kubebuilder:validation:XValidation:rule="self.all(b, b % 512 == 0)",message="block sizes must be multiples of 512 (the I/O is direct)"
	// +listType=atomic
	BlockSizes []int64 `json:"blockSizes"`
	// NumJobs are the job counts (fio's numjobs).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=27
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=64
	// +listType=atomic
	NumJobs []int32 `json:"numJobs"`
	// IODepths are the queue depths (fio's iodepth).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=27
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1024
	// +listType=atomic
	IODepths []int32 `json:"ioDepths"`
}

// FioDirection is one direction's figures of a fio run, as decimal strings.
type FioDirection struct {
	// Bytes moved, and BytesPerSec and IOPS their rates.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// +optional
	BytesPerSec string `json:"bytesPerSec,omitempty"`
	// +optional
	IOPS string `json:"iops,omitempty"`
	// LatencyP50Us, LatencyP99Us and LatencyP999Us are fio's completion latency percentiles in microseconds.
	// +optional
	LatencyP50Us string `json:"latencyP50Us,omitempty"`
	// +optional
	LatencyP99Us string `json:"latencyP99Us,omitempty"`
	// +optional
	LatencyP999Us string `json:"latencyP999Us,omitempty"`
}

// FioRunResult is one fio run's figures: a profile, or one point of the grid.
type FioRunResult struct {
	// Profile that ran.
	Profile FioProfile `json:"profile"`
	// Point is the grid point, "bs=4096 jobs=1 qd=1"; empty for the other profiles.
	// +optional
	Point string `json:"point,omitempty"`
	// Read and Write are absent where the run did no I/O in that direction.
	// +optional
	Read *FioDirection `json:"read,omitempty"`
	// +optional
	Write *FioDirection `json:"write,omitempty"`
}

// FioTargetStatus is what a fio Benchmark found and measured on one target device.
type FioTargetStatus struct {
	// Node and Device are the device the target resolved to (a database target's device).
	// +optional
	Node string `json:"node,omitempty"`
	// +optional
	Device string `json:"device,omitempty"`
	// Zoned is true for a host-managed device (the profiles ran with zonemode=zbd).
	// +optional
	Zoned bool `json:"zoned,omitempty"`
	// Found is what the runner found on the device before writing: empty, or what it holds.
	// +optional
	Found string `json:"found,omitempty"`
	// WriteToken is the spec.fio.writeToken the target's Job was given (recorded when the Job is created, whether
	// or not the device turned out to hold data); another Benchmark with the same token is refused on this device.
	// +optional
	WriteToken string `json:"writeToken,omitempty"`
	// Results of each run, in the order they ran.
	// +listType=atomic
	// +optional
	Results []FioRunResult `json:"results,omitempty"`
	// Drive is what the block layer (and, on an NVMe drive with spec.drive, the drive's own counters) counted
	// over all the runs.
	// +optional
	Drive *DriveFigures `json:"drive,omitempty"`
}

// IsFio tells whether the Benchmark runs fio on devices (spec.tool fio).
func (b *Benchmark) IsFio() bool { return b.Spec.Tool == ToolFio && b.Spec.Fio != nil }
