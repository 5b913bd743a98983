// Package resources builds the Kubernetes objects that make up a ZNSDatabase, as server-side apply
// configurations. It computes only: the reconciler decides when to apply them.
package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// Component label values.
const (
	ComponentConfig    = "config"
	ComponentDatabase  = "database"
	ComponentDevice    = "device"
	ComponentFormat    = "format"
	ComponentPreflight = "preflight"
	ComponentSecret    = "secret"
)

// Container names the reconciler reads termination messages from.
const (
	PreflightContainer = "preflight"
	FormatContainer    = "format"
	MySQLContainer     = "mysqld"
)

// The uid/gid the MySQL images run mysqld as (the images create the mysql user with these ids).
const (
	MySQLUID int64 = 999
	MySQLGID int64 = 999
)

const (
	volumeConfig = "config"
	volumeRun    = "run"
	volumeTmp    = "tmp"
	volumeZoned  = "zoned"
	// volumeMetadata is zoned XFS's metadata device in the format Job.
	volumeMetadata = "metadata"
	helperBinary   = "znsdb"
)

// DefaultDataVolumeSize is the datadir volume of a zoned database: binary logs, the data dictionary and
// RocksDB's LOG files, not the data itself.
var DefaultDataVolumeSize = resource.MustParse("2Gi")

// DefaultVolumeSize is the data volume of a conventional database when the user gives no size.
var DefaultVolumeSize = resource.MustParse("10Gi")

// OwnerReference makes db the controller of a namespaced child, so that deleting db deletes the child.
func OwnerReference(db *v1alpha1.ZNSDatabase) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(v1alpha1.GroupVersion.String()).
		WithKind("ZNSDatabase").
		WithName(db.Name).
		WithUID(db.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// ConfigMapName is the name of the my.cnf ConfigMap: a hash of the content follows the prefix, so a new
// configuration is a new ConfigMap and the pod template changes with it, which rolls the pod.
func ConfigMapName(db *v1alpha1.ZNSDatabase, cnf string) string {
	sum := sha256.Sum256([]byte(cnf))
	return db.ConfigMapPrefix() + hex.EncodeToString(sum[:])[:10]
}

// ConfigMap holds the generated my.cnf.
func ConfigMap(db *v1alpha1.ZNSDatabase, cnf string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(ConfigMapName(db, cnf), db.Namespace).
		WithLabels(db.Labels(ComponentConfig)).
		WithOwnerReferences(OwnerReference(db)).
		WithData(map[string]string{v1alpha1.ConfigFileName: cnf})
}

// GeneratedSecret is the root password Secret the operator creates when the user names none. It has no owner
// reference on purpose: the data volume outlives the database, and so must the password that opens it.
func GeneratedSecret(db *v1alpha1.ZNSDatabase, password string) *corev1.Secret {
	s := &corev1.Secret{
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{v1alpha1.RootPasswordKey: password},
	}
	s.Name = db.GeneratedSecretName()
	s.Namespace = db.Namespace
	s.Labels = db.Labels(ComponentSecret)
	return s
}

// Service exposes mysqld inside the cluster and, with spec.metrics, the zns-metrics sidecar (MetricsURL).
func Service(db *v1alpha1.ZNSDatabase) *corev1ac.ServiceApplyConfiguration {
	spec := corev1ac.ServiceSpec().
		WithType(corev1.ServiceTypeClusterIP).
		WithSelector(db.SelectorLabels()).
		WithPorts(corev1ac.ServicePort().
			WithName(MySQLPortName).
			WithProtocol(corev1.ProtocolTCP).
			WithPort(v1alpha1.MySQLPort).
			WithTargetPort(intstr.FromString(MySQLPortName)))
	if db.MetricsEnabled() {
		spec.WithPorts(metricsServicePort())
	}
	return corev1ac.Service(db.ServiceName(), db.Namespace).
		WithLabels(db.Labels(ComponentDatabase)).
		WithOwnerReferences(OwnerReference(db)).
		WithSpec(spec)
}

// hostnameAffinity pins to the node whose kubernetes.io/hostname label is node, the convention of local
// PersistentVolumes.
func hostnameSelector(node string) *corev1ac.NodeSelectorApplyConfiguration {
	return corev1ac.NodeSelector().WithNodeSelectorTerms(corev1ac.NodeSelectorTerm().
		WithMatchExpressions(corev1ac.NodeSelectorRequirement().
			WithKey(corev1.LabelHostname).
			WithOperator(corev1.NodeSelectorOpIn).
			WithValues(node)))
}

// DevicePV is the local Block PersistentVolume of a device named by node (zonedDevice, device), pre-bound to
// DeviceClaim. Retain: deleting the claim or the database never lets Kubernetes recycle or wipe the device.
func DevicePV(db *v1alpha1.ZNSDatabase, capacityBytes int64) *corev1ac.PersistentVolumeApplyConfiguration {
	node := db.DeviceNode()
	return localPV(db, localVolume{
		name: v1alpha1.DevicePVName(node, db.DeviceName()), node: node, claim: db.DeviceClaimName(),
		mode: corev1.PersistentVolumeBlock, capacityBytes: capacityBytes,
	})
}

// MetadataDevicePV is the local Block PersistentVolume of zoned XFS's metadata device, named from node and
// device like DevicePV, so that a database that names the same device as its own collides on it.
func MetadataDevicePV(db *v1alpha1.ZNSDatabase, capacityBytes int64) *corev1ac.PersistentVolumeApplyConfiguration {
	node := db.DeviceNode()
	return localPV(db, localVolume{
		name: v1alpha1.DevicePVName(node, db.MetadataDeviceName()), node: node, claim: db.MetadataClaimName(),
		path: db.MetadataDevicePath(), mode: corev1.PersistentVolumeBlock, capacityBytes: capacityBytes,
	})
}

// MetadataDeviceClaim is the Block claim bound to MetadataDevicePV by name, which the format Job uses.
func MetadataDeviceClaim(db *v1alpha1.ZNSDatabase, capacityBytes int64) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	return boundClaim(db, localVolume{
		name: v1alpha1.DevicePVName(db.DeviceNode(), db.MetadataDeviceName()), claim: db.MetadataClaimName(),
		mode: corev1.PersistentVolumeBlock, capacityBytes: capacityBytes,
	}, ComponentDevice)
}

