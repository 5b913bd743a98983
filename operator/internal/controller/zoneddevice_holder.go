package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
)

// HolderFieldManager owns a ZonedDevice's holder and conditions; the node agent owns the rest of its status, so
// neither apply takes the other's fields over.
const HolderFieldManager = "zns-mysql-operator-holder"

// +kubebuilder:rbac:groups=zns-mysql.dev,resources=zoneddevices,verbs=get;list;watch
// +kubebuilder:rbac:groups=zns-mysql.dev,resources=zoneddevices/status,verbs=get;update;patch

// ZonedDeviceHolderReconciler records on each ZonedDevice which ZNSDatabase holds it, and warns that database
// when its device disappears from its node.
type ZonedDeviceHolderReconciler struct {
	client.Client
	Recorder record.EventRecorder
	// warned remembers, per ZonedDevice, the disappearance already reported: the condition says so too, but a
	// reconcile may read the device from a cache that has not seen that condition yet.
	warned sync.Map
}

// Reconcile sets one ZonedDevice's holder and HeldDeviceGone condition.
func (r *ZonedDeviceHolderReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	dev := &v1alpha1.ZonedDevice{}
	if err := r.Get(ctx, req.NamespacedName, dev); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	holder, err := r.holderOf(ctx, dev)
	if err != nil {
		return ctrl.Result{}, err
	}
	gone := dev.Status.State == v1alpha1.ZonedDeviceGone
	var conditions []metav1.Condition
	wantHolder := ""
	if holder != nil {
		wantHolder = holder.Namespace + "/" + holder.Name
		// Starting from the current conditions keeps the transition time of one that did not change.
		conditions = append(conditions, dev.Status.Conditions...)
		c := metav1.Condition{Type: v1alpha1.ConditionHeldDeviceGone, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonPresent,
			Message: fmt.Sprintf("ZNSDatabase %s holds the device and node %s lists it", wantHolder, dev.Status.NodeName)}
		if gone {
			c.Status, c.Reason, c.Message = metav1.ConditionTrue, v1alpha1.ReasonGoneWhileHeld, goneMessage(dev, wantHolder)
		}
		meta.SetStatusCondition(&conditions, c)
		conditions = []metav1.Condition{*meta.FindStatusCondition(conditions, v1alpha1.ConditionHeldDeviceGone)}
	}
	if holder != nil && gone {
		r.warnOnce(dev, holder, wantHolder)
	} else {
		r.warned.Delete(dev.Name)
	}
	if dev.Status.Holder == wantHolder && sameConditions(dev.Status.Conditions, conditions) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.applyHolder(ctx, dev.Name, wantHolder, conditions)
}

// holderOf is the ZNSDatabase that keeps the device under the one-database-per-device rule (precedes), among
// those whose storage names this node and device, directly or through a claim's volume; nil for none.
func (r *ZonedDeviceHolderReconciler) holderOf(ctx context.Context, dev *v1alpha1.ZonedDevice) (*v1alpha1.ZNSDatabase, error) {
	all := &v1alpha1.ZNSDatabaseList{}
	if err := r.List(ctx, all); err != nil {
		return nil, err
	}
	var holder *v1alpha1.ZNSDatabase
	for i := range all.Items {
		db := &all.Items[i]
		if !mayHoldDevice(db) {
			continue
		}
		id, known, _, err := deviceIdentityOf(ctx, r.Client, db)
		if err != nil {
			return nil, err
		}
		if !known || !namesDevice(devicesOf(db, id), dev) {
			continue
		}
		if holder == nil || precedes(db, holder, dev.Spec.ClaimRef.String()) {
			holder = db
		}
	}
	return holder, nil
}

// namesDevice: a database names its node by the kubernetes.io/hostname label, the agent by the Node's name;
// they are usually the same, and either matches.
func namesDevice(ids []deviceid.ID, dev *v1alpha1.ZonedDevice) bool {
	for _, id := range ids {
		if id.Device == dev.Status.KernelName && (id.Node == dev.Status.NodeName || dev.Status.Hostname != "" && id.Node == dev.Status.Hostname) {
			return true
		}
	}
	return false
}

