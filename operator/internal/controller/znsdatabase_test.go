package controller_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

var ctx = context.Background()

func zonedDB(ns, name, node, device string) *v1alpha1.ZNSDatabase {
	return &v1alpha1.ZNSDatabase{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ZNSDatabaseSpec{
			Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: node, DeviceName: device}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceMemory: resource.MustParse("4Gi"),
			}},
		},
	}
}

func volumeDB(ns, name string, engine v1alpha1.Engine, flavor v1alpha1.Flavor) *v1alpha1.ZNSDatabase {
	return &v1alpha1.ZNSDatabase{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ZNSDatabaseSpec{
			Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{
				StorageClassName: ptr.To("fast-xfs"),
				Size:             resource.MustParse("20Gi"),
			}},
			Engine: engine,
			Flavor: flavor,
		},
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func get(t *testing.T, db *v1alpha1.ZNSDatabase) *v1alpha1.ZNSDatabase {
	t.Helper()
	out := &v1alpha1.ZNSDatabase{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// condition waits until db has a condition of typ with status and reason, and returns it.
func waitCondition(t *testing.T, db *v1alpha1.ZNSDatabase, typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	eventually(t, fmt.Sprintf("%s condition %s=%s/%s", db.Name, typ, status, reason), func() error {
		cur := &v1alpha1.ZNSDatabase{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cur.Status.Conditions, typ)
		if c == nil {
			return fmt.Errorf("no condition yet; have %v", cur.Status.Conditions)
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("have %s/%s: %s", c.Status, c.Reason, c.Message)
		}
		if c.ObservedGeneration != cur.Generation {
			return fmt.Errorf("condition observed generation %d, object generation %d", c.ObservedGeneration, cur.Generation)
		}
		got = *c
		return nil
	})
	return got
}

func waitObject(t *testing.T, key client.ObjectKey, obj client.Object) {
	t.Helper()
	eventually(t, fmt.Sprintf("%T %s exists", obj, key), func() error { return k8s.Get(ctx, key, obj) })
}

// absent fails if the object exists (and is not being deleted).
func absent(key client.ObjectKey, obj client.Object) error {
	err := k8s.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	return fmt.Errorf("%T %s exists", obj, key)
}

// waitEvent waits for an Event with reason on the database and returns its message.
func waitEvent(t *testing.T, db *v1alpha1.ZNSDatabase, reason string) string {
	t.Helper()
	var msg string
	eventually(t, "event "+reason, func() error {
		list := &corev1.EventList{}
		if err := k8s.List(ctx, list, client.InNamespace(db.Namespace)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.InvolvedObject.Name == db.Name && e.InvolvedObject.Kind == "ZNSDatabase" {
				if e.Reason == reason {
					msg = e.Message
					return nil
				}
				seen = append(seen, e.Reason)
			}
		}
		return fmt.Errorf("events so far: %v", seen)
	})
	return msg
}

func ownedBy(t *testing.T, obj client.Object, db *v1alpha1.ZNSDatabase) {
	t.Helper()
	refs := obj.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != db.UID || refs[0].Kind != "ZNSDatabase" || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("%T %s: owner references %+v, want the ZNSDatabase %s as controller", obj, obj.GetName(), refs, db.Name)
	}
}

// sysBlock is the recorded sysfs tree of the zbd package: the same shapes the helper reads on a node.
func sysBlock() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "zbd", "testdata", "sys", "block")
}

// preflightReport is what `znsdb preflight` reports for a recorded device: the same pure inspection and
// judgement the helper runs, encoded the same way.
func preflightReport(t *testing.T, device string) (string, bool) {
	t.Helper()
	d, problems, err := zbd.Preflight(sysBlock(), device)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dbinit.Report{Device: d, Problems: problems}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b), len(problems) == 0
}

// finishPreflight plays kubelet and the Job controller: a pod of the preflight Job terminates with the
// report as its termination message, and the Job completes or fails.
// passPreflight finishes db's preflight Job with the device's real report, as a fit device's Job ends.
func passPreflight(t *testing.T, db *v1alpha1.ZNSDatabase, device string) {
	t.Helper()
	report, _ := preflightReport(t, device)
	finishPreflight(t, db, report, true)
}

func finishPreflight(t *testing.T, db *v1alpha1.ZNSDatabase, report string, ok bool) {
	t.Helper()
	finishJob(t, db, db.PreflightJobName(), "preflight", report, ok)
}

