package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// One device, one database: a device is identified by its node and kernel name (package deviceid), however a
// database reaches it (zonedDevice, zonedClaim, device), and the database that has it keeps it.

// deviceIdentity resolves the device a database uses (HasBlockDevice): its node and kernel name, however it is
// reached.
// known is false while a zonedClaim is not bound to a PersistentVolume yet (a WaitForFirstConsumer claim binds
// when the preflight's pod uses it); problem explains a claim whose volume does not say which device it is.
func (r *ZNSDatabaseReconciler) deviceIdentity(ctx context.Context, db *v1alpha1.ZNSDatabase) (id deviceid.ID, known bool, problem string, err error) {
	return deviceIdentityOf(ctx, r.Client, db)
}

// deviceIdentityOf is deviceIdentity for any reader: the ZonedDevice holder reconciler resolves databases the same
// way, so that the holder it shows is the database this rule lets keep the device.
func deviceIdentityOf(ctx context.Context, r client.Reader, db *v1alpha1.ZNSDatabase) (id deviceid.ID, known bool, problem string, err error) {
	switch s := db.Spec.Storage; {
	case db.DeviceNode() != "":
		return deviceid.ID{Node: db.DeviceNode(), Device: db.DeviceName()}, true, "", nil
	case s.ZonedClaim == nil:
		return deviceid.ID{}, false, "", nil
	}
	pvc := &corev1.PersistentVolumeClaim{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.DeviceClaimName()}, pvc); err != nil {
		return deviceid.ID{}, false, "", client.IgnoreNotFound(err)
	}
	if pvc.Spec.VolumeName == "" {
		return deviceid.ID{}, false, "", nil
	}
	pv := &corev1.PersistentVolume{}
	if err := r.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); apierrors.IsNotFound(err) {
		return deviceid.ID{}, false, fmt.Sprintf("PersistentVolumeClaim %q names PersistentVolume %q, which does not exist", pvc.Name, pvc.Spec.VolumeName), nil
	} else if err != nil {
		return deviceid.ID{}, false, "", err
	}
	id, perr := deviceid.FromPV(pv, db.Spec.Storage.ZonedClaim.DeviceName)
	if perr != nil {
		return deviceid.ID{}, false, perr.Error(), nil
	}
	return id, true, "", nil
}

// mayHoldDevice: the database has a block device of its own and still holds it (not deleted, or deleted and not
// yet released by its finalizer).
func mayHoldDevice(db *v1alpha1.ZNSDatabase) bool {
	return db.HasBlockDevice() && (db.DeletionTimestamp.IsZero() || controllerutil.ContainsFinalizer(db, Finalizer))
}

// olderThan orders databases by creation, then by namespace/name, so that exactly one of two claimants of a
// device wins, whichever the operator sees first.
func olderThan(a, b *v1alpha1.ZNSDatabase) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

// precedes says which of two claimants of one device keeps it: the one whose device already passed its
// preflight (it may be in use: a zonedClaim's identity is known only once its claim is bound, which can be
// after another database took the device), else the one the device's ZonedDevice was given to (claim, its
// spec.claimRef as namespace/name: set once, atomically, when requirements chose it, so it settles a race with a
// database that names the device and was created in the same moment), else the older.
func precedes(a, b *v1alpha1.ZNSDatabase, claim string) bool {
	if ar, br := conditionTrue(a, v1alpha1.ConditionDeviceReady), conditionTrue(b, v1alpha1.ConditionDeviceReady); ar != br {
		return ar
	}
	if ac, bc := a.OwnerAnnotationValue() == claim, b.OwnerAnnotationValue() == claim; ac != bc {
		return ac
	}
	return olderThan(a, b)
}

// claimOn is the claimRef (namespace/name) of the ZonedDevice of any of ids, "" when none has one (or the
// inventory does not publish the device).
func claimOn(ctx context.Context, r client.Reader, ids []deviceid.ID) (string, error) {
	devs := &v1alpha1.ZonedDeviceList{}
	if err := r.List(ctx, devs); err != nil {
		return "", err
	}
	for i := range devs.Items {
		if dev := &devs.Items[i]; dev.Spec.ClaimRef != nil && namesDevice(ids, dev) {
			return dev.Spec.ClaimRef.String(), nil
		}
	}
	return "", nil
}

// reconcileDeviceConflict refuses a device that another ZNSDatabase already has, before anything that could
// touch it exists. The device is compared by node and kernel name, so a zonedDevice, a zonedClaim whose volume
// is the same device and a (conventional) device naming it collide. A claim that is not bound yet passes here (its preflight only reads it,
// through the claim mounted read-only); the preflight checks again, with the device known, before it declares
// the device ready, so DeviceReady=True means this database has the device.
func (r *ZNSDatabaseReconciler) reconcileDeviceConflict(ctx context.Context, st *state) (*ctrl.Result, error) {
	return r.checkDevice(ctx, st, false)
}

