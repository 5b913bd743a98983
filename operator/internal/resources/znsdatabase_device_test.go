package resources

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/precondition"
)

func deviceDatabase(p *v1alpha1.DevicePreconditionSpec) *v1alpha1.ZNSDatabase {
	return &v1alpha1.ZNSDatabase{
		ObjectMeta: metav1.ObjectMeta{Name: "inno", Namespace: "ns"},
		Spec: v1alpha1.ZNSDatabaseSpec{Engine: v1alpha1.EngineInnoDB, Flavor: v1alpha1.FlavorMariaDB,
			Storage: v1alpha1.StorageSpec{Device: &v1alpha1.DeviceSource{NodeName: "w1", DeviceName: "nvme1n1",
				Filesystem: v1alpha1.FilesystemXFS, Precondition: p}}},
	}
}

// TestPreconditionPlanFromSpec: what the format Job runs for a spec, with the API's defaults for what an object
// built in Go (never defaulted by the API server) leaves out, and the API's bounds agreeing with the plan's.
func TestPreconditionPlanFromSpec(t *testing.T) {
	if p := PreconditionPlan(nil); p.Enabled || p.Args() != nil {
		t.Errorf("no precondition: %+v", p)
	}
	if got, want := PreconditionPlan(&v1alpha1.DevicePreconditionSpec{}), precondition.DefaultPlan(); got != want {
		t.Errorf("empty spec: %+v, want the defaults %+v", got, want)
	}
	bs := resource.MustParse("1Mi")
	got := PreconditionPlan(&v1alpha1.DevicePreconditionSpec{SequentialPasses: ptr.To[int32](0), SequentialBlockSize: &bs,
		RandomRounds: 20, RoundSeconds: 30, SteadyState: &v1alpha1.PreconditionSteadyStateSpec{Window: 4, MaxRangePercent: 15,
			MaxSlopeExcursionPercent: 5}})
	if got.Passes != 0 || got.BlockSize != 1<<20 || got.Rounds != 20 || got.RoundSeconds != 30 || got.Rule.Window != 4 ||
		got.Rule.RangePct != 15 || got.Rule.ExcursionPct != 5 || got.Validate() != nil {
		t.Errorf("plan %+v (%v)", got, got.Validate())
	}
	if v1alpha1.MaxPreconditionPasses != 10 || v1alpha1.MaxPreconditionRounds != 20 {
		t.Error("the API's bounds moved: the report's (dbinit) and the CRD's markers must move with them")
	}
}

