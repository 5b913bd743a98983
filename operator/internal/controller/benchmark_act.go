package controller

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
)

// The Benchmark reconciler gathers what a phase's decision needs, has benchplan decide, and carries the
// decision out here.

// carryOut applies a decision: its status, then its actions, then its Events. An action that fails leaves the
// status as it was, and the next reconcile decides again from what then exists; nothing it said is announced.
func (r *BenchmarkReconciler) carryOut(ctx context.Context, b *v1alpha1.Benchmark, plan benchplan.Plan) (ctrl.Result, error) {
	before := b.Status.DeepCopy()
	b.Status = plan.Status
	for _, a := range plan.Actions {
		if err := r.act(ctx, b, a); err != nil {
			b.Status = *before
			return ctrl.Result{}, err
		}
	}
	for _, e := range plan.Events {
		e.Event.Emit(b, r.Recorder, e.Args...)
	}
	switch {
	case plan.Requeue:
		return requeue, nil
	case plan.RequeueAfter > 0:
		return ctrl.Result{RequeueAfter: plan.RequeueAfter}, nil
	}
	return ctrl.Result{}, nil
}

// act carries out one action of a decision.
func (r *BenchmarkReconciler) act(ctx context.Context, b *v1alpha1.Benchmark, a benchplan.Action) error {
	switch a.Kind {
	case benchplan.ReleaseAll:
		return r.releaseAll(ctx, b)
	case benchplan.Settle:
		return r.settle(ctx, b)
	case benchplan.StopJobs:
		return r.stopJobs(ctx, b, a.Target)
	case benchplan.KeepSeries:
		return r.writeSeries(ctx, b, a)
	case benchplan.GiveStart:
		return r.giveStart(ctx, b, a)
	case benchplan.SetLeaseProfile, benchplan.CreateJob:
		db, err := r.getDB(ctx, b, a.Target)
		if err != nil || db == nil { // gone since it was read: the next decision fails the target
			return err
		}
		if a.Kind == benchplan.SetLeaseProfile {
			return r.setLeaseProfile(ctx, b, db, a.Profile)
		}
		return r.createJob(ctx, b, a.Phase, a.Iteration, db)
	}
	return fmt.Errorf("internal error: action %s is not carried out here", a)
}
