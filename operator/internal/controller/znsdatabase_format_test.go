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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// btrfsDB is InnoDB on MariaDB, the stack ZenFS cannot serve, on a zoned btrfs.
func btrfsDB(ns, name, node, device string) *v1alpha1.ZNSDatabase {
	db := zonedDB(ns, name, node, device)
	db.Spec.Storage.ZonedDevice.Filesystem = v1alpha1.FilesystemBtrfs
	db.Spec.Engine, db.Spec.Flavor = v1alpha1.EngineInnoDB, v1alpha1.FlavorMariaDB
	return db
}

// zonedFSReport is what `znsdb format --filesystem` reports: the decision of fsformat.Decide for the input,
// on the recorded nullb0.
func zonedFSReport(t *testing.T, in fsformat.Input, uuid string) string {
	t.Helper()
	d, _, err := zbd.Preflight(sysBlock(), "nullb0")
	if err != nil {
		t.Fatal(err)
	}
	d.ZoneCapacityBytes = 60 << 20 // from the format's zone report (the preflight reads sysfs only)
	dec := fsformat.Decide(in)
	b, err := dbinit.Report{Device: d, Filesystem: &dbinit.FilesystemState{
		Type: in.Want.Name(), Found: fsformat.Found(in.Found), UUID: uuid, Label: zonedfs.Label(in.Token),
		Action: dec.Action, Reason: dec.Reason,
	}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestZonedBtrfsLifecycle(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	// A node of its own: envtest runs no PV protection controller, so another test's released PV on
	// kind-worker/nullb0 may still name its database.
	db := btrfsDB(ns, "inno-btrfs", "btrfs-node", "nullb0")
	create(t, db)
	passPreflight(t, db, "nullb0")
	waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionTrue, "PreflightPassed")
	db = get(t, db)

	// The preflight judged the device for btrfs; then the format Job gets the Block claim, and nothing mounts
	// the device or runs mysqld before it reported.
	pj := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, pj)
	if got := strings.Join(pj.Spec.Template.Spec.Containers[0].Command, " "); !strings.HasSuffix(got, "--sysfs-only --filesystem btrfs") {
		t.Errorf("preflight command %q does not judge for btrfs", got)
	}
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "Formatting")
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, job)
	ownedBy(t, job, db)
	spec := job.Spec.Template.Spec
	c := spec.Containers[0]
	if got := strings.Join(c.Command, " "); got != "znsdb format --device nullb0 --filesystem btrfs --policy IfNeeded" {
		t.Errorf("format command %q", got)
	}
	if !claimsDevice(spec.Volumes, db.DeviceClaimName()) || len(c.VolumeDevices) != 1 || c.VolumeDevices[0].DevicePath != "/dev/nullb0" {
		t.Errorf("format Job volumes %+v devices %+v: want the Block claim at /dev/nullb0", spec.Volumes, c.VolumeDevices)
	}
	if sc := c.SecurityContext; sc == nil || sc.Privileged != nil && *sc.Privileged || *sc.AllowPrivilegeEscalation {
		t.Errorf("format Job security context %+v: must not be privileged", sc)
	}
	fsPV := v1alpha1.FilesystemPVName("btrfs-node", "nullb0")
	consistently(t, "no mount and no mysqld before the format Job reported", time.Second, func() error {
		return errors.Join(
			absent(client.ObjectKey{Name: fsPV}, &corev1.PersistentVolume{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.FilesystemClaimName()}, &corev1.PersistentVolumeClaim{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{}))
	})

	finishJob(t, db, db.FormatJobName(), "format",
		zonedFSReport(t, fsformat.Input{Want: fsformat.Labelled{FS: zonedfs.Btrfs}, Policy: fsformat.PolicyIfNeeded, Found: fsformat.Observed{Empty: true}}, "b476b9a5"), true)
	waitEvent(t, db, "Formatted")
	// The format's zone report gives the zone capacity the sysfs-only preflight could not know (a Benchmark's
	// usable-capacity figures need it).
	eventually(t, "status.device.zoneCapacity from the format report", func() error {
		if zc := get(t, db).Status.Device.ZoneCapacity; zc == nil || zc.String() != "60Mi" {
			return fmt.Errorf("status.device.zoneCapacity = %v", zc)
		}
		return nil
	})

	// A Filesystem-mode local PV with fsType over the device, pinned, retained, bound to the datadir claim.
	pv := &corev1.PersistentVolume{}
	waitObject(t, client.ObjectKey{Name: fsPV}, pv)
	if l := pv.Spec.Local; l == nil || l.Path != "/dev/nullb0" || l.FSType == nil || *l.FSType != "btrfs" ||
		*pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("filesystem PV local %+v mode %v reclaim %s", pv.Spec.Local, *pv.Spec.VolumeMode, pv.Spec.PersistentVolumeReclaimPolicy)
	}
	assertPinnedTo(t, pv.Spec.NodeAffinity.Required, "btrfs-node")
	pvc := &corev1.PersistentVolumeClaim{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FilesystemClaimName()}, pvc)
	if pvc.Spec.VolumeName != fsPV || *pvc.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("datadir claim volume %q mode %v", pvc.Spec.VolumeName, *pvc.Spec.VolumeMode)
	}

	// mysqld gets the mounted file system as its datadir, no raw device, no ZenFS.
	sts := &appsv1.StatefulSet{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, sts)
	ps := sts.Spec.Template.Spec
	if len(ps.InitContainers) != 0 || len(ps.Containers[0].VolumeDevices) != 0 || len(sts.Spec.VolumeClaimTemplates) != 0 {
		t.Errorf("StatefulSet init %d, devices %+v, claim templates %d: want none", len(ps.InitContainers),
			ps.Containers[0].VolumeDevices, len(sts.Spec.VolumeClaimTemplates))
	}
	if !claimsDevice(ps.Volumes, db.FilesystemClaimName()) {
		t.Errorf("StatefulSet volumes %+v do not mount the datadir claim", ps.Volumes)
	}
	if probe := strings.Join(ps.Containers[0].ReadinessProbe.Exec.Command, " "); strings.Contains(probe, "zenfs") {
		t.Errorf("readiness probe %q asks ZenFS", probe)
	}
	db = get(t, db)
	cm := &corev1.ConfigMap{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.Status.ConfigMapName}, cm)
	if cnf := cm.Data[v1alpha1.ConfigFileName]; strings.Contains(cnf, "rocksdb-fs-uri") || !strings.Contains(cnf, "innodb_buffer_pool_size") {
		t.Errorf("my.cnf for InnoDB on btrfs:\n%s", cnf)
	}
	eventually(t, "status.filesystem from the format report", func() error {
		if fs := get(t, db).Status.Filesystem; fs == nil || fs.Type != "btrfs" || fs.Action != "format" || fs.UUID != "b476b9a5" {
			return fmt.Errorf("status.filesystem %+v", fs)
		}
		return nil
	})
	markReady(t, db)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")

	// Deleting releases the volumes and stops nothing on the device's data: both PVs go (they are the
	// operator's), the device is not touched.
	if err := k8s.Delete(ctx, db); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the database and its volumes released", func() error {
		return errors.Join(
			absent(client.ObjectKey{Namespace: ns, Name: db.Name}, &v1alpha1.ZNSDatabase{}),
			absent(client.ObjectKey{Name: fsPV}, &corev1.PersistentVolume{}))
	})
}

