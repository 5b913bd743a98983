package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// precondition gathers what the Preconditioning decision needs (benchplan.Precondition), and carries it out:
// the precondition Job of every conventional target that is not preconditioned yet.
func (r *BenchmarkReconciler) precondition(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	obs, err := r.observeJobs(ctx, b, func(ts *v1alpha1.TargetStatus) []string {
		if ts.Preconditioned {
			return nil
		}
		return []string{resources.BenchPhasePrecondition}
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.carryOut(ctx, b, benchplan.Precondition(obs))
}

// prepare gathers what the Preparing and Verifying decision needs (benchplan.Prepare): the prepare Job of a
// target still to prepare, the verify Job of one prepared; and carries it out.
func (r *BenchmarkReconciler) prepare(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	obs, err := r.observeJobs(ctx, b, func(ts *v1alpha1.TargetStatus) []string {
		switch ts.State {
		case v1alpha1.TargetPending:
			return []string{resources.BenchPhasePrepare}
		case v1alpha1.TargetPrepared:
			return []string{resources.BenchPhaseVerify}
		}
		return nil
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.carryOut(ctx, b, benchplan.Prepare(obs))
}

// observeJobs reads the databases of the active targets and, of each, the Jobs (iteration 0) its current step
// needs, with the drive sidecar's outcome of those that finished well.
func (r *BenchmarkReconciler) observeJobs(ctx context.Context, b *v1alpha1.Benchmark, phases func(*v1alpha1.TargetStatus) []string) (benchplan.PhaseObserved, error) {
	obs := benchplan.PhaseObserved{Benchmark: b, Databases: map[string]*v1alpha1.ZNSDatabase{},
		Jobs: map[benchplan.JobKey]benchplan.Job{}, Now: r.now()}
	for _, ts := range active(b) {
		db, err := r.getDB(ctx, b, ts.Name)
		if err != nil {
			return obs, err
		}
		if db == nil {
			continue
		}
		obs.Databases[ts.Name] = db
		for _, phase := range phases(ts) {
			job, err := r.observeJob(ctx, b, phase, 0, db)
			if err != nil {
				return obs, err
			}
			obs.Jobs[benchplan.JobKey{Phase: phase, Target: ts.Name}] = job
		}
	}
	return obs, nil
}

// observeJob reads one runner Job without creating it, and the drive sidecar's outcome once it finished well.
func (r *BenchmarkReconciler) observeJob(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase) (benchplan.Job, error) {
	sum, done, exists, err := r.jobResult(ctx, b, phase, it, db)
	job := benchplan.Job{Exists: exists, Done: done, Summary: sum}
	if err != nil || !done || !sum.OK {
		return job, err
	}
	job.Drive, job.DrivePending, job.DriveEvents, err = r.driveView(ctx, b, phase, it, db, 0)
	return job, err
}