// DeviceClaim is the Block claim bound to DevicePV by name.
func DeviceClaim(db *v1alpha1.ZNSDatabase, capacityBytes int64) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	return boundClaim(db, localVolume{
		name: v1alpha1.DevicePVName(db.DeviceNode(), db.DeviceName()), claim: db.DeviceClaimName(),
		mode: corev1.PersistentVolumeBlock, capacityBytes: capacityBytes,
	}, ComponentDevice)
}

// localVolume is a local PersistentVolume over the database's device and the claim it is pre-bound to.
type localVolume struct {
	name, node, claim string
	// path is the device node; the database's device when empty.
	path string
	// mountOptions are the kubelet's for a Filesystem-mode volume.
	mountOptions []string
	mode         corev1.PersistentVolumeMode
	// fsType is set for a Filesystem-mode volume: the kubelet mounts the device with it.
	fsType        string
	capacityBytes int64
}

// localPV pins the volume to its node, names its database on it (for conflicts and release), and retains it:
// deleting it never lets Kubernetes recycle or wipe the device.
func localPV(db *v1alpha1.ZNSDatabase, v localVolume) *corev1ac.PersistentVolumeApplyConfiguration {
	path := v.path
	if path == "" {
		path = db.DevicePath()
	}
	src := corev1ac.LocalVolumeSource().WithPath(path)
	if v.fsType != "" {
		src.WithFSType(v.fsType)
	}
	spec := corev1ac.PersistentVolumeSpec()
	if len(v.mountOptions) > 0 {
		spec.WithMountOptions(v.mountOptions...)
	}
	return corev1ac.PersistentVolume(v.name).
		WithLabels(map[string]string{
			v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue,
			v1alpha1.LabelComponent: ComponentDevice,
		}).
		WithAnnotations(map[string]string{v1alpha1.AnnotationOwner: db.OwnerAnnotationValue()}).
		WithSpec(spec.
			WithCapacity(corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(v.capacityBytes, resource.BinarySI)}).
			WithVolumeMode(v.mode).
			WithAccessModes(corev1.ReadWriteOnce).
			WithPersistentVolumeReclaimPolicy(corev1.PersistentVolumeReclaimRetain).
			WithStorageClassName("").
			WithLocal(src).
			WithNodeAffinity(corev1ac.VolumeNodeAffinity().WithRequired(hostnameSelector(v.node))).
			WithClaimRef(corev1ac.ObjectReference().
				WithKind("PersistentVolumeClaim").
				WithAPIVersion("v1").
				WithNamespace(db.Namespace).
				WithName(v.claim)))
}

