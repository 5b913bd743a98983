package resources

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
)

func fioBench() *v1alpha1.Benchmark {
	return &v1alpha1.Benchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "raw", UID: "u1"},
		Spec: v1alpha1.BenchmarkSpec{Tool: v1alpha1.ToolFio, Fio: &v1alpha1.FioSpec{
			Profiles:       []v1alpha1.FioProfile{v1alpha1.FioSeqWriteOpenZones, v1alpha1.FioGrid},
			RuntimeSeconds: 30, Span: qty("1Gi"), WriteRate: qty("32Mi"), WriteToken: "2026-11-27",
			Grid: &v1alpha1.FioGridSpec{BlockSizes: []int64{4096, 131072}, NumJobs: []int32{1, 4}, IODepths: []int32{1}},
		}},
	}
}

// The Job of a device target: znsbench fio with the spec's plan, on the device's node, the device through the
// claim at its kernel path, the token in the environment only, and nothing privileged.
func TestFioJob(t *testing.T) {
	b := fioBench()
	tg := FioTarget{Name: "zns", Node: "node-a", Device: "nvme0n2", Claim: FioClaimName(b, "zns")}
	job := FioJob(b, tg, "bench:1")
	if *job.Name != "raw-fio-zns" || *job.Spec.BackoffLimit != 0 {
		t.Errorf("job %s backoff %d", *job.Name, *job.Spec.BackoffLimit)
	}
	// 1 write profile + a grid of 4 points, 30 s each, and the slack
	if got := *job.Spec.ActiveDeadlineSeconds; got != 5*30+fioSlackSeconds {
		t.Errorf("deadline %d", got)
	}
	spec := job.Spec.Template.Spec
	c := spec.Containers[0]
	want := []string{"znsbench", "fio", "--device", "nvme0n2", "--profiles", "seqwrite-open-zones,grid", "--runtime", "30s",
		"--termination-log", "/dev/termination-log", "--span", "1073741824", "--write-rate", "33554432",
		"--grid-rw", "randread", "--grid-bs", "4096,131072", "--grid-jobs", "1,4", "--grid-qd", "1"}
	if !slices.Equal(c.Command, want) {
		t.Errorf("command\n%q\nwant\n%q", c.Command, want)
	}
	if strings.Contains(strings.Join(c.Command, " "), "2026-11-27") {
		t.Error("the write token is on the command line")
	}
	if len(c.Env) != 1 || *c.Env[0].Name != fio.WriteTokenEnv || *c.Env[0].Value != "2026-11-27" || c.Env[0].ValueFrom != nil {
		t.Errorf("env %+v", c.Env)
	}
	// argv does not change with the token
	noToken := fioBench()
	noToken.Spec.Fio.WriteToken = ""
	if !slices.Equal(FioJob(noToken, tg, "bench:1").Spec.Template.Spec.Containers[0].Command, c.Command) {
		t.Error("the command line differs without a token")
	}
	sc := c.SecurityContext
	if !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 || sc.RunAsUser != nil {
		t.Errorf("container security %+v", sc)
	}
	ps := spec.SecurityContext
	if !*ps.RunAsNonRoot || *ps.RunAsUser != BenchUID || len(ps.SupplementalGroups) != 0 {
		t.Errorf("pod security %+v", ps)
	}
	if len(c.VolumeDevices) != 1 || *c.VolumeDevices[0].DevicePath != "/dev/nvme0n2" || *volumeNamed(spec, *c.VolumeDevices[0].Name).PersistentVolumeClaim.ClaimName != "raw-fio-zns" {
		t.Errorf("device %+v", c.VolumeDevices)
	}
	term := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
	if !slices.Equal(term.Values, []string{"node-a"}) {
		t.Errorf("node affinity %+v", term)
	}
	if len(spec.InitContainers) != 0 || len(spec.Containers) != 1 {
		t.Error("a fio Job has one container")
	}

	// spec.drive.counters: the runner alone gets CAP_SYS_ADMIN, as uid 0 (the drive sidecar's way)
	b.Spec.Drive = &v1alpha1.DriveSpec{Counters: true}
	tg.DeviceGroup = ptr.To(int64(6))
	spec = FioJob(b, tg, "bench:1").Spec.Template.Spec
	c = spec.Containers[0]
	if c.Command[len(c.Command)-1] != "--counters" {
		t.Errorf("command %q", c.Command)
	}
	sc = c.SecurityContext
	if *sc.RunAsUser != 0 || *sc.RunAsNonRoot || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"SYS_ADMIN"}) || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("counters security %+v", sc)
	}
	if *spec.SecurityContext.RunAsNonRoot || !slices.Equal(spec.SecurityContext.SupplementalGroups, []int64{6}) {
		t.Errorf("pod security %+v", spec.SecurityContext)
	}
}

// The device target's volume: named like a database's PersistentVolume of the device (so the two collide), owned
// by no database, retained, pinned to the node, and pre-bound to the Benchmark's claim.
func TestFioDevicePV(t *testing.T) {
	b := fioBench()
	tg := FioTarget{Name: "zns", Node: "node-a", Device: "nvme0n2", Claim: FioClaimName(b, "zns")}
	pv := FioDevicePV(b, tg)
	if *pv.Name != v1alpha1.DevicePVName("node-a", "nvme0n2") || pv.Annotations[v1alpha1.AnnotationOwner] != "benchmark:lab/raw" || pv.Annotations[AnnotationFioBenchmark] != "lab/raw" {
		t.Errorf("pv %s %v", *pv.Name, pv.Annotations)
	}
	if *pv.Spec.Local.Path != "/dev/nvme0n2" || string(*pv.Spec.VolumeMode) != "Block" || string(*pv.Spec.PersistentVolumeReclaimPolicy) != "Retain" ||
		*pv.Spec.ClaimRef.Name != "raw-fio-zns" || *pv.Spec.ClaimRef.Namespace != "lab" {
		t.Errorf("pv spec %+v", pv.Spec)
	}
	claim := FioDeviceClaim(b, tg)
	if *claim.Spec.VolumeName != *pv.Name || string(*claim.Spec.VolumeMode) != "Block" || *claim.OwnerReferences[0].Name != "raw" {
		t.Errorf("claim %+v", claim.Spec)
	}
}