// finishJob plays kubelet and the Job controller for one of a database's Jobs: its pod's container terminates
// with the report as its termination message, and the Job completes or fails.
func finishJob(t *testing.T, db *v1alpha1.ZNSDatabase, jobName, container, report string, ok bool) {
	t.Helper()
	finishJobWith(t, db, jobName, container, report, ok, nil)
}

// finishJobWith is finishJob for a pod with the drive sidecar, in the state given (nil: no sidecar).
func finishJobWith(t *testing.T, db *v1alpha1.ZNSDatabase, jobName, container, report string, ok bool, sidecar *corev1.ContainerState) {
	t.Helper()
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: db.Namespace, Name: jobName}, job)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    db.Namespace,
			GenerateName: jobName + "-",
			Labels:       job.Spec.Template.Labels,
		},
		Spec: job.Spec.Template.Spec,
	}
	create(t, pod)
	exit := int32(0)
	if !ok {
		exit = 1
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodSucceeded,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name:  container,
			Image: job.Spec.Template.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exit, Message: report, StartedAt: now, FinishedAt: now,
			}},
		}},
	}
	if !ok {
		pod.Status.Phase = corev1.PodFailed
	}
	if sidecar != nil {
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: resources.DriveContainer, Image: benchTestImage, State: *sidecar}}
	}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	job.Status.StartTime = &now
	if ok {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	}
	if err := k8s.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}

// markReady plays the StatefulSet controller and kubelet: the one replica is ready on the current revision.
func markReady(t *testing.T, db *v1alpha1.ZNSDatabase) {
	t.Helper()
	eventually(t, "mark StatefulSet ready", func() error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.StatefulSetName()}, sts); err != nil {
			return err
		}
		sts.Status = appsv1.StatefulSetStatus{
			ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: 1, CurrentReplicas: 1,
			UpdatedReplicas: 1, AvailableReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r1",
		}
		return k8s.Status().Update(ctx, sts)
	})
}

