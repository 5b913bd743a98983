package resources

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

func metricsDB(storage v1alpha1.StorageSpec, enabled *bool) *v1alpha1.ZNSDatabase {
	db := &v1alpha1.ZNSDatabase{}
	db.Name, db.Namespace = "tenant1", "lab"
	db.Spec.Flavor, db.Spec.Engine = v1alpha1.FlavorPercona, v1alpha1.EngineRocksDB
	db.Spec.Storage = storage
	db.Spec.Metrics.Enabled = enabled
	return db
}

// TestMetricsSidecars: the exporters come with every database unless turned off, run unprivileged from the
// database's image with the device only where ZenFS needs it, and hold no Secret.
func TestMetricsSidecars(t *testing.T) {
	zoned := v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n1", DeviceName: "nvme0n2"}}
	btrfs := v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n1", DeviceName: "nullb0", Filesystem: v1alpha1.FilesystemBtrfs}}
	volume := v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}
	cases := []struct {
		name       string
		db         *v1alpha1.ZNSDatabase
		sidecars   bool
		zonedArgs  string
		wantDevice bool
	}{
		{"zenfs", metricsDB(zoned, nil), true, "--device nvme0n2 --zenfs", true},
		{"btrfs", metricsDB(btrfs, ptr.To(true)), true, "--device nullb0", false},
		{"volume", metricsDB(volume, nil), true, "", false},
		{"off", metricsDB(zoned, ptr.To(false)), false, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "btrfs" || c.name == "volume" {
				c.db.Spec.Flavor, c.db.Spec.Engine = v1alpha1.FlavorMariaDB, v1alpha1.EngineInnoDB
			}
			sts := StatefulSet(c.db, StatefulSetInput{Image: "img:1", ConfigMapName: "cnf"})
			if a := sts.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"]; a != MySQLContainer {
				t.Errorf("default container %q, want %s (kubectl logs without -c)", a, MySQLContainer)
			}
			containers := sts.Spec.Template.Spec.Containers
			byName := map[string]int{}
			for i, ct := range containers {
				byName[*ct.Name] = i
			}
			_, hasExporter := byName[MySQLExporterContainer]
			_, hasZoned := byName[ZonedMetricsContainer]
			if hasExporter != c.sidecars || hasZoned != c.sidecars || *containers[0].Name != MySQLContainer {
				t.Fatalf("containers %v, want sidecars %v after mysqld", byName, c.sidecars)
			}
			if !c.sidecars {
				return
			}
			for _, name := range []string{MySQLExporterContainer, ZonedMetricsContainer} {
				ct := containers[byName[name]]
				if *ct.Image != "img:1" || ct.SecurityContext == nil || !*ct.SecurityContext.ReadOnlyRootFilesystem ||
					*ct.SecurityContext.AllowPrivilegeEscalation || ct.Resources == nil || ct.Resources.Limits == nil {
					t.Errorf("%s: image %v, security %+v, resources %+v", name, *ct.Image, ct.SecurityContext, ct.Resources)
				}
				if len(ct.Env) != 0 {
					t.Errorf("%s has environment %v: its credentials come from the data volume, nothing else", name, ct.Env)
				}
				for _, m := range ct.VolumeMounts {
					if *m.Name == v1alpha1.DataClaimTemplateName && (m.ReadOnly == nil || !*m.ReadOnly) {
						t.Errorf("%s mounts the data volume writable", name)
					}
				}
			}
			exp := containers[byName[MySQLExporterContainer]]
			if cmd := strings.Join(exp.Command, " "); !strings.Contains(cmd, "--config.my-cnf="+ExporterCredentials) ||
				*exp.Ports[0].Name != v1alpha1.MySQLExporterPortName || *exp.Ports[0].ContainerPort != v1alpha1.MySQLExporterPort {
				t.Errorf("exporter command %q ports %+v", cmd, exp.Ports)
			}
			zc := containers[byName[ZonedMetricsContainer]]
			cmd := strings.Join(zc.Command, " ")
			if !strings.HasPrefix(cmd, "znsdb metrics --listen :9105 --datadir "+v1alpha1.DataMountPath) ||
				strings.TrimSpace(strings.TrimPrefix(cmd, "znsdb metrics --listen :9105 --datadir "+v1alpha1.DataMountPath)) != c.zonedArgs {
				t.Errorf("zns-metrics command %q, want the flags %q", cmd, c.zonedArgs)
			}
			if got := len(zc.VolumeDevices) == 1; got != c.wantDevice {
				t.Errorf("zns-metrics device %v, want %v", zc.VolumeDevices, c.wantDevice)
			}
		})
	}
}

