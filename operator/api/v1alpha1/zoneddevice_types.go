package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// LabelZonedDeviceNode carries the node of a ZonedDevice (its name when that is a valid label value, else a hash
// of it), so that each node's agent lists only its own devices instead of the whole fleet's.
const LabelZonedDeviceNode = "zns-mysql.dev/node"

// AnnotationConventionalCandidates, on a Node, names the conventional block devices (kernel names, comma
// separated) that the inventory agent publishes beside the zoned ones: the drives a user means for storage.device
// or as the conventional side of a comparison. Without it the agent publishes zoned devices only, since a node's
// boot disk is of no interest to a database.
const AnnotationConventionalCandidates = "zns-mysql.dev/conventional-candidates"

// ZonedDeviceState says whether the device's node still reports it.
// +kubebuilder:validation:Enum=Present;Gone
type ZonedDeviceState string

const (
	// ZonedDevicePresent: the agent of the node saw the device in its last scan.
	ZonedDevicePresent ZonedDeviceState = "Present"
	// ZonedDeviceGone: the node no longer lists the device (pulled, a null_blk removed, a namespace deleted). The
	// object stays, so that a database holding the device keeps a record of it; delete it by hand once it is of
	// no use.
	ZonedDeviceGone ZonedDeviceState = "Gone"
)

// ZonedDeviceCandidate says why the agent publishes a device.
// +kubebuilder:validation:Enum=Zoned;Conventional
type ZonedDeviceCandidate string

const (
	// CandidateZoned: the kernel reports the device host-managed or host-aware.
	CandidateZoned ZonedDeviceCandidate = "Zoned"
	// CandidateConventional: a conventional device that the node's zns-mysql.dev/conventional-candidates
	// annotation names.
	CandidateConventional ZonedDeviceCandidate = "Conventional"
)

