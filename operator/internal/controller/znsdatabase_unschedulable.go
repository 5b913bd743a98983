package controller

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/podprogress"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// preflightUnschedulable reports a pod of the running preflight Job that the scheduler cannot place. A
// nodeName that names no node (or a node that is cordoned, tainted or full) would otherwise leave the pod
// Pending until the Job's deadline while the status said a preflight is inspecting; the scheduler's own message
// says why. The Job is left to its deadline (resources.PreflightDeadlineSeconds), after which the usual retry
// runs it again; a pod the scheduler places meanwhile (the node joined) turns the status back to Inspecting.
func (r *ZNSDatabaseReconciler) preflightUnschedulable(ctx context.Context, db *v1alpha1.ZNSDatabase, job *batchv1.Job) (*ctrl.Result, error) {
	// Only this Job's pods: one of a deleted earlier Job may still be Pending under the same labels.
	selector := labels.SelectorFromSet(db.Labels(resources.ComponentPreflight))
	if job.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
		if err != nil {
			return nil, err
		}
		selector = s
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(db.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		scheduled := podprogress.Condition(pod, corev1.PodScheduled)
		if scheduled == nil || scheduled.Status != corev1.ConditionFalse || scheduled.Reason != corev1.PodReasonUnschedulable {
			continue
		}
		hint := "check the node its claim's PersistentVolume is pinned to"
		if node := db.DeviceNode(); node != "" {
			hint = fmt.Sprintf("check that node %q exists and accepts pods (kubectl get node %s), or correct the node name by re-creating the database", node, node)
		}
		msg := fmt.Sprintf("the preflight pod %s for %s cannot be scheduled: %s; %s. The Job gives up after %d s and runs again %s later",
			pod.Name, describeDevice(db), scheduled.Message, hint, resources.PreflightDeadlineSeconds, r.PreflightRetry)
		if !isBlockedBy(db, v1alpha1.ReasonPreflightUnschedulable) {
			event.PreflightUnschedulable.Emit(db, r.Recorder, msg)
		}
		setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonPreflightUnschedulable, msg)
		blocked(db, v1alpha1.ReasonPreflightUnschedulable, msg)
		// The pod's and the Job's changes wake the database; nothing to poll.
		return &ctrl.Result{}, nil
	}
	return nil, nil
}

// jobFailure says why a failed Job failed when its pod left no report: the Job controller's reason (its
// deadline passed, say), "" when it gave none.
func jobFailure(job *batchv1.Job, retry time.Duration) string {
	for _, c := range job.Status.Conditions {
		if c.Type != batchv1.JobFailed || c.Status != corev1.ConditionTrue || c.Reason == "" {
			continue
		}
		if c.Reason == batchv1.JobReasonDeadlineExceeded && job.Spec.ActiveDeadlineSeconds != nil {
			return fmt.Sprintf("the Job did not finish within its deadline of %d s (%s), so it was stopped; it runs again %s later",
				*job.Spec.ActiveDeadlineSeconds, c.Message, retry)
		}
		return fmt.Sprintf("the Job failed (%s: %s)", c.Reason, c.Message)
	}
	return ""
}
