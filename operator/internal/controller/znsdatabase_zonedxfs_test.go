package controller_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// zonedXFSDB is InnoDB on a zoned XFS over device, with its metadata on meta ("" for the device's own
// conventional zones).
func zonedXFSDB(ns, name, node, device, meta string) *v1alpha1.ZNSDatabase {
	db := btrfsDB(ns, name, node, device)
	db.Spec.Storage.ZonedDevice.Filesystem = v1alpha1.FilesystemZonedXFS
	db.Spec.Storage.ZonedDevice.MetadataDeviceName = meta
	db.Spec.Format.CapSysAdmin = true
	return db
}

func TestZonedXFSAdmission(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	for _, c := range []struct {
		name string
		db   *v1alpha1.ZNSDatabase
		says string // "" accepted
	}{
		{"null_blk with conventional zones", zonedXFSDB(ns, "xfs-nullb", "n", "nullb0", ""), ""},
		{"ZNS with a metadata device", zonedXFSDB(ns, "xfs-zns", "n", "nvme0n2", "nvme0n1"), ""},
		{"ZNS alone", zonedXFSDB(ns, "xfs-zns-alone", "n", "nvme0n2", ""), "needs metadataDeviceName"},
		{"the device as its own metadata device", zonedXFSDB(ns, "xfs-same", "n", "nvme0n2", "nvme0n2"), "another device"},
		{"a metadata device for btrfs", func() *v1alpha1.ZNSDatabase {
			db := zonedXFSDB(ns, "btrfs-meta", "n", "nullb1", "vda")
			db.Spec.Storage.ZonedDevice.Filesystem = v1alpha1.FilesystemBtrfs
			return db
		}(), "for filesystem xfs only"},
		{"xfs without capSysAdmin", func() *v1alpha1.ZNSDatabase {
			db := zonedXFSDB(ns, "xfs-nocap", "n", "nullb2", "")
			db.Spec.Format.CapSysAdmin = false
			return db
		}(), "filesystem xfs needs spec.format.capSysAdmin: true: mkfs.xfs sets the device's block size with the BLKBSZSET ioctl"},
		{"capSysAdmin for btrfs", func() *v1alpha1.ZNSDatabase {
			db := btrfsDB(ns, "btrfs-cap", "n", "nullb3")
			db.Spec.Format.CapSysAdmin = true
			return db
		}(), "spec.format.capSysAdmin is for filesystem xfs only"},
		{"a zonedClaim on ZNS", func() *v1alpha1.ZNSDatabase {
			db := btrfsDB(ns, "xfs-claim", "n", "nullb0")
			db.Spec.Storage.ZonedDevice = nil
			db.Spec.Storage.ZonedClaim = &v1alpha1.ZonedClaimSource{ClaimName: "c", DeviceName: "nvme0n2",
				Filesystem: v1alpha1.FilesystemZonedXFS}
			db.Spec.Format.CapSysAdmin = true
			return db
		}(), "only storage.zonedDevice can name"},
	} {
		err := k8s.Create(ctx, c.db)
		switch {
		case c.says == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)):
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.says)
		}
	}
}

