package resources

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
)

// A fio Benchmark (spec.tool fio) runs one Job per target: znsbench fio on the target's device, reached through a
// Block claim, on the device's node.
const (
	// BenchPhaseFio is the phase label and Job name part of a fio target's Job.
	BenchPhaseFio = "fio"
	// AnnotationFioBenchmark is set on a device's PersistentVolume (DevicePVName) while a fio Benchmark measures
	// the device: "namespace/name" of that Benchmark. It is the lock that keeps two fio Benchmarks off one device.
	AnnotationFioBenchmark = "zns-mysql.dev/fio-benchmark"
	// fioNominalBytes is the capacity a fio device's PersistentVolume and claim state: a local Block volume is the
	// whole device whatever it states, the runner reads the real size from sysfs, and the operator does not know
	// it before the Job ran.
	fioNominalBytes = 1 << 20
	// fioSlackSeconds is the Job's deadline beyond its fio runs: scheduling, the image pull, the device checks.
	fioSlackSeconds = 1800
)

// FioTarget is a fio target resolved to its device and the claim that reaches it.
type FioTarget struct {
	// Name is the target's name (spec.targets[].name).
	Name string
	// Node and Device are the device (kernel name) and its node.
	Node, Device string
	// Claim is the Block claim in the Benchmark's namespace: the operator's own (FioClaimName) for a device
	// target, the database's device claim for a database target.
	Claim string
	// DeviceGroup is a group that may open the device node (a database target's spec.deviceGroupID); nil when
	// none is known.
	DeviceGroup *int64
}

// FioOwnerValue is what the operator's PersistentVolume of a fio device names as its owner
// (v1alpha1.AnnotationOwner): not a namespace/name, so no database takes it for its own, and a database asking for
// the device meanwhile is held off by the ZNSDatabase conflict rule.
func FioOwnerValue(b *v1alpha1.Benchmark) string { return "benchmark:" + b.Namespace + "/" + b.Name }

// FioClaimName is the Block claim of a device target.
func FioClaimName(b *v1alpha1.Benchmark, target string) string {
	return fmt.Sprintf("%s-fio-%s", b.Name, target)
}

// FioDevicePV is the local Block PersistentVolume of a device target, named like a database's (DevicePVName), so
// that a device a database holds cannot be created twice, and pre-bound to FioDeviceClaim. Retain: deleting it
// never lets Kubernetes wipe the device. The operator deletes it when the Benchmark ends.
func FioDevicePV(b *v1alpha1.Benchmark, t FioTarget) *corev1ac.PersistentVolumeApplyConfiguration {
	return corev1ac.PersistentVolume(v1alpha1.DevicePVName(t.Node, t.Device)).
		WithLabels(map[string]string{
			v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue,
			v1alpha1.LabelComponent: ComponentBenchmark,
			LabelBenchmark:          b.Name,
		}).
		WithAnnotations(map[string]string{
			v1alpha1.AnnotationOwner: FioOwnerValue(b),
			AnnotationFioBenchmark:   b.Namespace + "/" + b.Name,
		}).
		WithSpec(corev1ac.PersistentVolumeSpec().
			WithCapacity(corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(fioNominalBytes, resource.BinarySI)}).
			WithVolumeMode(corev1.PersistentVolumeBlock).
			WithAccessModes(corev1.ReadWriteOnce).
			WithPersistentVolumeReclaimPolicy(corev1.PersistentVolumeReclaimRetain).
			WithStorageClassName("").
			WithLocal(corev1ac.LocalVolumeSource().WithPath("/dev/" + t.Device)).
			WithNodeAffinity(corev1ac.VolumeNodeAffinity().WithRequired(hostnameSelector(t.Node))).
			WithClaimRef(corev1ac.ObjectReference().
				WithKind("PersistentVolumeClaim").
				WithAPIVersion("v1").
				WithNamespace(b.Namespace).
				WithName(FioClaimName(b, t.Name))))
}

// FioDeviceClaim is the Block claim of a device target, bound to FioDevicePV by name and owned by the Benchmark.
func FioDeviceClaim(b *v1alpha1.Benchmark, t FioTarget) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	return corev1ac.PersistentVolumeClaim(FioClaimName(b, t.Name), b.Namespace).
		WithLabels(BenchLabels(b, BenchPhaseFio, t.Name, 0)).
		WithOwnerReferences(BenchOwnerReference(b)).
		WithSpec(corev1ac.PersistentVolumeClaimSpec().
			WithVolumeMode(corev1.PersistentVolumeBlock).
			WithAccessModes(corev1.ReadWriteOnce).
			WithStorageClassName("").
			WithVolumeName(v1alpha1.DevicePVName(t.Node, t.Device)).
			WithResources(corev1ac.VolumeResourceRequirements().
				WithRequests(corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(fioNominalBytes, resource.BinarySI)})))
}

// FioCounters tells whether a fio Job reads the NVMe drive's counters (spec.drive.counters).
func FioCounters(b *v1alpha1.Benchmark) bool { return b.Spec.Drive != nil && b.Spec.Drive.Counters }

