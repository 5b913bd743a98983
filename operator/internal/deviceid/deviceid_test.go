package deviceid

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pv(path string, hostPath bool, nodes ...string) *corev1.PersistentVolume {
	p := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}}
	if hostPath {
		p.Spec.HostPath = &corev1.HostPathVolumeSource{Path: path}
	} else if path != "" {
		p.Spec.Local = &corev1.LocalVolumeSource{Path: path}
	}
	if len(nodes) > 0 {
		p.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: nodes}},
		}}}}
	}
	return p
}

func TestFromPV(t *testing.T) {
	for name, tc := range map[string]struct {
		pv      *corev1.PersistentVolume
		device  string
		want    ID
		wantErr string
	}{
		"local device node":            {pv("/dev/nullb5", false, "node-a"), "nullb5", ID{"node-a", "nullb5"}, ""},
		"hostPath device node":         {pv("/dev/nvme0n2", true, "node-b"), "nvme0n2", ID{"node-b", "nvme0n2"}, ""},
		"uncleaned path":               {pv("/dev//nullb5/", false, "node-a"), "nullb5", ID{"node-a", "nullb5"}, ""},
		"by-id path is taken as given": {pv("/dev/disk/by-id/nvme-ZNS-1", false, "node-a"), "nvme1n2", ID{"node-a", "nvme1n2"}, ""},
		"CSI volume without path":      {pv("", false, "node-c"), "nvme0n1", ID{"node-c", "nvme0n1"}, ""},
		"name differs from the PV":     {pv("/dev/nullb5", false, "node-a"), "nullb6", ID{}, `is the device /dev/nullb5 on node node-a, but the database names it "nullb6"`},
		"no node affinity":             {pv("/dev/nullb5", false), "nullb5", ID{}, "found: none"},
		"two nodes":                    {pv("/dev/nullb5", false, "node-a", "node-b"), "nullb5", ID{}, "found: node-a, node-b"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := FromPV(tc.pv, tc.device)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