// zonedXFSPreflight is what `znsdb preflight --filesystem xfs --zoned --metadata-device` reports for the
// recorded devices.
func zonedXFSPreflight(t *testing.T, device, meta string) string {
	t.Helper()
	d, err := zbd.Inspect(sysBlock(), device)
	if err != nil {
		t.Fatal(err)
	}
	m, err := zbd.Inspect(sysBlock(), meta)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dbinit.Report{Device: &d, MetadataDevice: &m, Problems: zonedfs.JudgeZonedXFS(d, -1, &m)}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestZonedXFSWithMetadataDevice: an NVMe ZNS namespace with a conventional namespace for the metadata. The
// operator binds both devices, gives both to the format Job, and has the kubelet mount the metadata device with
// the zoned one as its realtime device; another database cannot take the metadata device.
func TestZonedXFSWithMetadataDevice(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := zonedXFSDB(ns, "inno-zxfs", "zxfs-node", "nvme0n2", "nvme0n1")
	create(t, db)
	pj := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, pj)
	if got := strings.Join(pj.Spec.Template.Spec.Containers[0].Command, " "); !strings.HasSuffix(got,
		"--sysfs-only --filesystem xfs --zoned --metadata-device nvme0n1") {
		t.Errorf("preflight command %q does not judge the pair for zoned XFS", got)
	}
	finishPreflight(t, db, zonedXFSPreflight(t, "nvme0n2", "nvme0n1"), true)
	waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionTrue, "PreflightPassed")

	metaPV := v1alpha1.DevicePVName("zxfs-node", "nvme0n1")
	pv := &corev1.PersistentVolume{}
	waitObject(t, client.ObjectKey{Name: metaPV}, pv)
	if l := pv.Spec.Local; l == nil || l.Path != "/dev/nvme0n1" || *pv.Spec.VolumeMode != corev1.PersistentVolumeBlock ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Spec.ClaimRef.Name != db.MetadataClaimName() {
		t.Errorf("metadata PV local %+v mode %v reclaim %s claim %+v", pv.Spec.Local, *pv.Spec.VolumeMode,
			pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.ClaimRef)
	}
	if got := pv.Spec.Capacity.Storage().Value(); got != 1953525168*512 {
		t.Errorf("metadata PV capacity %d: want the metadata device's size from the preflight", got)
	}
	eventually(t, "status.device names the metadata device", func() error {
		if d := get(t, db).Status.Device; d == nil || d.MetadataDevice != "/dev/nvme0n1" || d.MetadataCapacity == nil {
			return fmt.Errorf("status.device %+v", d)
		}
		return nil
	})

	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, job)
	c := job.Spec.Template.Spec.Containers[0]
	if got := strings.Join(c.Command, " "); got != "znsdb format --device nvme0n2 --filesystem xfs --policy IfNeeded --zoned --metadata-device nvme0n1" {
		t.Errorf("format command %q", got)
	}
	// mkfs.xfs's BLKBSZSET: the format container alone is root with CAP_SYS_ADMIN, as spec.format.capSysAdmin allowed.
	if sc := c.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 0 || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Add, []corev1.Capability{"SYS_ADMIN"}) || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("format container security %+v: want uid 0 with CAP_SYS_ADMIN alone", sc)
	}
	if sc := pj.Spec.Template.Spec.Containers[0].SecurityContext; sc == nil || sc.RunAsUser != nil || sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 {
		t.Errorf("preflight container security %+v: want the pod's non-root user without capabilities", sc)
	}
	var paths []string
	for _, d := range c.VolumeDevices {
		paths = append(paths, d.DevicePath)
	}
	if !slices.Equal(paths, []string{"/dev/nvme0n2", "/dev/nvme0n1"}) ||
		!claimsDevice(job.Spec.Template.Spec.Volumes, db.MetadataClaimName()) {
		t.Errorf("format Job devices %q, volumes %+v: want both devices through their claims", paths, job.Spec.Template.Spec.Volumes)
	}

	// A second database cannot take the metadata device as its own.
	time.Sleep(1100 * time.Millisecond) // creation timestamps have second resolution
	intruder := btrfsDB(ns, "on-the-metadata", "zxfs-node", "nvme0n1")
	intruder.Spec.Storage.ZonedDevice.Filesystem = v1alpha1.FilesystemBtrfs
	create(t, intruder)
	cond := waitCondition(t, intruder, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "DeviceConflict")
	if !strings.Contains(cond.Message, ns+"/inno-zxfs") {
		t.Errorf("conflict %q does not name the database whose metadata device it is", cond.Message)
	}

	zoned := fsformat.Labelled{FS: zonedfs.XFS, ZonedMode: true}
	finishJob(t, db, db.FormatJobName(), "format",
		zonedFSReport(t, fsformat.Input{Want: zoned, Policy: fsformat.PolicyIfNeeded, Found: fsformat.Observed{Empty: true}}, "38b5400a"), true)
	fsPV := &corev1.PersistentVolume{}
	waitObject(t, client.ObjectKey{Name: v1alpha1.FilesystemPVName("zxfs-node", "nvme0n2")}, fsPV)
	if l := fsPV.Spec.Local; l == nil || l.Path != "/dev/nvme0n1" || l.FSType == nil || *l.FSType != "xfs" ||
		!slices.Equal(fsPV.Spec.MountOptions, []string{"rtdev=/dev/nvme0n2"}) {
		t.Errorf("filesystem PV local %+v mount options %q: want the metadata device, xfs, rtdev= the zoned one",
			fsPV.Spec.Local, fsPV.Spec.MountOptions)
	}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})

	if err := k8s.Delete(ctx, db); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both devices released", func() error {
		return errors.Join(
			absent(client.ObjectKey{Namespace: ns, Name: db.Name}, &v1alpha1.ZNSDatabase{}),
			absent(client.ObjectKey{Name: metaPV}, &corev1.PersistentVolume{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.MetadataClaimName()}, &corev1.PersistentVolumeClaim{}))
	})
}

// TestZonedXFSPodSecurityRefused: in a namespace whose Pod Security level refuses CAP_SYS_ADMIN, no format Job is
// made (its pod would be refused where only the Job's events show it); the database says which label to set,
// and goes on once the namespace admits the pod.
func TestZonedXFSPodSecurityRefused(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	setNamespaceLabel(t, ns, "baseline")
	db := zonedXFSDB(ns, "inno-zxfs", "psa-node", "nvme0n2", "nvme0n1")
	create(t, db)
	finishPreflight(t, db, zonedXFSPreflight(t, "nvme0n2", "nvme0n1"), true)
	c := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonPodSecurityRefused)
	for _, want := range []string{"CAP_SYS_ADMIN for mkfs.xfs", "pod-security.kubernetes.io/enforce=baseline", "=privileged"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("condition %q does not say %q", c.Message, want)
		}
	}
	if msg := waitEvent(t, db, "PodSecurityRefused"); msg != c.Message {
		t.Errorf("event %q, want the condition's message", msg)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, &batchv1.Job{}); err == nil {
		t.Error("a format Job was made in a namespace that refuses its pod")
	}
	setNamespaceLabel(t, ns, "privileged")
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, &batchv1.Job{})
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonFormatting)
}

func setNamespaceLabel(t *testing.T, ns, level string) {
	t.Helper()
	n := &corev1.Namespace{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels["pod-security.kubernetes.io/enforce"] = level
	if err := k8s.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
}
