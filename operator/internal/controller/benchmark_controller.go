package controller

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// BenchmarkFinalizer lets a deleted Benchmark hand its targets back in the workload profile: a database left in
// bulkload loses rows silently.
const BenchmarkFinalizer = "zns-mysql.dev/benchmark-finalizer"

// BenchmarkReconciler drives a Benchmark through the methodology with one Job per target and phase.
type BenchmarkReconciler struct {
	client.Client
	Recorder record.EventRecorder
	// APIReader reads around the cache where a stale read would do harm (who holds a database).
	APIReader client.Reader
	Logs      PodLogs
	// Image is the default bench image.
	Image string
	// Now is the clock (tests may move it).
	Now func() time.Time
}

// +kubebuilder:rbac:groups=zns-mysql.dev,resources=benchmarks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=zns-mysql.dev,resources=benchmarks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=zns-mysql.dev,resources=benchmarks/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get

// Reconcile advances one Benchmark by one step.
func (r *BenchmarkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &v1alpha1.Benchmark{}
	if err := r.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalizeBenchmark(ctx, b)
	}
	if !controllerutil.ContainsFinalizer(b, BenchmarkFinalizer) {
		patch := client.MergeFrom(b.DeepCopy())
		controllerutil.AddFinalizer(b, BenchmarkFinalizer)
		return ctrl.Result{}, r.Patch(ctx, b, patch)
	}
	before := b.Status.DeepCopy()
	result, err := r.step(ctx, b)
	b.Status.ObservedGeneration = b.Generation
	r.timing(b)
	if !equalStatus(before, &b.Status) {
		if uerr := r.Status().Update(ctx, b); uerr != nil {
			if apierrors.IsConflict(uerr) {
				return requeue, nil
			}
			return ctrl.Result{}, uerr
		}
	}
	return result, err
}

func equalStatus(a, b *v1alpha1.BenchmarkStatus) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// step runs the handler of the current phase.
func (r *BenchmarkReconciler) step(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	if b.Spec.Tool == v1alpha1.ToolFio {
		// Its targets are devices: the database state machine below would look for ZNSDatabases named like
		// them, and could hold and load one.
		return r.fioStep(ctx, b)
	}
	switch b.Status.Phase {
	case "", v1alpha1.BenchmarkPending:
		r.start(b)
		return requeue, nil
	case v1alpha1.BenchmarkWaitingForTargets:
		return r.waitForTargets(ctx, b)
	case v1alpha1.BenchmarkPreconditioning:
		return r.precondition(ctx, b)
	case v1alpha1.BenchmarkPreparing, v1alpha1.BenchmarkVerifying:
		return r.prepare(ctx, b)
	case v1alpha1.BenchmarkSteadyState:
		return r.steadyState(ctx, b)
	case v1alpha1.BenchmarkRunning:
		return r.run(ctx, b)
	default: // Completed, Failed: only make sure nothing runs, no database is left in bulkload or held.
		return ctrl.Result{}, r.settle(ctx, b)
	}
}

func (r *BenchmarkReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// start begins a new Benchmark (benchplan.Start).
func (r *BenchmarkReconciler) start(b *v1alpha1.Benchmark) {
	plan := benchplan.Start(b, r.now())
	b.Status = plan.Status
	for _, e := range plan.Events {
		e.Event.Emit(b, r.Recorder, e.Args...)
	}
}

// failTarget marks one target failed with a reason from the fixed set (anything else is Other). Before the
// runs that fails the Benchmark (failedBeforeRun); during a run the others finish the iteration.
func (r *BenchmarkReconciler) failTarget(b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, e event.Event, reason, msg string) {
	if ev, ok := benchplan.FailTarget(ts, e, reason, msg); ok {
		ev.Event.Emit(b, r.Recorder, ev.Args...)
	}
}

// settle leaves nothing behind a finished Benchmark: no Job still running, no database held (each back in
// its own profile). Each step is idempotent; a failed one is retried on the next reconcile.
func (r *BenchmarkReconciler) settle(ctx context.Context, b *v1alpha1.Benchmark) error {
	if b.Spec.Tool == v1alpha1.ToolFio {
		return r.fioSettle(ctx, b)
	}
	if err := r.stopJobs(ctx, b, ""); err != nil {
		return err
	}
	if err := r.noticeProfiles(ctx, b); err != nil {
		return err
	}
	return r.releaseAll(ctx, b)
}

// active are the targets that have not failed.
func active(b *v1alpha1.Benchmark) []*v1alpha1.TargetStatus { return benchplan.Active(&b.Status) }

// finalizeBenchmark stops its Jobs and releases its targets (each returns to its own profile) before the
// Benchmark goes (its finished Jobs and ConfigMaps go with it through owner references).
func (r *BenchmarkReconciler) finalizeBenchmark(ctx context.Context, b *v1alpha1.Benchmark) error {
	if !controllerutil.ContainsFinalizer(b, BenchmarkFinalizer) {
		return nil
	}
	if err := r.settle(ctx, b); err != nil {
		return err
	}
	patch := client.MergeFrom(b.DeepCopy())
	controllerutil.RemoveFinalizer(b, BenchmarkFinalizer)
	return r.Patch(ctx, b, patch)
}

// SetupWithManager registers the reconciler. A Benchmark is woken by its Jobs, by its runner pods and by the
// ZNSDatabases it targets.
func (r *BenchmarkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Benchmark{}).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.podToBenchmarks)).
		Watches(&v1alpha1.ZNSDatabase{}, handler.EnqueueRequestsFromMapFunc(r.databaseToBenchmarks)).
		Named("benchmark").
		Complete(r)
}

// podToBenchmarks wakes the Benchmark of a runner pod, and the fio Benchmarks whose database target's mysqld pod
// it is (one waits for that pod to go).
func (r *BenchmarkReconciler) podToBenchmarks(ctx context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByValue {
		return nil
	}
	if name := l[resources.LabelBenchmark]; name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
	}
	db := l[v1alpha1.LabelInstance]
	if db == "" {
		return nil
	}
	list := &v1alpha1.BenchmarkList{}
	if err := r.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, b := range list.Items {
		if b.IsFio() && slices.ContainsFunc(b.Spec.Targets, func(t v1alpha1.BenchmarkTarget) bool { return t.Database == db }) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)})
		}
	}
	return out
}

func (r *BenchmarkReconciler) databaseToBenchmarks(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &v1alpha1.BenchmarkList{}
	if err := r.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, b := range list.Items {
		for _, t := range b.Spec.Targets {
			if t.Name == obj.GetName() && t.Device == nil || t.Database == obj.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)})
				break
			}
		}
	}
	return out
}

// SetupBenchmark builds the Benchmark reconciler from the manager and registers it.
func SetupBenchmark(mgr ctrl.Manager, image string, logs PodLogs) error {
	if logs == nil {
		cs, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		logs = ClientsetPodLogs{Clientset: cs}
	}
	r := &BenchmarkReconciler{
		Client: mgr.GetClient(),
		//lint:ignore SA1019 core/v1 Events are what kubectl describe shows; the events.k8s.io recorder's are not
		Recorder:  mgr.GetEventRecorderFor("zns-mysql-operator"),
		APIReader: mgr.GetAPIReader(),
		Logs:      logs,
		Image:     image,
	}
	return r.SetupWithManager(mgr)
}
