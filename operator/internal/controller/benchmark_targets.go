package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
)

// getDB reads a target's ZNSDatabase; nil when it does not exist.
func (r *BenchmarkReconciler) getDB(ctx context.Context, b *v1alpha1.Benchmark, name string) (*v1alpha1.ZNSDatabase, error) {
	db := &v1alpha1.ZNSDatabase{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, db)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return db, err
}

// targetDB reads the database of a target that is under way; one deleted meanwhile fails its target.
func (r *BenchmarkReconciler) targetDB(ctx context.Context, b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus) (*v1alpha1.ZNSDatabase, error) {
	db, err := r.getDB(ctx, b, ts.Name)
	if err == nil && db == nil {
		r.failTarget(b, ts, event.TargetNotFound, fmt.Sprintf("ZNSDatabase %q was deleted during the benchmark", ts.Name))
	}
	return db, err
}

// availableWith reports whether db is Available with its current spec and the given profile: its Available
// condition was set for the database's current generation.
func availableWith(db *v1alpha1.ZNSDatabase, profile v1alpha1.Profile) bool {
	c := meta.FindStatusCondition(db.Status.Conditions, ConditionAvailable)
	return db.Spec.Profile == profile && c != nil && c.Status == metav1.ConditionTrue &&
		c.ObservedGeneration == db.Generation && db.Status.ObservedGeneration == db.Generation
}

func (r *BenchmarkReconciler) timedOut(b *v1alpha1.Benchmark) bool {
	return b.Status.PhaseSince != nil &&
		r.now().Sub(b.Status.PhaseSince.Time) > time.Duration(b.Spec.TargetTimeoutSeconds)*time.Second
}

// waitForTargets waits until every target exists and is Available in the workload profile.
func (r *BenchmarkReconciler) waitForTargets(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	waiting := 0
	for _, ts := range active(b) {
		db, err := r.getDB(ctx, b, ts.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			r.failTarget(b, ts, event.TargetNotFound, fmt.Sprintf("ZNSDatabase %q not found in namespace %q", ts.Name, b.Namespace))
			continue
		}
		ts.Engine, ts.Storage = string(db.Spec.Engine), db.Status.Storage
		if availableWith(db, v1alpha1.ProfileWorkload) {
			continue
		}
		if r.timedOut(b) {
			r.failTarget(b, ts, event.TargetUnavailable, fmt.Sprintf("not Available in the workload profile after %ds: %s",
				b.Spec.TargetTimeoutSeconds, availableMessage(db)))
			continue
		}
		waiting++
	}
	if len(active(b)) == 0 {
		return r.finish(ctx, b, "no target is usable")
	}
	if waiting > 0 {
		b.Status.Progress = fmt.Sprintf("waiting for %d target(s)", waiting)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if b.Spec.Precondition != nil {
		r.setPhase(b, v1alpha1.BenchmarkPreconditioning, "precondition")
	} else {
		r.setPhase(b, v1alpha1.BenchmarkPreparing, "prepare")
	}
	return ctrl.Result{Requeue: true}, nil
}

func availableMessage(db *v1alpha1.ZNSDatabase) string {
	if c := meta.FindStatusCondition(db.Status.Conditions, ConditionAvailable); c != nil {
		return fmt.Sprintf("%s (%s)", c.Reason, c.Message)
	}
	return "no Available condition yet"
}
