package controller

import (
	"context"
	"encoding/json"
	"errors"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// readSeries reads a finished run's interval series from the runner's log into obs, or why there is none. A
// series that cannot be read (the log is gone or has no series line) is recorded as missing by the decision; the
// run's figures come from the runner's summary, so the run is recorded all the same. Without a log reader
// (Logs nil) nothing is read and nothing is missing.
func (r *BenchmarkReconciler) readSeries(ctx context.Context, b *v1alpha1.Benchmark, it int32, target string, obs *benchplan.RunObserved) error {
	// go-ycsb's periodic reports are cumulative since its start, not per interval: a YCSB run has no series to
	// keep, and none is missing.
	if r.Logs == nil || benchplan.IsYCSB(b) {
		return nil
	}
	job := &batchv1.Job{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: resources.BenchJobName(b, resources.BenchPhaseRun, it, target)}, job); err != nil {
		return client.IgnoreNotFound(err)
	}
	pod, _, err := r.jobPod(ctx, b, job)
	if err != nil || pod == nil {
		return err
	}
	text, err := r.Logs.Read(ctx, pod.Namespace, pod.Name, resources.RunnerContainer)
	if err != nil {
		obs.SeriesMissing[target] = "the runner's log cannot be read: " + err.Error()
		return nil
	}
	series, ok, err := benchresult.FindSeries(text)
	switch {
	case err != nil:
		obs.SeriesMissing[target] = err.Error()
	case !ok:
		obs.SeriesMissing[target] = "the runner's log has no series line"
	default:
		obs.Series[target] = series
	}
	return nil
}

// writeSeries is the KeepSeries action: the series goes into its ConfigMap. One the API server refuses for good
// (a quota, a policy) is recorded as missing instead (the iteration names no ConfigMap, a Warning Event, the
// SeriesKept condition), without an error: asking again would only repeat the refusal. An error is returned only
// for what may pass (a timeout, throttling, a conflict, a lost connection), which the next reconcile retries.
func (r *BenchmarkReconciler) writeSeries(ctx context.Context, b *v1alpha1.Benchmark, a benchplan.Action) error {
	name := resources.SeriesConfigMapName(b, a.Iteration, a.Target)
	raw, err := json.Marshal(a.Series)
	if err == nil {
		err = r.Apply(ctx, resources.SeriesConfigMap(b, a.Iteration, a.Target, string(raw), a.Series.CSV()), client.FieldOwner(FieldManager), client.ForceOwnership)
		if err != nil && !refusedForGood(err) {
			return err
		}
	}
	if err == nil {
		return nil
	}
	why := "the API server refused ConfigMap " + name + ": " + err.Error()
	if ts := targetStatus(b, a.Target); ts != nil {
		for i := range ts.Iterations {
			if ts.Iterations[i].Iteration == a.Iteration && ts.Iterations[i].SeriesConfigMap == name {
				ts.Iterations[i].SeriesConfigMap = ""
			}
		}
	}
	benchplan.SeriesMissing(&b.Status, b.Generation, a.Target, a.Iteration, why)
	event.SeriesMissing.Emit(b, r.Recorder, a.Target, a.Iteration, why)
	return nil
}

// refusedForGood tells a refusal by the API server that asking again cannot change (invalid, too large,
// forbidden by RBAC, a quota or an admission policy) from a failure that may pass: a timeout, throttling, a
// conflict, an internal error, or no answer at all.
func refusedForGood(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	switch {
	case apierrors.IsConflict(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
		return false
	}
	return true
}
