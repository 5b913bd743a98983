package resources

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
)

// A run on a conventional database whose volume is a known local device counts that device's writes, on its
// node, as a zoned target's run does; without one it counts none and runs anywhere.
func TestRunJobCountsTheVolumesDevice(t *testing.T) {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
		Spec: v1alpha1.BenchmarkSpec{DurationSeconds: 20, ReportIntervalSeconds: 2, Threads: 2}}
	db := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "conv"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}}}
	zoned := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "z"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n1", DeviceName: "nullb0"}}}}
	zonedXFS := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n1",
			DeviceName: "nvme0n2", Filesystem: v1alpha1.FilesystemZonedXFS, MetadataDeviceName: "nvme0n1"}}}}
	for _, tc := range []struct {
		name       string
		in         BenchJobInput
		wantDevice string
		wantNode   string
	}{
		{"volume on a local device", BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: db, Volume: deviceid.ID{Node: "zns-guest", Device: "nullb2"}}, "nullb2", "zns-guest"},
		{"volume of a provisioner", BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: db}, "", ""},
		{"zoned device", BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: zoned}, "nullb0", "n1"},
		{"zoned XFS with its metadata device", BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: zonedXFS}, "nvme0n2+nvme0n1", "n1"},
	} {
		job := BenchJob(b, tc.in)
		args := job.Spec.Template.Spec.Containers[0].Command
		i := slices.Index(args, "--device")
		switch {
		case tc.wantDevice == "" && i >= 0:
			t.Errorf("%s: --device %s, want none", tc.name, args[i+1])
		case tc.wantDevice != "" && (i < 0 || args[i+1] != tc.wantDevice):
			t.Errorf("%s: args %v, want --device %s", tc.name, args, tc.wantDevice)
		}
		var node string
		if a := job.Spec.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil {
			node = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0]
		}
		if node != tc.wantNode {
			t.Errorf("%s: pinned to node %q, want %q", tc.name, node, tc.wantNode)
		}
	}
}

// A run's runner waits at the start barrier: it reads the start from its pod's annotation (a downward API file)
// and its readiness probe turns the pod Ready when it is there; the other phases start at once, without either.
func TestRunJobWaitsAtTheStartBarrier(t *testing.T) {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
		Spec: v1alpha1.BenchmarkSpec{DurationSeconds: 20, ReportIntervalSeconds: 2, Threads: 2, StartDelaySeconds: 20, TargetTimeoutSeconds: 600}}
	db := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "conv"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}}}
	for _, phase := range []string{BenchPhaseRun, BenchPhasePrepare, BenchPhaseVerify} {
		job := BenchJob(b, BenchJobInput{Phase: phase, Iteration: 1, DB: db})
		spec := job.Spec.Template.Spec
		c := spec.Containers[0]
		run := phase == BenchPhaseRun
		if got := slices.Index(c.Command, "--start-file") >= 0 && c.Command[slices.Index(c.Command, "--start-file")+1] == "/etc/zns-start/start-at" &&
			slices.Contains(c.Command, "--ready-listen") && slices.Contains(c.Command, ":9107"); got != run {
			t.Errorf("%s: start flags in %v: %v, want %v", phase, c.Command, got, run)
		}
		probe := c.ReadinessProbe
		if got := probe != nil && probe.HTTPGet != nil && *probe.HTTPGet.Path == "/readyz" && probe.HTTPGet.Port.StrVal == "ready" &&
			len(c.Ports) == 1 && *c.Ports[0].Name == "ready" && *c.Ports[0].ContainerPort == 9107; got != run {
			t.Errorf("%s: readiness probe %+v, ports %+v", phase, probe, c.Ports)
		}
		var downward string
		for _, v := range spec.Volumes {
			if v.DownwardAPI != nil && len(v.DownwardAPI.Items) == 1 && *v.DownwardAPI.Items[0].Path == "start-at" {
				downward = *v.DownwardAPI.Items[0].FieldRef.FieldPath
				if !slices.ContainsFunc(c.VolumeMounts, func(m corev1ac.VolumeMountApplyConfiguration) bool {
					return *m.Name == *v.Name && *m.MountPath == "/etc/zns-start"
				}) {
					t.Errorf("%s: the start volume is not mounted at /etc/zns-start: %+v", phase, c.VolumeMounts)
				}
			}
		}
		if want := "metadata.annotations['zns-mysql.dev/start-at']"; (downward == want) != run {
			t.Errorf("%s: downward API field %q", phase, downward)
		}
	}
	// the run's deadline leaves the wait for the other runners (targetTimeoutSeconds) to the start
	job := BenchJob(b, BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: db})
	if got, want := *job.Spec.ActiveDeadlineSeconds, int64(20+600+20+600); got != want {
		t.Errorf("run deadline %d, want %d", got, want)
	}
}