func TestConventionalDatabases(t *testing.T) {
	requireEnv(t)
	for _, tc := range []struct {
		engine v1alpha1.Engine
		flavor v1alpha1.Flavor
		want   string // a line the generated my.cnf must hold
	}{
		{v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona, "default-storage-engine=rocksdb"},
		{v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona, "innodb_redo_log_capacity"},
		{v1alpha1.EngineRocksDB, v1alpha1.FlavorMariaDB, "plugin-load-add=ha_rocksdb"},
		{v1alpha1.EngineInnoDB, v1alpha1.FlavorMariaDB, "innodb_log_file_size"},
	} {
		t.Run(string(tc.flavor)+"-"+string(tc.engine), func(t *testing.T) {
			ns := newNamespace(t)
			db := volumeDB(ns, "conv", tc.engine, tc.flavor)
			create(t, db)
			cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "Starting")
			if !strings.Contains(cond.Message, db.PodName()) {
				t.Errorf("Starting message %q does not name the pod", cond.Message)
			}
			db = get(t, db)

			// The generated root Secret exists, is not owned (it outlives the database with the data), and
			// the password appears nowhere in the spec or status.
			secret := &corev1.Secret{}
			waitObject(t, client.ObjectKey{Namespace: ns, Name: "conv-root"}, secret)
			if len(secret.OwnerReferences) != 0 {
				t.Errorf("generated Secret has owner references %v; it must outlive the database", secret.OwnerReferences)
			}
			pw := string(secret.Data[v1alpha1.RootPasswordKey])
			if len(pw) < 20 {
				t.Errorf("generated password is %d characters", len(pw))
			}
			if strings.Contains(fmt.Sprintf("%+v", db.Spec)+fmt.Sprintf("%+v", db.Status), pw) {
				t.Error("the root password leaked into the ZNSDatabase")
			}
			if db.Status.RootPasswordSecretName != "conv-root" {
				t.Errorf("status.rootPasswordSecretName = %q", db.Status.RootPasswordSecretName)
			}

			// ConfigMap with a content-hash name, owned by the database.
			if !strings.HasPrefix(db.Status.ConfigMapName, "conv-mycnf-") || len(db.Status.ConfigMapName) != len("conv-mycnf-")+10 {
				t.Fatalf("status.configMapName = %q, want conv-mycnf-<10 hex>", db.Status.ConfigMapName)
			}
			cm := &corev1.ConfigMap{}
			waitObject(t, client.ObjectKey{Namespace: ns, Name: db.Status.ConfigMapName}, cm)
			ownedBy(t, cm, db)
			cnf := cm.Data[v1alpha1.ConfigFileName]
			if !strings.Contains(cnf, tc.want) {
				t.Errorf("my.cnf lacks %q:\n%s", tc.want, cnf)
			}
			if strings.Contains(cnf, "rocksdb-fs-uri") {
				t.Errorf("a conventional database must not get a ZenFS URI:\n%s", cnf)
			}

			svc := &corev1.Service{}
			waitObject(t, client.ObjectKey{Namespace: ns, Name: db.ServiceName()}, svc)
			ownedBy(t, svc, db)
			// mysqld, and the zns-metrics sidecar (spec.metrics is on by default) for the benchmark's verify.
			if len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Port != 3306 ||
				svc.Spec.Ports[1].Name != v1alpha1.ZonedMetricsPortName || svc.Spec.Ports[1].Port != v1alpha1.ZonedMetricsPort {
				t.Errorf("service ports %+v", svc.Spec.Ports)
			}
			if want := "conv-mysql." + ns + ".svc:3306"; db.Status.Endpoint != want {
				t.Errorf("endpoint %q, want %q", db.Status.Endpoint, want)
			}

			sts := &appsv1.StatefulSet{}
			waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, sts)
			ownedBy(t, sts, db)
			pod := sts.Spec.Template.Spec
			if len(pod.InitContainers) != 0 || len(pod.Containers[0].VolumeDevices) != 0 {
				t.Errorf("conventional pod has init containers %v / devices %v", pod.InitContainers, pod.Containers[0].VolumeDevices)
			}
			if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
				t.Error("the pod must run as non-root")
			}
			c := pod.Containers[0]
			if c.SecurityContext == nil || c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				t.Error("mysqld must not be privileged")
			}
			wantImage := perconaTestImage
			if tc.flavor == v1alpha1.FlavorMariaDB {
				wantImage = mariadbTestImage
			}
			if c.Image != wantImage {
				t.Errorf("image %q, want %q", c.Image, wantImage)
			}
			if env := c.Env[0]; env.ValueFrom == nil || env.ValueFrom.SecretKeyRef == nil || env.ValueFrom.SecretKeyRef.Name != "conv-root" {
				t.Errorf("root password must come from the Secret, got %+v", env)
			}
			vct := sts.Spec.VolumeClaimTemplates
			if len(vct) != 1 || vct[0].Spec.StorageClassName == nil || *vct[0].Spec.StorageClassName != "fast-xfs" ||
				vct[0].Spec.Resources.Requests.Storage().String() != "20Gi" {
				t.Errorf("data claim template %+v, want fast-xfs 20Gi", vct)
			}
			if !usesConfigMap(sts, db.Status.ConfigMapName) {
				t.Errorf("StatefulSet does not mount ConfigMap %s", db.Status.ConfigMapName)
			}

			markReady(t, db)
			waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
			waitCondition(t, db, v1alpha1.ConditionConfigReady, metav1.ConditionTrue, "Generated")
			waitEvent(t, db, "Available")
			if meta.FindStatusCondition(get(t, db).Status.Conditions, v1alpha1.ConditionDeviceReady) != nil {
				t.Error("a conventional database has no DeviceReady condition")
			}
		})
	}
}

func usesConfigMap(sts *appsv1.StatefulSet, name string) bool {
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == name {
			return true
		}
	}
	return false
}

// TestConfigChangeRollsThePod: a new configuration is a new ConfigMap, the pod template follows it, and the
// old ConfigMap goes once nothing points at it.
func TestConfigChangeRollsThePod(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := volumeDB(ns, "roll", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	create(t, db)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "Starting")
	first := get(t, db).Status.ConfigMapName

	eventually(t, "switch to the bulkload profile", func() error {
		cur := get(t, db)
		cur.Spec.Profile = v1alpha1.ProfileBulkLoad
		return k8s.Update(ctx, cur)
	})
	var second string
	eventually(t, "new ConfigMap in status", func() error {
		cur := get(t, db)
		second = cur.Status.ConfigMapName
		if second == first || second == "" {
			return fmt.Errorf("configMapName still %q", second)
		}
		if cur.Status.Profile != v1alpha1.ProfileBulkLoad {
			return fmt.Errorf("status.profile %q with the bulkload ConfigMap", cur.Status.Profile)
		}
		return nil
	})
	cm := &corev1.ConfigMap{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: second}, cm)
	if !strings.Contains(cm.Data[v1alpha1.ConfigFileName], "rocksdb_bulk_load=1") {
		t.Errorf("bulkload my.cnf lacks rocksdb_bulk_load = 1:\n%s", cm.Data[v1alpha1.ConfigFileName])
	}
	eventually(t, "StatefulSet uses the new ConfigMap", func() error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, sts); err != nil {
			return err
		}
		if !usesConfigMap(sts, second) {
			return errors.New("not yet")
		}
		return nil
	})
	eventually(t, "old ConfigMap deleted", func() error { return absent(client.ObjectKey{Namespace: ns, Name: first}, &corev1.ConfigMap{}) })
}

