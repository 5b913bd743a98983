package resources

import (
	corev1 "k8s.io/api/core/v1"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/precondition"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// FormatJob makes the database's file system (zenfs, a zoned btrfs, f2fs or xfs, or storage.device's ext4 or xfs) on
// the device through its Block claim, by the one format rule (znsdb format --filesystem): nothing that is not
// empty or not its own is formatted without a new reformat token. ZenFS gets its aux directory on the data
// claim; storage.device may be preconditioned whole with fio first. It runs before mysqld (which the operator
// stops first when a new token asks for a re-format), and writes its report as the termination message.
// Unprivileged: mkfs, zenfs, fio and zone resets need only the device opened for writing (zone resets: kernel
// 5.14+); but mkfs.xfs sets the device's block size (BLKBSZSET), which Linux admits only with CAP_SYS_ADMIN, so
// for xfs the user's spec.format.capSysAdmin gives the container that capability alone (formatSecurity).
//
// With storage.device.precondition.driveCounters, the drive sidecar of the Benchmarks (benchImage's znsbench
// drive) reads the drive's NVMe counters before and after the Job's writes; without a bench image it is left out,
// and the operator says why.
func FormatJob(db *v1alpha1.ZNSDatabase, image, benchImage string) *batchv1ac.JobApplyConfiguration {
	c := corev1ac.Container().
		WithName(FormatContainer).
		WithImage(image).
		WithCommand(FormatCommand(db)...).
		WithEnv(corev1ac.EnvVar().WithName(ReformatTokenEnv).WithValue(db.Spec.Format.ReformatToken)).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithSecurityContext(formatSecurity(db)).
		WithVolumeDevices(corev1ac.VolumeDevice().WithName(volumeZoned).WithDevicePath(db.DevicePath())).
		WithVolumeMounts(corev1ac.VolumeMount().WithName(volumeTmp).WithMountPath("/tmp"))
	spec := corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithSecurityContext(podSecurity(db)).
		WithVolumes(
			corev1ac.Volume().WithName(volumeZoned).WithPersistentVolumeClaim(
				corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(db.DeviceClaimName())),
			corev1ac.Volume().WithName(volumeTmp).WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
	if meta := db.MetadataDevicePath(); meta != "" {
		c.WithVolumeDevices(corev1ac.VolumeDevice().WithName(volumeMetadata).WithDevicePath(meta))
		spec.WithVolumes(corev1ac.Volume().WithName(volumeMetadata).WithPersistentVolumeClaim(
			corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(db.MetadataClaimName())))
	}
	if db.UsesZenFS() {
		c.WithVolumeMounts(corev1ac.VolumeMount().WithName(v1alpha1.DataClaimTemplateName).WithMountPath(v1alpha1.DataMountPath))
		spec.WithVolumes(corev1ac.Volume().WithName(v1alpha1.DataClaimTemplateName).WithPersistentVolumeClaim(
			corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(db.DataClaimName())))
	}
	if FormatDriveCounters(db) && benchImage != "" {
		args := []string{runnerBinary, "drive", "--phase", BenchPhasePrecondition, "--target", db.Name,
			"--device", db.DeviceName(), "--dir", DriveDir, "--counters"}
		addDriveSidecar(spec, c, benchImage, args, DrivePlan{Counters: true}, db.DeviceClaimName(), db.DeviceName())
	}
	// last: the pod spec keeps a copy of the container, which the sidecar's gate has changed
	spec.WithContainers(c)
	return batchv1ac.Job(db.FormatJobName(), db.Namespace).
		WithLabels(db.Labels(ComponentFormat)).
		WithOwnerReferences(OwnerReference(db)).
		WithSpec(batchv1ac.JobSpec().
			WithBackoffLimit(0).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(db.Labels(ComponentFormat)).
				WithSpec(spec)))
}

// formatSecurity is the format container's security context: the pod's non-root user without capabilities, or,
// for an xfs the user allowed it for, uid 0 with CAP_SYS_ADMIN alone. Root, because a capability added to a
// non-root container is not in its effective set (no ambient capabilities through the CRI).
func formatSecurity(db *v1alpha1.ZNSDatabase) *corev1ac.SecurityContextApplyConfiguration {
	if !db.FormatsWithCapSysAdmin() {
		return containerSecurity()
	}
	// allowPrivilegeEscalation stays unset: the API refuses false beside CAP_SYS_ADMIN.
	return corev1ac.SecurityContext().
		WithRunAsNonRoot(false).
		WithRunAsUser(0).
		WithRunAsGroup(0).
		WithReadOnlyRootFilesystem(true).
		WithCapabilities(corev1ac.Capabilities().WithDrop("ALL").WithAdd("SYS_ADMIN"))
}

// ReformatTokenEnv carries spec.format.reformatToken to znsdb format; the operator reads it back from the Job to
// know which token a report answers.
const ReformatTokenEnv = "ZNS_REFORMAT_TOKEN"

// FormatDriveCounters reports whether the format Job reads the drive's counters around its writes.
func FormatDriveCounters(db *v1alpha1.ZNSDatabase) bool {
	src := db.Spec.Storage.Device
	return src != nil && src.Precondition != nil && src.Precondition.DriveCounters
}

// FilesystemPV is the local PersistentVolume in Filesystem mode over the device once the format Job made its
// file system: the kubelet mounts the device with fsType and finds the file system there, so it never formats
// anything itself. Retain, like the Block one: deleting it leaves the data on the device.
func FilesystemPV(db *v1alpha1.ZNSDatabase, node string, capacityBytes int64) *corev1ac.PersistentVolumeApplyConfiguration {
	return localPV(db, filesystemVolume(db, node, capacityBytes))
}

// FilesystemClaim is the datadir claim of MountsFormattedFilesystem, bound to FilesystemPV by name.
func FilesystemClaim(db *v1alpha1.ZNSDatabase, node string, capacityBytes int64) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	return boundClaim(db, filesystemVolume(db, node, capacityBytes), ComponentDatabase)
}

