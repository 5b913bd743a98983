package resources

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// Names of the metrics sidecars.
const (
	MySQLExporterContainer = "mysqld-exporter"
	ZonedMetricsContainer  = "zns-metrics"
)

// ExporterCredentials is the client option file the image's entrypoint keeps next to the datadir for the
// zns_exporter account (images/mysql-entrypoint.sh): the exporter reads it from the data volume, so its password is
// in no Secret, spec or environment.
const ExporterCredentials = v1alpha1.DataMountPath + "/.zns-exporter.cnf"

// metricsSidecars are the exporters of spec.metrics. Both run from the database's own image, as the mysql user,
// read-only, with a small fixed budget: they must not take from mysqld what a benchmark measures.
func metricsSidecars(db *v1alpha1.ZNSDatabase, image string, data, run, tmp *corev1ac.VolumeMountApplyConfiguration,
	device *corev1ac.VolumeDeviceApplyConfiguration) []*corev1ac.ContainerApplyConfiguration {
	if !db.MetricsEnabled() {
		return nil
	}
	readOnly := func(m *corev1ac.VolumeMountApplyConfiguration) *corev1ac.VolumeMountApplyConfiguration {
		return corev1ac.VolumeMount().WithName(*m.Name).WithMountPath(*m.MountPath).WithReadOnly(true)
	}
	exporter := corev1ac.Container().
		WithName(MySQLExporterContainer).
		WithImage(image).
		// The entrypoint writes the credentials when mysqld starts: wait for them rather than crash-loop (a sidecar
		// that is not ready makes the pod, and so the database, unavailable).
		WithCommand("/bin/sh", "-c", `until [ -r "$0" ]; do sleep 2; done; exec prometheus-mysqld-exporter "$@"`,
			ExporterCredentials,
			"--web.listen-address=:"+strconv.Itoa(v1alpha1.MySQLExporterPort),
			"--config.my-cnf="+ExporterCredentials).
		WithPorts(corev1ac.ContainerPort().WithName(v1alpha1.MySQLExporterPortName).WithContainerPort(v1alpha1.MySQLExporterPort).WithProtocol(corev1.ProtocolTCP)).
		WithResources(sidecarResources()).
		WithSecurityContext(containerSecurity()).
		WithVolumeMounts(readOnly(data), readOnly(run))

	args := []string{helperBinary, "metrics", "--listen", ":" + strconv.Itoa(v1alpha1.ZonedMetricsPort), "--datadir", v1alpha1.DataMountPath}
	zoned := corev1ac.Container().
		WithName(ZonedMetricsContainer).
		WithImage(image).
		WithPorts(corev1ac.ContainerPort().WithName(v1alpha1.ZonedMetricsPortName).WithContainerPort(v1alpha1.ZonedMetricsPort).WithProtocol(corev1.ProtocolTCP)).
		WithResources(sidecarResources()).
		WithSecurityContext(containerSecurity()).
		WithVolumeMounts(readOnly(data), tmp)
	if db.HasBlockDevice() {
		// storage.device too: its written bytes are the conventional baseline's (no zones to report there).
		args = append(args, "--device", db.DeviceName())
	}
	if db.UsesZenFS() && device != nil {
		// zenfs df and the zone report read the device; a btrfs or f2fs database has only the kubelet's mount, and
		// its zoned figures come from sysfs.
		args = append(args, "--zenfs")
		zoned.WithVolumeDevices(device)
	}
	zoned.WithCommand(args...)
	return []*corev1ac.ContainerApplyConfiguration{exporter, zoned}
}

// MetricsURL is where the database's `znsdb metrics` sidecar answers through its Service (spec.metrics): the
// benchmark's verify reads the usable capacity there.
func MetricsURL(db *v1alpha1.ZNSDatabase) string {
	return fmt.Sprintf("http://%s.%s.svc:%d/metrics", db.ServiceName(), db.Namespace, v1alpha1.ZonedMetricsPort)
}

// UsableSource names the figures of that sidecar that are the database's usable capacity: ZenFS's own space
// (the datadir of a ZenFS database is only its small aux volume), or the datadir's file system (the zoned
// btrfs or f2fs, or the volume).
func UsableSource(db *v1alpha1.ZNSDatabase) string {
	if db.UsesZenFS() {
		return benchresult.UsableZenFS
	}
	return benchresult.UsableStatfs
}

// metricsServicePort puts the zns-metrics sidecar behind the database's Service, for the benchmark's verify.
// PodMonitors scrape the pods, not the Service, so nothing is scraped twice.
func metricsServicePort() *corev1ac.ServicePortApplyConfiguration {
	return corev1ac.ServicePort().
		WithName(v1alpha1.ZonedMetricsPortName).
		WithProtocol(corev1.ProtocolTCP).
		WithPort(v1alpha1.ZonedMetricsPort).
		WithTargetPort(intstr.FromString(v1alpha1.ZonedMetricsPortName))
}

func sidecarResources() *corev1ac.ResourceRequirementsApplyConfiguration {
	return corev1ac.ResourceRequirements().
		WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}).
		WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("128Mi")})
}