func TestZonedDatabaseLifecycle(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := zonedDB(ns, "tenant1", "kind-worker", "nullb0")
	create(t, db)

	// Before the preflight passes, only the Job exists, and it has no access to the device: no PV, no claim,
	// no StatefulSet.
	waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionUnknown, "Inspecting")
	db = get(t, db)
	pvName := v1alpha1.DevicePVName("kind-worker", "nullb0")
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, job)
	ownedBy(t, job, db)
	jp := job.Spec.Template.Spec
	if got := jp.Containers[0].Command; strings.Join(got, " ") != "znsdb preflight --device nullb0 --sysfs-only" {
		t.Errorf("preflight command %v", got)
	}
	// sysfs alone: a hostPath device node would be denied by the device cgroup anyway, and no mount means no way
	// to write.
	if c := jp.Containers[0]; len(jp.Volumes) != 0 || len(c.VolumeMounts) != 0 || len(c.VolumeDevices) != 0 {
		t.Errorf("preflight has volumes %+v, mounts %+v, devices %+v; want none", jp.Volumes, c.VolumeMounts, c.VolumeDevices)
	}
	assertPinnedTo(t, jp.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, "kind-worker")
	consistently(t, "nothing that writes to the device before the preflight", time.Second, func() error {
		return errors.Join(
			absent(client.ObjectKey{Name: pvName}, &corev1.PersistentVolume{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.DeviceClaimName()}, &corev1.PersistentVolumeClaim{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{}))
	})

	report, ok := preflightReport(t, "nullb0")
	if !ok {
		t.Fatalf("recorded nullb0 must pass the preflight: %s", report)
	}
	finishPreflight(t, db, report, true)
	waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionTrue, "PreflightPassed")
	waitEvent(t, db, "DeviceAccepted")
	db = get(t, db)
	dev := db.Status.Device
	if dev == nil || dev.Model != "host-managed" || dev.Zones != 64 || dev.ZoneSize.String() != "64Mi" ||
		dev.Scheduler != "mq-deadline" || dev.Capacity.String() != "4Gi" || dev.Node != "kind-worker" || dev.Path != "/dev/nullb0" {
		t.Errorf("status.device = %+v", dev)
	}

	// The local Block PV at the host path, pinned to the node, kept on release; the claim bound to it by name.
	pv := &corev1.PersistentVolume{}
	waitObject(t, client.ObjectKey{Name: pvName}, pv)
	if pv.Spec.Local == nil || pv.Spec.Local.Path != "/dev/nullb0" || *pv.Spec.VolumeMode != corev1.PersistentVolumeBlock {
		t.Errorf("PV source %+v mode %v", pv.Spec.Local, pv.Spec.VolumeMode)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("PV reclaim policy %s, want Retain", pv.Spec.PersistentVolumeReclaimPolicy)
	}
	assertPinnedTo(t, pv.Spec.NodeAffinity.Required, "kind-worker")
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != db.DeviceClaimName() || pv.Spec.ClaimRef.Namespace != ns {
		t.Errorf("PV claimRef %+v", pv.Spec.ClaimRef)
	}
	if got := pv.Spec.Capacity.Storage().String(); got != "4Gi" {
		t.Errorf("PV capacity %s, want the device's 4Gi", got)
	}
	pvc := &corev1.PersistentVolumeClaim{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.DeviceClaimName()}, pvc)
	ownedBy(t, pvc, db)
	if pvc.Spec.VolumeName != pvName || *pvc.Spec.VolumeMode != corev1.PersistentVolumeBlock {
		t.Errorf("claim volumeName %q mode %v", pvc.Spec.VolumeName, pvc.Spec.VolumeMode)
	}

	// The format Job sees the device at the host's path, with the datadir claim for ZenFS's aux directory,
	// which the operator made for it under the name the StatefulSet adopts.
	job = &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, job)
	format := job.Spec.Template.Spec.Containers[0]
	wantFormat := "znsdb format --device nullb0 --filesystem zenfs --policy IfNeeded --aux-path /var/lib/mysql/zenfs-aux --finish-threshold 0"
	if got := strings.Join(format.Command, " "); got != wantFormat {
		t.Errorf("format command %q, want %q", got, wantFormat)
	}
	if !claimsDevice(job.Spec.Template.Spec.Volumes, db.DataClaimName()) {
		t.Errorf("format Job volumes %v do not use the datadir claim %s", job.Spec.Template.Spec.Volumes, db.DataClaimName())
	}
	dataClaim := &corev1.PersistentVolumeClaim{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.DataClaimName()}, dataClaim)
	if len(dataClaim.OwnerReferences) != 0 || dataClaim.Spec.Resources.Requests.Storage().String() != "2Gi" {
		t.Errorf("datadir claim owners %v size %s: want none (deleting the database keeps it) and 2Gi",
			dataClaim.OwnerReferences, dataClaim.Spec.Resources.Requests.Storage())
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("StatefulSet before the format Job finished: %v", err)
	}
	// The format Job's zone report gives the zone capacity the sysfs-only preflight could not know.
	if zc := get(t, db).Status.Device.ZoneCapacity; zc != nil {
		t.Errorf("zone capacity %s before any zone report was read", zc)
	}
	formatDevice, _, err := zbd.Preflight(sysBlock(), "nullb0")
	if err != nil {
		t.Fatal(err)
	}
	formatDevice.ZoneCapacityBytes = 60 << 20
	formatReport, err := dbinit.Report{Device: formatDevice, Filesystem: &dbinit.FilesystemState{
		Type: "zenfs", Action: fsformat.ActionFormat, Reason: "device is empty; formatting it with zenfs",
		Space: &dbinit.Space{At: time.Now(), FreeBytes: 3 << 30, UsedBytes: 256 << 20},
	}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	finishJob(t, db, db.FormatJobName(), resources.FormatContainer, string(formatReport), true)
	waitEvent(t, db, "Formatted")

	// mysqld sees the device at the host's path; no init container formats anything.
	sts := &appsv1.StatefulSet{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, sts)
	spec := sts.Spec.Template.Spec
	if len(spec.InitContainers) != 0 {
		t.Errorf("init containers %v", spec.InitContainers)
	}
	if c := spec.Containers[0]; len(c.VolumeDevices) != 1 || c.VolumeDevices[0].DevicePath != "/dev/nullb0" {
		t.Errorf("container %s sees the device at %v, want /dev/nullb0", c.Name, c.VolumeDevices)
	}
	if !claimsDevice(spec.Volumes, db.DeviceClaimName()) {
		t.Errorf("pod volumes %v do not use claim %s", spec.Volumes, db.DeviceClaimName())
	}
	if got := spec.SecurityContext.SupplementalGroups; len(got) != 1 || got[0] != 6 {
		t.Errorf("supplementalGroups %v, want the disk group 6", got)
	}
	if vct := sts.Spec.VolumeClaimTemplates; len(vct) != 1 || vct[0].Spec.Resources.Requests.Storage().String() != "2Gi" {
		t.Errorf("datadir claim template %+v, want 2Gi", vct)
	}
	cm := &corev1.ConfigMap{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.Status.ConfigMapName}, cm)
	if !strings.Contains(cm.Data[v1alpha1.ConfigFileName], "loose-rocksdb-fs-uri=zenfs://dev:nullb0") {
		t.Errorf("my.cnf lacks the ZenFS URI:\n%s", cm.Data[v1alpha1.ConfigFileName])
	}

	mysqlPod(t, db, sts)
	eventually(t, "status.filesystem", func() error {
		fs := get(t, db).Status.Filesystem
		if fs == nil || fs.Type != "zenfs" || fs.Action != "format" || fs.ZenFS == nil || fs.ZenFS.Free.String() != "3Gi" ||
			fs.ZenFS.Used.String() != "256Mi" {
			return fmt.Errorf("status.filesystem = %+v", fs)
		}
		if zc := get(t, db).Status.Device.ZoneCapacity; zc == nil || zc.String() != "60Mi" {
			return fmt.Errorf("status.device.zoneCapacity = %v, want the format report's 60Mi", zc)
		}
		return nil
	})
	waitEvent(t, db, "Formatted")
	markReady(t, db)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")

	// Deleting the database releases the device without touching it: the StatefulSet, Job, claim and PV go,
	// no new pod or Job appears, and the datadir claim and Secret stay.
	if err := k8s.Delete(ctx, db); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ZNSDatabase gone", func() error { return absent(client.ObjectKeyFromObject(db), &v1alpha1.ZNSDatabase{}) })
	eventually(t, "device objects released", func() error {
		return errors.Join(
			absent(client.ObjectKey{Name: pvName}, &corev1.PersistentVolume{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.DeviceClaimName()}, &corev1.PersistentVolumeClaim{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, &batchv1.Job{}))
	})
	jobs := &batchv1.JobList{}
	if err := k8s.List(ctx, jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if j.DeletionTimestamp.IsZero() {
			t.Errorf("Job %s exists after deletion: nothing may run against the device on delete", j.Name)
		}
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tenant1-root"}, &corev1.Secret{}); err != nil {
		t.Errorf("the generated Secret must survive deletion with the data: %v", err)
	}
	waitEvent(t, db, "DeviceReleased")
}

