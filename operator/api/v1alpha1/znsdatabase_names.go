package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Label keys the operator puts on every object it creates, shared by the controller, tests and e2e.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	// AnnotationBenchmark names the Benchmark that is using a ZNSDatabase, and AnnotationBenchmarkUID its UID:
	// a database serves one Benchmark at a time (profile switches and prepared tables are per Benchmark).
	// Another Benchmark naming the database waits until the holder removes them. Together with
	// AnnotationBenchmarkProfile they are the lease (LeaseProfile).
	AnnotationBenchmark    = "zns-mysql.dev/benchmark"
	AnnotationBenchmarkUID = "zns-mysql.dev/benchmark-uid"
	// AnnotationBenchmarkProfile is the profile the holding Benchmark has the database run (bulkload for its
	// prepare); absent means workload. It is part of the lease, not of the spec: the user's spec.profile is
	// left as it is and applies again when the lease ends.
	AnnotationBenchmarkProfile = "zns-mysql.dev/benchmark-profile"
	// AnnotationOwner names the ZNSDatabase ("<namespace>/<name>") on cluster-scoped objects, which cannot
	// carry an owner reference to a namespaced owner.
	AnnotationOwner = "zns-mysql.dev/owner"
	// AnnotationZenFSSpace is set on a zoned database's pod by its readiness helper: the ZenFS space it
	// measured (JSON of dbinit.Space), which the operator copies into status.filesystem.zenfs.
	AnnotationZenFSSpace = "zns-mysql.dev/zenfs-space"

	ManagedByValue = "zns-mysql-operator"
	AppNameValue   = "mysql"
)

// Paths inside the MySQL pod.
const (
	MySQLPort       = 3306
	ConfigDir       = "/etc/zns-mysql"
	ConfigFileName  = "my.cnf"
	DataMountPath   = "/var/lib/mysql"
	DataDir         = DataMountPath + "/data"
	ZenFSAuxDir     = DataMountPath + "/zenfs-aux"
	RunDir          = "/var/run/mysqld"
	SocketPath      = RunDir + "/mysqld.sock"
	PidFilePath     = RunDir + "/mysqld.pid"
	RootPasswordKey = "password"
	// Ports of the metrics sidecars (spec.metrics) and their names, which PodMonitors scrape.
	MySQLExporterPort     = 9104
	ZonedMetricsPort      = 9105
	MySQLExporterPortName = "mysqld-metrics"
	ZonedMetricsPortName  = "zns-metrics"
)

// ServerVersion is the Percona Server series of the database: spec.mysqlVersion, or 8.0 when it is empty (an object
// built in code, which the API server's defaulting never saw).
func (db *ZNSDatabase) ServerVersion() MySQLVersion {
	if db.Spec.MySQLVersion == "" {
		return MySQL80
	}
	return db.Spec.MySQLVersion
}

// MetricsEnabled reports whether the pod runs the metrics sidecars (the default).
func (db *ZNSDatabase) MetricsEnabled() bool {
	return db.Spec.Metrics.Enabled == nil || *db.Spec.Metrics.Enabled
}

// Name limits. Kubernetes caps DNS labels and label values at 63 characters, and the operator derives the names
// and labels of its children from a ZNSDatabase's and a Benchmark's names, so those are capped by the longest
// suffix it appends. The CRDs' admission rules state the same numbers (TestChildNamesAtMaximumLengths in package
// resources walks every name builder at these lengths; the envtest suite checks the API server agrees).
const (
	// MaxLabelLength is Kubernetes' limit of a DNS label and of a label value.
	MaxLabelLength = 63
	// StatefulSetSuffix follows the database's name in its StatefulSet and Service.
	StatefulSetSuffix = "-mysql"
	// RevisionHashSuffixLength is what the StatefulSet controller appends to the StatefulSet's name in the
	// pods' controller-revision-hash label: '-' and a uint32 encoded in up to 10 characters.
	RevisionHashSuffixLength = 1 + 10
	// MaxDatabaseNameLength is the longest ZNSDatabase name: "<name>-mysql-<hash>" must be a label value.
	MaxDatabaseNameLength = MaxLabelLength - len(StatefulSetSuffix) - RevisionHashSuffixLength
	// LongestBenchJobInfix is the longest part the operator puts between a Benchmark's name and a target's in
	// a Job name ("<benchmark>-precondition-<target>"); a Job's name becomes its pods' job-name label.
	LongestBenchJobInfix = "-precondition-"
	// MaxBenchmarkAndTargetLength bounds len(benchmark name) + len(target name).
	MaxBenchmarkAndTargetLength = MaxLabelLength - len(LongestBenchJobInfix)
	// MinPasswordLength is the shortest root password the operator accepts: the benchmark runner replaces
	// the password in everything it prints, and a shorter one would also hide ordinary words ("x" in "exit").
	MinPasswordLength = 8
)