// ZonedDevice is one block device of one node, as the node's inventory agent (a DaemonSet of the chart) reads it
// from sysfs: every zoned device, and the conventional devices a user marked as candidates. Its status is
// observed; its spec holds only the claim the operator made when it chose the device for a database's
// requirements. Its name is <node>.<kernel name>, lowercased, with a hash suffix when that is not a valid name as
// it stands.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=zdev,categories=zns-mysql
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.nodeName`
// +kubebuilder:printcolumn:name="Device",type=string,JSONPath=`.status.kernelName`
// +kubebuilder:printcolumn:name="Zone model",type=string,JSONPath=`.status.zoneModel`
// +kubebuilder:printcolumn:name="Zones",type=integer,JSONPath=`.status.zoneCount`
// +kubebuilder:printcolumn:name="Size",type=string,JSONPath=`.status.size`
// +kubebuilder:printcolumn:name="Zone size",type=string,JSONPath=`.status.zoneSize`
// +kubebuilder:printcolumn:name="Max open",type=integer,JSONPath=`.status.maxOpenZones`
// +kubebuilder:printcolumn:name="Holder",type=string,JSONPath=`.status.holder`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Claim",type=string,JSONPath=`.spec.claimRef.name`,priority=1
// +kubebuilder:printcolumn:name="Model",type=string,JSONPath=`.status.model`,priority=1
// +kubebuilder:printcolumn:name="Stable ID",type=string,JSONPath=`.status.stableID`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ZonedDevice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the operator's claim on the device.
	// +optional
	Spec ZonedDeviceSpec `json:"spec,omitempty"`

	// Status is what the node's agent observed and, in holder and conditions, what the operator made of it.
	// +optional
	Status ZonedDeviceStatus `json:"status,omitempty"`
}

// ZonedDeviceSpec is what the operator decided about the device.
type ZonedDeviceSpec struct {
	// ClaimRef is the ZNSDatabase the operator gave the device to when it chose it for that database's
	// requirements (storage.zonedDevice.requirements). It is set with the object's resourceVersion as a
	// precondition, so of two databases racing for the device exactly one gets it. It stays when the database is
	// deleted, as a PersistentVolume's claimRef does under the Retain policy: the device and its data go to no
	// other database's requirements until a user removes it (kubectl patch zoneddevice NAME --type=merge -p
	// '{"spec":{"claimRef":null}}'); a database created again with the same namespace and name gets it back.
	// +optional
	ClaimRef *ZonedDeviceClaimRef `json:"claimRef,omitempty"`
}

// ZonedDeviceClaimRef names the ZNSDatabase a device was given to.
type ZonedDeviceClaimRef struct {
	// Namespace of the ZNSDatabase.
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// Name of the ZNSDatabase.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// UID of the ZNSDatabase the claim was made for; a database created again under the same name has another.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// String is namespace/name.
func (c *ZonedDeviceClaimRef) String() string {
	if c == nil {
		return ""
	}
	return c.Namespace + "/" + c.Name
}

// ZonedDeviceStatus is a device as sysfs describes it. Every field but holder and conditions is written by the
// node's agent (field manager zns-mysql-inventory); those two by the operator. Each field is omitted when sysfs
// does not give it, and every size is in bytes. The agent reads sysfs only: it never opens the device.
type ZonedDeviceStatus struct {
	// NodeName is the Node the device is attached to (the agent's spec.nodeName).
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// Hostname is the node's kubernetes.io/hostname label, which a ZNSDatabase's storage.zonedDevice.nodeName
	// names; usually equal to nodeName.
	// +optional
	Hostname string `json:"hostname,omitempty"`

	// KernelName is the kernel's name of the device, without /dev/ (nvme0n2, nullb0, sdb): what a ZNSDatabase
	// names as deviceName.
	// +optional
	KernelName string `json:"kernelName,omitempty"`

	// StableID identifies the drive across reboots and renumbering: the kernel's wwid (an NVMe namespace's
	// EUI-64, NGUID or the controller's vendor, serial and namespace id; a SCSI disk's WWN), else serial and
	// namespace id. Empty when the device has neither: null_blk and zloop devices have no identity in sysfs.
	// +optional
	StableID string `json:"stableID,omitempty"`

	// Model of the drive (device/model), as the drive reports it.
	// +optional
	Model string `json:"model,omitempty"`

	// Firmware revision (device/firmware_rev of NVMe, device/rev of SCSI).
	// +optional
	Firmware string `json:"firmware,omitempty"`

	// Serial number (device/serial of NVMe, serial of virtio).
	// +optional
	Serial string `json:"serial,omitempty"`

	// NamespaceID is the NVMe namespace id (nsid); omitted for other devices.
	// +optional
	NamespaceID int64 `json:"namespaceID,omitempty"`

	// ZoneModel is queue/zoned: none (conventional), host-aware or host-managed.
	// +kubebuilder:validation:Enum=none;host-aware;host-managed
	// +optional
	ZoneModel string `json:"zoneModel,omitempty"`

	// Candidate says why the device is published: Zoned, or Conventional (named by the node's
	// zns-mysql.dev/conventional-candidates annotation).
	// +optional
	Candidate ZonedDeviceCandidate `json:"candidate,omitempty"`

	// CapacityBytes is the device's size.
	// +optional
	CapacityBytes int64 `json:"capacityBytes,omitempty"`

	// LogicalBlockSize is the smallest unit the device addresses.
	// +optional
	LogicalBlockSize int64 `json:"logicalBlockSize,omitempty"`

	// Size is capacityBytes as a quantity ("2Gi"), for people and kubectl's columns.
	// +optional
	Size string `json:"size,omitempty"`

	// ZoneCount is queue/nr_zones.
	// +optional
	ZoneCount int64 `json:"zoneCount,omitempty"`

	// ZoneSizeBytes is the size of each zone (queue/chunk_sectors).
	// +optional
	ZoneSizeBytes int64 `json:"zoneSizeBytes,omitempty"`

	// ZoneSize is zoneSizeBytes as a quantity ("64Mi"), for people and kubectl's columns.
	// +optional
	ZoneSize string `json:"zoneSize,omitempty"`

	// ZoneCapacityBytes is the writable part of a zone. Sysfs does not give it (only a zone report does, which
	// means opening the device), so the agent leaves it out; a ZNSDatabase on the device reports it in
	// status.device once its preflight ran.
	// +optional
	ZoneCapacityBytes int64 `json:"zoneCapacityBytes,omitempty"`

	// MaxOpenZones is queue/max_open_zones; omitted when the device has no limit.
	// +optional
	MaxOpenZones int64 `json:"maxOpenZones,omitempty"`

	// MaxActiveZones is queue/max_active_zones; omitted when the device has no limit.
	// +optional
	MaxActiveZones int64 `json:"maxActiveZones,omitempty"`

	// Scheduler is the active I/O scheduler (ZenFS needs mq-deadline).
	// +optional
	Scheduler string `json:"scheduler,omitempty"`

	// AvailableSchedulers are the schedulers the kernel offers the device (queue/scheduler), so that a device
	// on the wrong one can be told apart from one that cannot have mq-deadline at all.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	AvailableSchedulers []string `json:"availableSchedulers,omitempty"`

	// Holder is the ZNSDatabase (namespace/name) that holds the device: the one whose storage names this node and
	// device and that the one-database-per-device rule lets keep it. Set by the operator.
	// +optional
	Holder string `json:"holder,omitempty"`

	// State is Present while the node lists the device, Gone once it does not.
	// +optional
	State ZonedDeviceState `json:"state,omitempty"`

	// LastSeenTime is the last scan that found the device. The agent writes only on a change, so while the
	// device is Present this is when it last changed; once Gone, the last scan that still saw it.
	// +optional
	LastSeenTime *metav1.Time `json:"lastSeenTime,omitempty"`

	// ObservedAt is when the agent observed what this status says (the last change it wrote).
	// +optional
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`

	// Conditions: HeldDeviceGone (True while a database holds the device and the node no longer lists it).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ZonedDeviceList is a list of ZonedDevice.
//
// +kubebuilder:object:root=true
type ZonedDeviceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ZonedDevice `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ZonedDevice{}, &ZonedDeviceList{})
}