func claimsDevice(vols []corev1.Volume, claim string) bool {
	for _, v := range vols {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}

func assertPinnedTo(t *testing.T, sel *corev1.NodeSelector, node string) {
	t.Helper()
	if sel == nil || len(sel.NodeSelectorTerms) != 1 || len(sel.NodeSelectorTerms[0].MatchExpressions) != 1 {
		t.Fatalf("node selector %+v", sel)
	}
	e := sel.NodeSelectorTerms[0].MatchExpressions[0]
	if e.Key != corev1.LabelHostname || e.Operator != corev1.NodeSelectorOpIn || len(e.Values) != 1 || e.Values[0] != node {
		t.Errorf("node selector %+v, want %s In [%s]", e, corev1.LabelHostname, node)
	}
}

// mysqlPod plays the StatefulSet controller and kubelet: the pod exists and its format step terminated with
// exit code and report.
func mysqlPod(t *testing.T, db *v1alpha1.ZNSDatabase, sts *appsv1.StatefulSet) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, Name: db.PodName(), Labels: sts.Spec.Template.Labels},
		Spec:       sts.Spec.Template.Spec,
	}
	// The StatefulSet controller turns claim templates into claims; a pod needs the volume to be valid.
	if len(sts.Spec.VolumeClaimTemplates) > 0 {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: v1alpha1.DataClaimTemplateName, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: db.DataClaimName()}}})
	}
	create(t, pod)
	pod.Status.Phase = corev1.PodRunning
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

