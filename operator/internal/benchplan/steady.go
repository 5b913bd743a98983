package benchplan

import (
	"fmt"
	"strconv"
	"strings"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/steadystate"
)

// SteadyState decides the SteadyState phase: the write-only rounds, each target at its own pace: a round's
// Job, then the rule over the rounds so far, then the next round until the rule holds or the rounds are used
// up. The runs begin when every target that needs the phase is through it. The reconciler observes, of each
// target, the Jobs of its rounds from the next one to record on, as long as they exist and finished.
func SteadyState(obs PhaseObserved) Plan {
	b := obs.Benchmark
	p := Plan{Status: *b.Status.DeepCopy()}
	spec := b.Spec.SteadyState
	var left []string
	for _, ts := range Active(&p.Status) {
		db := p.targetDB(obs, ts)
		if db == nil || !p.keepsProfile(ts, db) {
			continue
		}
		if ts.SteadyState == nil {
			ts.SteadyState = &v1alpha1.SteadyStateStatus{Required: SteadyRequired(b, db)}
			if !ts.SteadyState.Required {
				ts.SteadyState.Skipped = NotRequired
			}
		}
		st := ts.SteadyState
		for st.Required && !st.Reached && int32(len(st.Rounds)) < spec.MaxRounds && ts.State != v1alpha1.TargetFailed {
			round := int32(len(st.Rounds)) + 1
			job := obs.job(resources.BenchPhaseSteady, round, ts.Name)
			if !job.Exists {
				p.act(Action{Kind: CreateJob, Target: ts.Name, Phase: resources.BenchPhaseSteady, Iteration: round})
			}
			if !job.Done {
				left = append(left, fmt.Sprintf("%s round %d/%d", ts.Name, round, spec.MaxRounds))
				break
			}
			p.recordRound(b, ts, round, job.Summary)
		}
	}
	if p.failedBeforeRun(b, obs.Now, "running the write-only phase") {
		return p
	}
	if len(left) > 0 {
		p.Status.Progress = "steady state: " + strings.Join(left, ", ")
		p.RequeueAfter = StepRetry
		return p
	}
	p.Status.Iteration = 1
	SetPhase(&p.Status, v1alpha1.BenchmarkRunning, RunLabel(b, 1), obs.Now)
	p.Requeue = true
	return p
}

// steadyRule is spec.steadyState's rule.
func steadyRule(s *v1alpha1.SteadyStateSpec) steadystate.Rule {
	return steadystate.Rule{Window: int(s.Window), RangePct: float64(s.MaxRangePercent), ExcursionPct: float64(s.MaxSlopeExcursionPercent)}
}

// recordRound keeps a finished round and judges the rounds so far.
func (p *Plan) recordRound(b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, round int32, sum benchresult.Summary) {
	if !sum.OK {
		p.failTarget(ts, event.SteadyStateFailed, sum.Reason, fmt.Sprintf("write-only round %d failed: %s", round, sum.Error))
		return
	}
	st := ts.SteadyState
	rd := v1alpha1.SteadyStateRound{Round: round, TPS: Decimal(sum.TPS)}
	if sum.Device != "" {
		rd.DeviceWrittenBytes = strconv.FormatInt(sum.DeviceWrittenBytes, 10)
	}
	st.Rounds = append(st.Rounds, rd)
	tps := make([]float64, len(st.Rounds))
	for i, x := range st.Rounds {
		tps[i], _ = figure(x.TPS)
	}
	res := steadyRule(b.Spec.SteadyState).Evaluate(tps)
	st.Reason = res.Reason
	switch {
	case res.Reached:
		st.Reached, st.WindowStart = true, int32(res.Start)+1
		p.emit(event.SteadyStateReached, ts.Name, fmt.Sprintf("steady after %d round(s), rounds %d-%d: %s", len(st.Rounds), st.WindowStart, len(st.Rounds), res.Reason))
	case round >= b.Spec.SteadyState.MaxRounds:
		p.emit(event.SteadyStateNotReached, ts.Name, fmt.Sprintf("not steady after %d round(s); its runs start anyway and are marked: %s", round, res.Reason))
	}
}

// steadyNote is the mark on the results of a target that started its runs out of steady state, "" otherwise.
func steadyNote(ts *v1alpha1.TargetStatus) string {
	st := ts.SteadyState
	if st == nil || !st.Required || st.Reached {
		return ""
	}
	why := st.Skipped
	if why == "" {
		why = fmt.Sprintf("%d write-only round(s) did not settle: %s", len(st.Rounds), st.Reason)
	}
	return "not in steady state: " + why
}
