package podprogress

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

var started = metav1.NewTime(time.Date(2026, 11, 28, 22, 1, 2, 0, time.UTC))

func scheduled(containers, inits []corev1.ContainerStatus) *corev1.Pod {
	return &corev1.Pod{
		Spec: corev1.PodSpec{NodeName: "zns-guest"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: containers, InitContainerStatuses: inits,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}},
	}
}

func waiting(name, reason, message string, restarts int32, last *corev1.ContainerStateTerminated) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: "zns-mysql/mariadb:dev", RestartCount: restarts,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
		LastTerminationState: corev1.ContainerState{Terminated: last}}
}

func running(name string, ready bool) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Ready: ready,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}
}

func succeeded(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
}

func TestDescribe(t *testing.T) {
	crashed := &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: started,
		Message: "2026-11-28 22:01:01 0 [Note] Starting MariaDB\n2026-11-28 22:01:02 0 [ERROR] RocksDB: Error opening instance\n" +
			"2026-11-28 22:01:02 0 [ERROR] Plugin 'ROCKSDB' init function returned error.\n2026-11-28 22:01:02 0 [ERROR] Aborting\n"}
	unschedulable := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: 1 Insufficient memory. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
	}}}}
	terminating := scheduled(nil, nil)
	terminating.DeletionTimestamp = &started
	ready := scheduled([]corev1.ContainerStatus{running("mysqld", true)}, nil)
	ready.Status.Conditions = append(ready.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})

	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		stall string
		want  []string // parts of the message
	}{
		{"no pod", nil, "", []string{"not created yet"}},
		{"terminating", terminating, "", []string{"terminating"}},
		{"unscheduled", &corev1.Pod{}, "", []string{"waiting for the scheduler"}},
		{"unschedulable", unschedulable, v1alpha1.ReasonPodUnschedulable, []string{"cannot be scheduled: 0/1 nodes are available: 1 Insufficient memory."}},
		{"placed", scheduled(nil, nil), "", []string{"on node zns-guest"}},
		{"init running", scheduled([]corev1.ContainerStatus{waiting("mysqld", "PodInitializing", "", 0, nil)},
			[]corev1.ContainerStatus{running("dbinit", false)}), "", []string{"init container dbinit running since 2026-11-28T22:01:02Z"}},
		{"init crash loop", scheduled(nil, []corev1.ContainerStatus{waiting("dbinit", "CrashLoopBackOff", "back-off 40s restarting failed container=dbinit", 3, crashed)}),
			v1alpha1.ReasonCrashLoopBackOff, []string{"init container dbinit keeps exiting", "restarted 3 times", "last exit code 1 (Error) at 2026-11-28T22:01:02Z",
				"Plugin 'ROCKSDB' init function returned error. | 2026-11-28 22:01:02 0 [ERROR] Aborting"}},
		{"creating", scheduled([]corev1.ContainerStatus{waiting("mysqld", "ContainerCreating", "", 0, nil)}, []corev1.ContainerStatus{succeeded("dbinit")}),
			"", []string{"container mysqld is waiting (ContainerCreating)"}},
		{"probe", scheduled([]corev1.ContainerStatus{running("mysqld", false)}, []corev1.ContainerStatus{succeeded("dbinit")}),
			"", []string{"container mysqld running since 2026-11-28T22:01:02Z, not ready yet: its readiness probe has not passed"}},
		{"restarted once", scheduled([]corev1.ContainerStatus{{Name: "mysqld", RestartCount: 1, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}, nil),
			"", []string{"restarted 1 time; last exit code 137 (OOMKilled)"}},
		{"crash loop", scheduled([]corev1.ContainerStatus{waiting("mysqld", "CrashLoopBackOff", "back-off 5m0s", 12, crashed)}, nil),
			v1alpha1.ReasonCrashLoopBackOff, []string{"container mysqld keeps exiting (CrashLoopBackOff, restarted 12 times; last exit code 1", "[ERROR] Aborting"}},
		{"image", scheduled([]corev1.ContainerStatus{waiting("mysqld", "ErrImageNeverPull", `Container image "zns-mysql/mariadb:dev" is not present with pull policy of Never`, 0, nil)}, nil),
			v1alpha1.ReasonImagePullBackOff, []string{"container mysqld cannot get its image zns-mysql/mariadb:dev (ErrImageNeverPull: Container image"}},
		{"config", scheduled([]corev1.ContainerStatus{waiting("mysqld", "CreateContainerConfigError", `configmap "db-mycnf-1" not found`, 0, nil)}, nil),
			v1alpha1.ReasonContainerCannotStart, []string{`container mysqld cannot start (CreateContainerConfigError: configmap "db-mycnf-1" not found)`}},
		{"ready pod of an old revision", ready, "", []string{"ready, with an earlier revision"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Describe(tc.pod)
			if p.Stall != tc.stall || p.Stalled() != (tc.stall != "") {
				t.Errorf("stall %q (stalled %v), want %q", p.Stall, p.Stalled(), tc.stall)
			}
			for _, w := range tc.want {
				if !strings.Contains(p.Message, w) {
					t.Errorf("message %q lacks %q", p.Message, w)
				}
			}
			if strings.Contains(p.Message, "\n") {
				t.Errorf("message %q spans lines", p.Message)
			}
		})
	}
}

// A long termination message (a log's tail, with FallbackToLogsOnError) is cut from its start, whole runes kept.
func TestLongMessagesAreBounded(t *testing.T) {
	long := strings.Repeat("é", 2*maxMessage) + " the end"
	p := Describe(scheduled([]corev1.ContainerStatus{waiting("mysqld", "CrashLoopBackOff", "", 2,
		&corev1.ContainerStateTerminated{ExitCode: 1, Message: long})}, nil))
	if len(p.Message) > maxMessage+200 || !strings.HasSuffix(p.Message, "the end)") || !strings.Contains(p.Message, "…") {
		t.Errorf("message of %d bytes: %q", len(p.Message), p.Message)
	}
	if !strings.ContainsRune(p.Message, 'é') || strings.ContainsRune(p.Message, '\uFFFD') {
		t.Errorf("message cut inside a rune: %q", p.Message)
	}
}
