package v1alpha1

// FormatPolicy says when the operator may make a file system on the database's device.
// +kubebuilder:validation:Enum=IfNeeded;Never
type FormatPolicy string

const (
	// FormatIfNeeded formats only an empty device that holds no ZenFS. A device holding ZenFS is kept as it
	// is; a device holding anything else is refused.
	FormatIfNeeded FormatPolicy = "IfNeeded"
	// FormatNever never formats: the device must already hold ZenFS.
	FormatNever FormatPolicy = "Never"
)

// FormatSpec controls how the operator formats the database's device.
type FormatSpec struct {
	// Policy is IfNeeded (format an empty device; keep the file system asked for; refuse a device holding
	// anything else) or Never (the device must already hold the file system). Default: IfNeeded.
	// +kubebuilder:default=IfNeeded
	// +optional
	Policy FormatPolicy `json:"policy,omitempty"`

	// ReformatToken, when set to a value the file system on the device was not made with, re-formats the device
	// once, DESTROYING ALL DATA on it. The applied value is recorded with the file system (zenfs: in its aux
	// directory; btrfs, f2fs, ext4 and xfs: hashed in the label), so that restarts do not format again. Use a
	// fresh value (for example a date) for each deliberate re-format: a new value stops mysqld, runs the format
	// Job with it and starts mysqld again, for every file system. It is also the confirmation
	// storage.device.precondition needs.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ReformatToken string `json:"reformatToken,omitempty"`

	// ZenFSFinishThreshold is ZenFS's --finish_threshold in percent: a zone with less free capacity than this is
	// finished early. Default: 0 (ZenFS's own default). zenfs only.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ZenFSFinishThreshold int32 `json:"zenfsFinishThreshold,omitempty"`

	// CapSysAdmin runs the format Job as root with CAP_SYS_ADMIN and no other capability, for filesystem xfs
	// (zoned or on storage.device), which needs it and is refused without it: mkfs.xfs sets the device's block
	// size with the BLKBSZSET ioctl, which Linux admits only with that capability. The namespace must admit such a
	// pod (Pod Security level privileged); the operator says so when its label refuses it. Only the format Job gets
	// it: the preflight and mysqld stay unprivileged, and the kubelet mounts the file system. Default: false.
	// +optional
	CapSysAdmin bool `json:"capSysAdmin,omitempty"`
}
