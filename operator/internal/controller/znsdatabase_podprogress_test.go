package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// A database whose mysqld pod does not become ready says why in its Available condition, and a pod that cannot
// become ready by waiting (here a crash loop) gets a reason of its own and one Warning Event, however often it
// restarts; once mysqld runs again the database is back to Starting. envtest runs no kubelet: the test writes the
// pod's status as the kubelet would.
func TestAvailableSaysWhatThePodDoes(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := volumeDB(ns, "slow", v1alpha1.EngineRocksDB, v1alpha1.FlavorMariaDB)
	create(t, db)
	waitAvailableMessage(t, db, v1alpha1.ReasonStarting, "ready; now: not created yet")

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: db.PodName(), Labels: db.Labels(resources.ComponentDatabase)},
		Spec: corev1.PodSpec{NodeName: "node-a",
			InitContainers: []corev1.Container{{Name: "dbinit", Image: "zns-mysql/mariadb:dev"}},
			Containers:     []corev1.Container{{Name: "mysqld", Image: "zns-mysql/mariadb:dev"}}},
	}
	create(t, pod)
	started := metav1.NewTime(time.Now().Truncate(time.Second))
	setPodStatus(t, pod, corev1.PodStatus{Phase: corev1.PodPending,
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "dbinit", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}},
		ContainerStatuses:     []corev1.ContainerStatus{{Name: "mysqld", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}})
	waitAvailableMessage(t, db, v1alpha1.ReasonStarting, "init container dbinit running since")

	crashLoop := func(restarts int32) corev1.PodStatus {
		return corev1.PodStatus{Phase: corev1.PodRunning,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "dbinit", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "mysqld", RestartCount: restarts,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
					Message: "[ERROR] Plugin 'ROCKSDB' init function returned error.\n[ERROR] Aborting"}}}}}
	}
	setPodStatus(t, pod, crashLoop(3))
	cond := waitAvailableMessage(t, db, v1alpha1.ReasonCrashLoopBackOff, "restarted 3 times; last exit code 1 (Error)")
	for _, want := range []string{"pod " + db.PodName() + ": container mysqld keeps exiting", "[ERROR] Aborting", "kubectl logs --previous"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("CrashLoopBackOff message %q lacks %q", cond.Message, want)
		}
	}
	if p := get(t, db).Status.Conditions; !progressingTrue(p) {
		t.Errorf("Progressing %+v: want True while the pod rolls out", p)
	}
	if msg := waitEvent(t, db, v1alpha1.ReasonCrashLoopBackOff); msg != cond.Message {
		t.Errorf("Event %q, want the condition's message %q", msg, cond.Message)
	}

	setPodStatus(t, pod, crashLoop(4))
	waitAvailableMessage(t, db, v1alpha1.ReasonCrashLoopBackOff, "restarted 4 times")
	if n := eventCount(t, db, v1alpha1.ReasonCrashLoopBackOff); n != 1 {
		t.Errorf("%d CrashLoopBackOff Events after two restarts, want 1 (one per stall)", n)
	}

	setPodStatus(t, pod, corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "mysqld", RestartCount: 5,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}})
	waitAvailableMessage(t, db, v1alpha1.ReasonStarting, "container mysqld running since")
}

func setPodStatus(t *testing.T, pod *corev1.Pod, status corev1.PodStatus) {
	t.Helper()
	eventually(t, "pod status written", func() error {
		cur := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
			return err
		}
		cur.Status = status
		return k8s.Status().Update(ctx, cur)
	})
}

// waitAvailableMessage waits for Available False with reason and a message that holds part.
func waitAvailableMessage(t *testing.T, db *v1alpha1.ZNSDatabase, reason, part string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	eventually(t, fmt.Sprintf("Available %s with %q", reason, part), func() error {
		for _, c := range get(t, db).Status.Conditions {
			if c.Type != v1alpha1.ConditionAvailable {
				continue
			}
			got = c
			if c.Status == metav1.ConditionFalse && c.Reason == reason && strings.Contains(c.Message, part) {
				return nil
			}
			return fmt.Errorf("Available %s/%s: %s", c.Status, c.Reason, c.Message)
		}
		return fmt.Errorf("no Available condition")
	})
	return got
}

func progressingTrue(conds []metav1.Condition) bool {
	for _, c := range conds {
		if c.Type == v1alpha1.ConditionProgressing {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func eventCount(t *testing.T, db *v1alpha1.ZNSDatabase, reason string) int {
	t.Helper()
	list := &corev1.EventList{}
	if err := k8s.List(ctx, list, client.InNamespace(db.Namespace)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.InvolvedObject.Name == db.Name && e.InvolvedObject.Kind == "ZNSDatabase" && e.Reason == reason {
			n += int(max(e.Count, 1))
		}
	}
	return n
}