func goneMessage(dev *v1alpha1.ZonedDevice, holder string) string {
	last := "an unknown time"
	if dev.Status.LastSeenTime != nil {
		last = dev.Status.LastSeenTime.UTC().Format(time.RFC3339)
	}
	id := ""
	if dev.Status.StableID != "" {
		id = ", stable id " + dev.Status.StableID
	}
	return fmt.Sprintf("ZNSDatabase %s holds /dev/%s on node %s%s, which the node no longer lists (last seen %s): "+
		"the drive was pulled, renamed or not attached after a reboot; ZonedDevice %s records it",
		holder, dev.Status.KernelName, dev.Status.NodeName, id, last, dev.Name)
}

// warnOnce emits the Warning on the holder once per disappearance, however many reconciles see it.
func (r *ZonedDeviceHolderReconciler) warnOnce(dev *v1alpha1.ZonedDevice, holder *v1alpha1.ZNSDatabase, holderName string) {
	key := holderName
	if dev.Status.LastSeenTime != nil {
		key += "@" + dev.Status.LastSeenTime.UTC().Format(time.RFC3339)
	}
	if c := meta.FindStatusCondition(dev.Status.Conditions, v1alpha1.ConditionHeldDeviceGone); c != nil && c.Status == metav1.ConditionTrue {
		r.warned.Store(dev.Name, key)
		return
	}
	if prev, ok := r.warned.Load(dev.Name); ok && prev == key {
		return
	}
	r.warned.Store(dev.Name, key)
	event.HeldDeviceGone.Emit(holder, r.Recorder, goneMessage(dev, holderName))
}

func sameConditions(have, want []metav1.Condition) bool {
	if len(have) != len(want) {
		return false
	}
	for _, w := range want {
		h := meta.FindStatusCondition(have, w.Type)
		if h == nil || h.Status != w.Status || h.Reason != w.Reason || h.Message != w.Message {
			return false
		}
	}
	return true
}

// applyHolder applies the holder and conditions alone: an empty holder or no conditions drop what this manager
// set before.
func (r *ZonedDeviceHolderReconciler) applyHolder(ctx context.Context, name, holder string, conditions []metav1.Condition) error {
	status := map[string]any{}
	if holder != "" {
		status["holder"] = holder
	}
	if len(conditions) > 0 {
		list := make([]any, 0, len(conditions))
		for i := range conditions {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conditions[i])
			if err != nil {
				return err
			}
			list = append(list, m)
		}
		status["conditions"] = list
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("ZonedDevice")
	u.SetName(name)
	return r.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(HolderFieldManager), client.ForceOwnership)
}

// SetupZonedDeviceHolder registers the reconciler; main and the envtest suite share it.
func SetupZonedDeviceHolder(mgr ctrl.Manager) error {
	r := &ZonedDeviceHolderReconciler{
		Client: mgr.GetClient(),
		//lint:ignore SA1019 core/v1 Events are what kubectl describe shows; the events.k8s.io recorder's are not
		Recorder: mgr.GetEventRecorderFor("zns-mysql-operator"),
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.ZonedDevice{}).
		Watches(&v1alpha1.ZNSDatabase{}, handler.EnqueueRequestsFromMapFunc(r.devicesOfDatabase)).
		Named("zoneddevice-holder").
		Complete(r)
}

// devicesOfDatabase maps a database to the ZonedDevices it names or is recorded as holding, so that a database
// that appears, binds its claim or goes away changes the holder at once.
func (r *ZonedDeviceHolderReconciler) devicesOfDatabase(ctx context.Context, obj client.Object) []reconcile.Request {
	db, ok := obj.(*v1alpha1.ZNSDatabase)
	if !ok || !db.HasBlockDevice() {
		return nil
	}
	devs := &v1alpha1.ZonedDeviceList{}
	if err := r.List(ctx, devs); err != nil {
		return nil
	}
	var ids []deviceid.ID
	if id, known, _, err := deviceIdentityOf(ctx, r.Client, db); err == nil && known {
		ids = devicesOf(db, id)
	}
	var out []reconcile.Request
	for i := range devs.Items {
		dev := &devs.Items[i]
		if dev.Status.Holder == db.Namespace+"/"+db.Name || namesDevice(ids, dev) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: dev.Name}})
		}
	}
	return out
}
