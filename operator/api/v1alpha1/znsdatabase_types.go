package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Engine is the MySQL storage engine that holds the benchmark tables.
// +kubebuilder:validation:Enum=rocksdb;innodb
type Engine string

const (
	// EngineRocksDB is MyRocks: MySQL on RocksDB, the only engine that can use a zoned device (through ZenFS).
	EngineRocksDB Engine = "rocksdb"
	// EngineInnoDB is MySQL's default engine, for the conventional comparison stack.
	EngineInnoDB Engine = "innodb"
)

// Profile selects one of the two mysqld configurations of the benchmark methodology.
// +kubebuilder:validation:Enum=workload;bulkload
type Profile string

const (
	// ProfileWorkload is the normal configuration: RocksDB bulk load off, binary log on.
	ProfileWorkload Profile = "workload"
	// ProfileBulkLoad is for loading data only: RocksDB bulk load on, binary log off. Ordinary sessions
	// lose rows silently while it is on, so it must never be left on for a workload.
	ProfileBulkLoad Profile = "bulkload"
)

// Flavor is the MySQL server distribution inside the image; option names differ between them.
// +kubebuilder:validation:Enum=percona;mariadb
type Flavor string

const (
	// FlavorPercona is Percona Server for MySQL, the product: 8.0 with MyRocks built with ZenFS, or 8.4
	// (spec.mysqlVersion).
	FlavorPercona Flavor = "percona"
	// FlavorMariaDB is MariaDB 10.11 with MyRocks from Debian's packages: a stand-in for tests; it has no ZenFS.
	FlavorMariaDB Flavor = "mariadb"
)

// MySQLVersion is the release series of Percona Server for MySQL a database runs.
// +kubebuilder:validation:Enum="8.0";"8.4"
type MySQLVersion string

const (
	// MySQL80 is Percona Server 8.0, the only series whose MyRocks was built with ZenFS (8.0.26-16 and later).
	// MySQL 8.0 reached its end of life on 2026-04-30.
	MySQL80 MySQLVersion = "8.0"
	// MySQL84 is Percona Server 8.4 LTS: InnoDB and MyRocks without ZenFS, which Percona removed in 8.1.0-1
	// (2023-11-27). On a zoned device it runs on zoned btrfs or f2fs.
	MySQL84 MySQLVersion = "8.4"
)

// ZonedFilesystem is what holds the data on a zoned device.
// +kubebuilder:validation:Enum=zenfs;btrfs;f2fs;xfs
type ZonedFilesystem string

const (
	// FilesystemZenFS is RocksDB's zoned file system plugin: MyRocks on Percona Server only, the device raw in
	// the pod.
	FilesystemZenFS ZonedFilesystem = "zenfs"
	// FilesystemBtrfs is btrfs in zoned mode (Linux 5.12+): any engine and flavor; the kubelet mounts it.
	FilesystemBtrfs ZonedFilesystem = "btrfs"
	// FilesystemF2FS is f2fs in zoned mode: any engine and flavor; it keeps its metadata in conventional zones,
	// so the device needs some.
	FilesystemF2FS ZonedFilesystem = "f2fs"
	// FilesystemZonedXFS is XFS in zoned mode (Linux and xfsprogs 6.15+): any engine and flavor; file data in the
	// sequential zones, metadata and log in the device's conventional zones or on a separate conventional
	// device (zonedDevice.metadataDeviceName), which an NVMe ZNS namespace needs.
	FilesystemZonedXFS ZonedFilesystem = "xfs"
)