func TestDeviceRefusedByPreflight(t *testing.T) {
	requireEnv(t)
	for _, tc := range []struct {
		device, want string
	}{
		{"nullb1", "host-managed"}, // conventional null_blk
		{"nullb2", "16 zones"},     // too few zones
		{"nvme0n2", "mq-deadline"}, // NVMe ZNS with scheduler none
		{"nullb3", "open zones"},   // zone_max_open too small
	} {
		t.Run(tc.device, func(t *testing.T) {
			ns := newNamespace(t)
			db := zonedDB(ns, "bad", "node-a", tc.device)
			create(t, db)
			report, ok := preflightReport(t, tc.device)
			if ok {
				t.Fatalf("recorded %s must fail the preflight", tc.device)
			}
			firstJob := &batchv1.Job{}
			waitObject(t, client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, firstJob)
			finishPreflight(t, db, report, false)
			cond := waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "DeviceRefused")
			if !strings.Contains(cond.Message, tc.want) {
				t.Errorf("DeviceReady message %q does not mention %q", cond.Message, tc.want)
			}
			waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "DeviceRefused")
			if msg := waitEvent(t, db, "DeviceRefused"); !strings.Contains(msg, tc.want) {
				t.Errorf("event %q does not mention %q", msg, tc.want)
			}
			if got := get(t, db).Status.Device; got == nil || len(got.Problems) == 0 {
				t.Errorf("status.device.problems empty: %+v", got)
			}
			consistently(t, "nothing that writes to a refused device", time.Second, func() error {
				return errors.Join(
					absent(client.ObjectKey{Name: v1alpha1.DevicePVName("node-a", tc.device)}, &corev1.PersistentVolume{}),
					absent(client.ObjectKey{Namespace: ns, Name: db.DeviceClaimName()}, &corev1.PersistentVolumeClaim{}),
					absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{}))
			})
			// After the retry interval the device is inspected again by a fresh Job.
			eventually(t, "a new preflight Job", func() error {
				j := &batchv1.Job{}
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, j); err != nil {
					return err
				}
				if j.UID == firstJob.UID {
					return errors.New("still the first Job")
				}
				return nil
			})
		})
	}
}

func TestPreflightPodLost(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := zonedDB(ns, "lost", "node-a", "nullb0")
	create(t, db)
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, job)
	now := metav1.Now()
	job.Status.StartTime = &now
	job.Status.Failed = 1
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	if err := k8s.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
	cond := waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "PreflightFailed")
	if !strings.Contains(cond.Message, "no report") {
		t.Errorf("message %q should say the pod left no report", cond.Message)
	}
	waitEvent(t, db, "PreflightFailed")
}

