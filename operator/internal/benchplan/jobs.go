package benchplan

import (
	"time"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// Job is what the reconciler saw of one runner Job (one phase of one target).
type Job struct {
	Exists bool
	// Done: the Job finished and Summary holds its result (one that failed without a summary gets one that
	// says why).
	Done    bool
	Summary benchresult.Summary
	// Drive is the drive sidecar's outcome of a Job that finished well (nil without spec.drive); DrivePending
	// while its report may still come. DriveEvents are what reading it found worth an Event (figures missing, a
	// counter that went backwards): recorded when the decision takes the figures.
	Drive        *v1alpha1.DriveFigures
	DrivePending bool
	DriveEvents  []Emit
	// ClientNode is the node the Job's pod ran on, DatabaseNode the node of the database's pod then ("" when
	// either was not known): where a run's client ran is part of its result (spec.clients).
	ClientNode, DatabaseNode string
	// Of a run Job under way: Created is when it was made; Ready, whether its runner waits at the start barrier
	// (its pod is Ready); StartGiven, whether its pod carries the common start in status.startAt.
	Created    time.Time
	Ready      bool
	StartGiven bool
}

// JobKey names a runner Job by what it does.
type JobKey struct {
	Phase     string
	Iteration int32
	Target    string
}

// PhaseObserved is what the reconciler read for a Benchmark in a phase that runs Jobs: the databases of its
// active targets and the Jobs their current step needs.
type PhaseObserved struct {
	Benchmark *v1alpha1.Benchmark
	// Databases are the targets' ZNSDatabases by name; an active target missing from the map was deleted.
	Databases map[string]*v1alpha1.ZNSDatabase
	Jobs      map[JobKey]Job
	Now       time.Time
}

func (o PhaseObserved) job(phase string, it int32, target string) Job {
	return o.Jobs[JobKey{Phase: phase, Iteration: it, Target: target}]
}

// Active are the targets of st that have not failed.
func Active(st *v1alpha1.BenchmarkStatus) []*v1alpha1.TargetStatus {
	var out []*v1alpha1.TargetStatus
	for i := range st.Targets {
		if st.Targets[i].State != v1alpha1.TargetFailed {
			out = append(out, &st.Targets[i])
		}
	}
	return out
}