// boundClaim is the claim of a localPV, bound to it by name.
func boundClaim(db *v1alpha1.ZNSDatabase, v localVolume, component string) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	return corev1ac.PersistentVolumeClaim(v.claim, db.Namespace).
		WithLabels(db.Labels(component)).
		WithOwnerReferences(OwnerReference(db)).
		WithSpec(corev1ac.PersistentVolumeClaimSpec().
			WithVolumeMode(v.mode).
			WithAccessModes(corev1.ReadWriteOnce).
			WithStorageClassName("").
			WithVolumeName(v.name).
			WithResources(corev1ac.VolumeResourceRequirements().
				WithRequests(corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(v.capacityBytes, resource.BinarySI)})))
}

// podSecurity runs everything as the non-root mysql user; the device group lets it open a raw device node
// that the host owns as root:disk 0660.
func podSecurity(db *v1alpha1.ZNSDatabase) *corev1ac.PodSecurityContextApplyConfiguration {
	sc := corev1ac.PodSecurityContext().
		WithRunAsNonRoot(true).
		WithRunAsUser(MySQLUID).
		WithRunAsGroup(MySQLGID).
		WithFSGroup(MySQLGID).
		WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))
	if db.HasBlockDevice() && db.Spec.DeviceGroupID != nil {
		sc.WithSupplementalGroups(*db.Spec.DeviceGroupID)
	}
	return sc
}

func containerSecurity() *corev1ac.SecurityContextApplyConfiguration {
	return corev1ac.SecurityContext().
		WithAllowPrivilegeEscalation(false).
		WithReadOnlyRootFilesystem(true).
		WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))
}

// PreflightDeadlineSeconds bounds a preflight Job from its start: scheduling, the first pull of the server image
// on the node and the inspection (which reads sysfs or the zone report and takes seconds). 5 minutes covers a
// 1 GB image pulled at 30 Mbit/s; a pod that cannot be scheduled (a node that does not exist) is reported long
// before, from its PodScheduled condition. When the deadline passes the Job fails and runs again after the
// operator's preflight retry, and a pull cut short resumes from the layers the runtime kept.
const PreflightDeadlineSeconds int64 = 300

// PreflightJob inspects the device read-only (sysfs, and a zonedClaim's zone report) and writes its verdict as
// JSON to the termination message. Nothing that can write to the device is created before it passes.
func PreflightJob(db *v1alpha1.ZNSDatabase, image string) *batchv1ac.JobApplyConfiguration {
	device := db.DeviceName()
	c := corev1ac.Container().
		WithName(PreflightContainer).
		WithImage(image).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithSecurityContext(containerSecurity())

	spec := corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithSecurityContext(podSecurity(db))
	if node := db.DeviceNode(); node != "" {
		// No device at all: nothing that could write to it exists until it passed. sysfs, which every container
		// sees, is enough to judge it; the zone report needs the device open, which the device cgroup denies a
		// hostPath device node, so format reads it later through the device's claim.
		spec.WithAffinity(corev1ac.Affinity().WithNodeAffinity(corev1ac.NodeAffinity().
			WithRequiredDuringSchedulingIgnoredDuringExecution(hostnameSelector(node))))
		c.WithCommand(append([]string{helperBinary, "preflight", "--device", device, "--sysfs-only"}, filesystemFlag(db)...)...)
	} else {
		// The user's claim, read-only: the kubelet then lets the container read the device and not write it.
		spec.WithVolumes(corev1ac.Volume().WithName(volumeZoned).WithPersistentVolumeClaim(
			corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(db.DeviceClaimName()).WithReadOnly(true)))
		c.WithCommand(append([]string{helperBinary, "preflight", "--device", device}, filesystemFlag(db)...)...).
			WithVolumeDevices(corev1ac.VolumeDevice().WithName(volumeZoned).WithDevicePath(db.DevicePath()))
	}
	// WithContainers copies the container, so it comes last.
	spec.WithContainers(c)
	return batchv1ac.Job(db.PreflightJobName(), db.Namespace).
		WithLabels(db.Labels(ComponentPreflight)).
		WithOwnerReferences(OwnerReference(db)).
		WithSpec(batchv1ac.JobSpec().
			WithBackoffLimit(0).
			WithActiveDeadlineSeconds(PreflightDeadlineSeconds).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(db.Labels(ComponentPreflight)).
				WithSpec(spec)))
}

