package controller

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// precondition runs fio on the volume of every conventional target, all at once; zoned targets need none.
func (r *BenchmarkReconciler) precondition(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	running := 0
	for _, ts := range active(b) {
		if ts.Preconditioned {
			continue
		}
		db, err := r.targetDB(ctx, b, ts)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			continue
		}
		if db.Spec.Storage.Volume == nil {
			ts.Preconditioned = true
			continue
		}
		sum, done, err := r.runJob(ctx, b, resources.BenchPhasePrecondition, 0, db, time.Time{})
		if err != nil {
			return ctrl.Result{}, err
		}
		if !done {
			running++
			continue
		}
		if !sum.OK {
			r.failTarget(b, ts, event.PreconditionFailed, sum.Reason, "precondition failed: "+sum.Error)
			continue
		}
		drive, pending, err := r.driveOutcome(ctx, b, resources.BenchPhasePrecondition, 0, db, 0)
		if err != nil {
			return ctrl.Result{}, err
		}
		if pending {
			running++
			continue
		}
		ts.Preconditioned, ts.PreconditionWrittenBytes, ts.PreconditionDrive = true, sum.DeviceWrittenBytes, drive
	}
	if res, failed, err := r.failedBeforeRun(ctx, b, "preconditioning"); failed || err != nil {
		return res, err
	}
	if running > 0 {
		b.Status.Progress = fmt.Sprintf("precondition: %d target(s) left", running)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	r.setPhase(b, v1alpha1.BenchmarkPreparing, "prepare")
	return requeue, nil
}

// prepare walks each target through: bulkload profile, prepare Job, workload profile, verify Job. Targets move
// independently; the phase ends when every active target is Verified.
func (r *BenchmarkReconciler) prepare(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	doPrepare := b.Spec.Prepare == nil || *b.Spec.Prepare
	for _, ts := range active(b) {
		db, err := r.targetDB(ctx, b, ts)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			continue
		}
		if ts.State == v1alpha1.TargetVerified { // it waits for the others, held in the workload profile
			if _, err := r.keepsProfile(ctx, b, ts, db); err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		if err := r.prepareTarget(ctx, b, ts, db, doPrepare); err != nil {
			return ctrl.Result{}, err
		}
	}
	if res, failed, err := r.failedBeforeRun(ctx, b, "preparing"); failed || err != nil {
		return res, err
	}
	remaining := 0
	verifying := true
	for _, ts := range active(b) {
		if ts.State != v1alpha1.TargetVerified {
			remaining++
		}
		if ts.State == v1alpha1.TargetPending {
			verifying = false
		}
	}
	if remaining == 0 {
		if b.Spec.SteadyState != nil {
			r.setPhase(b, v1alpha1.BenchmarkSteadyState, "steady state")
			return requeue, nil
		}
		for _, ts := range active(b) {
			db, err := r.targetDB(ctx, b, ts)
			if err != nil {
				return ctrl.Result{}, err
			}
			if db != nil {
				markSteadyState(b, ts, db)
			}
		}
		b.Status.Iteration = 1
		r.setPhase(b, v1alpha1.BenchmarkRunning, runLabel(b, 1))
		return requeue, nil
	}
	if verifying {
		r.setPhase(b, v1alpha1.BenchmarkVerifying, fmt.Sprintf("verify: %d target(s) left", remaining))
	} else {
		b.Status.Progress = fmt.Sprintf("prepare: %d target(s) left", remaining)
	}
	return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
}