func (r *ZNSDatabaseReconciler) checkDevice(ctx context.Context, st *state, mustKnow bool) (*ctrl.Result, error) {
	db := st.db
	switch {
	case db.IsZoned():
		db.Status.Storage = "zoned"
	case db.HasBlockDevice():
		db.Status.Storage = "device"
	default:
		db.Status.Storage = "volume"
		return nil, nil
	}
	id, known, problem, err := r.deviceIdentity(ctx, db)
	if err != nil {
		return nil, err
	}
	if problem != "" {
		return r.invalidClaim(db, problem), nil
	}
	if !known {
		if !mustKnow {
			return nil, nil
		}
		msg := fmt.Sprintf("PersistentVolumeClaim %q is not bound to a PersistentVolume yet: until it is, the operator cannot tell which device it is and creates nothing that writes to it", db.DeviceClaimName())
		if !isBlockedBy(db, v1alpha1.ReasonClaimUnbound) {
			event.ClaimUnbound.Emit(db, r.Recorder, msg)
		}
		setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonClaimUnbound, msg)
		blocked(db, v1alpha1.ReasonClaimUnbound, msg)
		return &ctrl.Result{RequeueAfter: r.BlockedRetry}, nil
	}
	all := &v1alpha1.ZNSDatabaseList{}
	if err := r.List(ctx, all); err != nil {
		return nil, err
	}
	claim, err := claimOn(ctx, r.Client, devicesOf(db, id))
	if err != nil {
		return nil, err
	}
	var holders []string
	for i := range all.Items {
		other := &all.Items[i]
		if other.UID == db.UID || !mayHoldDevice(other) {
			continue
		}
		otherID, otherKnown, _, err := r.deviceIdentity(ctx, other)
		if err != nil {
			return nil, err
		}
		if !otherKnown || !sharesDevice(devicesOf(db, id), devicesOf(other, otherID)) || !precedes(other, db, claim) {
			continue
		}
		holders = append(holders, other.Namespace+"/"+other.Name)
	}
	var measuring []string
	for _, mine := range devicesOf(db, id) {
		pvOwner, fio, err := r.devicePVHolder(ctx, mine)
		if err != nil {
			return nil, err
		}
		switch {
		case fio != "":
			// a fio Benchmark measures the device (this database's own, as a database target, or a device
			// target's volume): nothing that could touch the device is made until it ends
			measuring = append(measuring, fio)
		case pvOwner != "" && pvOwner != db.OwnerAnnotationValue() && !slices.Contains(holders, pvOwner):
			holders = append(holders, pvOwner+" (its PersistentVolume is still being released)")
		}
	}
	if len(holders) == 0 && len(measuring) == 0 {
		return nil, nil
	}
	sort.Strings(holders)
	msg := fmt.Sprintf("%s (%s) is already claimed by ZNSDatabase %s; a device serves one database: give this one another device",
		describeDevice(db), id, strings.Join(holders, ", "))
	if len(holders) == 0 {
		msg = fmt.Sprintf("%s (%s) is being measured by fio Benchmark %s: this database waits until it ends, and nothing that could touch the device is created meanwhile",
			describeDevice(db), id, strings.Join(measuring, ", "))
	}
	if !isBlockedBy(db, v1alpha1.ReasonDeviceConflict) {
		event.DeviceConflict.Emit(db, r.Recorder, msg)
	}
	setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonDeviceConflict, msg)
	blocked(db, v1alpha1.ReasonDeviceConflict, msg)
	return &ctrl.Result{RequeueAfter: r.BlockedRetry}, nil
}

// devicesOf is every device a database holds: its own (id), and zoned XFS's metadata device on the same node.
func devicesOf(db *v1alpha1.ZNSDatabase, id deviceid.ID) []deviceid.ID {
	if meta := db.MetadataDeviceName(); meta != "" {
		return []deviceid.ID{id, {Node: id.Node, Device: meta}}
	}
	return []deviceid.ID{id}
}

func sharesDevice(a, b []deviceid.ID) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

func describeDevice(db *v1alpha1.ZNSDatabase) string {
	if node := db.DeviceNode(); node != "" {
		if meta := db.MetadataDevicePath(); meta != "" {
			return fmt.Sprintf("device %s (metadata on %s) on node %s", db.DevicePath(), meta, node)
		}
		return fmt.Sprintf("device %s on node %s", db.DevicePath(), node)
	}
	return fmt.Sprintf("claim %s/%s", db.Namespace, db.DeviceClaimName())
}

// devicePVOwner is the database named on the operator's own PersistentVolume for a device, if there is one.
func (r *ZNSDatabaseReconciler) devicePVOwner(ctx context.Context, id deviceid.ID) (string, error) {
	return r.pvOwner(ctx, v1alpha1.DevicePVName(id.Node, id.Device))
}

// devicePVHolder is who holds the operator's PersistentVolume of a device: the database it names as owner, and
// the fio Benchmark measuring the device (resources.AnnotationFioBenchmark); "" for none or no volume.
func (r *ZNSDatabaseReconciler) devicePVHolder(ctx context.Context, id deviceid.ID) (owner, fio string, err error) {
	pv := &corev1.PersistentVolume{}
	err = r.Get(ctx, client.ObjectKey{Name: v1alpha1.DevicePVName(id.Node, id.Device)}, pv)
	if apierrors.IsNotFound(err) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	return pv.Annotations[v1alpha1.AnnotationOwner], pv.Annotations[resources.AnnotationFioBenchmark], nil
}

// pvOwner is the database named on one of the operator's PersistentVolumes, "" when it does not exist.
func (r *ZNSDatabaseReconciler) pvOwner(ctx context.Context, name string) (string, error) {
	pv := &corev1.PersistentVolume{}
	err := r.Get(ctx, client.ObjectKey{Name: name}, pv)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return pv.Annotations[v1alpha1.AnnotationOwner], nil
}

func (r *ZNSDatabaseReconciler) invalidClaim(db *v1alpha1.ZNSDatabase, msg string) *ctrl.Result {
	if !isBlockedBy(db, v1alpha1.ReasonInvalidClaim) {
		event.ClaimInvalid.Emit(db, r.Recorder, msg)
	}
	setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidClaim, msg)
	blocked(db, v1alpha1.ReasonInvalidClaim, msg)
	return &ctrl.Result{RequeueAfter: r.BlockedRetry}
}
