// Package controller holds the reconcilers. They orchestrate: the objects come from package resources, the
// configuration from mycnf, the device verdicts from the database-side helper's reports.
package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	crevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/applymemo"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// FieldManager is the one server-side apply field manager of the operator.
const FieldManager = "zns-mysql-operator"

// Finalizer lets the operator release the device's PersistentVolume, which is cluster-scoped and so cannot be
// garbage-collected through an owner reference.
const Finalizer = "zns-mysql.dev/finalizer"

// requeue reconciles the object again through the workqueue's rate limiter, whose backoff RequeueAfter would
// reset: a step that must come back at once (status first, Jobs next) never turns into a hot loop.
//
//lint:ignore SA1019 Requeue keeps the rate limiter's backoff, which is the point
var requeue = ctrl.Result{Requeue: true}

// ZNSDatabaseReconciler reconciles a ZNSDatabase into a Secret, a my.cnf ConfigMap, a Service, the device's
// preflight Job, PersistentVolume and claim, and a StatefulSet of one mysqld.
type ZNSDatabaseReconciler struct {
	client.Client
	Recorder record.EventRecorder
	// Images are the default MySQL images per flavor and, for percona, series.
	Images map[resources.ImageKey]string
	// PreflightRetry is how long a refused or failed device preflight waits before it runs again, so that a
	// user who fixed the device (say, its scheduler) sees it accepted without touching the resource.
	PreflightRetry time.Duration
	// BlockedRetry is how long a database blocked on something outside the operator's watch (a missing
	// Secret) waits before looking again.
	BlockedRetry time.Duration
	// BenchImage is the image of the drive sidecar a device database's format Job may carry
	// (storage.device.precondition.driveCounters).
	BenchImage string
	// APIReader reads past the cache where a stale answer would do harm (whether a lease's Benchmark exists).
	APIReader client.Reader
	// ProbePeriod is the period of mysqld's readiness probe; 0 is resources.DefaultProbePeriodSeconds.
	ProbePeriod time.Duration

	applied applymemo.Memo
}

// +kubebuilder:rbac:groups=zns-mysql.dev,resources=znsdatabases,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=zns-mysql.dev,resources=znsdatabases/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=zns-mysql.dev,resources=znsdatabases/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch;create;update;patch;delete
// Pods: patch only so that the operator may grant a zoned database's pod the right to annotate itself (RBAC
// lets nobody grant what it does not hold); the operator itself never patches a pod.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings one ZNSDatabase one step closer to its spec.
func (r *ZNSDatabaseReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	db := &v1alpha1.ZNSDatabase{}
	if err := r.Get(ctx, req.NamespacedName, db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !db.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, db)
	}
	if !controllerutil.ContainsFinalizer(db, Finalizer) {
		patch := client.MergeFrom(db.DeepCopy())
		controllerutil.AddFinalizer(db, Finalizer)
		return ctrl.Result{}, r.Patch(ctx, db, patch)
	}

	before := db.Status.DeepCopy()
	st := &state{db: db}
	result, err := r.runSteps(ctx, st,
		r.reconcileSecret,
		r.reconcileProfile,
		r.reconcileDeviceBinding,
		r.reconcileConfigMap,
		r.reconcileService,
		r.reconcileDeviceConflict,
		r.reconcileDeviceClaim,
		r.reconcilePreflight,
		r.reconcileDeviceVolume,
		r.reconcileFormat,
		r.reconcileIdentity,
		r.reconcileStatefulSet,
		r.reconcileAvailability,
		r.cleanupConfigMaps,
	)
	conflict, uerr := r.updateStatus(ctx, db, before)
	if uerr != nil && err == nil {
		err = uerr
	}
	if conflict {
		// Someone changed the object meanwhile (a Benchmark switching the profile): reconcile it afresh.
		result = requeue
	}
	return result, err
}

// state carries what one step computed for the next ones within a reconcile.
type state struct {
	db            *v1alpha1.ZNSDatabase
	configMapName string
	image         string
	// profile is the profile of the configuration (status.profile); heldBy names the Benchmark whose lease set
	// it ("" when it is spec.profile).
	profile v1alpha1.Profile
	heldBy  string
}

// step is one child's reconcile. It returns a non-nil result when reconciling must stop here (blocked on
// something the user or the cluster has to do), with the requeue it needs.
type step func(ctx context.Context, st *state) (*ctrl.Result, error)