// StatefulSetInput is what the StatefulSet needs besides the database itself.
type StatefulSetInput struct {
	Image         string
	ConfigMapName string
	// ProbePeriodSeconds is the readiness probe's period; 0 is DefaultProbePeriodSeconds.
	ProbePeriodSeconds int32
}

// StatefulSet runs one mysqld, on a device the format Job has made ready (ZenFS: the raw device; the others: the
// file system the kubelet mounts) or on a volume.
func StatefulSet(db *v1alpha1.ZNSDatabase, in StatefulSetInput) *appsv1ac.StatefulSetApplyConfiguration {
	mounts := []*corev1ac.VolumeMountApplyConfiguration{
		corev1ac.VolumeMount().WithName(v1alpha1.DataClaimTemplateName).WithMountPath(v1alpha1.DataMountPath),
		corev1ac.VolumeMount().WithName(volumeConfig).WithMountPath(v1alpha1.ConfigDir).WithReadOnly(true),
		corev1ac.VolumeMount().WithName(volumeRun).WithMountPath(v1alpha1.RunDir),
		corev1ac.VolumeMount().WithName(volumeTmp).WithMountPath("/tmp"),
	}
	mysqld := corev1ac.Container().
		WithName(MySQLContainer).
		WithImage(in.Image).
		WithArgs("--defaults-file="+v1alpha1.ConfigDir+"/"+v1alpha1.ConfigFileName).
		WithEnv(corev1ac.EnvVar().WithName("MYSQL_ROOT_PASSWORD").WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(db.RootSecretName()).WithKey(v1alpha1.RootPasswordKey))),
			corev1ac.EnvVar().WithName("ZNS_MYSQL_FLAVOR").WithValue(string(db.Spec.Flavor))).
		WithPorts(corev1ac.ContainerPort().WithName(MySQLPortName).WithContainerPort(v1alpha1.MySQLPort).WithProtocol(corev1.ProtocolTCP)).
		WithStartupProbe(startupProbe()).
		WithReadinessProbe(readinessProbe(db, in.ProbePeriodSeconds)).
		WithSecurityContext(containerSecurity()).
		WithVolumeMounts(mounts...)
	if res := resourceRequirements(db); res != nil {
		mysqld.WithResources(res)
	}

	spec := corev1ac.PodSpec().
		WithSecurityContext(podSecurity(db)).
		WithTerminationGracePeriodSeconds(60).
		WithVolumes(
			corev1ac.Volume().WithName(volumeConfig).WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(in.ConfigMapName)),
			corev1ac.Volume().WithName(volumeRun).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
			corev1ac.Volume().WithName(volumeTmp).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
		)

	if db.MountsFormattedFilesystem() {
		// The kubelet mounts the file system that the format Job made; mysqld never sees the device.
		spec.WithVolumes(corev1ac.Volume().WithName(v1alpha1.DataClaimTemplateName).WithPersistentVolumeClaim(
			corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(db.FilesystemClaimName())))
	}
	var device *corev1ac.VolumeDeviceApplyConfiguration
	if db.UsesZenFS() {
		device = corev1ac.VolumeDevice().WithName(volumeZoned).WithDevicePath(db.DevicePath())
		// The readiness helper publishes the ZenFS space on its own pod (ServiceAccount, PodRole).
		mysqld.WithVolumeDevices(device).WithEnv(
			corev1ac.EnvVar().WithName(podNameEnv).WithValueFrom(corev1ac.EnvVarSource().
				WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name"))),
			corev1ac.EnvVar().WithName(podNamespaceEnv).WithValueFrom(corev1ac.EnvVarSource().
				WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.namespace"))))
		spec.WithServiceAccountName(db.ServiceAccountName()).WithAutomountServiceAccountToken(true).
			WithVolumes(corev1ac.Volume().WithName(volumeZoned).WithPersistentVolumeClaim(
				corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(db.DeviceClaimName())))
	}
	spec.WithContainers(mysqld)
	spec.WithContainers(metricsSidecars(db, in.Image, mounts[0], mounts[2], mounts[3], device)...)

	sts := appsv1ac.StatefulSetSpec().
		WithReplicas(1).
		WithServiceName(db.ServiceName()).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(db.SelectorLabels())).
		WithPersistentVolumeClaimRetentionPolicy(appsv1ac.StatefulSetPersistentVolumeClaimRetentionPolicy().
			WithWhenDeleted("Retain").WithWhenScaled("Retain")).
		WithTemplate(corev1ac.PodTemplateSpec().
			WithLabels(db.Labels(ComponentDatabase)).
			// kubectl logs and exec pick mysqld, not a metrics sidecar, when no container is named.
			WithAnnotations(map[string]string{"kubectl.kubernetes.io/default-container": MySQLContainer}).
			WithSpec(spec))
	if !db.MountsFormattedFilesystem() {
		sts.WithVolumeClaimTemplates(dataClaimTemplate(db))
	}
	return appsv1ac.StatefulSet(db.StatefulSetName(), db.Namespace).
		WithLabels(db.Labels(ComponentDatabase)).
		WithOwnerReferences(OwnerReference(db)).
		WithSpec(sts)
}

// The pod's identity for the readiness helper (podannotate.PodNameEnv, PodNamespaceEnv).
const (
	podNameEnv      = "POD_NAME"
	podNamespaceEnv = "POD_NAMESPACE"
)

// ZenFSSpaceInterval is the least time between two zenfs df runs of a zoned database's readiness probe.
const ZenFSSpaceInterval = "60s"

// DefaultProbePeriodSeconds is the readiness probe's period unless the operator is given another
// (--database-probe-period). Each probe is an exec, so a process start in the container: next to nothing on a
// real node, but about 0.4 CPU-s inside the container alone under emulation (hack/qemu: TCG; docs/zoned-node.md),
// where databases probed every 5 s took a large share of the node's two vCPUs.
const DefaultProbePeriodSeconds = 5

// MySQLPortName names mysqld's port in the pod and the Service.
const MySQLPortName = "mysql"

// StartupProbeMaxSeconds is how long mysqld may take to listen before the kubelet restarts it: a day, since crash
// recovery of a large datadir can take hours and a restart would only begin it again.
const StartupProbeMaxSeconds = 24 * 3600

// startupProbePeriodSeconds is how often the kubelet tries mysqld's port while it starts.
const startupProbePeriodSeconds = 2

// startupProbe: the kubelet connects to mysqld's port every 2 s until it listens. A TCP connect is the kubelet's
// own work, no process started in the container; once it succeeds the kubelet runs the readiness probe (an exec)
// at once, instead of at its next period, so a started or restarted database is seen ready a moment after mysqld
// listens rather than up to a period later (20 s on the emulated node), and no exec runs while mysqld cannot
// answer yet.
func startupProbe() *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().
		WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromString(MySQLPortName))).
		WithPeriodSeconds(startupProbePeriodSeconds).WithTimeoutSeconds(startupProbePeriodSeconds).
		WithFailureThreshold(StartupProbeMaxSeconds / startupProbePeriodSeconds)
}

