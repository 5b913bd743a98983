package deviceid

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
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

func TestOfLocalVolume(t *testing.T) {
	hostPath := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: "/dev/sda"}}}}
	for _, tc := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want ID
		ok   bool
	}{
		{"a device on one node", localDevicePV("/dev/nullb2", "zns-guest"), ID{Node: "zns-guest", Device: "nullb2"}, true},
		{"a directory", localDevicePV("/mnt/disks/vol1", "zns-guest"), ID{}, false},
		{"a device below a directory of /dev", localDevicePV("/dev/disk/by-id/nvme-x", "zns-guest"), ID{}, false},
		{"no node affinity", localDevicePV("/dev/nullb2"), ID{}, false},
		{"two nodes", localDevicePV("/dev/nullb2", "a", "b"), ID{}, false},
		{"not a local volume", hostPath, ID{}, false},
	} {
		got, ok := OfLocalVolume(tc.pv)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: OfLocalVolume = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