func (r *BenchmarkReconciler) prepareTarget(ctx context.Context, b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase, doPrepare bool) error {
	if ts.State == v1alpha1.TargetPending && !doPrepare {
		ts.State = v1alpha1.TargetPrepared
	}
	switch ts.State {
	case v1alpha1.TargetPending:
		// Decide from what exists, not only from status flags: a status update lost to a conflict must not
		// leave a database in bulkload with nobody owing the switch back.
		sum, done, exists, err := r.jobResult(ctx, b, resources.BenchPhasePrepare, 0, db)
		if err != nil {
			return err
		}
		if exists || db.LeaseProfile() == v1alpha1.ProfileBulkLoad {
			ts.ProfileSwitched = true
		}
		if done {
			if !sum.OK {
				r.failTarget(b, ts, event.PrepareFailed, sum.Reason, "prepare failed: "+sum.Error)
			} else {
				drive, pending, err := r.driveOutcome(ctx, b, resources.BenchPhasePrepare, 0, db, 0)
				if err != nil || pending {
					return err
				}
				ts.State, ts.PrepareDrive = v1alpha1.TargetPrepared, drive
			}
			return r.setProfileBack(ctx, b, ts, db)
		}
		if exists {
			return nil
		}
		if db.LeaseProfile() != v1alpha1.ProfileBulkLoad {
			if err := r.setLeaseProfile(ctx, b, db, v1alpha1.ProfileBulkLoad); err != nil {
				return err
			}
			ts.ProfileSwitched = true
			event.ProfileSwitched.Emit(b, r.Recorder, ts.Name, v1alpha1.ProfileBulkLoad, "to load the tables")
			return nil
		}
		if !benchplan.AvailableWith(db, v1alpha1.ProfileBulkLoad) {
			if benchplan.TimedOut(b, &b.Status, r.now()) {
				r.failTarget(b, ts, event.TargetUnavailable, failreason.TargetUnavailable, "not Available in the bulkload profile: "+benchplan.AvailableMessage(db))
				return r.setProfileBack(ctx, b, ts, db)
			}
			return nil
		}
		_, _, err = r.runJob(ctx, b, resources.BenchPhasePrepare, 0, db, time.Time{})
		return err
	case v1alpha1.TargetPrepared:
		if ts.ProfileSwitched || db.LeaseProfile() != v1alpha1.ProfileWorkload {
			ts.ProfileSwitched = true
			return r.setProfileBack(ctx, b, ts, db)
		}
		if !benchplan.AvailableWith(db, v1alpha1.ProfileWorkload) {
			if benchplan.TimedOut(b, &b.Status, r.now()) {
				r.failTarget(b, ts, event.TargetUnavailable, failreason.TargetUnavailable, "not Available in the workload profile after prepare: "+benchplan.AvailableMessage(db))
			}
			return nil
		}
		sum, done, err := r.runJob(ctx, b, resources.BenchPhaseVerify, 0, db, time.Time{})
		if err != nil || !done {
			return err
		}
		ts.Rows = sum.RowsFound
		recordPrepareSize(ts, sum)
		recordCapacity(b, ts, db, sum)
		// Admission bounds tables x tableSize to 10^10: the product cannot overflow.
		want := int64(b.Spec.Tables) * b.Spec.TableSize
		if !sum.OK || sum.RowsFound != want {
			msg := fmt.Sprintf("found %d rows, expected %d tables x %d rows = %d", sum.RowsFound, b.Spec.Tables, b.Spec.TableSize, want)
			if sum.Error != "" {
				msg += ": " + sum.Error
			}
			reason, e := sum.Reason, event.VerifyFailed
			if sum.OK || reason == "" || reason == failreason.RowCountMismatch {
				reason, e = failreason.RowCountMismatch, event.RowCountMismatch
			}
			r.failTarget(b, ts, e, reason, msg)
			return nil
		}
		ts.State = v1alpha1.TargetVerified
	}
	return nil
}

// setProfileBack sets a target's lease back to the workload profile; the switch is owed until it is done.
func (r *BenchmarkReconciler) setProfileBack(ctx context.Context, b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase) error {
	if !ts.ProfileSwitched {
		return nil
	}
	if err := r.setLeaseProfile(ctx, b, db, v1alpha1.ProfileWorkload); err != nil {
		return err
	}
	ts.ProfileSwitched = false
	event.ProfileSwitched.Emit(b, r.Recorder, ts.Name, v1alpha1.ProfileWorkload, "bulk load off, binary log on")
	return nil
}
