package benchplan

import (
	"fmt"
	"strings"
	"time"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// StepRetry is how long a phase whose Jobs are under way sleeps before looking again when no change wakes it.
const StepRetry = 5 * time.Second

// Precondition decides the Preconditioning phase: fio runs on the volume of every conventional target, all at
// once; zoned targets need none. A failed precondition fails the Benchmark: it runs only with all its targets.
func Precondition(obs PhaseObserved) Plan {
	b := obs.Benchmark
	p := Plan{Status: *b.Status.DeepCopy()}
	st := &p.Status
	running := 0
	for _, ts := range Active(st) {
		if ts.Preconditioned {
			continue
		}
		db := p.targetDB(obs, ts)
		if db == nil {
			continue
		}
		if db.Spec.Storage.Volume == nil {
			ts.Preconditioned = true
			continue
		}
		job := obs.job(resources.BenchPhasePrecondition, 0, ts.Name)
		switch {
		case !job.Exists:
			p.act(Action{Kind: CreateJob, Target: ts.Name, Phase: resources.BenchPhasePrecondition})
			running++
		case !job.Done, job.Summary.OK && job.DrivePending:
			running++
		case !job.Summary.OK:
			p.failTarget(ts, event.PreconditionFailed, job.Summary.Reason, "precondition failed: "+job.Summary.Error)
		default:
			p.Events = append(p.Events, job.DriveEvents...)
			ts.Preconditioned, ts.PreconditionWrittenBytes, ts.PreconditionDrive = true, job.Summary.DeviceWrittenBytes, job.Drive
		}
	}
	if p.failedBeforeRun(b, obs.Now, "preconditioning") {
		return p
	}
	if running > 0 {
		st.Progress = fmt.Sprintf("precondition: %d target(s) left", running)
		p.RequeueAfter = StepRetry
		return p
	}
	SetPhase(st, v1alpha1.BenchmarkPreparing, "prepare", obs.Now)
	p.Requeue = true
	return p
}

// Prepare decides the Preparing and Verifying phases. Each target walks through: its lease in the bulkload
// profile, the prepare Job, its lease back in the workload profile, the verify Job (the row count); targets
// move independently, and the phase ends when every active target is Verified. The database's own spec is
// never written: the profile travels with the lease.
func Prepare(obs PhaseObserved) Plan {
	b := obs.Benchmark
	p := Plan{Status: *b.Status.DeepCopy()}
	st := &p.Status
	doPrepare := b.Spec.Prepare == nil || *b.Spec.Prepare
	for _, ts := range Active(st) {
		db := p.targetDB(obs, ts)
		if db == nil {
			continue
		}
		if ts.State == v1alpha1.TargetVerified { // it waits for the others, held in the workload profile
			p.keepsProfile(ts, db)
			continue
		}
		p.prepareTarget(obs, ts, db, doPrepare)
	}
	if p.failedBeforeRun(b, obs.Now, "preparing") {
		return p
	}
	remaining, verifying := 0, true
	for _, ts := range Active(st) {
		if ts.State != v1alpha1.TargetVerified {
			remaining++
		}
		if ts.State == v1alpha1.TargetPending {
			verifying = false
		}
	}
	switch {
	case remaining == 0 && b.Spec.SteadyState != nil:
		SetPhase(st, v1alpha1.BenchmarkSteadyState, "steady state", obs.Now)
		p.Requeue = true
	case remaining == 0:
		for _, ts := range Active(st) {
			if db := obs.Databases[ts.Name]; db != nil {
				MarkSteadyState(b, ts, db)
			}
		}
		st.Iteration = 1
		SetPhase(st, v1alpha1.BenchmarkRunning, RunLabel(b, 1), obs.Now)
		p.Requeue = true
	case verifying:
		SetPhase(st, v1alpha1.BenchmarkVerifying, fmt.Sprintf("verify: %d target(s) left", remaining), obs.Now)
		p.RequeueAfter = StepRetry
	default:
		st.Progress = fmt.Sprintf("prepare: %d target(s) left", remaining)
		p.RequeueAfter = StepRetry
	}
	return p
}

func (p *Plan) prepareTarget(obs PhaseObserved, ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase, doPrepare bool) {
	b := obs.Benchmark
	if ts.State == v1alpha1.TargetPending && !doPrepare {
		ts.State = v1alpha1.TargetPrepared
	}
	if !p.resolveYCSB(b, ts, db) {
		return
	}
	switch ts.State {
	case v1alpha1.TargetPending:
		// Decide from what exists, not only from status flags: a status update lost to a conflict must not
		// leave a database in bulkload with nobody owing the switch back.
		job := obs.job(resources.BenchPhasePrepare, 0, ts.Name)
		if job.Exists || db.LeaseProfile() == v1alpha1.ProfileBulkLoad {
			ts.ProfileSwitched = true
		}
		if job.Done {
			if !job.Summary.OK {
				p.failTarget(ts, event.PrepareFailed, job.Summary.Reason, "prepare failed: "+job.Summary.Error)
			} else {
				if job.DrivePending {
					return
				}
				p.Events = append(p.Events, job.DriveEvents...)
				if n := job.Summary.PrepareAttempts; n > 1 {
					p.emit(event.PrepareRetried, ts.Name, n)
				}
				ts.State, ts.PrepareDrive = v1alpha1.TargetPrepared, job.Drive
			}
			p.setProfileBack(ts)
			return
		}
		if job.Exists {
			return
		}
		if db.LeaseProfile() != v1alpha1.ProfileBulkLoad {
			p.act(Action{Kind: SetLeaseProfile, Target: ts.Name, Profile: v1alpha1.ProfileBulkLoad})
			ts.ProfileSwitched = true
			p.emit(event.ProfileSwitched, ts.Name, v1alpha1.ProfileBulkLoad, "to load the tables")
			return
		}
		if !AvailableWith(db, v1alpha1.ProfileBulkLoad) {
			if TimedOut(b, &p.Status, obs.Now) {
				p.failTarget(ts, event.TargetUnavailable, failreason.TargetUnavailable, "not Available in the bulkload profile: "+AvailableMessage(db))
				p.setProfileBack(ts)
			}
			return
		}
		p.act(Action{Kind: CreateJob, Target: ts.Name, Phase: resources.BenchPhasePrepare})
	case v1alpha1.TargetPrepared:
		if ts.ProfileSwitched || db.LeaseProfile() != v1alpha1.ProfileWorkload {
			ts.ProfileSwitched = true
			p.setProfileBack(ts)
			return
		}
		if !AvailableWith(db, v1alpha1.ProfileWorkload) {
			if TimedOut(b, &p.Status, obs.Now) {
				p.failTarget(ts, event.TargetUnavailable, failreason.TargetUnavailable, "not Available in the workload profile after prepare: "+AvailableMessage(db))
			}
			return
		}
		job := obs.job(resources.BenchPhaseVerify, 0, ts.Name)
		if !job.Exists {
			p.act(Action{Kind: CreateJob, Target: ts.Name, Phase: resources.BenchPhaseVerify})
			return
		}
		if !job.Done {
			return
		}
		sum := job.Summary
		ts.Rows = sum.RowsFound
		RecordPrepareSize(ts, sum)
		RecordCapacity(b, ts, db, sum)
		want, wantText := expectedRows(b, ts)
		if !sum.OK || sum.RowsFound != want {
			msg := fmt.Sprintf("found %d rows, expected %s", sum.RowsFound, wantText)
			if sum.Error != "" {
				msg += ": " + sum.Error
			}
			reason, e := sum.Reason, event.VerifyFailed
			if sum.OK || reason == "" || reason == failreason.RowCountMismatch {
				reason, e = failreason.RowCountMismatch, event.RowCountMismatch
			}
			p.failTarget(ts, e, reason, msg)
			return
		}
		ts.State = v1alpha1.TargetVerified
	}
}

// setProfileBack sets a target's lease back to the workload profile; the switch is owed until it is done.
func (p *Plan) setProfileBack(ts *v1alpha1.TargetStatus) {
	if !ts.ProfileSwitched {
		return
	}
	p.act(Action{Kind: SetLeaseProfile, Target: ts.Name, Profile: v1alpha1.ProfileWorkload})
	ts.ProfileSwitched = false
	p.emit(event.ProfileSwitched, ts.Name, v1alpha1.ProfileWorkload, "bulk load off, binary log on")
}

// keepsProfile tells whether a target past its prepare (from its row check to the end of its runs, write-only
// rounds included) still has its database held in the workload profile, which is what the runs measure. The
// user's spec.profile cannot move a held database; only an edit of the lease by hand can. A lease found naming
// another profile fails its target with ProfileChanged and its Jobs are stopped: figures taken with bulk load
// on and the binary log off, or across the restart the switch causes, are not the methodology's. The lease is
// left as found (ProfileSwitched) and ends with the Benchmark: setting it back at once would fight whoever
// changed it while the Benchmark still holds the database.
func (p *Plan) keepsProfile(ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase) bool {
	ok, msg := KeepsProfile(ts, db)
	if ok {
		return true
	}
	ts.ProfileSwitched = true
	p.failTarget(ts, event.ProfileChanged, failreason.ProfileChanged, msg)
	p.act(Action{Kind: StopJobs, Target: ts.Name})
	return false
}

// KeepsProfile is keepsProfile's judgement: whether the target's lease still names the workload profile, and
// if not, the message its failure carries.
func KeepsProfile(ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase) (bool, string) {
	if db.LeaseProfile() == v1alpha1.ProfileWorkload || ts.State == v1alpha1.TargetFailed {
		return true, ""
	}
	return false, fmt.Sprintf("the lease on ZNSDatabase %s names the %s profile (annotation %s), but this Benchmark holds it for runs in the workload profile (bulk load off, binary log on); its Jobs are stopped and the database returns to its own profile when the Benchmark ends",
		db.Name, db.LeaseProfile(), v1alpha1.AnnotationBenchmarkProfile)
}

// targetDB is the database of a target that is under way. One deleted meanwhile fails its target, and its
// Jobs are stopped: nothing of a Benchmark runs against a database that is gone.
func (p *Plan) targetDB(obs PhaseObserved, ts *v1alpha1.TargetStatus) *v1alpha1.ZNSDatabase {
	if db := obs.Databases[ts.Name]; db != nil {
		return db
	}
	p.failTarget(ts, event.TargetDeleted, failreason.TargetDeleted, fmt.Sprintf("ZNSDatabase %q was deleted during the benchmark", ts.Name))
	p.act(Action{Kind: StopJobs, Target: ts.Name})
	return nil
}

// failedBeforeRun ends the Benchmark when a target failed before the runs: it never runs with fewer targets
// than it lists, since a comparison of other targets than those asked for is another comparison.
func (p *Plan) failedBeforeRun(b *v1alpha1.Benchmark, now time.Time, step string) bool {
	msg, failed := FailedBeforeRun(&p.Status, step)
	if failed {
		p.abort(b, now, v1alpha1.ReasonTargetFailed, msg)
	}
	return failed
}

// FailedBeforeRun says which targets failed before the runs, in the words the Benchmark's failure carries.
func FailedBeforeRun(st *v1alpha1.BenchmarkStatus, step string) (string, bool) {
	var failed []string
	for _, ts := range st.Targets {
		if ts.State == v1alpha1.TargetFailed {
			failed = append(failed, fmt.Sprintf("%s (%s: %s)", ts.Name, ts.Reason, firstLine(ts.Message)))
		}
	}
	if len(failed) == 0 {
		return "", false
	}
	return fmt.Sprintf("target %s failed while %s; the Benchmark runs only with all of its targets, so no run started",
		strings.Join(failed, ", "), step), true
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