// TestMetricsForTheVerify: with spec.metrics, the Service also exposes the zns-metrics sidecar, and the
// benchmark's verify is told to read the usable capacity there, from the figures that fit the storage; without
// it, neither.
func TestMetricsForTheVerify(t *testing.T) {
	zoned := v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n1", DeviceName: "nvme0n2"}}
	f2fs := v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n1", DeviceName: "nullb0", Filesystem: v1alpha1.FilesystemF2FS}}
	volume := v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}
	b := &v1alpha1.Benchmark{}
	b.Name, b.Namespace = "bench", "lab"
	for _, c := range []struct {
		name   string
		db     *v1alpha1.ZNSDatabase
		source string // "" when the verify reads none
	}{
		{"zenfs", metricsDB(zoned, nil), benchresult.UsableZenFS},
		{"f2fs", metricsDB(f2fs, ptr.To(true)), benchresult.UsableStatfs},
		{"volume", metricsDB(volume, nil), benchresult.UsableStatfs},
		{"off", metricsDB(volume, ptr.To(false)), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := Service(c.db)
			var ports []string
			for _, p := range svc.Spec.Ports {
				ports = append(ports, fmt.Sprintf("%s:%d->%s", *p.Name, *p.Port, p.TargetPort.String()))
			}
			want := []string{"mysql:3306->mysql"}
			if c.source != "" {
				want = append(want, fmt.Sprintf("%s:%d->%s", v1alpha1.ZonedMetricsPortName, v1alpha1.ZonedMetricsPort, v1alpha1.ZonedMetricsPortName))
			}
			if !slices.Equal(ports, want) {
				t.Errorf("Service ports %v, want %v", ports, want)
			}

			args := strings.Join(RunnerArgs(b, BenchJobInput{Phase: BenchPhaseVerify, DB: c.db}), " ")
			wantArgs := "--metrics-url http://tenant1-mysql.lab.svc:9105/metrics --usable-source " + c.source
			if c.source == "" {
				if strings.Contains(args, "--metrics-url") {
					t.Errorf("verify without metrics: %s", args)
				}
			} else if !strings.Contains(args, wantArgs) {
				t.Errorf("verify: %s, want %s", args, wantArgs)
			}
			for _, phase := range []string{BenchPhasePrepare, BenchPhaseRun} {
				if a := RunnerArgs(b, BenchJobInput{Phase: phase, Iteration: 1, DB: c.db}); slices.Contains(a, "--metrics-url") {
					t.Errorf("%s reads the capacity too: %v", phase, a)
				}
			}
		})
	}
}

// The readiness probe runs every DefaultProbePeriodSeconds unless the operator is told otherwise
// (--database-probe-period, raised on an emulated node where each exec costs about a second of CPU).
func TestReadinessProbePeriod(t *testing.T) {
	volume := v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}
	for _, c := range []struct{ given, want int32 }{{0, DefaultProbePeriodSeconds}, {20, 20}} {
		sts := StatefulSet(metricsDB(volume, nil), StatefulSetInput{Image: "img:1", ConfigMapName: "cnf", ProbePeriodSeconds: c.given})
		mysqld := sts.Spec.Template.Spec.Containers[0]
		if p := mysqld.ReadinessProbe; *mysqld.Name != MySQLContainer || p == nil || p.PeriodSeconds == nil || *p.PeriodSeconds != c.want || p.Exec == nil {
			t.Errorf("given %d: %s's readiness probe %+v, want an exec every %d s", c.given, *mysqld.Name, p, c.want)
		}
	}
}

// mysqld has a startup probe that costs no process in the container (a TCP connect to its port) and allows a day
// of crash recovery before the kubelet would restart it.
func TestStartupProbe(t *testing.T) {
	sts := StatefulSet(metricsDB(v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}, nil), StatefulSetInput{Image: "img:1", ConfigMapName: "cnf"})
	mysqld := sts.Spec.Template.Spec.Containers[0]
	p := mysqld.StartupProbe
	if p == nil || p.TCPSocket == nil || p.Exec != nil || p.HTTPGet != nil {
		t.Fatalf("%s's startup probe %+v, want a TCP connect", *mysqld.Name, p)
	}
	if port := p.TCPSocket.Port; port == nil || port.String() != *mysqld.Ports[0].Name || *mysqld.Ports[0].ContainerPort != v1alpha1.MySQLPort {
		t.Errorf("startup probe port %v, want mysqld's port %s (%d)", port, *mysqld.Ports[0].Name, v1alpha1.MySQLPort)
	}
	if window := *p.PeriodSeconds * *p.FailureThreshold; window < 24*3600 || *p.PeriodSeconds > 2 {
		t.Errorf("startup probe every %d s for %d s, want at most 2 s for at least a day", *p.PeriodSeconds, window)
	}
}