func TestZonedBtrfsFormatRefused(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := btrfsDB(ns, "foreign-fs", "node-z", "nullb0")
	create(t, db)
	passPreflight(t, db, "nullb0")
	refused := zonedFSReport(t, fsformat.Input{Want: fsformat.Labelled{FS: zonedfs.Btrfs}, Policy: fsformat.PolicyIfNeeded, Found: fsformat.Observed{ZenFS: true}}, "")
	finishJob(t, db, db.FormatJobName(), "format", refused, false)
	cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "FormatRefused")
	if !strings.Contains(cond.Message, "ZenFS") || !strings.Contains(cond.Message, "reformatToken") {
		t.Errorf("the refusal %q does not say what the device holds and how to go on", cond.Message)
	}
	waitEvent(t, db, "FormatRefused")
	consistently(t, "nothing mounts a refused device", time.Second, func() error {
		return errors.Join(
			absent(client.ObjectKey{Name: v1alpha1.FilesystemPVName("node-z", "nullb0")}, &corev1.PersistentVolume{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{}))
	})
}

func TestZonedFilesystemAdmission(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	innoZenFS := zonedDB(ns, "inno-zenfs", "n", "nullb0")
	innoZenFS.Spec.Engine = v1alpha1.EngineInnoDB
	err := k8s.Create(ctx, innoZenFS)
	if err == nil || !strings.Contains(err.Error(), "btrfs, f2fs or xfs") {
		t.Errorf("innodb on ZenFS: %v; want a refusal that names btrfs, f2fs or xfs", err)
	}
	for _, fs := range []v1alpha1.ZonedFilesystem{v1alpha1.FilesystemBtrfs, v1alpha1.FilesystemF2FS} {
		db := btrfsDB(ns, "inno-"+string(fs), "n", "nullb"+string(fs[0]))
		db.Spec.Storage.ZonedDevice.Filesystem = fs
		if err := k8s.Create(ctx, db); err != nil {
			t.Errorf("innodb on MariaDB on %s refused: %v", fs, err)
		}
	}
	bad := btrfsDB(ns, "inno-ext4", "n", "nullb9")
	bad.Spec.Storage.ZonedDevice.Filesystem = "ext4"
	if err := k8s.Create(ctx, bad); err == nil || !slices.ContainsFunc([]string{"zenfs", "btrfs"}, func(s string) bool { return strings.Contains(err.Error(), s) }) {
		t.Errorf("filesystem ext4 on a zoned device: %v; want the enum refusal", err)
	}
}

