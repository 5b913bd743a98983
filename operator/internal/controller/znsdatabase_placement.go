package controller

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/placement"
)

// Placement by requirements: package placement chooses among the inventory's devices; this step gathers what it
// needs, and makes the claim. The claim is the ZonedDevice's spec.claimRef, patched with the object's
// resourceVersion as a precondition: of two databases that chose the same device from their caches, the API
// server lets exactly one write it, and the other chooses again.

// +kubebuilder:rbac:groups=zns-mysql.dev,resources=zoneddevices,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// reconcileDeviceBinding gives a database with storage.zonedDevice.requirements its device before any step
// needs to know which it is (the configuration names it, the preflight reads it).
func (r *ZNSDatabaseReconciler) reconcileDeviceBinding(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	if !db.PlacedByRequirements() {
		return nil, nil
	}
	devs := &v1alpha1.ZonedDeviceList{}
	if err := r.List(ctx, devs); err != nil {
		return nil, err
	}
	if db.Status.DeviceBinding != nil {
		return nil, r.keepClaim(ctx, db, devs.Items)
	}
	for i := range devs.Items {
		if ref := devs.Items[i].Spec.ClaimRef; ref != nil && ref.UID == db.UID {
			// The claim was made but the status that records it was not written (a conflict, a restart).
			r.recordBinding(db, &devs.Items[i], "recorded again from its claimRef")
			return nil, nil
		}
	}
	offers, err := r.offers(ctx, db, devs.Items)
	if err != nil {
		return nil, err
	}
	src := db.Spec.Storage.ZonedDevice
	decision, err := placement.Choose(*src.Requirements, placement.Claimant{Namespace: db.Namespace, Name: db.Name, Filesystem: db.ZonedFilesystem()}, offers)
	if err != nil {
		return r.noDeviceFits(db, err.Error()), nil
	}
	if decision.Chosen == nil {
		return r.noDeviceFits(db, decision.Explain(db.ZonedFilesystem())), nil
	}
	dev := decision.Chosen.DeepCopy()
	if won, err := ClaimDevice(ctx, r.Client, dev, db); err != nil {
		return nil, err
	} else if !won {
		log.FromContext(ctx).Info("the device changed while it was being claimed; choosing again", "zonedDevice", dev.Name)
		return &requeue, nil
	}
	r.recordBinding(db, dev, fmt.Sprintf("chosen among %d devices of the inventory", decision.Offered))
	return nil, nil
}

