package resources

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// The drive sidecar of a benchmark Job (spec.drive): `znsbench drive` reads the drive's NVMe counters and
// feeds the device's block trace to the FTL model around the phase the runner beside it runs.
const (
	// DriveContainer is the sidecar's name; its termination message is a drivereport.Report.
	DriveContainer = "drive"
	// DriveDir is the directory the sidecar and the runner share (drivereport's files).
	DriveDir = "/run/zns-drive"
	// TracefsHostPath is the node's tracefs; the kernel keeps that directory whenever it has tracing, mounted
	// or not, so the hostPath volume never fails the pod (the sidecar says when nothing is mounted there).
	TracefsHostPath = "/sys/kernel/tracing"
	// TracefsPath is where the sidecar sees it: beside, not inside, the container's read-only /sys.
	TracefsPath = "/host/tracefs"
	// ModelCacheHostPath is the node's directory of settled FTL models: a model's preconditioning depends only on
	// the drive's geometry, the over-provisioning and the sidecar's build, so a Benchmark's first phase settles
	// it and the later phases (and later Benchmarks on the node) read it back instead of settling it again.
	ModelCacheHostPath = "/var/lib/zns-mysql/ftl-models"
	// ModelCachePath is where the sidecar sees it.
	ModelCachePath   = "/host/ftl-models"
	volumeDrive      = "drive"
	volumeTrace      = "tracefs"
	volumeModelCache = "ftl-models"
	volumeDev        = "device"
	// driveGracePeriod bounds the sidecar's work after the runner ended: the last counters, the rest of the trace
	// through the model. A model of a large drive still settling (its own preconditioning) needs minutes.
	driveGracePeriod = 600
)

// DrivePhase reports whether a phase writes to the target and so gets the drive sidecar.
func DrivePhase(phase string) bool {
	return phase == BenchPhasePrecondition || phase == BenchPhasePrepare || phase == BenchPhaseRun
}

// driveBlockClaim is the Block claim through which the sidecar can open the target's device: a zoned
// database's, or a storage.device one's. A volume is reachable only through its file system, so its drive's
// logs are not.
func driveBlockClaim(db *v1alpha1.ZNSDatabase) string {
	if db.HasBlockDevice() {
		return db.DeviceClaimName()
	}
	return ""
}

// NoDriveCountersReason says why a target's drive counters cannot be read, "" when they can.
func NoDriveCountersReason(db *v1alpha1.ZNSDatabase, device string) string {
	switch {
	case device == "":
		return "no drive counters: the target's volume is not a device the operator knows (a provisioned volume); give it a local PersistentVolume made of the device (path /dev/<name>)"
	case driveBlockClaim(db) == "":
		return "no drive counters: the volume's device " + device + " is reachable only through its file system, and NVMe Get Log Page needs the device itself; zoned targets are read through their Block claim"
	}
	return ""
}

// NoModelReason says why a target's drive is not modelled, "" when it is.
func NoModelReason(db *v1alpha1.ZNSDatabase, device string) string {
	switch {
	case db.IsZoned():
		return "a zoned device needs no model: a ZNS drive does no garbage collection of its own (the file system or ZenFS does it on the host, and its writes are in the block layer's count)"
	case device == "":
		return "no model: the target's volume is not a device the operator knows, so its block trace cannot be captured"
	}
	return ""
}

// DrivePlan is what the drive sidecar of one phase of one target can do, and why not the rest.
type DrivePlan struct {
	Counters, Model                       bool
	CountersUnavailable, ModelUnavailable string
}

// Sidecar reports whether the phase needs the sidecar at all: a target with nothing to read gets none, and
// no container with CAP_SYS_ADMIN for nothing.
func (p DrivePlan) Sidecar() bool { return p.Counters || p.Model }

// PlanDrive decides what the sidecar reads for one phase of one target under spec.drive.
func PlanDrive(b *v1alpha1.Benchmark, in BenchJobInput) DrivePlan {
	var p DrivePlan
	d := b.Spec.Drive
	if !d.Enabled() || !DrivePhase(in.Phase) {
		return p
	}
	dev := in.device().Device
	if d.Counters {
		p.CountersUnavailable = NoDriveCountersReason(in.DB, dev)
		p.Counters = p.CountersUnavailable == ""
	}
	if len(d.ModelOverProvisioningPercent) > 0 {
		p.ModelUnavailable = NoModelReason(in.DB, dev)
		p.Model = p.ModelUnavailable == ""
	}
	return p
}

