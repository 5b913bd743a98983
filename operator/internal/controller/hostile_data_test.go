package controller_test

// Issue 27 (second round of hostile input), the ZNSDatabase points: fields whose change would make the data
// unreachable (4), a child the namespace's quota forbids (5), a preflight pod no node can take (6).

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// updateSpec changes db's spec with mutate on the newest copy, again when the operator's status write got in
// between, and returns what the API server said.
func updateSpec(t *testing.T, db *v1alpha1.ZNSDatabase, mutate func(*v1alpha1.ZNSDatabase)) error {
	t.Helper()
	for {
		cur := get(t, db)
		mutate(cur)
		err := k8s.Update(ctx, cur)
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

// refusedUpdate checks that the API server refuses a spec change as Invalid with a message holding every want.
func refusedUpdate(t *testing.T, db *v1alpha1.ZNSDatabase, what string, mutate func(*v1alpha1.ZNSDatabase), want ...string) {
	t.Helper()
	err := updateSpec(t, db, mutate)
	if err == nil {
		t.Errorf("%s was admitted; want a refusal mentioning %q", what, want)
		return
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("%s: got %v, want an Invalid error", what, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", what, err, w)
		}
	}
}

// TestEngineAndFlavorCannotChangeUnderData: engine and flavor are fixed once the database exists (the tables
// are in the engine's files, the datadir in the flavor's format), with a message that says how to migrate;
// removing engine from an innodb database (its default is rocksdb) is a change too. Creating with any engine
// and flavor, and changing the profile, config or the reformat token, stay possible.
func TestEngineAndFlavorCannotChangeUnderData(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := volumeDB(ns, "innodb-maria", v1alpha1.EngineInnoDB, v1alpha1.FlavorMariaDB)
	create(t, db)
	waitCondition(t, db, v1alpha1.ConditionConfigReady, metav1.ConditionTrue, "Generated")

	refusedUpdate(t, db, "engine innodb to rocksdb", func(d *v1alpha1.ZNSDatabase) { d.Spec.Engine = v1alpha1.EngineRocksDB },
		"engine cannot change once the database exists", "dump it (mysqldump)", "new ZNSDatabase")
	refusedUpdate(t, db, "engine removed (defaults to rocksdb)", func(d *v1alpha1.ZNSDatabase) { d.Spec.Engine = "" },
		"engine cannot change")
	refusedUpdate(t, db, "flavor mariadb to percona", func(d *v1alpha1.ZNSDatabase) { d.Spec.Flavor = v1alpha1.FlavorPercona },
		"flavor cannot change once the database exists", "dump it (mysqldump)")
	if cur := get(t, db); cur.Spec.Engine != v1alpha1.EngineInnoDB || cur.Spec.Flavor != v1alpha1.FlavorMariaDB {
		t.Errorf("stored engine %q flavor %q", cur.Spec.Engine, cur.Spec.Flavor)
	}

	if err := updateSpec(t, db, func(d *v1alpha1.ZNSDatabase) {
		d.Spec.Profile = v1alpha1.ProfileBulkLoad
		d.Spec.Config = map[string]string{"max_connections": "300"}
	}); err != nil {
		t.Errorf("profile and config changes must stay possible: %v", err)
	}
	zoned := zonedDB(ns, "zoned", "immutable-"+ns, "nullb0")
	create(t, zoned)
	if err := updateSpec(t, zoned, func(d *v1alpha1.ZNSDatabase) {
		d.Spec.Format.ReformatToken = "2026-11-26"
		d.Spec.Format.Policy = v1alpha1.FormatNever
	}); err != nil {
		t.Errorf("a reformat token and the format policy must stay settable: %v", err)
	}
}

// TestRootPasswordSecretFixedOnceAccepted: once the operator accepted a root password Secret (and may have
// initialised mysqld with it) another one is refused at admission, because mysqld keeps the password in its
// datadir; before that, a missing Secret can still be replaced by a generated one, as its message says.
func TestRootPasswordSecretFixedOnceAccepted(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := volumeDB(ns, "pw", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	db.Spec.RootPasswordSecretName = "typo-root"
	create(t, db)
	cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "SecretMissing")
	if !strings.Contains(cond.Message, "remove spec.rootPasswordSecretName") {
		t.Errorf("message %q should offer a generated password", cond.Message)
	}
	if err := updateSpec(t, db, func(d *v1alpha1.ZNSDatabase) { d.Spec.RootPasswordSecretName = "" }); err != nil {
		t.Fatalf("before any Secret was accepted the name must be changeable: %v", err)
	}
	eventually(t, "the generated Secret is accepted", func() error {
		if got := get(t, db).Status.RootPasswordSecretName; got != "pw-root" {
			return fmt.Errorf("status.rootPasswordSecretName %q", got)
		}
		return nil
	})
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other-root"},
		StringData: map[string]string{"password": "another-password"}})
	refusedUpdate(t, db, "another Secret after acceptance", func(d *v1alpha1.ZNSDatabase) { d.Spec.RootPasswordSecretName = "other-root" },
		"spec.rootPasswordSecretName cannot change", "ALTER USER")
	// Naming the accepted Secret explicitly is no change.
	if err := updateSpec(t, db, func(d *v1alpha1.ZNSDatabase) { d.Spec.RootPasswordSecretName = "pw-root" }); err != nil {
		t.Errorf("naming the accepted Secret: %v", err)
	}
}