func TestDeviceDatabaseJobs(t *testing.T) {
	db := deviceDatabase(&v1alpha1.DevicePreconditionSpec{RandomRounds: 5, SteadyState: &v1alpha1.PreconditionSteadyStateSpec{Window: 5}})
	pre := PreflightJob(db, "img")
	c := pre.Spec.Template.Spec.Containers[0]
	if got := strings.Join(c.Command, " "); got != "znsdb preflight --device nvme1n1 --sysfs-only --filesystem xfs" {
		t.Errorf("preflight %q", got)
	}
	if len(pre.Spec.Template.Spec.Volumes) != 0 || pre.Spec.Template.Spec.Affinity == nil {
		t.Error("the preflight reaches the device, or is not pinned to its node")
	}
	got := strings.Join(FormatCommand(db), " ")
	if !strings.HasPrefix(got, "znsdb format --device nvme1n1 --filesystem xfs --policy IfNeeded --precondition ") ||
		!strings.Contains(got, "--precondition-rounds=5") {
		t.Errorf("format %q", got)
	}
	db.Spec.Storage.Device.Precondition = nil
	if got := strings.Join(FormatCommand(db), " "); got != "znsdb format --device nvme1n1 --filesystem xfs --policy IfNeeded" {
		t.Errorf("format without a precondition %q", got)
	}
	fj := FormatJob(db, "img", "bench")
	if vd := fj.Spec.Template.Spec.Containers[0].VolumeDevices; len(vd) != 1 || *vd[0].DevicePath != "/dev/nvme1n1" {
		t.Errorf("format Job devices %+v", vd)
	}
	if db.DeviceClaimName() != "inno-device" || db.FilesystemClaimName() != "inno-fs" {
		t.Errorf("claims %q %q", db.DeviceClaimName(), db.FilesystemClaimName())
	}

	sts := StatefulSet(db, StatefulSetInput{Image: "img", ConfigMapName: "cm"})
	spec := sts.Spec.Template.Spec
	if len(sts.Spec.VolumeClaimTemplates) != 0 || len(spec.InitContainers) != 0 {
		t.Errorf("claim templates %d, init containers %d", len(sts.Spec.VolumeClaimTemplates), len(spec.InitContainers))
	}
	if !slices.ContainsFunc(spec.Volumes, func(v corev1ac.VolumeApplyConfiguration) bool {
		return v.PersistentVolumeClaim != nil && *v.PersistentVolumeClaim.ClaimName == "inno-fs"
	}) {
		t.Error("mysqld does not mount the file system's claim")
	}
	for _, ct := range spec.Containers {
		if *ct.Name == ZonedMetricsContainer && !strings.Contains(strings.Join(ct.Command, " "), "--device nvme1n1") {
			t.Errorf("metrics sidecar %q does not count the device's writes", ct.Command)
		}
		if len(ct.VolumeDevices) != 0 {
			t.Errorf("%s sees the raw device", *ct.Name)
		}
	}
	pv := FilesystemPV(db, "w1", 4<<30)
	if pv.Spec.Local == nil || *pv.Spec.Local.FSType != "xfs" || *pv.Spec.Local.Path != "/dev/nvme1n1" {
		t.Errorf("filesystem PV %+v", pv.Spec.Local)
	}
	dpv := DevicePV(db, 4<<30)
	if *dpv.Name != v1alpha1.DevicePVName("w1", "nvme1n1") || *dpv.Spec.ClaimRef.Name != "inno-device" {
		t.Errorf("device PV %s bound to %s", *dpv.Name, *dpv.Spec.ClaimRef.Name)
	}
}

// TestFormatJobCapSysAdminOnlyForXFS: mkfs.xfs needs CAP_SYS_ADMIN (BLKBSZSET); the format container gets it,
// as uid 0 and with nothing else, only for xfs with spec.format.capSysAdmin. Everything else stays the pod's
// non-root user without capabilities.
func TestFormatJobCapSysAdminOnlyForXFS(t *testing.T) {
	xfs := deviceDatabase(nil)
	xfs.Spec.Format.CapSysAdmin = true
	ext4 := deviceDatabase(nil)
	ext4.Spec.Storage.Device.Filesystem = v1alpha1.FilesystemExt4
	ext4.Spec.Format.CapSysAdmin = true // refused by admission; never granted anyway
	notAllowed := deviceDatabase(nil)
	zxfs := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Name: "zx", Namespace: "ns"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{
			NodeName: "w1", DeviceName: "nullb3", Filesystem: v1alpha1.FilesystemZonedXFS}},
			Format: v1alpha1.FormatSpec{CapSysAdmin: true}}}
	for _, c := range []struct {
		name string
		db   *v1alpha1.ZNSDatabase
		root bool
	}{{"xfs allowed", xfs, true}, {"zoned xfs allowed", zxfs, true}, {"ext4", ext4, false}, {"xfs not allowed", notAllowed, false}} {
		pod := FormatJob(c.db, "img", "").Spec.Template.Spec
		sc := pod.Containers[0].SecurityContext
		caps := sc.Capabilities
		if !slices.Equal(caps.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("%s: drops %v, want ALL", c.name, caps.Drop)
		}
		if c.root {
			if sc.RunAsUser == nil || *sc.RunAsUser != 0 || *sc.RunAsNonRoot || !slices.Equal(caps.Add, []corev1.Capability{"SYS_ADMIN"}) ||
				sc.AllowPrivilegeEscalation != nil || sc.Privileged != nil || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("%s: security %+v, want uid 0 with CAP_SYS_ADMIN alone, read-only root", c.name, sc)
			}
			continue
		}
		if sc.RunAsUser != nil || len(caps.Add) != 0 || !*pod.SecurityContext.RunAsNonRoot || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: security %+v, want the pod's non-root user without capabilities", c.name, sc)
		}
	}
}