// ZNSDatabase is one MySQL server bound to storage: a raw zoned block device formatted with ZenFS and used
// by MyRocks, or a conventional filesystem volume for the comparison stacks.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=znsdb,categories=zns-mysql
// +kubebuilder:printcolumn:name="Engine",type=string,JSONPath=`.spec.engine`
// +kubebuilder:printcolumn:name="MySQL",type=string,JSONPath=`.spec.mysqlVersion`,priority=1
// +kubebuilder:printcolumn:name="Storage",type=string,JSONPath=`.status.storage`
// +kubebuilder:printcolumn:name="Profile",type=string,JSONPath=`.status.profile`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].reason`,priority=1
// +kubebuilder:printcolumn:name="Benchmark",type=string,JSONPath=`.metadata.annotations.zns-mysql\.dev/benchmark`,priority=1
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.device.node`,priority=1
// +kubebuilder:printcolumn:name="Device",type=string,JSONPath=`.status.device.path`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 46",message="metadata.name must be at most 46 characters: the StatefulSet <name>-mysql labels its pods <name>-mysql-<10-character hash>, which must fit in 63"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must start with a letter and hold only lowercase letters, digits and '-' (no '.'): it names the Service <name>-mysql, which must be a DNS-1035 label"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.rootPasswordSecretName) || oldSelf.status.rootPasswordSecretName == (has(self.spec.rootPasswordSecretName) && size(self.spec.rootPasswordSecretName) > 0 ? self.spec.rootPasswordSecretName : self.metadata.name + '-root')",message="spec.rootPasswordSecretName cannot change once the database was started with a Secret (status.rootPasswordSecretName): mysqld keeps the root password it was initialised with in its datadir and would not know another Secret's; to change the password, run ALTER USER in mysqld and then put the new password into that same Secret"
type ZNSDatabase struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ZNSDatabaseSpec   `json:"spec"`
	Status ZNSDatabaseStatus `json:"status,omitempty"`
}

// MetricsSpec are the database pod's exporters.
type MetricsSpec struct {
	// Enabled adds two sidecars that Prometheus scrapes: prometheus-mysqld-exporter on port 9104 (named
	// mysqld-metrics; it logs in over the socket as the zns_exporter account, which the image's entrypoint keeps
	// with PROCESS, REPLICATION CLIENT and SELECT) and `znsdb metrics` on port 9105 (named zns-metrics: ZenFS
	// space, zones by state, device bytes written, datadir space). On when unset. Turn it off for an image that
	// lacks prometheus-mysqld-exporter, or to leave the node's CPU to mysqld alone.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// ZNSDatabaseSpec is what the user asks for.
//
// +kubebuilder:validation:XValidation:rule="has(self.storage.volume) || has(self.storage.device) || ((has(self.storage.zonedDevice) && has(self.storage.zonedDevice.filesystem) && self.storage.zonedDevice.filesystem != 'zenfs') || (has(self.storage.zonedClaim) && has(self.storage.zonedClaim.filesystem) && self.storage.zonedClaim.filesystem != 'zenfs')) || !has(self.engine) || self.engine == 'rocksdb'",message="ZenFS serves only the rocksdb engine (MyRocks); for innodb on a zoned device set filesystem btrfs, f2fs or xfs, or use storage.volume or storage.device"
// +kubebuilder:validation:XValidation:rule="has(self.storage.volume) || has(self.storage.device) || ((has(self.storage.zonedDevice) && has(self.storage.zonedDevice.filesystem) && self.storage.zonedDevice.filesystem != 'zenfs') || (has(self.storage.zonedClaim) && has(self.storage.zonedClaim.filesystem) && self.storage.zonedClaim.filesystem != 'zenfs')) || !has(self.flavor) || self.flavor == 'percona'",message="ZenFS needs flavor percona: only Percona Server's MyRocks is built with ZenFS; for mariadb on a zoned device set filesystem btrfs, f2fs or xfs, or use storage.volume or storage.device"
// +kubebuilder:validation:XValidation:rule="!has(self.resources) || !has(self.resources.limits) || !('memory' in self.resources.limits) || (type(self.resources.limits.memory) == int ? self.resources.limits.memory <= 17592186044416 : !(['P', 'Pi', 'E', 'Ei', 'e15', 'e16', 'e17', 'e18', 'E15', 'E16', 'E17', 'E18'].exists(s, self.resources.limits.memory.endsWith(s))) && (size(self.resources.limits.memory) < 15 || !(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'].exists(d, self.resources.limits.memory.endsWith(d)))))",message="spec.resources.limits.memory must be at most 16Ti: a limit in P, Pi, E or Ei, with an exponent of 15 or more, or of 15 or more digits of bytes, is refused"
// +kubebuilder:validation:XValidation:rule="!has(self.mysqlVersion) || self.mysqlVersion != '8.4' || has(self.storage.volume) || has(self.storage.device) || (has(self.storage.zonedDevice) && has(self.storage.zonedDevice.filesystem) && self.storage.zonedDevice.filesystem != 'zenfs') || (has(self.storage.zonedClaim) && has(self.storage.zonedClaim.filesystem) && self.storage.zonedClaim.filesystem != 'zenfs')",message="ZenFS needs mysqlVersion 8.0: Percona removed ZenFS from Percona Server in 8.1.0-1 (2023-11-27) and 8.4 LTS has none; with mysqlVersion 8.4 set the zoned device's filesystem to btrfs, f2fs or xfs, or keep ZenFS with mysqlVersion 8.0"
// +kubebuilder:validation:XValidation:rule="!has(self.mysqlVersion) || self.mysqlVersion == '8.0' || !has(self.flavor) || self.flavor == 'percona'",message="mysqlVersion 8.4 needs flavor percona: mysqlVersion picks the Percona Server series, and the mariadb stand-in is MariaDB 10.11 whatever it says; leave mysqlVersion at 8.0 for mariadb"
// +kubebuilder:validation:XValidation:rule="!((has(self.storage.zonedDevice) && has(self.storage.zonedDevice.filesystem) && self.storage.zonedDevice.filesystem == 'xfs') || (has(self.storage.zonedClaim) && has(self.storage.zonedClaim.filesystem) && self.storage.zonedClaim.filesystem == 'xfs') || (has(self.storage.device) && has(self.storage.device.filesystem) && self.storage.device.filesystem == 'xfs')) || (has(self.format) && has(self.format.capSysAdmin) && self.format.capSysAdmin)",message="filesystem xfs needs spec.format.capSysAdmin: true: mkfs.xfs sets the device's block size with the BLKBSZSET ioctl, which Linux admits only with CAP_SYS_ADMIN, so an unprivileged format Job fails ('cannot set blocksize ... Permission denied'). With it the format Job runs as root with CAP_SYS_ADMIN and no other capability, and the namespace must admit that (Pod Security level privileged; docs/data-safety.md). Or choose btrfs or f2fs (zoned), or ext4 (storage.device), which need no capability"
// +kubebuilder:validation:XValidation:rule="!(has(self.format) && has(self.format.capSysAdmin) && self.format.capSysAdmin) || ((has(self.storage.zonedDevice) && has(self.storage.zonedDevice.filesystem) && self.storage.zonedDevice.filesystem == 'xfs') || (has(self.storage.zonedClaim) && has(self.storage.zonedClaim.filesystem) && self.storage.zonedClaim.filesystem == 'xfs') || (has(self.storage.device) && has(self.storage.device.filesystem) && self.storage.device.filesystem == 'xfs'))",message="spec.format.capSysAdmin is for filesystem xfs only: the other file systems are made by an unprivileged format Job, which should stay without a capability it does not use"
type ZNSDatabaseSpec struct {
	// Storage is where the data lives: exactly one of zonedDevice, zonedClaim, device or volume. It cannot be
	// changed after creation: moving a database to other storage is a new database.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage is immutable"
	Storage StorageSpec `json:"storage"`

	// Engine is the storage engine of the tables: rocksdb (MyRocks) or innodb. Default: rocksdb. It cannot be
	// changed after creation: the tables are in the engine's own files, which the other engine cannot read.
	// +kubebuilder:default=rocksdb
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="engine cannot change once the database exists: its tables are in the engine's own files (MyRocks or InnoDB), which the other engine cannot open; to move the data, dump it (mysqldump) from this database and load it into a new ZNSDatabase with the other engine"
	// +optional
	Engine Engine `json:"engine,omitempty"`

	// Flavor is the MySQL distribution in the image: percona (the product) or mariadb (a test stand-in
	// without ZenFS). Default: percona. It cannot be changed after creation: the datadir is in the flavor's
	// format (Percona Server's data dictionary, or MariaDB's system tables).
	// +kubebuilder:default=percona
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="flavor cannot change once the database exists: its datadir is in the flavor's own format (Percona Server and MariaDB cannot open each other's); to move the data, dump it (mysqldump) from this database and load it into a new ZNSDatabase with the other flavor"
	// +optional
	Flavor Flavor `json:"flavor,omitempty"`

	// MySQLVersion is the Percona Server series: 8.0 (the default, and the only one with ZenFS) or 8.4 (LTS:
	// InnoDB and MyRocks without ZenFS, which Percona removed in 8.1.0-1, so a zoned device needs filesystem
	// btrfs or f2fs). It picks the default image and the options of the generated my.cnf: 8.4 removed some that
	// 8.0 takes, and overrides naming them are refused. The mariadb stand-in ignores it (it is MariaDB 10.11) and
	// refuses 8.4. It cannot be changed after creation: 8.4 upgrades an 8.0 datadir in place at its first start,
	// 8.0 cannot open it afterwards, and the operator does not drive that one-way step.
	// +kubebuilder:default="8.0"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="mysqlVersion cannot change once the database exists: Percona Server 8.4 upgrades an 8.0 datadir in place at its first start and 8.0 cannot open it afterwards, a one-way step the operator does not drive; to move the data, dump it (mysqldump) from this database and load it into a new ZNSDatabase with the other mysqlVersion"
	// +optional
	MySQLVersion MySQLVersion `json:"mysqlVersion,omitempty"`

	// Profile selects the mysqld configuration: workload (bulk load off, binary log on) or bulkload (bulk load
	// on, binary log off: for loading data only, ordinary sessions lose rows with it). Changing it restarts
	// mysqld. While a Benchmark holds the database, the profile its lease names applies instead (status.profile
	// says which runs); this one applies again when the lease ends. Default: workload.
	// +kubebuilder:default=workload
	// +optional
	Profile Profile `json:"profile,omitempty"`

	// Image is the MySQL server image. Default: the operator's image for the chosen flavor (and for percona, its
	// mysqlVersion).
	// +optional
	Image string `json:"image,omitempty"`

	// Config holds mysqld options that override the generated ones, keyed by option name (dashes and
	// underscores are equivalent; full names only: MariaDB's abbreviations of option names are refused). Paths, the port, the ZenFS URI, bulk load and the binary log switch are
	// set by the operator and cannot be overridden; options that run SQL (init_file, init_connect), load code
	// (plugin_load, plugin_dir), name files or directories (anything ending in _file, _dir, _path, ...) or
	// switch off authentication are refused (docs/config-overrides.md has the rule). Cache sizes
	// (rocksdb_block_cache_size, innodb_buffer_pool_size, ...) must fit the memory limit with the rest of the
	// generated caches.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Config map[string]string `json:"config,omitempty"`

	// Resources of the mysqld container. The memory limit sizes the RocksDB block cache and memtables (or the
	// InnoDB buffer pool); without one the generator assumes 2Gi. A limit below 512Mi or above 16Ti is refused
	// (limits written in P, Pi, E or Ei already at admission, the others with the InvalidConfig condition).
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// RootPasswordSecretName names a Secret in the same namespace whose key "password" holds the root
	// password. When empty the operator creates "<name>-root" with a random password; that Secret is kept
	// when the ZNSDatabase is deleted, like the data volume it opens. A password shorter than 8 characters is
	// refused: the benchmark runner redacts it from everything it prints, which a short one makes unreadable.
	// It can be changed only until the operator accepted a Secret (status.rootPasswordSecretName): mysqld is
	// initialised with that password and keeps it.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	RootPasswordSecretName string `json:"rootPasswordSecretName,omitempty"`

	// Metrics adds Prometheus exporters to the database pod (docs/observability.md).
	// +optional
	Metrics MetricsSpec `json:"metrics,omitempty"`

	// Format controls how the device is formatted: the policy and the reformat token mean the same for every file
	// system the operator makes (zenfs, zoned btrfs and f2fs, and storage.device's ext4 and xfs). Ignored for
	// storage.volume.
	// +kubebuilder:default={}
	// +optional
	Format FormatSpec `json:"format,omitempty"`

	// DataVolume is the filesystem volume for the MySQL datadir (data dictionary, binary logs, RocksDB logs)
	// and the ZenFS aux directory when the data itself is on a zoned device. Ignored for storage.volume, which
	// holds the datadir itself, and for the file systems the format Job makes (zoned btrfs and f2fs,
	// storage.device), which do too. It cannot be changed after creation (StatefulSet claim templates are
	// immutable).
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="dataVolume is immutable"
	// +optional
	DataVolume DataVolumeSpec `json:"dataVolume,omitempty"`

	// DeviceGroupID is a supplemental group added to the pod so that the non-root mysqld can open the raw
	// device when the host device node is group-accessible (usually root:disk 0660; disk is gid 6 on Debian
	// and Ubuntu). Not needed when the container runtime sets device ownership from the security context.
	// Default: 6.
	// +kubebuilder:default=6
	// +kubebuilder:validation:Minimum=0
	// +optional
	DeviceGroupID *int64 `json:"deviceGroupID,omitempty"`
}

// StorageSpec chooses the storage of a database.
//
// +kubebuilder:validation:XValidation:rule="(has(self.zonedDevice) ? 1 : 0) + (has(self.zonedClaim) ? 1 : 0) + (has(self.device) ? 1 : 0) + (has(self.volume) ? 1 : 0) == 1",message="exactly one of zonedDevice, zonedClaim, device or volume must be set"
type StorageSpec struct {
	// ZonedDevice is a raw zoned block device on a node. The operator creates a local PersistentVolume in
	// Block mode pinned to that node and a claim bound to it. A zoned device is never preconditioned (it has no
	// FTL whose garbage collection could be aged, and only zone-aware writes are possible): precondition exists
	// only under storage.device.
	// +optional
	ZonedDevice *ZonedDeviceSource `json:"zonedDevice,omitempty"`

	// ZonedClaim is an existing PersistentVolumeClaim in Block mode, bound to a zoned device.
	// +optional
	ZonedClaim *ZonedClaimSource `json:"zonedClaim,omitempty"`

	// Device is a whole conventional (not zoned) block device on a node: the operator makes ext4 or xfs on it,
	// after preconditioning the whole device if asked to, and the kubelet mounts it as the datadir.
	// +optional
	Device *DeviceSource `json:"device,omitempty"`

	// Volume is a conventional filesystem volume (MyRocks or InnoDB on XFS/ext4), provisioned by a storage
	// class; the kubelet makes its file system.
	// +optional
	Volume *VolumeSource `json:"volume,omitempty"`
}

// ZonedDeviceSource names a zoned block device by node and kernel name, or asks the operator to choose one that
// meets requirements from the device inventory (ZonedDevice objects).
//
// +kubebuilder:validation:XValidation:rule="has(self.requirements) ? !has(self.nodeName) && !has(self.deviceName) : has(self.nodeName) && has(self.deviceName)",message="give either nodeName and deviceName (a device you chose) or requirements (the operator chooses a device from the ZonedDevice inventory), not both"
// +kubebuilder:validation:XValidation:rule="!has(self.requirements) || !has(self.filesystem) || self.filesystem == 'zenfs' || self.filesystem == 'btrfs'",message="requirements choose a device for zenfs or btrfs only: f2fs and xfs need conventional zones (or a metadata device), which the inventory cannot see from sysfs; name the device (nodeName, deviceName) for them"
// +kubebuilder:validation:XValidation:rule="!has(self.metadataDeviceName) || (has(self.filesystem) && self.filesystem == 'xfs')",message="metadataDeviceName is for filesystem xfs only: zoned XFS can keep its metadata and log on a separate conventional device; zenfs, btrfs and f2fs cannot"
// +kubebuilder:validation:XValidation:rule="!has(self.metadataDeviceName) || !has(self.deviceName) || self.metadataDeviceName != self.deviceName",message="metadataDeviceName must name another device than deviceName: a conventional device of the same node"
// +kubebuilder:validation:XValidation:rule="!has(self.filesystem) || self.filesystem != 'xfs' || has(self.metadataDeviceName) || !has(self.deviceName) || !self.deviceName.startsWith('nvme')",message="zoned XFS on an NVMe ZNS namespace needs metadataDeviceName: ZNS namespaces have no conventional zones, and zoned XFS keeps its metadata and log in a section that needs random writes. Add metadataDeviceName, a conventional device (a conventional NVMe namespace, say) of at least 300 MiB on the same node"
// +kubebuilder:validation:XValidation:rule="!has(self.precondition)",message="a zoned device is never preconditioned: it has no FTL of its own to age (a ZNS drive does no garbage collection), so the methodology preconditions conventional drives only; use storage.device for a conventional drive"
type ZonedDeviceSource struct {
	// NodeName is the node that has the device, as its kubernetes.io/hostname label names it: the device's
	// PersistentVolume and the benchmark Jobs are pinned with that label, so it must be a valid label value.
	// Give it with deviceName, or give requirements instead.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// DeviceName is the kernel name of the device, without /dev/ (for example nullb0 or nvme0n2). ZenFS opens
	// /dev/<name> and reads /sys/block/<name>, so the pod sees the device under the same name. Partitions are
	// not allowed: host-managed drives ignore them. Give it with nodeName, or give requirements instead.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	DeviceName string `json:"deviceName,omitempty"`

	// Requirements ask the operator to choose the device: a Present zoned device of the inventory (ZonedDevice)
	// that meets them, that no database holds, names or was given before, and that passes the same checks as
	// the preflight for the file system (zenfs or btrfs). The choice is recorded on the ZonedDevice
	// (spec.claimRef, set atomically, so two databases never get one device) and in status.deviceBinding; it is
	// kept for the life of the database. With none that fits, DeviceReady is False with reason NoDeviceFits and a
	// message that says what each device lacks.
	// +optional
	Requirements *DeviceRequirements `json:"requirements,omitempty"`

	// Filesystem is what holds the data on the device: zenfs (the default: MyRocks places its files in zones
	// itself; Percona Server only), or btrfs, f2fs or xfs in zoned mode (any engine and flavor: a format Job
	// makes the file system, then the kubelet mounts it as the datadir). f2fs needs conventional zones on the
	// device; xfs needs 300 MiB of them, or metadataDeviceName, and Linux and xfsprogs 6.15 or later.
	// +kubebuilder:default=zenfs
	// +optional
	Filesystem ZonedFilesystem `json:"filesystem,omitempty"`

	// MetadataDeviceName is, for filesystem xfs only, a conventional block device of the same node (kernel name,
	// at least 300 MiB) that holds zoned XFS's metadata and log while the zoned device holds the file data: what
	// a zoned device without conventional zones, such as an NVMe ZNS namespace, needs. The operator binds it like
	// the zoned device (never to two databases) and formats the pair together, under the same rules.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	MetadataDeviceName string `json:"metadataDeviceName,omitempty"`

	// Precondition is refused here: a zoned drive has no flash translation layer to age (it does no garbage
	// collection of its own), so the methodology preconditions conventional drives only. The field exists so that
	// admission says so instead of dropping it; storage.device takes a conventional drive's precondition.
	// +optional
	Precondition *DevicePreconditionSpec `json:"precondition,omitempty"`
}

// ZonedClaimSource is an existing Block-mode claim bound to a zoned device.
//
// +kubebuilder:validation:XValidation:rule="!has(self.filesystem) || self.filesystem != 'xfs' || !self.deviceName.startsWith('nvme')",message="zoned XFS on an NVMe ZNS namespace needs a conventional metadata device, which only storage.zonedDevice can name (metadataDeviceName): ZNS namespaces have no conventional zones for XFS's metadata and log. Use storage.zonedDevice with metadataDeviceName, or btrfs here"
// +kubebuilder:validation:XValidation:rule="!has(self.precondition)",message="a zoned device is never preconditioned: it has no FTL of its own to age (a ZNS drive does no garbage collection), so the methodology preconditions conventional drives only; use storage.device for a conventional drive"
type ZonedClaimSource struct {
	// ClaimName is the PersistentVolumeClaim in the database's namespace. It must have volumeMode Block and be
	// bound to a PersistentVolume that names its node (node affinity on kubernetes.io/hostname), so that the
	// operator knows which device it is and never gives one device to two databases.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ClaimName string `json:"claimName"`

	// DeviceName is the kernel name of the device behind the claim on its node; the pod sees the device at
	// /dev/<deviceName> because ZenFS requires the host's name.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=32
	DeviceName string `json:"deviceName"`

	// Filesystem is what holds the data on the device: zenfs (the default: MyRocks places its files in zones
	// itself; Percona Server only), or btrfs, f2fs or xfs in zoned mode (any engine and flavor: a format Job
	// makes the file system, then the kubelet mounts it as the datadir). f2fs needs conventional zones on the
	// device; xfs 300 MiB of them (a metadata device needs storage.zonedDevice), and Linux and xfsprogs 6.15+.
	// +kubebuilder:default=zenfs
	// +optional
	Filesystem ZonedFilesystem `json:"filesystem,omitempty"`

	// Precondition is refused here: a zoned drive has no flash translation layer to age (it does no garbage
	// collection of its own), so the methodology preconditions conventional drives only. The field exists so that
	// admission says so instead of dropping it; storage.device takes a conventional drive's precondition.
	// +optional
	Precondition *DevicePreconditionSpec `json:"precondition,omitempty"`
}

// VolumeSource is a filesystem volume claimed from a storage class.
type VolumeSource struct {
	// StorageClassName of the claim. Default: the cluster's default storage class.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// Size of the volume. Default: 10Gi.
	// +kubebuilder:default="10Gi"
	// +optional
	Size resource.Quantity `json:"size,omitempty"`
}

// DataVolumeSpec is the filesystem volume for the datadir.
type DataVolumeSpec struct {
	// StorageClassName of the claim. Default: the cluster's default storage class.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// Size of the volume. Default: 2Gi (binary logs grow up to binlog_space_limit).
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
}

// ZNSDatabaseStatus is what the operator observed.
type ZNSDatabaseStatus struct {
	// ObservedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Storage is a one-word summary: zoned, device or volume.
	// +optional
	Storage string `json:"storage,omitempty"`

	// Endpoint is host:port of the database Service inside the cluster.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// ConfigMapName is the ConfigMap holding the current my.cnf (its name carries a hash of the content).
	// +optional
	ConfigMapName string `json:"configMapName,omitempty"`

	// Profile is the profile of the current my.cnf: spec.profile, or while a Benchmark holds the database, the
	// profile its lease names (annotation zns-mysql.dev/benchmark-profile; workload when absent). Available is
	// true only once the pod runs this configuration.
	// +optional
	Profile Profile `json:"profile,omitempty"`

	// RootPasswordSecretName is the Secret holding the root password, recorded once the operator accepted it
	// (it exists, with a long enough password) and may start mysqld with it. From then on
	// spec.rootPasswordSecretName cannot change: mysqld keeps the password it was initialised with.
	// +optional
	RootPasswordSecretName string `json:"rootPasswordSecretName,omitempty"`

	// Device is the zoned or conventional device as the preflight saw it.
	// +optional
	Device *DeviceStatus `json:"device,omitempty"`

	// Filesystem is what the format step found on the device and did with it, for every file system it makes
	// (zenfs, btrfs, f2fs, ext4, xfs), with ZenFS's own account of its space under it.
	// +optional
	Filesystem *FilesystemStatus `json:"filesystem,omitempty"`

	// Precondition is what the format Job's preconditioning of storage.device did, or why it did not run.
	// +optional
	Precondition *DevicePreconditionStatus `json:"precondition,omitempty"`

	// DeviceBinding is the device the operator chose for storage.zonedDevice.requirements, once it chose one.
	// +optional
	DeviceBinding *DeviceBinding `json:"deviceBinding,omitempty"`

	// Conditions: Available (mysqld is ready), DeviceReady (the device passed the preflight; zoned and device),
	// DeviceWarning (an accepted device has a risk, e.g. few open zones; zoned only), ConfigReady (the
	// configuration was generated), Progressing.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// FilesystemStatus is the file system the format step made or found, and what it did with the device.
type FilesystemStatus struct {
	// Type is the file system asked for: zenfs, btrfs, f2fs, ext4 or xfs.
	Type string `json:"type"`
	// Found is what the device held before the format step acted: a file system type, zenfs, or empty for none.
	// +optional
	Found string `json:"found,omitempty"`
	// UUID of the file system, as blkid or zenfs ls-uuid reads it.
	// +optional
	UUID string `json:"uuid,omitempty"`
	// Label of the file system (not zenfs, which has none); zns-mysql (no token) or zns-<hash> records the
	// reformat token it was made with.
	// +optional
	Label string `json:"label,omitempty"`
	// Action is what the format step did: format, keep or refuse.
	// +optional
	Action string `json:"action,omitempty"`
	// Reason says why, in words.
	// +optional
	Reason string `json:"reason,omitempty"`
	// ZonesReset is how many written zones a confirmed re-format reset before creating the file system.
	// +optional
	ZonesReset int32 `json:"zonesReset,omitempty"`
	// ReformatToken is the spec.format.reformatToken the format step ran with: a different one in the spec
	// stops mysqld and runs the format step again.
	// +optional
	ReformatToken string `json:"reformatToken,omitempty"`
	// ZenFS is ZenFS's own account of its space (zenfs df); only for zenfs: the kubelet's volume statistics
	// show the space of the file systems it mounts.
	// +optional
	ZenFS *ZenFSSpaceStatus `json:"zenfs,omitempty"`
}

// ZenFSSpaceStatus is the space of a ZenFS file system.
type ZenFSSpaceStatus struct {
	// MeasuredAt is when Free, Used and Reclaimable were measured: by the format step, then by the readiness
	// probe, about once a minute while mysqld runs.
	// +optional
	MeasuredAt *metav1.Time `json:"measuredAt,omitempty"`
	// Error says why the last measurement failed (the figures are then the previous ones).
	// +optional
	Error string `json:"error,omitempty"`
	// Free space in the file system.
	// +optional
	Free *resource.Quantity `json:"free,omitempty"`
	// Used space.
	// +optional
	Used *resource.Quantity `json:"used,omitempty"`
	// Reclaimable space: written but no longer live, freed when its zones are reset.
	// +optional
	Reclaimable *resource.Quantity `json:"reclaimable,omitempty"`
}

// ZNSDatabaseList is a list of ZNSDatabase.
//
// +kubebuilder:object:root=true
type ZNSDatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ZNSDatabase `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ZNSDatabase{}, &ZNSDatabaseList{})
}
