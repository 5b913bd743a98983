// Package benchplan decides a Benchmark's next step from what the reconciler observed: the Benchmark, its
// databases, the time. It returns the new status, the Events to record and the actions to carry out, and
// touches nothing itself, so that every phase transition can be table-tested without an API server. The
// reconciler gathers, calls it, and acts.
package benchplan

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
)

// ActionKind names something the reconciler does outside the Benchmark's status.
type ActionKind string

const (
	// Acquire takes the lease on every target for the Benchmark, in name order, all or none.
	Acquire ActionKind = "Acquire"
	// ReleaseAll ends every lease the Benchmark holds: a waiting Benchmark holds nothing.
	ReleaseAll ActionKind = "ReleaseAll"
	// Settle leaves nothing behind an ended Benchmark: its Jobs stopped, its leases ended.
	Settle ActionKind = "Settle"
	// SetLeaseProfile has the held database Target run Profile.
	SetLeaseProfile ActionKind = "SetLeaseProfile"
	// CreateJob creates the runner Job of Phase (iteration Iteration) for Target; one the API server refuses
	// fails the target (JobRejected).
	CreateJob ActionKind = "CreateJob"
	// GiveStart hands run Iteration's common start (StartAt) to Target's runner: an annotation on its pod, which
	// the kubelet writes into the file the runner reads.
	GiveStart ActionKind = "GiveStart"
	// StopJobs deletes the unfinished Jobs of Target.
	StopJobs ActionKind = "StopJobs"
	// KeepSeries writes Series, the interval series of run Iteration of Target, into its ConfigMap; one the API
	// server refuses for good is recorded as missing (SeriesMissing) instead.
	KeepSeries ActionKind = "KeepSeries"
)

// Action is one thing to do, with what it applies to.
type Action struct {
	Kind      ActionKind
	Target    string
	Phase     string
	Iteration int32
	Profile   v1alpha1.Profile
	// StartAt is the iteration's common start (GiveStart).
	StartAt time.Time
	Series  *benchresult.Series
}

// String is how a test or a log names the action.
func (a Action) String() string {
	s := string(a.Kind)
	if a.Target != "" {
		s += " " + a.Target
	}
	if a.Phase != "" {
		s += fmt.Sprintf(" %s/%d", a.Phase, a.Iteration)
	}
	if a.Profile != "" {
		s += " " + string(a.Profile)
	}
	return s
}

// Emit is an Event to record on the Benchmark.
type Emit struct {
	Event event.Event
	Args  []any
}

// Message is the Event's text.
func (e Emit) Message() string { return fmt.Sprintf(e.Event.Message, e.Args...) }

// Plan is one decision: the status to write, the Events to record and the actions to carry out, in order, and
// when to look again (Requeue: through the rate limiter; RequeueAfter: after that long; neither: on the next
// change only).
type Plan struct {
	Status       v1alpha1.BenchmarkStatus
	Events       []Emit
	Actions      []Action
	Requeue      bool
	RequeueAfter time.Duration
}

// Has tells whether the plan carries an action of kind k.
func (p *Plan) Has(k ActionKind) bool {
	return slices.ContainsFunc(p.Actions, func(a Action) bool { return a.Kind == k })
}

func (p *Plan) act(a Action) { p.Actions = append(p.Actions, a) }

func (p *Plan) emit(e event.Event, args ...any) {
	p.Events = append(p.Events, Emit{Event: e, Args: args})
}

// SetPhase moves the status to phase; a new phase restarts its clock (PhaseSince) and enters the history.
func SetPhase(st *v1alpha1.BenchmarkStatus, phase v1alpha1.BenchmarkPhase, progress string, now time.Time) {
	if st.Phase != phase {
		t := metav1.NewTime(now)
		st.PhaseSince = &t
		st.PhaseHistory = append(st.PhaseHistory, v1alpha1.PhaseTransition{Phase: phase, Time: metav1.NewMicroTime(now)})
		if n := len(st.PhaseHistory); n > v1alpha1.MaxPhaseHistory {
			st.PhaseHistory = st.PhaseHistory[n-v1alpha1.MaxPhaseHistory:]
		}
	}
	st.Phase = phase
	st.Progress = progress
}

// FailTarget marks one target failed with a reason from the fixed set (anything else is Other) and returns the
// Event that says so; ok is false when the target was already failed (nothing to say twice).
func FailTarget(ts *v1alpha1.TargetStatus, e event.Event, reason, msg string) (Emit, bool) {
	if ts == nil || ts.State == v1alpha1.TargetFailed {
		return Emit{}, false
	}
	if !slices.Contains(failreason.All, reason) {
		reason = failreason.Other
	}
	ts.State, ts.Reason, ts.Message = v1alpha1.TargetFailed, reason, msg
	if reason == failreason.JobRejected { // whatever step it was: the spec, not the step, needs fixing
		e = event.JobRejected
	}
	return Emit{Event: e, Args: []any{fmt.Sprintf("target %s: %s: %s", ts.Name, reason, msg)}}, true
}

// Abort ends the Benchmark as Failed without results; the reconciler then settles it (Settle).
func Abort(st *v1alpha1.BenchmarkStatus, generation int64, reason, msg string, now time.Time) Emit {
	t := metav1.NewTime(now)
	st.CompletedAt = &t
	st.StartAt = nil
	SetPhase(st, v1alpha1.BenchmarkFailed, "failed: "+reason, now)
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionFailed, Status: metav1.ConditionTrue,
		Reason: reason, Message: msg, ObservedGeneration: generation})
	return Emit{Event: event.BenchmarkFailed, Args: []any{msg}}
}

// TimedOut tells whether the current wait (since PhaseSince) has passed targetTimeoutSeconds.
func TimedOut(b *v1alpha1.Benchmark, st *v1alpha1.BenchmarkStatus, now time.Time) bool {
	return st.PhaseSince != nil && now.Sub(st.PhaseSince.Time) > time.Duration(b.Spec.TargetTimeoutSeconds)*time.Second
}

// TargetStatus is the status of the target named name, nil when there is none.
func TargetStatus(st *v1alpha1.BenchmarkStatus, name string) *v1alpha1.TargetStatus {
	for i := range st.Targets {
		if st.Targets[i].Name == name {
			return &st.Targets[i]
		}
	}
	return nil
}

// Start begins a new Benchmark: every target pending, the baseline chosen (spec.baseline, or the first target),
// and the wait for the targets begun.
func Start(b *v1alpha1.Benchmark, now time.Time) Plan {
	p := Plan{Status: *b.Status.DeepCopy(), Requeue: true}
	st := &p.Status
	t := metav1.NewTime(now)
	st.StartedAt = &t
	st.Baseline = b.Spec.Baseline
	st.Workload = b.Spec.WorkloadLabel()
	if st.Baseline == "" {
		st.Baseline = b.Spec.Targets[0].Name
	}
	st.Targets = nil
	for _, tg := range b.Spec.Targets {
		st.Targets = append(st.Targets, v1alpha1.TargetStatus{Name: tg.Name, State: v1alpha1.TargetPending})
	}
	SetPhase(st, v1alpha1.BenchmarkWaitingForTargets, "waiting for targets", now)
	p.emit(event.BenchmarkStarted, len(b.Spec.Targets), b.Spec.WorkloadLabel())
	return p
}
