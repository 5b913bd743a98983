package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// steadyState gathers what the SteadyState decision needs (benchplan.SteadyState) and carries it out.
func (r *BenchmarkReconciler) steadyState(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	obs := benchplan.PhaseObserved{Benchmark: b, Databases: map[string]*v1alpha1.ZNSDatabase{},
		Jobs: map[benchplan.JobKey]benchplan.Job{}, Now: r.now()}
	for _, ts := range active(b) {
		db, err := r.getDB(ctx, b, ts.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			continue
		}
		obs.Databases[ts.Name] = db
		if ts.SteadyState != nil && (ts.SteadyState.Reached || !ts.SteadyState.Required) {
			continue
		}
		// The rounds from the next one to record on, while they exist and finished: a status write lost to a
		// conflict may have left more than one to record.
		next := int32(1)
		if ts.SteadyState != nil {
			next = int32(len(ts.SteadyState.Rounds)) + 1
		}
		for round := next; round <= b.Spec.SteadyState.MaxRounds; round++ {
			sum, done, exists, err := r.jobResult(ctx, b, resources.BenchPhaseSteady, round, db)
			if err != nil {
				return ctrl.Result{}, err
			}
			obs.Jobs[benchplan.JobKey{Phase: resources.BenchPhaseSteady, Iteration: round, Target: ts.Name}] = benchplan.Job{Exists: exists, Done: done, Summary: sum}
			if !done {
				break
			}
		}
	}
	return r.carryOut(ctx, b, benchplan.SteadyState(obs))
}