// IsZoned reports whether the database stores its data on a zoned device.
func (db *ZNSDatabase) IsZoned() bool {
	return db.Spec.Storage.ZonedDevice != nil || db.Spec.Storage.ZonedClaim != nil
}

// HasBlockDevice reports whether the database has a whole block device of its own, reached through a Block
// claim: a zoned one (zonedDevice, zonedClaim) or a conventional one (device). Such a device is judged by a
// preflight Job before anything can write to it, and never given to two databases.
func (db *ZNSDatabase) HasBlockDevice() bool { return db.IsZoned() || db.Spec.Storage.Device != nil }

// MountsFormattedFilesystem reports whether the datadir is a file system that the operator's format Job made on
// the device and the kubelet mounts (a zoned btrfs, f2fs or xfs, or storage.device's ext4 or xfs), rather than ZenFS
// (the device raw in the pod) or a provisioned volume (the kubelet makes its file system).
func (db *ZNSDatabase) MountsFormattedFilesystem() bool {
	return db.HasZonedFilesystem() || db.Spec.Storage.Device != nil
}

// ZonedFilesystem is the file system on the zoned device ("" for a conventional device or volume).
func (db *ZNSDatabase) ZonedFilesystem() ZonedFilesystem {
	var fs ZonedFilesystem
	switch {
	case db.Spec.Storage.ZonedDevice != nil:
		fs = db.Spec.Storage.ZonedDevice.Filesystem
	case db.Spec.Storage.ZonedClaim != nil:
		fs = db.Spec.Storage.ZonedClaim.Filesystem
	default:
		return ""
	}
	if fs == "" {
		return FilesystemZenFS
	}
	return fs
}

// FormattedFilesystem is the file system the format Job makes on the database's device (zenfs, btrfs, f2fs,
// ext4 or xfs), "" when there is no device of its own (a volume, whose file system the kubelet makes).
func (db *ZNSDatabase) FormattedFilesystem() string {
	if src := db.Spec.Storage.Device; src != nil {
		if src.Filesystem == "" {
			return string(FilesystemExt4)
		}
		return string(src.Filesystem)
	}
	return string(db.ZonedFilesystem())
}

// UsesZenFS reports whether mysqld opens the zoned device raw, through ZenFS.
func (db *ZNSDatabase) UsesZenFS() bool { return db.ZonedFilesystem() == FilesystemZenFS }

// FormatsWithCapSysAdmin reports whether the format Job runs as root with CAP_SYS_ADMIN: for xfs, whose mkfs
// sets the device's block size (BLKBSZSET), and only when the user allowed it (admission refuses xfs without).
func (db *ZNSDatabase) FormatsWithCapSysAdmin() bool {
	return db.Spec.Format.CapSysAdmin && db.MountsFormattedFilesystem() && db.FormattedFilesystem() == string(FilesystemXFS)
}

// HasZonedFilesystem reports whether the data is on a zoned btrfs, f2fs or xfs, which the kubelet mounts.
func (db *ZNSDatabase) HasZonedFilesystem() bool { return db.IsZoned() && !db.UsesZenFS() }

// MetadataDeviceName is zoned XFS's conventional metadata device (zonedDevice.metadataDeviceName), "" without one.
func (db *ZNSDatabase) MetadataDeviceName() string {
	if src := db.Spec.Storage.ZonedDevice; src != nil && src.Filesystem == FilesystemZonedXFS {
		return src.MetadataDeviceName
	}
	return ""
}