// FioArgs is znsbench fio's command line for one target. The write token is not in it (FioJob's env): the
// command line is the same with or without one.
func FioArgs(b *v1alpha1.Benchmark, t FioTarget) []string {
	f := b.Spec.Fio
	profiles := make([]string, len(f.Profiles))
	for i, p := range f.Profiles {
		profiles[i] = string(p)
	}
	runtime := f.RuntimeSeconds
	if runtime <= 0 {
		runtime = 60
	}
	args := []string{runnerBinary, "fio", "--device", t.Device, "--profiles", strings.Join(profiles, ","),
		"--runtime", strconv.Itoa(int(runtime)) + "s", "--termination-log", corev1.TerminationMessagePathDefault}
	if f.Span != nil {
		args = append(args, "--span", strconv.FormatInt(f.Span.Value(), 10))
	}
	if f.WriteRate != nil {
		args = append(args, "--write-rate", strconv.FormatInt(f.WriteRate.Value(), 10))
	}
	if g := f.Grid; g != nil {
		rw := g.RW
		if rw == "" {
			rw = string(fio.RandRead)
		}
		args = append(args, "--grid-rw", rw, "--grid-bs", joinInts(g.BlockSizes), "--grid-jobs", joinInt32s(g.NumJobs), "--grid-qd", joinInt32s(g.IODepths))
	}
	if FioCounters(b) {
		args = append(args, "--counters")
	}
	return args
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(s, ",")
}

func joinInt32s(v []int32) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(int(n))
	}
	return strings.Join(s, ",")
}

// FioRuns is how many fio runs a target's Job makes: one per profile, the grid one per point.
func FioRuns(f *v1alpha1.FioSpec) int {
	n := 0
	for _, p := range f.Profiles {
		if p == v1alpha1.FioGrid && f.Grid != nil {
			n += len(f.Grid.BlockSizes) * len(f.Grid.NumJobs) * len(f.Grid.IODepths)
		} else {
			n++
		}
	}
	return n
}

// FioJob runs znsbench fio on one target's device on its node. Unprivileged (the bench user, no capability, a
// read-only root): opening a block device for direct I/O and zone reports need no capability. With
// spec.drive.counters the runner reads the NVMe logs itself, which needs CAP_SYS_ADMIN: it then runs as uid 0
// with that capability alone, as the drive sidecar does (a capability added to a non-root container is not in its
// effective set). The write token goes in through the environment.
func FioJob(b *v1alpha1.Benchmark, t FioTarget, image string) *batchv1ac.JobApplyConfiguration {
	labels := BenchLabels(b, BenchPhaseFio, t.Name, 0)
	security := containerSecurity()
	if FioCounters(b) {
		// allowPrivilegeEscalation stays unset: the API refuses false beside CAP_SYS_ADMIN.
		security = corev1ac.SecurityContext().
			WithRunAsNonRoot(false).WithRunAsUser(0).WithRunAsGroup(0).
			WithReadOnlyRootFilesystem(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL").WithAdd("SYS_ADMIN"))
	}
	c := corev1ac.Container().
		WithName(RunnerContainer).
		WithImage(image).
		WithCommand(FioArgs(b, t)...).
		WithEnv(corev1ac.EnvVar().WithName(fio.WriteTokenEnv).WithValue(b.Spec.Fio.WriteToken)).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithSecurityContext(security).
		WithVolumeDevices(corev1ac.VolumeDevice().WithName(volumeDev).WithDevicePath("/dev/" + t.Device)).
		// fio writes its job files and output to /tmp
		WithVolumeMounts(corev1ac.VolumeMount().WithName(volumeTmp).WithMountPath("/tmp"))
	if r := b.Spec.Resources; len(r.Limits) > 0 || len(r.Requests) > 0 {
		rr := corev1ac.ResourceRequirements()
		if len(r.Limits) > 0 {
			rr.WithLimits(r.Limits)
		}
		if len(r.Requests) > 0 {
			rr.WithRequests(r.Requests)
		}
		c.WithResources(rr)
	}
	podSecurity := corev1ac.PodSecurityContext().
		WithRunAsNonRoot(!FioCounters(b)).
		WithRunAsUser(BenchUID).
		WithRunAsGroup(BenchUID).
		WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))
	if t.DeviceGroup != nil {
		podSecurity.WithSupplementalGroups(*t.DeviceGroup)
	}
	spec := corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithSecurityContext(podSecurity).
		WithAffinity(corev1ac.Affinity().WithNodeAffinity(corev1ac.NodeAffinity().
			WithRequiredDuringSchedulingIgnoredDuringExecution(hostnameSelector(t.Node)))).
		WithVolumes(
			corev1ac.Volume().WithName(volumeDev).WithPersistentVolumeClaim(
				corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(t.Claim)),
			corev1ac.Volume().WithName(volumeTmp).WithEmptyDir(corev1ac.EmptyDirVolumeSource())).
		WithContainers(c)
	runtime := int64(b.Spec.Fio.RuntimeSeconds)
	if runtime <= 0 {
		runtime = 60
	}
	return batchv1ac.Job(BenchJobName(b, BenchPhaseFio, 0, t.Name), b.Namespace).
		WithLabels(labels).
		WithOwnerReferences(BenchOwnerReference(b)).
		WithSpec(batchv1ac.JobSpec().
			WithBackoffLimit(0).
			WithActiveDeadlineSeconds(int64(FioRuns(b.Spec.Fio))*runtime + fioSlackSeconds).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(spec)))
}