func TestFormatRefused(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := zonedDB(ns, "foreign", "node-b", "nullb0")
	create(t, db)
	passPreflight(t, db, "nullb0")
	decision := fsformat.Decide(fsformat.Input{Want: fsformat.ZenFS{}, Policy: fsformat.PolicyIfNeeded})
	refused, err := dbinit.Report{Filesystem: &dbinit.FilesystemState{Type: "zenfs", Action: decision.Action, Reason: decision.Reason}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	finishJob(t, db, db.FormatJobName(), resources.FormatContainer, string(refused), false)
	cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "FormatRefused")
	if !strings.Contains(cond.Message, "data of no kind blkid knows") || !strings.Contains(cond.Message, "reformatToken") {
		t.Errorf("message %q should say the device holds foreign data and how to confirm a format", cond.Message)
	}
	waitEvent(t, db, "FormatRefused")
}

func TestDeviceConflict(t *testing.T) {
	requireEnv(t)
	ns1, ns2 := newNamespace(t), newNamespace(t)
	first := zonedDB(ns1, "owner", "node-c", "nvme0n1")
	create(t, first)
	waitCondition(t, first, v1alpha1.ConditionDeviceReady, metav1.ConditionUnknown, "Inspecting")
	time.Sleep(1100 * time.Millisecond) // creation timestamps have second resolution
	second := zonedDB(ns2, "intruder", "node-c", "nvme0n1")
	create(t, second)
	cond := waitCondition(t, second, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "DeviceConflict")
	if !strings.Contains(cond.Message, ns1+"/owner") {
		t.Errorf("conflict message %q does not name the holder", cond.Message)
	}
	waitEvent(t, second, "DeviceConflict")
	consistently(t, "the second claimant creates nothing", time.Second, func() error {
		return errors.Join(
			absent(client.ObjectKey{Namespace: ns2, Name: second.PreflightJobName()}, &batchv1.Job{}),
			absent(client.ObjectKey{Namespace: ns2, Name: second.StatefulSetName()}, &appsv1.StatefulSet{}))
	})
	// The first keeps its claim.
	if c := meta.FindStatusCondition(get(t, first).Status.Conditions, v1alpha1.ConditionDeviceReady); c == nil || c.Reason == "DeviceConflict" {
		t.Errorf("first claimant condition %+v", c)
	}
}

func TestMissingSecret(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := volumeDB(ns, "nosecret", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona)
	db.Spec.RootPasswordSecretName = "my-root"
	create(t, db)
	cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "SecretMissing")
	if !strings.Contains(cond.Message, `"my-root"`) || !strings.Contains(cond.Message, `"password"`) {
		t.Errorf("message %q should name the Secret and its key", cond.Message)
	}
	waitEvent(t, db, "SecretMissing")
	consistently(t, "no StatefulSet without a password", time.Second, func() error {
		return absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
	})
	// Creating the Secret unblocks the database without touching it.
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "my-root"},
		StringData: map[string]string{"password": "s3cret-from-user"}})
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "Starting")
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nosecret-root"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("no Secret may be generated when the user names one: %v", err)
	}
}

func TestInvalidConfigOverride(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := volumeDB(ns, "badcnf", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	db.Spec.Config = map[string]string{"rocksdb-bulk-load": "1"}
	create(t, db)
	cond := waitCondition(t, db, v1alpha1.ConditionConfigReady, metav1.ConditionFalse, "InvalidConfig")
	if !strings.Contains(cond.Message, "bulk") {
		t.Errorf("message %q should name the forbidden key", cond.Message)
	}
	waitEvent(t, db, "InvalidConfig")
	consistently(t, "no StatefulSet with a broken config", time.Second, func() error {
		return absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
	})
}

func TestZonedClaim(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := &v1alpha1.ZNSDatabase{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "byclaim"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{
			ZonedClaim: &v1alpha1.ZonedClaimSource{ClaimName: "zns-claim", DeviceName: "nvme1n2"}}},
	}
	create(t, db)
	waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "InvalidClaim")
	waitEvent(t, db, "InvalidClaim")

	// The claim is bound to a local Block volume at the device's kernel name on one node: that is how the
	// operator knows which device it is.
	pv := localBlockPV(ns+"-nvme1n2", "claim-node", "/dev/nvme1n2")
	create(t, pv)
	create(t, blockClaim(ns, "zns-claim", pv.Name))
	waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionUnknown, "Inspecting")
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, job)
	v := job.Spec.Template.Spec.Volumes[0]
	if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "zns-claim" || !v.PersistentVolumeClaim.ReadOnly {
		t.Errorf("preflight volume %+v, want the user's claim read-only", v)
	}
	if vd := job.Spec.Template.Spec.Containers[0].VolumeDevices; vd[0].DevicePath != "/dev/nvme1n2" {
		t.Errorf("device path %s", vd[0].DevicePath)
	}
	report, _ := preflightReport(t, "nullb0") // any fit device: the claim's device is inspected by the same code
	finishPreflight(t, db, report, true)
	waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionTrue, "PreflightPassed")
	fj := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, fj)
	if !claimsDevice(fj.Spec.Template.Spec.Volumes, "zns-claim") {
		t.Errorf("the format Job does not use the user's claim")
	}
	finishJob(t, db, db.FormatJobName(), resources.FormatContainer, formatReport(t, fsformat.ActionKeep, "capture/nullb0/09-df-empty.stdout"), true)
	sts := &appsv1.StatefulSet{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, sts)
	if !claimsDevice(sts.Spec.Template.Spec.Volumes, "zns-claim") {
		t.Errorf("StatefulSet does not use the user's claim")
	}
	// The operator creates no PV for a user's claim, and deleting the database leaves the user's claim alone.
	if err := k8s.Delete(ctx, db); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ZNSDatabase gone", func() error { return absent(client.ObjectKeyFromObject(db), &v1alpha1.ZNSDatabase{}) })
	pvc := &corev1.PersistentVolumeClaim{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "zns-claim"}, pvc); err != nil || !pvc.DeletionTimestamp.IsZero() {
		t.Errorf("the user's claim must survive the database: %v %v", err, pvc.DeletionTimestamp)
	}
}

