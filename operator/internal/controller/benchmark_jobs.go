package controller

import (
	"context"
	"fmt"
	"io"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/logtail"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// PodLogs reads a container's log; the series of a run travels there because it is too big for a termination
// message. The envtest suite, which has no kubelet, supplies recorded logs.
type PodLogs interface {
	Read(ctx context.Context, namespace, pod, container string) (string, error)
}

// ClientsetPodLogs reads logs through the API server.
type ClientsetPodLogs struct{ Clientset kubernetes.Interface }

// Read implements PodLogs.
func (c ClientsetPodLogs) Read(ctx context.Context, namespace, pod, container string) (string, error) {
	rc, err := c.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Stream(ctx)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	return string(b), err
}

// createJob is the CreateJob action of a decision: a Job the API server refuses fails its target (JobRejected).
// A client away from its device gets its Job only once the observer on the device's node is ready.
func (r *BenchmarkReconciler) createJob(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase) error {
	in, err := r.jobInput(ctx, b, phase, it, db)
	if err != nil {
		return err
	}
	if resources.NeedsObserver(b, in) {
		url, failure, err := r.observerURL(ctx, b, in)
		switch {
		case err != nil:
			return err
		case failure != "":
			r.failTarget(b, targetStatus(b, db.Name), event.ObserverFailed, failreason.PodLost, failure)
			return nil
		case url == "":
			return nil // its pod's changes bring the Benchmark back
		}
		in.ObserverURL = url
	}
	sum, rejected, err := r.applyJob(ctx, b, in)
	if rejected {
		r.failTarget(b, targetStatus(b, db.Name), event.JobRejected, sum.Reason, sum.Error)
	}
	return err
}

// applyJob creates the Job of one phase for one target. rejected (with a summary that says why) when the API
// server refuses it as invalid: only it can tell (say, requests above limits in spec.resources), and that is a
// failed step, not a retry.
func (r *BenchmarkReconciler) applyJob(ctx context.Context, b *v1alpha1.Benchmark, in resources.BenchJobInput) (benchresult.Summary, bool, error) {
	job := resources.BenchJob(b, in)
	err := r.Apply(ctx, job, client.FieldOwner(FieldManager), client.ForceOwnership)
	if apierrors.IsInvalid(err) {
		return benchresult.Summary{Phase: in.Phase, OK: false, Reason: failreason.JobRejected,
			Error: fmt.Sprintf("the API server refused Job %s: %v", *job.Name, err)}, true, nil
	}
	return benchresult.Summary{}, false, err
}

// jobInput is what the Job of one phase for one target is built from.
func (r *BenchmarkReconciler) jobInput(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase) (resources.BenchJobInput, error) {
	image := b.Spec.Image
	if image == "" {
		image = r.Image
	}
	in := resources.BenchJobInput{Phase: phase, Iteration: it, DB: db, Image: image}
	if !db.IsZoned() {
		var err error
		if in.Volume, err = r.volumeDevice(ctx, db); err != nil {
			return in, err
		}
	}
	return in, nil
}

// volumeDevice is the block device under a conventional database's datadir, when its claim is bound to a
// local PersistentVolume made of one; empty otherwise.
func (r *BenchmarkReconciler) volumeDevice(ctx context.Context, db *v1alpha1.ZNSDatabase) (deviceid.ID, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.DataClaimName()}, pvc)
	if apierrors.IsNotFound(err) || err == nil && pvc.Spec.VolumeName == "" {
		return deviceid.ID{}, nil
	}
	if err != nil {
		return deviceid.ID{}, err
	}
	pv := &corev1.PersistentVolume{}
	if err := r.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); apierrors.IsNotFound(err) {
		return deviceid.ID{}, nil
	} else if err != nil {
		return deviceid.ID{}, err
	}
	dev, _ := deviceid.OfLocalVolume(pv)
	return dev, nil
}

