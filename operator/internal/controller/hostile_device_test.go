package controller_test

import (
	"errors"
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
)

// TestHostile02SameDeviceTwice: a zonedDevice and a zonedClaim whose local Block volume is the same kernel
// device on the same node are one device; the second claimant gets DeviceConflict and creates nothing, whatever
// the order and the namespaces.
func TestHostile02SameDeviceTwice(t *testing.T) {
	requireEnv(t)
	node := "h02-" + newNamespace(t) // a node of its own: devices of earlier runs stay claimed
	claimDB := func(ns, name, claim, dev string) *v1alpha1.ZNSDatabase {
		return &v1alpha1.ZNSDatabase{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{
				ZonedClaim: &v1alpha1.ZonedClaimSource{ClaimName: claim, DeviceName: dev}}},
		}
	}
	createsNothing := func(t *testing.T, db *v1alpha1.ZNSDatabase) {
		t.Helper()
		consistently(t, db.Name+" creates nothing that reaches the device", time.Second, func() error {
			return errors.Join(
				absent(client.ObjectKey{Namespace: db.Namespace, Name: db.PreflightJobName()}, &batchv1.Job{}),
				absent(client.ObjectKey{Namespace: db.Namespace, Name: db.StatefulSetName()}, &appsv1.StatefulSet{}))
		})
	}

	t.Run("zonedDevice first, then a zonedClaim on its device", func(t *testing.T) {
		ns1, ns2 := newNamespace(t), newNamespace(t)
		first := zonedDB(ns1, "by-device", node, "nullb5")
		create(t, first)
		waitCondition(t, first, v1alpha1.ConditionDeviceReady, metav1.ConditionUnknown, "Inspecting")
		pv := localBlockPV(ns2+"-nullb5", node, "/dev/nullb5")
		create(t, pv)
		create(t, blockClaim(ns2, "zoned", pv.Name))
		second := claimDB(ns2, "by-claim", "zoned", "nullb5")
		create(t, second)
		cond := waitCondition(t, second, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "DeviceConflict")
		if !strings.Contains(cond.Message, ns1+"/by-device") || !strings.Contains(cond.Message, "/dev/nullb5 on node "+node) {
			t.Errorf("conflict message %q should name the holder and the device", cond.Message)
		}
		if msg := waitEvent(t, second, "DeviceConflict"); !strings.Contains(msg, ns1+"/by-device") {
			t.Errorf("event %q", msg)
		}
		createsNothing(t, second)
		if c := meta.FindStatusCondition(get(t, first).Status.Conditions, v1alpha1.ConditionDeviceReady); c == nil || c.Reason == "DeviceConflict" {
			t.Errorf("the first claimant lost its device: %+v", c)
		}
	})

	t.Run("zonedClaim first, then a zonedDevice naming its device", func(t *testing.T) {
		ns1, ns2 := newNamespace(t), newNamespace(t)
		pv := localBlockPV(ns1+"-nullb6", node, "/dev/nullb6")
		create(t, pv)
		create(t, blockClaim(ns1, "zoned", pv.Name))
		first := claimDB(ns1, "by-claim", "zoned", "nullb6")
		create(t, first)
		waitCondition(t, first, v1alpha1.ConditionDeviceReady, metav1.ConditionUnknown, "Inspecting")
		time.Sleep(1100 * time.Millisecond) // creation timestamps have second resolution
		second := zonedDB(ns2, "by-device", node, "nullb6")
		create(t, second)
		cond := waitCondition(t, second, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "DeviceConflict")
		if !strings.Contains(cond.Message, ns1+"/by-claim") {
			t.Errorf("conflict message %q should name the holder", cond.Message)
		}
		createsNothing(t, second)
	})

	t.Run("a claim bound only after the preflight is checked before anything writes", func(t *testing.T) {
		ns1, ns2 := newNamespace(t), newNamespace(t)
		holder := zonedDB(ns1, "holder", node, "nullb7")
		create(t, holder)
		waitCondition(t, holder, v1alpha1.ConditionDeviceReady, metav1.ConditionUnknown, "Inspecting")
		// A WaitForFirstConsumer claim is bound when the preflight's pod uses it: until then, the device is unknown.
		create(t, blockClaim(ns2, "late", ""))
		late := claimDB(ns2, "late", "late", "nullb7")
		create(t, late)
		waitCondition(t, late, v1alpha1.ConditionDeviceReady, metav1.ConditionUnknown, "Inspecting")
		passPreflight(t, late, "nullb0")
		cond := waitCondition(t, late, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "ClaimUnbound")
		if !strings.Contains(cond.Message, `"late" is not bound`) {
			t.Errorf("message %q", cond.Message)
		}
		waitEvent(t, late, "ClaimUnbound")
		pv := localBlockPV(ns2+"-nullb7", node, "/dev/nullb7")
		create(t, pv)
		pvc := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns2, Name: "late"}, pvc); err != nil {
			t.Fatal(err)
		}
		pvc.Spec.VolumeName = pv.Name // what the volume binder does
		if err := k8s.Update(ctx, pvc); err != nil {
			t.Fatal(err)
		}
		waitCondition(t, late, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "DeviceConflict")
		consistently(t, "no StatefulSet on a device another database has", time.Second, func() error {
			return absent(client.ObjectKey{Namespace: ns2, Name: late.StatefulSetName()}, &appsv1.StatefulSet{})
		})
	})

	t.Run("a claim's volume at another kernel name than the database gives", func(t *testing.T) {
		ns := newNamespace(t)
		pv := localBlockPV(ns+"-nullb8", node, "/dev/nullb8")
		create(t, pv)
		create(t, blockClaim(ns, "zoned", pv.Name))
		db := claimDB(ns, "misnamed", "zoned", "nullb9")
		create(t, db)
		cond := waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "InvalidClaim")
		if !strings.Contains(cond.Message, "/dev/nullb8") || !strings.Contains(cond.Message, `"nullb9"`) {
			t.Errorf("message %q should name both the volume's device and the database's", cond.Message)
		}
		waitEvent(t, db, "InvalidClaim")
		createsNothing(t, db)
	})
}
