package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/steadystate"
)

// steadyRule is spec.steadyState's rule.
func steadyRule(s *v1alpha1.SteadyStateSpec) steadystate.Rule {
	return steadystate.Rule{Window: int(s.Window), RangePct: float64(s.MaxRangePercent), ExcursionPct: float64(s.MaxSlopeExcursionPercent)}
}

// steadyState runs the write-only rounds, each target at its own pace: a round's Job, then the rule over the
// rounds so far, then the next round until the rule holds or the rounds are used up. The runs begin when every
// target that needs the phase is through it.
func (r *BenchmarkReconciler) steadyState(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	spec := b.Spec.SteadyState
	var left []string
	for _, ts := range active(b) {
		db, err := r.targetDB(ctx, b, ts)
		if err != nil {
			return ctrl.Result{}, err
		}
		if db == nil {
			continue
		}
		if kept, err := r.keepsProfile(ctx, b, ts, db); err != nil {
			return ctrl.Result{}, err
		} else if !kept {
			continue
		}
		if ts.SteadyState == nil {
			ts.SteadyState = &v1alpha1.SteadyStateStatus{Required: benchplan.SteadyRequired(b, db)}
			if !ts.SteadyState.Required {
				ts.SteadyState.Skipped = benchplan.NotRequired
			}
		}
		st := ts.SteadyState
		for st.Required && !st.Reached && int32(len(st.Rounds)) < spec.MaxRounds && ts.State != v1alpha1.TargetFailed {
			round := int32(len(st.Rounds)) + 1
			sum, done, err := r.runJob(ctx, b, resources.BenchPhaseSteady, round, db, time.Time{})
			if err != nil {
				return ctrl.Result{}, err
			}
			if !done {
				left = append(left, fmt.Sprintf("%s round %d/%d", ts.Name, round, spec.MaxRounds))
				break
			}
			r.recordRound(b, ts, round, sum)
		}
	}
	if res, failed, err := r.failedBeforeRun(ctx, b, "running the write-only phase"); failed || err != nil {
		return res, err
	}
	if len(left) > 0 {
		b.Status.Progress = "steady state: " + strings.Join(left, ", ")
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	b.Status.Iteration = 1
	r.setPhase(b, v1alpha1.BenchmarkRunning, benchplan.RunLabel(b, 1))
	return requeue, nil
}

// recordRound keeps a finished round and judges the rounds so far.
func (r *BenchmarkReconciler) recordRound(b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, round int32, sum benchresult.Summary) {
	if !sum.OK {
		r.failTarget(b, ts, event.SteadyStateFailed, sum.Reason, fmt.Sprintf("write-only round %d failed: %s", round, sum.Error))
		return
	}
	st := ts.SteadyState
	rd := v1alpha1.SteadyStateRound{Round: round, TPS: decimal(sum.TPS)}
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
		event.SteadyStateReached.Emit(b, r.Recorder, ts.Name, fmt.Sprintf("steady after %d round(s), rounds %d-%d: %s", len(st.Rounds), st.WindowStart, len(st.Rounds), res.Reason))
	case round >= b.Spec.SteadyState.MaxRounds:
		event.SteadyStateNotReached.Emit(b, r.Recorder, ts.Name, fmt.Sprintf("not steady after %d round(s); its runs start anyway and are marked: %s", round, res.Reason))
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