// MetadataDevicePath is where the format Job sees the metadata device, and what the kubelet mounts: the host's
// own path, as for the zoned device.
func (db *ZNSDatabase) MetadataDevicePath() string {
	if name := db.MetadataDeviceName(); name != "" {
		return "/dev/" + name
	}
	return ""
}

// MetadataClaimName is the Block claim of the metadata device, bound to DevicePVName(node, metadata device).
func (db *ZNSDatabase) MetadataClaimName() string { return db.Name + "-metadata" }

// DevicePrecondition is storage.device's precondition, nil when there is none (and always for zoned storage,
// which is never preconditioned).
func (db *ZNSDatabase) DevicePrecondition() *DevicePreconditionSpec {
	if src := db.Spec.Storage.Device; src != nil {
		return src.Precondition
	}
	return nil
}

// FormatJobName is the Job that makes the file system of MountsFormattedFilesystem.
func (db *ZNSDatabase) FormatJobName() string { return db.Name + "-format" }

// FilesystemClaimName is the Filesystem-mode claim of MountsFormattedFilesystem, bound to FilesystemPVName.
func (db *ZNSDatabase) FilesystemClaimName() string {
	if db.Spec.Storage.Device != nil {
		return db.Name + "-fs"
	}
	return db.Name + "-zonedfs"
}

// FilesystemPVName is the local Filesystem-mode PersistentVolume over the device once the format Job made its
// file system.
func FilesystemPVName(node, device string) string { return DevicePVName(node, device) + "-fs" }

// ZonedDeviceName is the kernel name of the zoned device, "" for a conventional device or volume.
func (db *ZNSDatabase) ZonedDeviceName() string {
	switch {
	case db.Spec.Storage.ZonedDevice != nil:
		if db.Spec.Storage.ZonedDevice.Requirements != nil {
			return db.Status.DeviceBinding.Device()
		}
		return db.Spec.Storage.ZonedDevice.DeviceName
	case db.Spec.Storage.ZonedClaim != nil:
		return db.Spec.Storage.ZonedClaim.DeviceName
	}
	return ""
}

// DeviceName is the kernel name of the database's block device (HasBlockDevice), "" for a volume.
func (db *ZNSDatabase) DeviceName() string {
	if src := db.Spec.Storage.Device; src != nil {
		return src.DeviceName
	}
	return db.ZonedDeviceName()
}

// DeviceNode is the node the spec names the device on (zonedDevice, device), or the node of the device the
// operator chose for zonedDevice.requirements; "" for a zonedClaim, whose node comes from its PersistentVolume,
// for a volume, and while requirements are not bound yet.
func (db *ZNSDatabase) DeviceNode() string {
	switch {
	case db.Spec.Storage.ZonedDevice != nil:
		if db.Spec.Storage.ZonedDevice.Requirements != nil {
			return db.Status.DeviceBinding.Node()
		}
		return db.Spec.Storage.ZonedDevice.NodeName
	case db.Spec.Storage.Device != nil:
		return db.Spec.Storage.Device.NodeName
	}
	return ""
}

// PlacedByRequirements reports whether the operator chooses the database's device (zonedDevice.requirements).
func (db *ZNSDatabase) PlacedByRequirements() bool {
	return db.Spec.Storage.ZonedDevice != nil && db.Spec.Storage.ZonedDevice.Requirements != nil
}

// Node is the binding's node, "" for no binding.
func (b *DeviceBinding) Node() string {
	if b == nil {
		return ""
	}
	return b.NodeName
}

// Device is the binding's kernel name, "" for no binding.
func (b *DeviceBinding) Device() string {
	if b == nil {
		return ""
	}
	return b.DeviceName
}

// DevicePath is where the pod sees the device: the host's own path, as ZenFS requires.
func (db *ZNSDatabase) DevicePath() string {
	if name := db.DeviceName(); name != "" {
		return "/dev/" + name
	}
	return ""
}

// StatefulSetName is the name of the StatefulSet, its Service and the prefix of its pods.
func (db *ZNSDatabase) StatefulSetName() string { return db.Name + StatefulSetSuffix }

// ServiceName is the Service in front of mysqld.
func (db *ZNSDatabase) ServiceName() string { return db.StatefulSetName() }

// ServiceAccountName is the zoned database pod's service account, and the name of the Role and RoleBinding
// that let it annotate its own pod.
func (db *ZNSDatabase) ServiceAccountName() string { return db.StatefulSetName() }