// ClaimDevice sets dev's claimRef to db, on the condition that the object is still the version read (dev's
// resourceVersion). won is false when it changed meanwhile (another database claimed it, its agent wrote it) or
// is gone: the caller must read and choose again. On success dev is the claimed object.
func ClaimDevice(ctx context.Context, c client.Client, dev *v1alpha1.ZonedDevice, db *v1alpha1.ZNSDatabase) (won bool, err error) {
	patch := client.MergeFromWithOptions(dev.DeepCopy(), client.MergeFromWithOptimisticLock{})
	dev.Spec.ClaimRef = &v1alpha1.ZonedDeviceClaimRef{Namespace: db.Namespace, Name: db.Name, UID: db.UID}
	err = c.Patch(ctx, dev, patch)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func (r *ZNSDatabaseReconciler) recordBinding(db *v1alpha1.ZNSDatabase, dev *v1alpha1.ZonedDevice, how string) {
	st := &dev.Status
	node := st.Hostname
	if node == "" {
		node = st.NodeName
	}
	db.Status.DeviceBinding = &v1alpha1.DeviceBinding{
		ZonedDevice: dev.Name, NodeName: node, DeviceName: st.KernelName, StableID: st.StableID, BoundAt: metav1.Now(),
	}
	id := ""
	if st.StableID != "" {
		id = ", stable id " + st.StableID
	}
	event.DeviceBound.Emit(db, r.Recorder, fmt.Sprintf("ZonedDevice %s (/dev/%s on node %s: %d zones of %s, %s%s) for storage.zonedDevice.requirements, %s; its spec.claimRef names this database",
		dev.Name, st.KernelName, node, st.ZoneCount, st.ZoneSize, st.Size, id, how))
}

// keepClaim puts the claim back on the bound device when its object lost it (deleted by hand and published
// again by the agent), so that no other database's requirements take it.
func (r *ZNSDatabaseReconciler) keepClaim(ctx context.Context, db *v1alpha1.ZNSDatabase, devs []v1alpha1.ZonedDevice) error {
	i := slices.IndexFunc(devs, func(d v1alpha1.ZonedDevice) bool { return d.Name == db.Status.DeviceBinding.ZonedDevice })
	if i < 0 || devs[i].Spec.ClaimRef != nil {
		return nil
	}
	_, err := ClaimDevice(ctx, r.Client, devs[i].DeepCopy(), db)
	return err
}

// offers are the inventory's devices with their nodes' labels and who else has each. The other databases are
// read past the cache: one created a moment ago may already name a device that this one would otherwise choose.
func (r *ZNSDatabaseReconciler) offers(ctx context.Context, db *v1alpha1.ZNSDatabase, devs []v1alpha1.ZonedDevice) ([]placement.Offer, error) {
	reader := uncached(r.APIReader, r.Client)
	all := &v1alpha1.ZNSDatabaseList{}
	if err := reader.List(ctx, all); err != nil {
		return nil, err
	}
	var others []deviceNaming
	for i := range all.Items {
		other := &all.Items[i]
		if other.UID == db.UID || !mayHoldDevice(other) {
			continue
		}
		id, known, _, err := deviceIdentityOf(ctx, reader, other)
		if err != nil {
			return nil, err
		}
		if known {
			others = append(others, deviceNaming{other.Namespace + "/" + other.Name, devicesOf(other, id)})
		}
	}
	nodes := map[string]*corev1.Node{}
	offers := make([]placement.Offer, 0, len(devs))
	for i := range devs {
		dev := &devs[i]
		o := placement.Offer{Device: dev}
		if _, seen := nodes[dev.Status.NodeName]; !seen && dev.Status.NodeName != "" {
			node := &corev1.Node{}
			if err := r.Get(ctx, client.ObjectKey{Name: dev.Status.NodeName}, node); apierrors.IsNotFound(err) {
				node = nil
			} else if err != nil {
				return nil, err
			}
			nodes[dev.Status.NodeName] = node
		}
		if node := nodes[dev.Status.NodeName]; node != nil {
			o.NodeLabels = node.Labels
		} else {
			o.NodeMissing = true
		}
		if mayBeFree(dev, db) {
			taken, err := r.takenBy(ctx, db, dev, others)
			if err != nil {
				return nil, err
			}
			o.TakenBy = taken
		}
		offers = append(offers, o)
	}
	return offers, nil
}

// mayBeFree: the device is not passed over before who has it matters (placement judges Gone, conventional and
// claimed devices first), so asking who has it (a PersistentVolume read per device) is worth it.
func mayBeFree(dev *v1alpha1.ZonedDevice, db *v1alpha1.ZNSDatabase) bool {
	ref := dev.Spec.ClaimRef
	return dev.Status.State == v1alpha1.ZonedDevicePresent && dev.Status.Candidate == v1alpha1.CandidateZoned &&
		(ref == nil || ref.Namespace == db.Namespace && ref.Name == db.Name)
}

// deviceNaming is another database and the devices its storage names.
type deviceNaming struct {
	db  string
	ids []deviceid.ID
}

// takenBy says who else has the device: the holder the operator recorded, a database whose storage names it,
// or the owner of its PersistentVolume (a database, or a fio Benchmark measuring the device).
func (r *ZNSDatabaseReconciler) takenBy(ctx context.Context, db *v1alpha1.ZNSDatabase, dev *v1alpha1.ZonedDevice, others []deviceNaming) (string, error) {
	me := db.Namespace + "/" + db.Name
	if h := dev.Status.Holder; h != "" && h != me {
		return "held by ZNSDatabase " + h, nil
	}
	for _, o := range others {
		if namesDevice(o.ids, dev) {
			return "named by ZNSDatabase " + o.db, nil
		}
	}
	node := dev.Status.Hostname
	if node == "" {
		node = dev.Status.NodeName
	}
	owner, fio, err := r.devicePVHolder(ctx, deviceid.ID{Node: node, Device: dev.Status.KernelName})
	switch {
	case err != nil:
		return "", err
	case fio != "":
		return "measured by fio Benchmark " + fio, nil
	case owner != "" && owner != me:
		return "its PersistentVolume belongs to ZNSDatabase " + owner, nil
	}
	return "", nil
}

// noDeviceFits blocks the database until a device fits; the Event is emitted when it starts waiting and when the
// reasons change (a device appeared, another was taken), not at every retry.
func (r *ZNSDatabaseReconciler) noDeviceFits(db *v1alpha1.ZNSDatabase, why string) *ctrl.Result {
	msg := "no zoned device meets storage.zonedDevice.requirements: " + why + "; the operator chooses as soon as one does"
	if c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionDeviceReady); c == nil || c.Reason != v1alpha1.ReasonNoDeviceFits || c.Message != msg {
		event.NoDeviceFits.Emit(db, r.Recorder, msg)
	}
	setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonNoDeviceFits, msg)
	blocked(db, v1alpha1.ReasonNoDeviceFits, msg)
	return &ctrl.Result{RequeueAfter: r.BlockedRetry}
}

// databasesWaitingForDevices maps a ZonedDevice or Node change to the databases it may concern: those still
// waiting for a device, and the one bound to this device (whose claim may need putting back).
func (r *ZNSDatabaseReconciler) databasesWaitingForDevices(ctx context.Context, obj client.Object) []reconcile.Request {
	dbs := &v1alpha1.ZNSDatabaseList{}
	if err := r.List(ctx, dbs); err != nil {
		return nil
	}
	_, isDevice := obj.(*v1alpha1.ZonedDevice)
	var out []reconcile.Request
	for i := range dbs.Items {
		db := &dbs.Items[i]
		if !db.PlacedByRequirements() {
			continue
		}
		if b := db.Status.DeviceBinding; b == nil || isDevice && b.ZonedDevice == obj.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: db.Namespace, Name: db.Name}})
		}
	}
	return out
}