// TestQuotaForbiddenClaimIsACondition: a ResourceQuota that forbids the device's claim shows as a condition and
// a Warning Event that quote the quota (not as a preflight still inspecting, and not only in the log), and the
// database goes on by itself once the quota is gone.
func TestQuotaForbiddenClaimIsACondition(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-claims"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: resource.MustParse("0")}},
	}
	create(t, quota)
	// What the quota controller would write; admission refuses everything under a quota without status.
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard,
		Used: corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: resource.MustParse("0")}}
	if err := k8s.Status().Update(ctx, quota); err != nil {
		t.Fatal(err)
	}

	db := zonedDB(ns, "quota", "quota-"+ns, "nullb0")
	create(t, db)
	passPreflight(t, db, "nullb0")
	cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "ChildForbidden")
	for _, w := range []string{"exceeded quota: no-claims", "persistentvolumeclaims", db.DeviceClaimName()} {
		if !strings.Contains(cond.Message, w) {
			t.Errorf("condition %q should name %q", cond.Message, w)
		}
	}
	cur := get(t, db)
	if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionProgressing); c == nil || c.Reason != "ChildForbidden" {
		t.Errorf("Progressing %+v still says what it said before", c)
	}
	if msg := waitEvent(t, db, "ChildForbidden"); !strings.Contains(msg, "exceeded quota: no-claims") {
		t.Errorf("event %q", msg)
	}

	if err := k8s.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.DeviceClaimName()}, &corev1.PersistentVolumeClaim{})
	passFormat(t, db)
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
}

// TestPreflightOnMissingNodeIsReported: a preflight pod the scheduler cannot place (its nodeName names no node)
// is reported with the node and the scheduler's message instead of "inspecting" forever; the Job has a
// deadline, and once it passed the Job runs again after the preflight retry.
func TestPreflightOnMissingNodeIsReported(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	node := "no-such-node-" + ns
	db := zonedDB(ns, "ghost", node, "nullb0")
	create(t, db)
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, job)
	if d := job.Spec.ActiveDeadlineSeconds; d == nil || *d != resources.PreflightDeadlineSeconds {
		t.Errorf("preflight Job activeDeadlineSeconds %v, want %d", d, resources.PreflightDeadlineSeconds)
	}

	// What the scheduler leaves on the Job's pod when no node matches its node affinity.
	const schedulerSays = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: job.Name + "-", Labels: job.Spec.Template.Labels},
		Spec:       job.Spec.Template.Spec,
	}
	create(t, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: schedulerSays, LastTransitionTime: metav1.Now(),
	}}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	cond := waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "PreflightUnschedulable")
	for _, w := range []string{node, schedulerSays} {
		if !strings.Contains(cond.Message, w) {
			t.Errorf("condition %q should name %q", cond.Message, w)
		}
	}
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "PreflightUnschedulable")
	if msg := waitEvent(t, db, "PreflightUnschedulable"); !strings.Contains(msg, node) || !strings.Contains(msg, schedulerSays) {
		t.Errorf("event %q", msg)
	}

	// The Job controller ends the Job at its deadline.
	now := metav1.Now()
	job.Status.StartTime = &now
	job.Status.Failed = 1
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded,
			Message: "Job was active longer than specified deadline", LastTransitionTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded,
			Message: "Job was active longer than specified deadline", LastTransitionTime: now},
	}
	if err := k8s.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
	cond = waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "PreflightFailed")
	if !strings.Contains(cond.Message, fmt.Sprintf("deadline of %d s", resources.PreflightDeadlineSeconds)) {
		t.Errorf("message %q should say the deadline passed", cond.Message)
	}
	// PreflightRetry later a new Job inspects again; the old Job's pod, still Pending, is not taken for its.
	eventually(t, "a new preflight Job", func() error {
		again := &batchv1.Job{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), again); err != nil {
			return err
		}
		if again.UID == job.UID {
			return fmt.Errorf("still the first Job")
		}
		return nil
	})
	waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionUnknown, "Inspecting")
}
