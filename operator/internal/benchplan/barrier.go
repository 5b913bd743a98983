package benchplan

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
)

// runnersWaiting are the targets of a run whose runner is not at the start barrier yet, and since when the
// oldest of them has been waited for.
type runnersWaiting struct {
	names []string
	since time.Time
}

func (w *runnersWaiting) add(name string, created time.Time) {
	w.names = append(w.names, name)
	if !created.IsZero() && (w.since.IsZero() || created.Before(w.since)) {
		w.since = created
	}
}

// awaitRunners decides a run's start while its runners come up: the common start once every one of the running
// targets' runners waits at the barrier, spec.startDelaySeconds ahead (the time the annotation that carries it
// takes to reach every runner); otherwise the wait, shown in the RunnersReady condition, and after
// spec.targetTimeoutSeconds the failure of the targets whose runner never got there. The others then start
// without them.
func (p *Plan) awaitRunners(b *v1alpha1.Benchmark, now time.Time, running int, w runnersWaiting) {
	st := &p.Status
	it := st.Iteration
	label := RunLabel(b, it)
	if len(w.names) == 0 {
		t := metav1.NewTime(now.Add(time.Duration(b.Spec.StartDelaySeconds) * time.Second).Truncate(time.Second))
		st.StartAt = &t
		st.Progress = fmt.Sprintf("%s starts at %s", label, t.UTC().Format(time.RFC3339))
		msg := fmt.Sprintf("run %d: all %d runner(s) wait at the start barrier; the common start is %s", it, running, t.UTC().Format(time.RFC3339))
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionRunnersReady, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonRunnersReady, Message: msg, ObservedGeneration: b.Generation})
		p.emit(event.RunnersReady, msg)
		p.Requeue = true // status first, then the runners are given the start
		return
	}
	timeout := time.Duration(b.Spec.TargetTimeoutSeconds) * time.Second
	if !w.since.IsZero() && now.Sub(w.since) > timeout {
		for _, name := range w.names {
			ts := TargetStatus(st, name)
			p.failTarget(ts, event.RunFailed, failreason.RunnerNotReady, fmt.Sprintf(
				"run %d: its runner was not ready within targetTimeoutSeconds (%s) of its Job's creation: its pod did not start or sysbench did not answer; the other targets start without it",
				it, timeout))
			p.act(Action{Kind: StopJobs, Target: name})
		}
		p.Requeue = true
		return
	}
	ready := running - len(w.names)
	st.Progress = fmt.Sprintf("%s: %d of %d runner(s) ready", label, ready, running)
	since := ""
	if !w.since.IsZero() {
		since = fmt.Sprintf(" since %s", w.since.UTC().Format(time.RFC3339))
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionRunnersReady, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonRunnersStarting, ObservedGeneration: b.Generation, Message: fmt.Sprintf(
			"run %d: waiting%s for the runner(s) of %s to be ready (their pods Ready); the start is set once all are, at most targetTimeoutSeconds (%s)",
			it, since, strings.Join(w.names, ", "), timeout)})
	p.RequeueAfter = StepRetry
}