func (r *ZNSDatabaseReconciler) runSteps(ctx context.Context, st *state, steps ...step) (ctrl.Result, error) {
	for _, s := range steps {
		res, err := s(ctx, st)
		if apierrors.IsInvalid(err) {
			// Only the API server can tell (a pod template it refuses, say): retrying would only fill the log.
			return r.childRejected(st.db, err), nil
		}
		if apierrors.IsForbidden(err) {
			// Admission said no (a ResourceQuota, a policy, RBAC): the user or an administrator must act, on
			// objects the operator does not watch, so it looks again after BlockedRetry.
			return r.childForbidden(st.db, err), nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if res != nil {
			return *res, nil
		}
	}
	return ctrl.Result{}, nil
}

// childRejected stops at a child object the API server refused, with a condition and an Event that quote its
// reason; a change of the spec reconciles again.
func (r *ZNSDatabaseReconciler) childRejected(db *v1alpha1.ZNSDatabase, err error) ctrl.Result {
	msg := fmt.Sprintf("the API server refused an object the operator built from this spec: %v", err)
	if !isBlockedBy(db, v1alpha1.ReasonChildRejected) {
		event.ChildRejected.Emit(db, r.Recorder, msg)
	}
	blocked(db, v1alpha1.ReasonChildRejected, msg)
	return ctrl.Result{}
}

// childForbidden stops at a child object that admission refused with 403 Forbidden, with a condition and an
// Event that quote the refusal (it names a ResourceQuota and its numbers, or the policy); the Event is emitted
// again only when the refusal changes. The condition replaces whatever step was shown before (a preflight
// "inspecting" that already passed).
func (r *ZNSDatabaseReconciler) childForbidden(db *v1alpha1.ZNSDatabase, err error) ctrl.Result {
	msg := fmt.Sprintf("the API server forbade an object the operator creates for this database (a ResourceQuota, LimitRange or policy of the namespace, or the operator's RBAC): %v; the operator tries again every %s",
		err, r.BlockedRetry)
	if c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionAvailable); c == nil || c.Reason != v1alpha1.ReasonChildForbidden || c.Message != msg {
		event.ChildForbidden.Emit(db, r.Recorder, msg)
	}
	blocked(db, v1alpha1.ReasonChildForbidden, msg)
	return ctrl.Result{RequeueAfter: r.BlockedRetry}
}

// updateStatus writes the status when it changed; conflict reports that the object changed meanwhile.
func (r *ZNSDatabaseReconciler) updateStatus(ctx context.Context, db *v1alpha1.ZNSDatabase, before *v1alpha1.ZNSDatabaseStatus) (conflict bool, err error) {
	db.Status.ObservedGeneration = db.Generation
	if equality.Semantic.DeepEqual(before, &db.Status) {
		return false, nil
	}
	err = r.Status().Update(ctx, db)
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("status update conflicted; reconciling again")
		return true, nil
	}
	return false, err
}

// setCondition records a condition with the current generation.
func setCondition(db *v1alpha1.ZNSDatabase, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&db.Status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: db.Generation,
	})
}

// blocked marks the database unavailable for a reason the user can act on.
func blocked(db *v1alpha1.ZNSDatabase, reason, message string) {
	setCondition(db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, reason, message)
	setCondition(db, v1alpha1.ConditionProgressing, metav1.ConditionFalse, reason, message)
}

// apply server-side applies one of the database's children, unless the last apply of the same configuration
// produced the version the cache holds (applymemo): then nothing would change.
func (r *ZNSDatabaseReconciler) apply(ctx context.Context, obj applymemo.Config) error {
	key := applymemo.KeyOf(obj)
	digest, err := applymemo.DigestOf(obj)
	if err == nil && r.applied.Unchanged(key, digest, r.cachedVersion(ctx, key)) {
		return nil
	}
	if err := r.Apply(ctx, obj, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		r.applied.Forget(key)
		return err
	}
	r.applied.Record(key, digest, applymemo.ResourceVersion(obj))
	return nil
}

// cachedVersion is the resourceVersion of k in the informers' cache, "" when it is not there (or its kind is
// not one the scheme knows).
func (r *ZNSDatabaseReconciler) cachedVersion(ctx context.Context, k applymemo.Key) string {
	o, err := r.Scheme().New(schema.FromAPIVersionAndKind(k.APIVersion, k.Kind))
	if err != nil {
		return ""
	}
	obj, ok := o.(client.Object)
	if !ok || r.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, obj) != nil {
		return ""
	}
	return obj.GetResourceVersion()
}

