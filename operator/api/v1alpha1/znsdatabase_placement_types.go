package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeviceRequirements are what a database asks of the zoned device the operator chooses for it. Every field is a
// floor that the inventory's copy of sysfs (ZonedDevice status) is compared with; an unset field asks nothing.
// The zone capacity (the writable part of a zone, smaller than the zone on many NVMe ZNS drives) is not in sysfs,
// so it cannot be required: status.device.zoneCapacity reports it once the preflight read the zone report.
type DeviceRequirements struct {
	// NodeSelector limits the choice to devices of nodes whose labels match.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// MinZones is the fewest zones the device may have. The file system's own floor applies anyway (ZenFS 32,
	// zoned btrfs 8).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinZones int64 `json:"minZones,omitempty"`

	// MinZoneSize is the smallest zone size accepted.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isInteger() && quantity(string(self)).asInteger() > 0",message="minZoneSize must be a positive whole number of bytes"
	// +optional
	MinZoneSize *resource.Quantity `json:"minZoneSize,omitempty"`

	// MinCapacity is the smallest device size accepted.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isInteger() && quantity(string(self)).asInteger() > 0",message="minCapacity must be a positive whole number of bytes"
	// +optional
	MinCapacity *resource.Quantity `json:"minCapacity,omitempty"`

	// MinOpenZones is the lowest open-zone limit accepted; a device without a limit meets any. ZenFS's floor
	// (7) applies anyway.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinOpenZones int64 `json:"minOpenZones,omitempty"`

	// MinActiveZones is the lowest active-zone limit accepted; a device without a limit meets any.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinActiveZones int64 `json:"minActiveZones,omitempty"`

	// Model is the drive's model as it reports it (ZonedDevice status.model), to compare like with like across
	// nodes; empty accepts any.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Model string `json:"model,omitempty"`
}

// DeviceBinding is the device the operator chose for a database's requirements.
type DeviceBinding struct {
	// ZonedDevice is the inventory object of the device; its spec.claimRef names this database.
	ZonedDevice string `json:"zonedDevice"`
	// NodeName is the node's kubernetes.io/hostname label, with which the device's PersistentVolume and the
	// benchmark Jobs are pinned.
	NodeName string `json:"nodeName"`
	// DeviceName is the device's kernel name, without /dev/.
	DeviceName string `json:"deviceName"`
	// StableID is the drive's stable identity when sysfs gives one (see ZonedDevice status.stableID).
	// +optional
	StableID string `json:"stableID,omitempty"`
	// BoundAt is when the operator made the choice.
	BoundAt metav1.Time `json:"boundAt"`
}