// jobResult reads the Job of one phase for one target without creating it.
func (r *BenchmarkReconciler) jobResult(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase) (benchresult.Summary, bool, bool, error) {
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: resources.BenchJobName(b, phase, it, db.Name)}, job)
	if apierrors.IsNotFound(err) {
		return benchresult.Summary{}, false, false, nil
	}
	if err != nil {
		return benchresult.Summary{}, false, false, err
	}
	finished, failed, _ := jobFinished(job)
	if !finished {
		stalled, err := r.stalledJobPod(ctx, b, job)
		if err != nil || stalled == "" {
			return benchresult.Summary{}, false, true, err
		}
		// ended as failed: the decision fails the target, and stopping its Jobs deletes this one
		return benchresult.Summary{Phase: phase, OK: false, Reason: failreason.PodLost, Error: stalled}, true, true, nil
	}
	sum, found, err := r.jobSummary(ctx, b, job)
	if err != nil {
		return sum, false, true, err
	}
	switch {
	case !found:
		sum = benchresult.Summary{Phase: phase, OK: !failed}
		if failed {
			sum.Reason = jobReason(job, failreason.PodLost)
			sum.Error = "its pod ended without a result (evicted, killed or past its deadline): " + jobFailureReason(job)
		}
	case failed && sum.OK:
		sum.OK = false
		sum.Reason = jobReason(job, failreason.PodLost)
		sum.Error = "the Job failed after the runner reported success: " + jobFailureReason(job)
	case failed:
		// A runner stopped by the Job's deadline reports that it was interrupted; the deadline is the reason.
		sum.Reason = jobReason(job, sum.Reason)
	}
	return sum, true, true, nil
}

// jobReason is TimedOut when the Job controller stopped the Job at its deadline, otherwise fallback.
func jobReason(job *batchv1.Job, fallback string) string {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue && c.Reason == batchv1.JobReasonDeadlineExceeded {
			return failreason.TimedOut
		}
	}
	return fallback
}

// stopJobs deletes the Benchmark's Jobs that have not finished (of one target, or all when target is ""), so
// that nothing keeps running against a database once its target or the Benchmark is over. Their pods go with
// them (background propagation): the runner is told to stop and sysbench with it.
func (r *BenchmarkReconciler) stopJobs(ctx context.Context, b *v1alpha1.Benchmark, target string) error {
	labels := client.MatchingLabels{resources.LabelBenchmark: b.Name}
	if target != "" {
		labels[resources.LabelBenchTarget] = target
	}
	jobs := &batchv1.JobList{}
	if err := r.List(ctx, jobs, client.InNamespace(b.Namespace), labels); err != nil {
		return err
	}
	var stopped []string
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if finished, _, _ := jobFinished(job); finished || !metav1.IsControlledBy(job, b) || !job.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return err
		}
		stopped = append(stopped, job.Name)
	}
	if len(stopped) > 0 {
		why := "the Benchmark is over"
		if target != "" {
			why = "target " + target + " failed"
		}
		event.JobsStopped.Emit(b, r.Recorder, strings.Join(stopped, ", "), why)
	}
	return nil
}

func jobFailureReason(job *batchv1.Job) string {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			if c.Message != "" {
				return fmt.Sprintf("%s: %s", c.Reason, c.Message)
			}
			if c.Reason != "" {
				return c.Reason
			}
		}
	}
	return "no reason recorded"
}

// jobSummary reads the runner's summary from the newest pod of a Job: its termination message, or the summary
// line of its log when the message is missing.
func (r *BenchmarkReconciler) jobSummary(ctx context.Context, b *v1alpha1.Benchmark, job *batchv1.Job) (benchresult.Summary, bool, error) {
	pod, term, err := r.jobPod(ctx, b, job)
	if err != nil || pod == nil {
		return benchresult.Summary{}, false, err
	}
	if term != nil && strings.TrimSpace(term.Message) != "" {
		if s, err := benchresult.Decode([]byte(strings.TrimSpace(term.Message))); err == nil {
			return s, true, nil
		}
	}
	if r.Logs != nil {
		if text, err := r.Logs.Read(ctx, pod.Namespace, pod.Name, resources.RunnerContainer); err == nil {
			if s, ok, _ := benchresult.FindSummary(text); ok {
				return s, true, nil
			}
		}
	}
	if term != nil && term.ExitCode != 0 {
		reason := failreason.Other
		if term.ExitCode > 128 { // killed by a signal (137: OOM-killed or SIGKILL)
			reason = failreason.Crashed
		}
		return benchresult.Summary{OK: false, Reason: reason, Error: fmt.Sprintf("the runner exited %d (%s): %s", term.ExitCode, term.Reason, logtail.Last(term.Message, 5))}, true, nil
	}
	return benchresult.Summary{}, false, nil
}

func (r *BenchmarkReconciler) jobPod(ctx context.Context, b *v1alpha1.Benchmark, job *batchv1.Job) (*corev1.Pod, *corev1.ContainerStateTerminated, error) {
	newest, err := r.newestPod(ctx, b.Namespace, job.Spec.Template.Labels)
	if err != nil || newest == nil {
		return nil, nil, err
	}
	for _, cs := range newest.Status.ContainerStatuses {
		if cs.Name == resources.RunnerContainer && cs.State.Terminated != nil {
			return newest, cs.State.Terminated, nil
		}
	}
	return newest, nil, nil
}