// SetupWithManager registers the reconciler and the children it watches.
func (r *ZNSDatabaseReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.ZNSDatabase{}).
		Owns(&appsv1.StatefulSet{}).
		Owns(&batchv1.Job{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.PersistentVolumeClaim{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&rbacv1.Role{}).
		Owns(&rbacv1.RoleBinding{}).
		// Pods carry the init containers' reports; they are owned by the StatefulSet and the Job, not by us.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToDatabase)).
		// A fio Benchmark locks a database's device volume (resources.AnnotationFioBenchmark) and unlocks it: the
		// database says so, and resumes, at once rather than at its next unrelated event.
		Watches(&corev1.PersistentVolume{}, handler.EnqueueRequestsFromMapFunc(pvToDatabase)).
		// A device that appears, is freed or changes, and a node whose labels change, may be what a database
		// waiting for its requirements waits for.
		Watches(&v1alpha1.ZonedDevice{}, handler.EnqueueRequestsFromMapFunc(r.databasesWaitingForDevices)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.databasesWaitingForDevices),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// A Benchmark that goes without handing its databases back (its finalizer removed by hand) leaves a
		// lease that only this reconciler ends; its other changes are the Benchmark reconciler's business.
		Watches(&v1alpha1.Benchmark{}, handler.EnqueueRequestsFromMapFunc(benchmarkTargets),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc:  func(crevent.CreateEvent) bool { return false },
				UpdateFunc:  func(crevent.UpdateEvent) bool { return false },
				GenericFunc: func(crevent.GenericEvent) bool { return false },
			})).
		Named("znsdatabase").
		Complete(r)
}

func benchmarkTargets(_ context.Context, obj client.Object) []reconcile.Request {
	b, ok := obj.(*v1alpha1.Benchmark)
	if !ok {
		return nil
	}
	out := make([]reconcile.Request, 0, len(b.Spec.Targets))
	for _, t := range b.Spec.Targets {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: t.Name}})
	}
	return out
}

// pvToDatabase maps one of the operator's PersistentVolumes to the database it names as owner ("namespace/name";
// a fio Benchmark's own volumes name no database).
func pvToDatabase(_ context.Context, obj client.Object) []reconcile.Request {
	if obj.GetLabels()[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByValue {
		return nil
	}
	ns, name, ok := strings.Cut(obj.GetAnnotations()[v1alpha1.AnnotationOwner], "/")
	if !ok || ns == "" || name == "" || strings.Contains(ns, ":") {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

func podToDatabase(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByValue || l[v1alpha1.LabelInstance] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: l[v1alpha1.LabelInstance]}}}
}

// Options are the operator-wide settings of the reconcilers.
type Options struct {
	Images         map[resources.ImageKey]string
	BenchImage     string
	PreflightRetry time.Duration
	BlockedRetry   time.Duration
	// ProbePeriod is the period of mysqld's readiness probe (0: resources.DefaultProbePeriodSeconds).
	ProbePeriod time.Duration
}

// SetupZNSDatabase builds the ZNSDatabase reconciler from the manager and registers it; main and the envtest
// suite share it so that they run the same wiring.
func SetupZNSDatabase(mgr ctrl.Manager, opts Options) error {
	r := &ZNSDatabaseReconciler{
		Client: mgr.GetClient(),
		//lint:ignore SA1019 core/v1 Events are what kubectl describe shows; the events.k8s.io recorder's are not
		Recorder:       mgr.GetEventRecorderFor("zns-mysql-operator"),
		Images:         opts.Images,
		PreflightRetry: opts.PreflightRetry,
		BlockedRetry:   opts.BlockedRetry,
		BenchImage:     opts.BenchImage,
		ProbePeriod:    opts.ProbePeriod,
		APIReader:      mgr.GetAPIReader(),
	}
	knownOutcomes()
	return r.SetupWithManager(mgr)
}

// UncachedObjects are read straight from the API server instead of a cluster-wide informer: the operator
// reads a handful of Secrets by name and has no business holding every Secret of the cluster in memory.
func UncachedObjects() []client.Object {
	return []client.Object{&corev1.Secret{}}
}
