package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// run gathers what the Running decision needs (benchplan.Run) and carries it out.
func (r *BenchmarkReconciler) run(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	obs, err := r.observeRun(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.carryOut(ctx, b, benchplan.Run(obs))
}

// observeRun reads the databases of the active targets and, of each target whose run of this iteration is not
// recorded yet, its run Job: the live figures while it runs; once it finished well, the drive sidecar's outcome
// and the interval series.
func (r *BenchmarkReconciler) observeRun(ctx context.Context, b *v1alpha1.Benchmark) (benchplan.RunObserved, error) {
	it := b.Status.Iteration
	obs := benchplan.RunObserved{
		PhaseObserved: benchplan.PhaseObserved{Benchmark: b, Databases: map[string]*v1alpha1.ZNSDatabase{},
			Jobs: map[benchplan.JobKey]benchplan.Job{}, Now: r.now()},
		Live: map[string]*v1alpha1.LiveFigures{}, Series: map[string]benchresult.Series{}, SeriesMissing: map[string]string{},
	}
	for _, ts := range active(b) {
		db, err := r.getDB(ctx, b, ts.Name)
		if err != nil {
			return obs, err
		}
		if db == nil {
			continue
		}
		obs.Databases[ts.Name] = db
		if b.Status.StartAt == nil || benchplan.HasIteration(ts, it) {
			continue
		}
		sum, done, exists, err := r.jobResult(ctx, b, resources.BenchPhaseRun, it, db)
		if err != nil {
			return obs, err
		}
		job := benchplan.Job{Exists: exists, Done: done, Summary: sum}
		switch {
		case exists && !done:
			if live := r.readLive(ctx, b, ts, it); live != nil {
				obs.Live[ts.Name] = live
			}
		case done && sum.OK:
			job.Drive, job.DrivePending, job.DriveEvents, err = r.driveView(ctx, b, resources.BenchPhaseRun, it, db, sum.Transactions)
			if err != nil {
				return obs, err
			}
			if job.ClientNode, job.DatabaseNode, err = r.clientNodes(ctx, b, resources.BenchPhaseRun, it, db); err != nil {
				return obs, err
			}
			if !job.DrivePending {
				if err := r.readSeries(ctx, b, it, ts.Name, &obs); err != nil {
					return obs, err
				}
			}
		}
		obs.Jobs[benchplan.JobKey{Phase: resources.BenchPhaseRun, Iteration: it, Target: ts.Name}] = job
	}
	return obs, nil
}