// readinessProbe checks that mysqld answers. On a zoned database it also refreshes the ZenFS space, at most
// once per ZenFSSpaceInterval; zenfs df may take a few seconds there, hence the longer timeout.
func readinessProbe(db *v1alpha1.ZNSDatabase, periodSeconds int32) *corev1ac.ProbeApplyConfiguration {
	if periodSeconds <= 0 {
		periodSeconds = DefaultProbePeriodSeconds
	}
	cmd := []string{helperBinary, "health", "--socket", v1alpha1.SocketPath}
	timeout := int32(3)
	if db.UsesZenFS() {
		cmd = append(cmd, "--zenfs-device", db.ZonedDeviceName(), "--zenfs-space-interval", ZenFSSpaceInterval)
		timeout = 10
	}
	return corev1ac.Probe().
		WithExec(corev1ac.ExecAction().WithCommand(cmd...)).
		WithPeriodSeconds(periodSeconds).WithTimeoutSeconds(timeout).WithFailureThreshold(3)
}

// FormatCommand is the format Job's command, one for every file system: preflight again (the device may have
// changed since the preflight Job ran), then the format rule. ZenFS adds its aux directory on the data claim and
// its finish threshold; storage.device its precondition. The reformat token travels in the environment so that it
// is read from one place.
func FormatCommand(db *v1alpha1.ZNSDatabase) []string {
	policy := db.Spec.Format.Policy
	if policy == "" {
		policy = v1alpha1.FormatIfNeeded
	}
	cmd := []string{helperBinary, "format",
		"--device", db.DeviceName(),
		"--filesystem", db.FormattedFilesystem(),
		"--policy", string(policy),
	}
	cmd = append(cmd, zonedXFSFlags(db)...)
	if db.UsesZenFS() {
		cmd = append(cmd, "--aux-path", v1alpha1.ZenFSAuxDir,
			"--finish-threshold", strconv.Itoa(int(db.Spec.Format.ZenFSFinishThreshold)))
	}
	return append(cmd, PreconditionPlan(db.DevicePrecondition()).Args()...)
}