// PodName is the only pod of the StatefulSet.
func (db *ZNSDatabase) PodName() string { return db.StatefulSetName() + "-0" }

// ConfigMapPrefix is the prefix of the my.cnf ConfigMap; a content hash follows it.
func (db *ZNSDatabase) ConfigMapPrefix() string { return db.Name + "-mycnf-" }

// GeneratedSecretName is the Secret the operator creates when the user names none.
func (db *ZNSDatabase) GeneratedSecretName() string { return db.Name + "-root" }

// RootSecretName is the Secret holding the root password.
func (db *ZNSDatabase) RootSecretName() string {
	if db.Spec.RootPasswordSecretName != "" {
		return db.Spec.RootPasswordSecretName
	}
	return db.GeneratedSecretName()
}

// PreflightJobName is the read-only Job that inspects the device before anything may write to it.
func (db *ZNSDatabase) PreflightJobName() string { return db.Name + "-preflight" }

// DataClaimTemplateName is the StatefulSet's volume claim template for the datadir; the claim is named
// "<template>-<pod>".
const DataClaimTemplateName = "data"

// DataClaimName is the datadir claim the StatefulSet creates.
func (db *ZNSDatabase) DataClaimName() string { return DataClaimTemplateName + "-" + db.PodName() }

// DeviceClaimName is the Block claim of the database's device (HasBlockDevice): the user's zonedClaim, or the
// one the operator binds to DevicePVName.
func (db *ZNSDatabase) DeviceClaimName() string {
	switch {
	case db.Spec.Storage.ZonedClaim != nil:
		return db.Spec.Storage.ZonedClaim.ClaimName
	case db.Spec.Storage.Device != nil:
		return db.Name + "-device"
	}
	return db.Name + "-zoned"
}

// DevicePVName is the local Block PersistentVolume of a device named by node (zonedDevice, device). It is derived from node and device alone, so
// two databases claiming the same device collide on it even across namespaces.
func DevicePVName(node, device string) string {
	sum := sha256.Sum256([]byte(node + "/" + device))
	base := fmt.Sprintf("zns-%s-%s", strings.ReplaceAll(node, ".", "-"), device)
	if len(base) > 50 {
		base = base[:50]
	}
	return strings.TrimRight(base, "-") + "-" + hex.EncodeToString(sum[:])[:8]
}

// OwnerAnnotationValue identifies a database on cluster-scoped objects.
func (db *ZNSDatabase) OwnerAnnotationValue() string { return db.Namespace + "/" + db.Name }

// Endpoint is host:port of the Service.
func (db *ZNSDatabase) Endpoint() string {
	return fmt.Sprintf("%s.%s.svc:%d", db.ServiceName(), db.Namespace, MySQLPort)
}

// SelectorLabels select the pods of the database.
func (db *ZNSDatabase) SelectorLabels() map[string]string {
	return map[string]string{
		LabelName:      AppNameValue,
		LabelInstance:  db.Name,
		LabelManagedBy: ManagedByValue,
	}
}

// Labels for a child with the given component.
func (db *ZNSDatabase) Labels(component string) map[string]string {
	l := db.SelectorLabels()
	l[LabelComponent] = component
	return l
}

// Leased tells whether a Benchmark's lease is on the database (whether its Benchmark still exists is for the
// caller to find out).
func (db *ZNSDatabase) Leased() bool {
	return db.Annotations[AnnotationBenchmarkUID] != ""
}

// LeaseProfile is the profile the lease on the database names: bulkload when it says so, workload otherwise (a
// Benchmark holds its databases for runs in the workload profile; any other value, set by hand, is not a
// profile a Benchmark asks for).
func (db *ZNSDatabase) LeaseProfile() Profile {
	if Profile(db.Annotations[AnnotationBenchmarkProfile]) == ProfileBulkLoad {
		return ProfileBulkLoad
	}
	return ProfileWorkload
}

// ZenFSSpace is the ZenFS space status.filesystem carries, nil when there is none.
func (s *ZNSDatabaseStatus) ZenFSSpace() *ZenFSSpaceStatus {
	if s.Filesystem == nil {
		return nil
	}
	return s.Filesystem.ZenFS
}