// localBlockPV is a local Block PersistentVolume at path, pinned to node: what a user creates for a zoned device.
func localBlockPV(name, node, path string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")},
			VolumeMode:                    ptr.To(corev1.PersistentVolumeBlock),
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
			StorageClassName: "",
		},
	}
}

// blockClaim is a Block claim, bound to volume when it is not "".
func blockClaim(ns, name, volume string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:       ptr.To(corev1.PersistentVolumeBlock),
			StorageClassName: ptr.To(""),
			VolumeName:       volume,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Ti")}},
		},
	}
}

// TestValidation checks the API server's admission of the CRD's validation rules.
func TestValidation(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	both := zonedDB(ns, "both", "n", "nullb0")
	both.Spec.Storage.Volume = &v1alpha1.VolumeSource{}
	none := volumeDB(ns, "none", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	none.Spec.Storage.Volume = nil
	innodbZoned := zonedDB(ns, "innozoned", "n", "nullb0")
	innodbZoned.Spec.Engine = v1alpha1.EngineInnoDB
	partition := zonedDB(ns, "part", "n", "nvme0n1p1")
	partition.Spec.Storage.ZonedDevice.DeviceName = "../sda"
	badEngine := volumeDB(ns, "engine", "myisam", v1alpha1.FlavorPercona)
	mariadbZoned := zonedDB(ns, "mariazoned", "n", "nullb0")
	mariadbZoned.Spec.Flavor = v1alpha1.FlavorMariaDB
	for _, tc := range []struct {
		db   *v1alpha1.ZNSDatabase
		want string
	}{
		{both, "exactly one of zonedDevice, zonedClaim, device or volume"},
		{none, "exactly one of zonedDevice, zonedClaim, device or volume"},
		{innodbZoned, "ZenFS serves only the rocksdb engine"},
		{partition, "spec.storage.zonedDevice.deviceName"},
		{badEngine, "spec.engine"},
		{mariadbZoned, "ZenFS needs flavor percona"},
	} {
		err := k8s.Create(ctx, tc.db)
		if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an Invalid error mentioning %q", tc.db.Name, err, tc.want)
		}
	}

	ok := volumeDB(ns, "immutable", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	create(t, ok)
	cur := get(t, ok)
	if cur.Spec.Profile != v1alpha1.ProfileWorkload || cur.Spec.Format.Policy != v1alpha1.FormatIfNeeded || *cur.Spec.DeviceGroupID != 6 {
		t.Errorf("defaults not applied: %+v", cur.Spec)
	}
	var updateErr error
	eventually(t, "an update that is not a conflict", func() error {
		cur := get(t, ok)
		cur.Spec.Storage.Volume.Size = resource.MustParse("99Gi")
		updateErr = k8s.Update(ctx, cur)
		if apierrors.IsConflict(updateErr) {
			return updateErr
		}
		return nil
	})
	if updateErr == nil || !strings.Contains(updateErr.Error(), "storage is immutable") {
		t.Errorf("changing storage: got %v, want 'storage is immutable'", updateErr)
	}
}
