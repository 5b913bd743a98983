// Package podprogress says, from a pod's status alone, why the pod is not ready yet: still starting, or stuck
// in a way that needs someone to act (the scheduler cannot place it, a container crash-loops, its image cannot
// be pulled, the kubelet cannot create a container). The ZNSDatabase's Available condition carries what it
// says, so that `kubectl get` and the e2e logs show the cause of a long start instead of only "waiting".
package podprogress

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/logtail"
)

// Progress is what a pod is doing on its way to ready.
type Progress struct {
	// Stall is the Available condition's reason when the pod cannot become ready by waiting (one of
	// v1alpha1.ReasonPodUnschedulable, ReasonCrashLoopBackOff, ReasonImagePullBackOff and
	// ReasonContainerCannotStart, named after the kubelet's own waiting reasons), "" while it progresses.
	Stall string
	// Message says what the pod is doing, naming the container and quoting the kubelet or the scheduler.
	Message string
}

// Stalled reports whether the pod needs someone to act.
func (p Progress) Stalled() bool { return p.Stall != "" }

// waiting reasons of the kubelet that do not pass by themselves
var (
	imagePullReasons  = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true}
	cannotStartReason = map[string]bool{"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
		"PreCreateHookError": true, "PreStartHookError": true, "PostStartHookError": true}
)

// Describe says what pod (nil when it does not exist yet) is doing on its way to ready. The message does not
// name the pod: the caller does.
func Describe(pod *corev1.Pod) Progress {
	if pod == nil {
		return Progress{Message: "not created yet"}
	}
	if pod.DeletionTimestamp != nil {
		return Progress{Message: "terminating (the StatefulSet replaces it)"}
	}
	if c := Condition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
		return Progress{Stall: v1alpha1.ReasonPodUnschedulable, Message: "cannot be scheduled: " + oneLine(c.Message)}
	}
	for _, cs := range pod.Status.InitContainerStatuses {
		if cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 {
			continue
		}
		if p, done := container("init container", cs); done {
			return p
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Ready {
			continue
		}
		if p, done := container("container", cs); done {
			return p
		}
	}
	switch {
	case pod.Spec.NodeName == "":
		return Progress{Message: "waiting for the scheduler"}
	case len(pod.Status.ContainerStatuses) == 0 && len(pod.Status.InitContainerStatuses) == 0:
		return Progress{Message: fmt.Sprintf("on node %s, its containers not created yet", pod.Spec.NodeName)}
	case Condition(pod, corev1.PodReady) != nil && Condition(pod, corev1.PodReady).Status == corev1.ConditionTrue:
		return Progress{Message: "ready, with an earlier revision or configuration than the StatefulSet's current one"}
	}
	return Progress{Message: "its containers are ready, the pod not yet"}
}

// container describes one container that is not ready (or an init container that has not succeeded); done is
// false when it says nothing worth reporting (a container that is ready).
func container(kind string, cs corev1.ContainerStatus) (Progress, bool) {
	restarts := ""
	if cs.RestartCount > 0 {
		restarts = fmt.Sprintf(", restarted %d time%s%s", cs.RestartCount, plural(cs.RestartCount), lastExit(cs.LastTerminationState.Terminated))
	}
	switch s := cs.State; {
	case s.Waiting != nil:
		w := s.Waiting
		detail := w.Reason
		if w.Message != "" {
			detail += ": " + oneLine(w.Message)
		}
		switch {
		case w.Reason == "CrashLoopBackOff":
			return Progress{Stall: v1alpha1.ReasonCrashLoopBackOff, Message: fmt.Sprintf("%s %s keeps exiting (CrashLoopBackOff%s)",
				kind, cs.Name, restarts)}, true
		case imagePullReasons[w.Reason]:
			return Progress{Stall: v1alpha1.ReasonImagePullBackOff, Message: fmt.Sprintf("%s %s cannot get its image %s (%s)",
				kind, cs.Name, cs.Image, detail)}, true
		case cannotStartReason[w.Reason]:
			return Progress{Stall: v1alpha1.ReasonContainerCannotStart, Message: fmt.Sprintf("%s %s cannot start (%s)",
				kind, cs.Name, detail)}, true
		}
		return Progress{Message: fmt.Sprintf("%s %s is waiting (%s%s)", kind, cs.Name, detail, restarts)}, true
	case s.Running != nil:
		notReady := ", not ready yet: its readiness probe has not passed"
		if kind == "init container" {
			notReady = ""
		}
		return Progress{Message: fmt.Sprintf("%s %s running since %s%s%s", kind, cs.Name,
			s.Running.StartedAt.UTC().Format(time.RFC3339), restarts, notReady)}, true
	case s.Terminated != nil:
		return Progress{Message: fmt.Sprintf("%s %s exited%s%s", kind, cs.Name, lastExit(s.Terminated), restarts)}, true
	}
	return Progress{}, false
}

// lastExit says how a container's run ended: its exit code, the runtime's reason and the end of its message
// (the project's containers write their reason or their log's last lines there).
func lastExit(t *corev1.ContainerStateTerminated) string {
	if t == nil {
		return ""
	}
	s := fmt.Sprintf("; last exit code %d", t.ExitCode)
	if t.Reason != "" {
		s += " (" + t.Reason + ")"
	}
	if !t.FinishedAt.IsZero() {
		s += " at " + t.FinishedAt.UTC().Format(time.RFC3339)
	}
	if m := oneLine(logtail.Last(t.Message, 3)); m != "" {
		s += ": " + m
	}
	return s
}

// maxMessage bounds what one pod's message adds to a condition (the API allows 32768 characters in all).
const maxMessage = 600

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxMessage {
		s = "…" + strings.ToValidUTF8(s[len(s)-maxMessage:], "")
	}
	return s
}

func plural(n int32) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Condition is the pod's condition of type typ, nil when the pod has none.
func Condition(pod *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == typ {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