func filesystemVolume(db *v1alpha1.ZNSDatabase, node string, capacityBytes int64) localVolume {
	v := localVolume{
		name: v1alpha1.FilesystemPVName(node, db.DeviceName()), node: node, claim: db.FilesystemClaimName(),
		mode: corev1.PersistentVolumeFilesystem, fsType: db.FormattedFilesystem(), capacityBytes: capacityBytes,
	}
	if meta := db.MetadataDevicePath(); meta != "" {
		// blkid and the kernel find a zoned XFS on its metadata device, and mount it only with its realtime
		// (zoned) device named.
		v.path, v.mountOptions = meta, zonedfs.ZonedXFSMountOptions(db.DevicePath(), meta)
	}
	return v
}

// zonedXFSFlags tell znsdb that xfs is zoned XFS here, and where its metadata device is.
func zonedXFSFlags(db *v1alpha1.ZNSDatabase) []string {
	if !db.IsZoned() || db.ZonedFilesystem() != v1alpha1.FilesystemZonedXFS {
		return nil
	}
	flags := []string{"--zoned"}
	if meta := db.MetadataDeviceName(); meta != "" {
		flags = append(flags, "--metadata-device", meta)
	}
	return flags
}

// filesystemFlag asks the preflight to judge the device for btrfs, f2fs, ext4 or xfs; ZenFS, the helper's
// default, gets no flag, so that an image with an older znsdb still runs it.
func filesystemFlag(db *v1alpha1.ZNSDatabase) []string {
	if !db.MountsFormattedFilesystem() {
		return nil
	}
	return append([]string{"--filesystem", db.FormattedFilesystem()}, zonedXFSFlags(db)...)
}

// PreconditionPlan is the plan znsdb format runs for spec (disabled when spec is nil), with the API's defaults
// for what the API server did not default (an object built in Go and never stored).
func PreconditionPlan(spec *v1alpha1.DevicePreconditionSpec) precondition.Plan {
	if spec == nil {
		return precondition.Plan{}
	}
	p := precondition.DefaultPlan()
	if spec.SequentialPasses != nil {
		p.Passes = int(*spec.SequentialPasses)
	}
	if spec.SequentialBlockSize != nil {
		p.BlockSize = spec.SequentialBlockSize.Value()
	}
	p.Rounds = int(spec.RandomRounds)
	if spec.RoundSeconds != 0 {
		p.RoundSeconds = int(spec.RoundSeconds)
	}
	if ss := spec.SteadyState; ss != nil {
		if ss.Window != 0 {
			p.Rule.Window = int(ss.Window)
		}
		if ss.MaxRangePercent != 0 {
			p.Rule.RangePct = float64(ss.MaxRangePercent)
		}
		if ss.MaxSlopeExcursionPercent != 0 {
			p.Rule.ExcursionPct = float64(ss.MaxSlopeExcursionPercent)
		}
	}
	return p
}
