package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// keepSeries copies a run's interval series from the runner's log into a ConfigMap, downsampled when it is
// longer than a ConfigMap holds (benchresult.Fit), and returns the ConfigMap's name. A series that cannot be
// kept (the log is gone or has no series line, or the API server refuses the ConfigMap: a quota, a policy) is
// recorded as missing, with a Warning Event and the SeriesKept condition, and "" is returned without an error:
// the run's figures come from the runner's summary, so the run is recorded all the same, and retrying what the
// API server refused would only repeat the refusal. An error is returned only for what may pass (a timeout,
// throttling, a conflict, a lost connection), which the next reconcile retries.
func (r *BenchmarkReconciler) keepSeries(ctx context.Context, b *v1alpha1.Benchmark, it int32, target string) (string, error) {
	if r.Logs == nil {
		return "", nil
	}
	job := &batchv1.Job{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: resources.BenchJobName(b, resources.BenchPhaseRun, it, target)}, job); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	pod, _, err := r.jobPod(ctx, b, job)
	if err != nil || pod == nil {
		return "", err
	}
	text, err := r.Logs.Read(ctx, pod.Namespace, pod.Name, resources.RunnerContainer)
	if err != nil {
		r.seriesMissing(b, target, it, "the runner's log cannot be read: "+err.Error())
		return "", nil
	}
	series, ok, err := benchresult.FindSeries(text)
	if err != nil || !ok {
		reason := "the runner's log has no series line"
		if err != nil {
			reason = err.Error()
		}
		r.seriesMissing(b, target, it, reason)
		return "", nil
	}
	kept := benchresult.Fit(series)
	raw, err := json.Marshal(kept)
	if err != nil { // the series came from JSON: it cannot fail to go back to JSON
		r.seriesMissing(b, target, it, err.Error())
		return "", nil
	}
	err = r.Apply(ctx, resources.SeriesConfigMap(b, it, target, string(raw), kept.CSV()), client.FieldOwner(FieldManager), client.ForceOwnership)
	if err != nil {
		if !refusedForGood(err) {
			return "", err
		}
		r.seriesMissing(b, target, it, "the API server refused ConfigMap "+resources.SeriesConfigMapName(b, it, target)+": "+err.Error())
		return "", nil
	}
	if kept.Downsampled {
		event.SeriesDownsampled.Emit(b, r.Recorder, target, it, fmt.Sprintf(
			"%d intervals kept as %d buckets of %d (mean, minimum and maximum of each) in ConfigMap %s: a ConfigMap holds at most %d bytes",
			kept.SourceIntervals, kept.Len(), kept.BucketIntervals, resources.SeriesConfigMapName(b, it, target), benchresult.ConfigMapLimitBytes))
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionSeriesKept); c == nil || c.Status == metav1.ConditionTrue {
		meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionSeriesKept, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonSeriesKept, Message: "every finished run's interval series is in the ConfigMap its iteration names (seriesConfigMap)",
			ObservedGeneration: b.Generation})
	}
	return resources.SeriesConfigMapName(b, it, target), nil
}

// seriesMissing records a run whose series was not kept: an Event, and the SeriesKept condition naming the
// latest such run (it stays False: a later run's series does not make up for this one's).
func (r *BenchmarkReconciler) seriesMissing(b *v1alpha1.Benchmark, target string, it int32, why string) {
	event.SeriesMissing.Emit(b, r.Recorder, target, it, why)
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionSeriesKept, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonSeriesMissing, Message: fmt.Sprintf("no interval series for target %s run %d: %s; the run's figures are recorded", target, it, why),
		ObservedGeneration: b.Generation})
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