// DriveArgs is the sidecar's command line.
func DriveArgs(b *v1alpha1.Benchmark, in BenchJobInput) []string {
	p := PlanDrive(b, in)
	args := []string{runnerBinary, "drive", "--phase", in.Phase, "--target", in.DB.Name, "--device", in.device().Device, "--dir", DriveDir}
	switch {
	case p.Counters:
		args = append(args, "--counters")
	case p.CountersUnavailable != "":
		args = append(args, "--counters-unavailable", p.CountersUnavailable)
	}
	switch {
	case p.Model:
		ops := make([]string, len(b.Spec.Drive.ModelOverProvisioningPercent))
		for i, op := range b.Spec.Drive.ModelOverProvisioningPercent {
			ops[i] = strconv.Itoa(int(op))
		}
		args = append(args, "--model-op", strings.Join(ops, ","), "--tracefs", TracefsPath, "--model-cache", ModelCachePath)
	case p.ModelUnavailable != "":
		args = append(args, "--model-unavailable", p.ModelUnavailable)
	}
	return args
}

// withDriveSidecar adds the sidecar to a runner Job's pod (see addDriveSidecar), and makes the runner wait for it.
func withDriveSidecar(b *v1alpha1.Benchmark, in BenchJobInput, spec *corev1ac.PodSpecApplyConfiguration, runner *corev1ac.ContainerApplyConfiguration) {
	plan := PlanDrive(b, in)
	addDriveSidecar(spec, runner, in.Image, DriveArgs(b, in), plan, driveBlockClaim(in.DB), in.device().Device)
}

// addDriveSidecar adds the drive sidecar to a Job's pod: a native sidecar (an init container that keeps running),
// so it starts before the main container, and the kubelet stops it once that one ended; it reads the last
// counters then. It runs as uid 0, since tracefs's control files are root's, and holds CAP_SYS_ADMIN, the one
// capability NVMe Get Log Page needs, only when it reads counters; the main container, which may hold a
// password, stays unprivileged and shares only the gate's directory with it.
func addDriveSidecar(spec *corev1ac.PodSpecApplyConfiguration, main *corev1ac.ContainerApplyConfiguration, image string, args []string,
	plan DrivePlan, claim, dev string) {
	always := corev1.ContainerRestartPolicyAlways
	security := corev1ac.SecurityContext().
		WithRunAsNonRoot(false).
		WithRunAsUser(0).
		WithRunAsGroup(0).
		WithReadOnlyRootFilesystem(true)
	if plan.Counters {
		// allowPrivilegeEscalation stays unset: the API refuses false beside CAP_SYS_ADMIN.
		security.WithCapabilities(corev1ac.Capabilities().WithDrop("ALL").WithAdd("SYS_ADMIN"))
	} else {
		// tracefs asks for uid 0 alone, no capability.
		security.WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")).WithAllowPrivilegeEscalation(false)
	}
	sidecar := corev1ac.Container().
		WithName(DriveContainer).
		WithImage(image).
		WithCommand(args...).
		WithRestartPolicy(always).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithSecurityContext(security).
		WithVolumeMounts(corev1ac.VolumeMount().WithName(volumeDrive).WithMountPath(DriveDir))
	spec.WithVolumes(corev1ac.Volume().WithName(volumeDrive).WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
	if plan.Counters {
		spec.WithVolumes(corev1ac.Volume().WithName(volumeDev).WithPersistentVolumeClaim(
			corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(claim)))
		sidecar.WithVolumeDevices(corev1ac.VolumeDevice().WithName(volumeDev).WithDevicePath("/dev/" + dev))
	}
	if plan.Model {
		dir := corev1.HostPathDirectory
		spec.WithVolumes(corev1ac.Volume().WithName(volumeTrace).WithHostPath(
			corev1ac.HostPathVolumeSource().WithPath(TracefsHostPath).WithType(dir)))
		sidecar.WithVolumeMounts(corev1ac.VolumeMount().WithName(volumeTrace).WithMountPath(TracefsPath))
		orCreate := corev1.HostPathDirectoryOrCreate
		spec.WithVolumes(corev1ac.Volume().WithName(volumeModelCache).WithHostPath(
			corev1ac.HostPathVolumeSource().WithPath(ModelCacheHostPath).WithType(orCreate)))
		sidecar.WithVolumeMounts(corev1ac.VolumeMount().WithName(volumeModelCache).WithMountPath(ModelCachePath))
	}
	spec.WithInitContainers(sidecar).WithTerminationGracePeriodSeconds(driveGracePeriod)
	main.WithVolumeMounts(corev1ac.VolumeMount().WithName(volumeDrive).WithMountPath(DriveDir))
	main.Command = append(main.Command, "--drive-dir", DriveDir)
}