// TestReformatTokenSameForEveryFilesystem: a new reformatToken means the same for ZenFS and for a file system the
// kubelet mounts: mysqld is stopped, the format Job runs again with the token, and mysqld comes back on its
// report. Taking the token away restarts nothing.
func TestReformatTokenSameForEveryFilesystem(t *testing.T) {
	requireEnv(t)
	for _, tc := range []struct {
		fs     string
		db     func(ns string) *v1alpha1.ZNSDatabase
		report func(t *testing.T, token string) string
	}{
		{"zenfs", func(ns string) *v1alpha1.ZNSDatabase { return zonedDB(ns, "re-zenfs", "node-re-zenfs", "nullb0") },
			func(t *testing.T, _ string) string {
				return formatReport(t, fsformat.ActionFormat, "capture/nullb0/09-df-empty.stdout")
			}},
		{"btrfs", func(ns string) *v1alpha1.ZNSDatabase { return btrfsDB(ns, "re-btrfs", "node-re-btrfs", "nullb0") },
			func(t *testing.T, token string) string {
				return zonedFSReport(t, fsformat.Input{Want: fsformat.Labelled{FS: zonedfs.Btrfs}, Policy: fsformat.PolicyIfNeeded,
					Token: token, Found: fsformat.Observed{Empty: true}}, "u-"+token)
			}},
	} {
		t.Run(tc.fs, func(t *testing.T) {
			ns := newNamespace(t)
			db := tc.db(ns)
			create(t, db)
			passPreflight(t, db, "nullb0")
			finishJob(t, db, db.FormatJobName(), resources.FormatContainer, tc.report(t, ""), true)
			sts := &appsv1.StatefulSet{}
			waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, sts)
			db = get(t, db)
			mysqlPod(t, db, sts)

			patchToken(t, db, "2026-11-27")
			msg := waitEvent(t, db, "Reformatting")
			if !strings.Contains(msg, `reformatToken "2026-11-27" is new`) || !strings.Contains(msg, "ALL its data") {
				t.Errorf("event %q", msg)
			}
			eventually(t, "the StatefulSet deleted", func() error {
				return absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
			})
			eventually(t, "Reformatting, waiting for mysqld's pod", func() error {
				c := meta.FindStatusCondition(get(t, db).Status.Conditions, v1alpha1.ConditionAvailable)
				if c == nil || c.Reason != "Reformatting" || !strings.Contains(c.Message, "waiting for pod "+db.PodName()) {
					return fmt.Errorf("condition %+v", c)
				}
				return nil
			})
			consistently(t, "no format Job while mysqld's pod exists", time.Second, func() error {
				job := &batchv1.Job{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, job); err == nil && jobEnv(job) == "2026-11-27" {
					return errors.New("a format Job with the new token runs beside mysqld")
				}
				return nil
			})
			// The garbage collector's part: envtest runs none.
			if err := k8s.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: db.PodName()}}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "a format Job with the new token", func() error {
				job := &batchv1.Job{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, job); err != nil {
					return err
				}
				if got := jobEnv(job); got != "2026-11-27" {
					return fmt.Errorf("format Job token %q", got)
				}
				return nil
			})
			finishJob(t, db, db.FormatJobName(), resources.FormatContainer, tc.report(t, "2026-11-27"), true)
			waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
			// The reconcile that applies the StatefulSet writes the status only at its end.
			eventually(t, "status.filesystem from the new token's report", func() error {
				if fs := get(t, db).Status.Filesystem; fs == nil || fs.ReformatToken != "2026-11-27" || fs.Type != tc.fs {
					return fmt.Errorf("status.filesystem %+v", fs)
				}
				return nil
			})

			patchToken(t, get(t, db), "")
			consistently(t, "taking the token away restarts nothing", time.Second, func() error {
				return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
			})
		})
	}
}

func patchToken(t *testing.T, db *v1alpha1.ZNSDatabase, token string) {
	t.Helper()
	patch := client.MergeFrom(db.DeepCopy())
	db.Spec.Format.ReformatToken = token
	if err := k8s.Patch(ctx, db, patch); err != nil {
		t.Fatal(err)
	}
}

func jobEnv(job *batchv1.Job) string {
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.Name == resources.ReformatTokenEnv {
			return e.Value
		}
	}
	return ""
}