// DataClaim is the claim of the datadir volume that holds ZenFS's aux directory: the StatefulSet's claim
// template would make it for the pod, but the format Job needs it first, so the operator makes it under the name
// the StatefulSet adopts. Like the StatefulSet's, it has no owner: deleting the database keeps it.
func DataClaim(db *v1alpha1.ZNSDatabase) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	t := dataClaimTemplate(db)
	return corev1ac.PersistentVolumeClaim(db.DataClaimName(), db.Namespace).WithLabels(t.Labels).WithSpec(t.Spec)
}

func dataClaimTemplate(db *v1alpha1.ZNSDatabase) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	size := DefaultDataVolumeSize
	class := db.Spec.DataVolume.StorageClassName
	if db.Spec.DataVolume.Size != nil {
		size = *db.Spec.DataVolume.Size
	}
	if v := db.Spec.Storage.Volume; v != nil {
		size, class = DefaultVolumeSize, v.StorageClassName
		if !v.Size.IsZero() {
			size = v.Size
		}
	}
	spec := corev1ac.PersistentVolumeClaimSpec().
		WithAccessModes(corev1.ReadWriteOnce).
		WithVolumeMode(corev1.PersistentVolumeFilesystem).
		WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: size}))
	if class != nil {
		spec.WithStorageClassName(*class)
	}
	return corev1ac.PersistentVolumeClaim(v1alpha1.DataClaimTemplateName, "").
		WithLabels(db.Labels(ComponentDatabase)).
		WithSpec(spec)
}

func resourceRequirements(db *v1alpha1.ZNSDatabase) *corev1ac.ResourceRequirementsApplyConfiguration {
	r := db.Spec.Resources
	if len(r.Limits) == 0 && len(r.Requests) == 0 {
		return nil
	}
	ac := corev1ac.ResourceRequirements()
	if len(r.Limits) > 0 {
		ac.WithLimits(r.Limits)
	}
	if len(r.Requests) > 0 {
		ac.WithRequests(r.Requests)
	}
	return ac
}

// MemoryLimitBytes is the mysqld container's memory limit, 0 when none is set.
func MemoryLimitBytes(db *v1alpha1.ZNSDatabase) int64 {
	if q, ok := db.Spec.Resources.Limits[corev1.ResourceMemory]; ok {
		return q.Value()
	}
	return 0
}

// ImageKey names one of the operator's default MySQL images: a flavor and, for percona, its series (Percona
// Server 8.0 with ZenFS and 8.4 without are different images). MariaDB's Version is empty: the stand-in is
// MariaDB 10.11 whatever spec.mysqlVersion says.
type ImageKey struct {
	Flavor  v1alpha1.Flavor
	Version v1alpha1.MySQLVersion
}

// ImageKeyOf is the key of db's default image.
func ImageKeyOf(db *v1alpha1.ZNSDatabase) ImageKey {
	if db.Spec.Flavor == v1alpha1.FlavorPercona {
		return ImageKey{Flavor: db.Spec.Flavor, Version: db.ServerVersion()}
	}
	return ImageKey{Flavor: db.Spec.Flavor}
}

func (k ImageKey) String() string {
	if k.Version == "" {
		return fmt.Sprintf("flavor %q", k.Flavor)
	}
	return fmt.Sprintf("flavor %q with mysqlVersion %q", k.Flavor, k.Version)
}

// Image is the MySQL image for db: its own, or the operator's default for its flavor and series.
func Image(db *v1alpha1.ZNSDatabase, defaults map[ImageKey]string) (string, error) {
	if db.Spec.Image != "" {
		return db.Spec.Image, nil
	}
	key := ImageKeyOf(db)
	if img := defaults[key]; img != "" {
		return img, nil
	}
	return "", fmt.Errorf("no image configured for %s: set spec.image or start the operator with an image for it", key)
}
