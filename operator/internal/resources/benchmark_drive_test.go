package resources

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
)

func driveBench(d *v1alpha1.DriveSpec) *v1alpha1.Benchmark {
	return &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
		Spec: v1alpha1.BenchmarkSpec{DurationSeconds: 20, ReportIntervalSeconds: 2, Threads: 2, Drive: d}}
}

func sidecarOf(spec *corev1ac.PodSpecApplyConfiguration) *corev1ac.ContainerApplyConfiguration {
	for i := range spec.InitContainers {
		if *spec.InitContainers[i].Name == DriveContainer {
			return &spec.InitContainers[i]
		}
	}
	return nil
}

func volumeNamed(spec *corev1ac.PodSpecApplyConfiguration, name string) *corev1ac.VolumeApplyConfiguration {
	for i := range spec.Volumes {
		if *spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}

// The drive sidecar holds CAP_SYS_ADMIN and nothing else, gets the device only when it reads counters and the
// node's tracefs only when it models, and the runner stays unprivileged and waits for it.
func TestDriveSidecar(t *testing.T) {
	zoned := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "z"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n1", DeviceName: "nvme0n1"}}}}
	conv := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "conv"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}}}
	both := &v1alpha1.DriveSpec{Counters: true, ModelOverProvisioningPercent: []int32{7, 28}}
	for _, tc := range []struct {
		name                 string
		drive                *v1alpha1.DriveSpec
		in                   BenchJobInput
		sidecar, dev, trace  bool
		wantArgs, absentArgs []string
	}{
		{"off", nil, BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: zoned}, false, false, false, nil, nil},
		{"verify writes nothing", both, BenchJobInput{Phase: BenchPhaseVerify, DB: zoned}, false, false, false, nil, nil},
		{"zoned: counters, no model", both, BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: zoned}, true, true, false,
			[]string{"--counters", "--model-unavailable"}, []string{"--model-op", "--model-cache"}},
		{"local volume: model, no counters", both, BenchJobInput{Phase: BenchPhasePrepare, DB: conv, Volume: deviceid.ID{Node: "n1", Device: "nvme1n1"}}, true, false, true,
			[]string{"--model-op", "--model-cache", "--counters-unavailable"}, []string{"--counters"}},
		{"provisioned volume: nothing to read", both, BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: conv}, false, false, false, nil, nil},
		{"zoned, model only: nothing to read", &v1alpha1.DriveSpec{ModelOverProvisioningPercent: []int32{7}}, BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: zoned}, false, false, false, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := BenchJob(driveBench(tc.drive), tc.in).Spec.Template.Spec
			sc := sidecarOf(spec)
			runner := spec.Containers[0]
			if (sc != nil) != tc.sidecar {
				t.Fatalf("sidecar = %v, want %v", sc != nil, tc.sidecar)
			}
			if slices.Contains(runner.Command, "--drive-dir") != tc.sidecar {
				t.Fatalf("runner waits for a sidecar: %v", runner.Command)
			}
			if !tc.sidecar {
				return
			}
			if *sc.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				t.Error("the sidecar must be a native sidecar, stopped after the runner")
			}
			caps := sc.SecurityContext.Capabilities
			wantAdd := []corev1.Capability(nil)
			if tc.dev {
				wantAdd = []corev1.Capability{"SYS_ADMIN"}
			}
			if !slices.Equal(caps.Add, wantAdd) || !slices.Equal(caps.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("capabilities %+v: want ALL dropped and only SYS_ADMIN added, only for the counters", caps)
			}
			if !tc.dev && (sc.SecurityContext.AllowPrivilegeEscalation == nil || *sc.SecurityContext.AllowPrivilegeEscalation) {
				t.Error("a sidecar that only traces must not escalate")
			}
			if sc.SecurityContext.Privileged != nil && *sc.SecurityContext.Privileged {
				t.Error("the sidecar is privileged")
			}
			if rc := runner.SecurityContext; len(rc.Capabilities.Add) != 0 || rc.AllowPrivilegeEscalation == nil || *rc.AllowPrivilegeEscalation {
				t.Errorf("the runner gained privileges: %+v", rc)
			}
			for _, e := range sc.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					t.Error("the sidecar must not see the database password")
				}
			}
			if (len(sc.VolumeDevices) > 0) != tc.dev || (volumeNamed(spec, volumeDev) != nil) != tc.dev {
				t.Errorf("device given = %v, want %v", len(sc.VolumeDevices) > 0, tc.dev)
			}
			if tc.dev && (*sc.VolumeDevices[0].DevicePath != "/dev/nvme0n1" || *volumeNamed(spec, volumeDev).PersistentVolumeClaim.ClaimName != zoned.DeviceClaimName()) {
				t.Errorf("device %+v", sc.VolumeDevices[0])
			}
			if v := volumeNamed(spec, volumeTrace); (v != nil) != tc.trace || tc.trace && *v.HostPath.Path != TracefsHostPath {
				t.Errorf("tracefs volume %+v, want %v", v, tc.trace)
			}
			// the settled models' cache goes with the model: the node's directory, and the flag that names it
			if v := volumeNamed(spec, volumeModelCache); (v != nil) != tc.trace || tc.trace && (*v.HostPath.Path != ModelCacheHostPath ||
				!slices.Contains(sc.Command, ModelCachePath) || *v.HostPath.Type != corev1.HostPathDirectoryOrCreate) {
				t.Errorf("model cache volume %+v, sidecar args %q, want it %v", v, sc.Command, tc.trace)
			}
			args := strings.Join(sc.Command, " ")
			for _, a := range tc.wantArgs {
				if !slices.Contains(sc.Command, a) {
					t.Errorf("sidecar args %q lack %s", args, a)
				}
			}
			for _, a := range tc.absentArgs {
				if slices.Contains(sc.Command, a) {
					t.Errorf("sidecar args %q have %s", args, a)
				}
			}
			if *spec.TerminationGracePeriodSeconds < 60 {
				t.Errorf("grace period %d s leaves the sidecar no time for its last readings", *spec.TerminationGracePeriodSeconds)
			}
		})
	}
}
