package resources

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// child is one name or label value the operator (or a Kubernetes controller acting on its objects) derives from
// a user's names, with the check the API server applies to it.
type child struct {
	what  string
	value string
	check func(string) []string
}

// longestRevisionHash is as long as the StatefulSet controller's controller-revision-hash suffix can be.
var longestRevisionHash = strings.Repeat("h", v1alpha1.RevisionHashSuffixLength-1)

func databaseChildren(db *v1alpha1.ZNSDatabase) []child {
	sts := db.StatefulSetName()
	out := []child{
		{"Service", db.ServiceName(), validation.IsDNS1035Label},
		{"StatefulSet", sts, validation.IsDNS1123Label},
		{"pod", db.PodName(), validation.IsDNS1123Label},
		{"pod label statefulset.kubernetes.io/pod-name", db.PodName(), validation.IsValidLabelValue},
		{"pod label controller-revision-hash", sts + "-" + longestRevisionHash, validation.IsValidLabelValue},
		{"ConfigMap", ConfigMapName(db, "[mysqld]\n"), validation.IsDNS1123Subdomain},
		{"generated Secret", db.GeneratedSecretName(), validation.IsDNS1123Subdomain},
		{"preflight Job", db.PreflightJobName(), validation.IsDNS1123Subdomain},
		{"preflight pod label job-name", db.PreflightJobName(), validation.IsValidLabelValue},
		{"datadir claim", db.DataClaimName(), validation.IsDNS1123Subdomain},
		{"device claim", db.DeviceClaimName(), validation.IsDNS1123Subdomain},
		{"Secret name in the pod's env", db.RootSecretName(), validation.IsDNS1123Subdomain},
	}
	if node := db.DeviceNode(); node != "" {
		out = append(out,
			child{"device PersistentVolume", v1alpha1.DevicePVName(node, db.DeviceName()), validation.IsDNS1123Subdomain},
			child{"node affinity kubernetes.io/hostname", node, validation.IsValidLabelValue})
	}
	if db.MountsFormattedFilesystem() {
		out = append(out,
			child{"format Job", db.FormatJobName(), validation.IsDNS1123Subdomain},
			child{"format pod label job-name", db.FormatJobName(), validation.IsValidLabelValue},
			child{"filesystem claim", db.FilesystemClaimName(), validation.IsDNS1123Subdomain},
			child{"filesystem PersistentVolume", v1alpha1.FilesystemPVName(db.DeviceNode(), db.DeviceName()), validation.IsDNS1123Subdomain})
	}
	for _, comp := range []string{ComponentConfig, ComponentDatabase, ComponentDevice, ComponentPreflight, ComponentSecret} {
		for k, v := range db.Labels(comp) {
			out = append(out, child{"label " + k, v, validation.IsValidLabelValue})
		}
	}
	return out
}

func benchmarkChildren(b *v1alpha1.Benchmark, target string) []child {
	var out []child
	for _, phase := range []string{BenchPhasePrecondition, BenchPhasePrepare, BenchPhaseVerify, BenchPhaseRun} {
		it := int32(0)
		if phase == BenchPhaseRun {
			it = 100 // spec.iterations' maximum
		}
		name := BenchJobName(b, phase, it, target)
		out = append(out,
			child{phase + " Job", name, validation.IsDNS1123Subdomain},
			child{phase + " pod label job-name", name, validation.IsValidLabelValue})
		for k, v := range BenchLabels(b, phase, target, it) {
			out = append(out, child{phase + " label " + k, v, validation.IsValidLabelValue})
		}
	}
	out = append(out, child{"series ConfigMap", SeriesConfigMapName(b, 100, target), validation.IsDNS1123Subdomain})
	return out
}

func invalid(children []child) []string {
	var bad []string
	for _, c := range children {
		if errs := c.check(c.value); len(errs) > 0 {
			bad = append(bad, c.what+" "+c.value+": "+strings.Join(errs, "; "))
		}
	}
	return bad
}

// TestChildNamesAtMaximumLengths walks every name and label the operator derives, at the longest names the
// CRDs admit (v1alpha1's Max* constants): all must be valid. One character more must break at least one, so the
// limits are not looser than they need to be.
func TestChildNamesAtMaximumLengths(t *testing.T) {
	longDB := func(n int) *v1alpha1.ZNSDatabase {
		return &v1alpha1.ZNSDatabase{
			ObjectMeta: metav1.ObjectMeta{Name: "d" + strings.Repeat("b", n-1), Namespace: strings.Repeat("n", 63)},
			Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{
				NodeName: strings.Repeat("node.", 12) + "abc", DeviceName: strings.Repeat("nvme", 8)}}},
		}
	}
	if bad := invalid(databaseChildren(longDB(v1alpha1.MaxDatabaseNameLength))); len(bad) > 0 {
		t.Errorf("ZNSDatabase name of %d characters:\n%s", v1alpha1.MaxDatabaseNameLength, strings.Join(bad, "\n"))
	}
	// storage.device: its own claim names and the volumes of its file system.
	device := longDB(v1alpha1.MaxDatabaseNameLength)
	zoned := device.Spec.Storage.ZonedDevice
	device.Spec.Storage = v1alpha1.StorageSpec{Device: &v1alpha1.DeviceSource{NodeName: zoned.NodeName, DeviceName: zoned.DeviceName}}
	if bad := invalid(databaseChildren(device)); len(bad) > 0 {
		t.Errorf("storage.device, ZNSDatabase name of %d characters:\n%s", v1alpha1.MaxDatabaseNameLength, strings.Join(bad, "\n"))
	}
	if bad := invalid(databaseChildren(longDB(v1alpha1.MaxDatabaseNameLength + 1))); len(bad) == 0 {
		t.Errorf("a ZNSDatabase name of %d characters makes only valid children: MaxDatabaseNameLength is too low", v1alpha1.MaxDatabaseNameLength+1)
	}

	// Every split of the combined budget between the Benchmark's name and a target's.
	for bn := 1; bn < v1alpha1.MaxBenchmarkAndTargetLength; bn++ {
		tn := min(v1alpha1.MaxBenchmarkAndTargetLength-bn, v1alpha1.MaxDatabaseNameLength)
		b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("b", bn)}}
		if bad := invalid(benchmarkChildren(b, "t"+strings.Repeat("x", tn-1))); len(bad) > 0 {
			t.Errorf("Benchmark name of %d characters, target of %d:\n%s", bn, tn, strings.Join(bad, "\n"))
		}
	}
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("b", 20)}}
	over := v1alpha1.MaxBenchmarkAndTargetLength - 20 + 1
	if bad := invalid(benchmarkChildren(b, "t"+strings.Repeat("x", over-1))); len(bad) == 0 {
		t.Errorf("names adding up to %d characters make only valid children: MaxBenchmarkAndTargetLength is too low", v1alpha1.MaxBenchmarkAndTargetLength+1)
	}
}
