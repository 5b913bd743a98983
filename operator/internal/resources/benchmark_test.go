package resources

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func localDevicePV(path string, nodes ...string) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
	}}
	if nodes != nil {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: nodes}},
		}}}}
	}
	return pv
}

func TestLocalDevice(t *testing.T) {
	hostPath := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: "/dev/sda"}}}}
	for _, tc := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want DeviceOnNode
		ok   bool
	}{
		{"a device on one node", localDevicePV("/dev/nullb2", "zns-guest"), DeviceOnNode{Node: "zns-guest", Name: "nullb2"}, true},
		{"a directory", localDevicePV("/mnt/disks/vol1", "zns-guest"), DeviceOnNode{}, false},
		{"a device below a directory of /dev", localDevicePV("/dev/disk/by-id/nvme-x", "zns-guest"), DeviceOnNode{}, false},
		{"no node affinity", localDevicePV("/dev/nullb2"), DeviceOnNode{}, false},
		{"two nodes", localDevicePV("/dev/nullb2", "a", "b"), DeviceOnNode{}, false},
		{"not a local volume", hostPath, DeviceOnNode{}, false},
	} {
		got, ok := LocalDevice(tc.pv)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: LocalDevice = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// A run on a conventional database whose volume is a known local device counts that device's writes, on its
// node, as a zoned target's run does; without one it counts none and runs anywhere.
func TestRunJobCountsTheVolumesDevice(t *testing.T) {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"},
		Spec: v1alpha1.BenchmarkSpec{DurationSeconds: 20, ReportIntervalSeconds: 2, Threads: 2}}
	db := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "conv"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}}}
	zoned := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "z"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n1", DeviceName: "nullb0"}}}}
	for _, tc := range []struct {
		name       string
		in         BenchJobInput
		wantDevice string
		wantNode   string
	}{
		{"volume on a local device", BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: db, Volume: DeviceOnNode{Node: "zns-guest", Name: "nullb2"}}, "nullb2", "zns-guest"},
		{"volume of a provisioner", BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: db}, "", ""},
		{"zoned device", BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: zoned}, "nullb0", "n1"},
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
