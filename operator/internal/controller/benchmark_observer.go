package controller

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/podprogress"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// observerReadyTimeout bounds the wait for an observer to become ready: under QEMU's emulation a pod with the
// drive sidecar took up to 144 s to start on a busy node, so ten minutes means it will not.
const observerReadyTimeout = 10 * time.Minute

// observerURL creates the observer of in's phase once and returns its address when it is ready; "" while it
// starts. failure says why it never will be (its pod cannot be scheduled or started, ended, or is late).
func (r *BenchmarkReconciler) observerURL(ctx context.Context, b *v1alpha1.Benchmark, in resources.BenchJobInput) (url, failure string, err error) {
	name := resources.ObserverJobName(b, in.Phase, in.Iteration, in.DB.Name)
	job := &batchv1.Job{}
	err = r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, job)
	if apierrors.IsNotFound(err) {
		// created, never applied again: a Job's pod template cannot change
		return "", "", r.Apply(ctx, resources.ObserverJob(b, in), client.FieldOwner(FieldManager), client.ForceOwnership)
	}
	if err != nil {
		return "", "", err
	}
	pod, err := r.newestPod(ctx, b.Namespace, job.Spec.Template.Labels)
	if err != nil {
		return "", "", err
	}
	if pod != nil && pod.Status.PodIP != "" {
		if c := podprogress.Condition(pod, corev1.PodReady); c != nil && c.Status == corev1.ConditionTrue {
			return resources.ObserverURL(pod.Status.PodIP), "", nil
		}
	}
	what := fmt.Sprintf("target %s %s: observer %s", in.DB.Name, phaseLabel(in.Phase, in.Iteration), name)
	if finished, _, _ := jobFinished(job); finished || pod != nil && (pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded) {
		return "", what + " ended before its client started: " + jobFailureReason(job), nil
	}
	if stuck := r.stuckPod(pod); stuck != "" {
		return "", what + " on the device's node: " + stuck, nil
	}
	progress := podprogress.Describe(pod)
	if waited := r.now().Sub(job.CreationTimestamp.Time); waited > observerReadyTimeout {
		return "", fmt.Sprintf("%s not ready %s after its creation: %s", what, waited.Round(time.Second), progress.Message), nil
	}
	if pod != nil && pod.Spec.NodeName != "" {
		// said on each change of the pod while it starts; the recorder folds repeats of one message
		event.ObserverStarting.Emit(b, r.Recorder, in.DB.Name, phaseLabel(in.Phase, in.Iteration), pod.Name, pod.Spec.NodeName, progress.Message)
	}
	return "", "", nil
}

// newestPod is the newest pod with labels in namespace, nil when there is none.
func (r *BenchmarkReconciler) newestPod(ctx context.Context, namespace string, labels map[string]string) (*corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	var newest *corev1.Pod
	for i := range pods.Items {
		if p := &pods.Items[i]; newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp) {
			newest = p
		}
	}
	return newest, nil
}

// clientNodes are the node a finished Job's pod ran on and the node of its database's pod, "" for either that
// is not known (a pod already gone).
func (r *BenchmarkReconciler) clientNodes(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase) (clientNode, dbNode string, err error) {
	job := &batchv1.Job{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: resources.BenchJobName(b, phase, it, db.Name)}, job); err != nil {
		return "", "", client.IgnoreNotFound(err)
	}
	if pod, err := r.newestPod(ctx, b.Namespace, job.Spec.Template.Labels); err != nil {
		return "", "", err
	} else if pod != nil {
		clientNode = pod.Spec.NodeName
	}
	pod := &corev1.Pod{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.PodName()}, pod); err == nil {
		dbNode = pod.Spec.NodeName
	} else if !apierrors.IsNotFound(err) {
		return "", "", err
	}
	if dbNode == "" {
		dbNode = db.DeviceNode()
	}
	return clientNode, dbNode, nil
}

// jobPodStallGrace is how long a runner's or an observer's pod may stay stuck (unschedulable, its image not pulled, its
// container not created) before its target fails: long enough for a database pod that a pod affinity waits for
// to come back after a restart, short against a phase's deadline of an hour or a day.
const jobPodStallGrace = 3 * time.Minute

// stalledJobPod says why a runner Job's pod cannot run (stuckPod): a clients' node selector that matches no
// node, an anti-affinity on a one-node cluster, an image that is not there.
func (r *BenchmarkReconciler) stalledJobPod(ctx context.Context, b *v1alpha1.Benchmark, job *batchv1.Job) (string, error) {
	pod, err := r.newestPod(ctx, b.Namespace, job.Spec.Template.Labels)
	if err != nil {
		return "", err
	}
	if stuck := r.stuckPod(pod); stuck != "" {
		return fmt.Sprintf("pod %s of Job %s %s", pod.Name, job.Name, stuck), nil
	}
	return "", nil
}

// stuckPod says what keeps pod from running once it has been stuck for jobPodStallGrace (unschedulable, its
// image not pulled, its container not created; podprogress's stalls), "" while it is not, or not for that long.
func (r *BenchmarkReconciler) stuckPod(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	p := podprogress.Describe(pod)
	if !p.Stalled() {
		return ""
	}
	since := pod.CreationTimestamp.Time
	if c := podprogress.Condition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
		since = c.LastTransitionTime.Time
	}
	stuck := r.now().Sub(since)
	if stuck < jobPodStallGrace {
		return ""
	}
	return fmt.Sprintf("%s (for %s)", p.Message, stuck.Round(time.Second))
}
