package controller_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// createJobPod plays the Job controller: a pod of job's template, bound to node ("" for none yet).
func createJobPod(t *testing.T, job *batchv1.Job, node string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, GenerateName: job.Name + "-", Labels: job.Spec.Template.Labels},
		Spec: *job.Spec.Template.Spec.DeepCopy()}
	pod.Spec.NodeName = node
	create(t, pod)
	return pod
}

// startPod plays the scheduler and kubelet for a Job's pod: bound to node, running, and ready when ip is set.
func startPod(t *testing.T, job *batchv1.Job, node, ip string) *corev1.Pod {
	t.Helper()
	pod := createJobPod(t, job, node)
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP = ip
	ready := corev1.ConditionFalse
	if ip != "" {
		ready = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: ready}}
	for _, c := range pod.Spec.InitContainers {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// finishOnNode is finishBenchJob for a pod that ran on node.
func finishOnNode(t *testing.T, job *batchv1.Job, node string, sum *benchresult.Summary, log string) {
	t.Helper()
	msg, err := sum.Encode()
	if err != nil {
		t.Fatal(err)
	}
	pod := createJobPod(t, job, node)
	now := metav1.Now()
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: resources.RunnerContainer, Image: benchTestImage,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: string(msg), StartedAt: now, FinishedAt: now}}}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	podLogs.set(job.Namespace, pod.Name, log+"\n"+benchresult.SummaryPrefix+string(msg)+"\n")
	setJobDone(t, job, false, "", "")
}

// Clients on other nodes: a target whose device is known gets an observer on the device's node, with the drive
// sidecar, and its client's Job only once the observer is ready, naming it; the client runs away from the
// database. The drive figures come from the observer's sidecar, and the status records where the clients ran.
func TestBenchmarkClientsOnOtherNodes(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-ca")
	b := benchmark(ns, "away", "tenant1", "inno")
	noPrepare(b)
	b.Spec.Drive = &v1alpha1.DriveSpec{Counters: true}
	b.Spec.Clients = &v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsOnOtherNode}
	create(t, b)
	verify := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "away-verify-tenant1"}, verify)
	if a := verify.Spec.Template.Spec.Affinity; a == nil || a.PodAntiAffinity == nil {
		t.Errorf("the verify client's affinity %+v, want away from the database", a)
	}
	verifyAll(t, ns, "away", "tenant1", "inno")

	obs := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: resources.ObserverJobName(b, resources.BenchPhaseRun, 1, "tenant1")}, obs)
	if obs.Labels[v1alpha1.LabelComponent] != resources.ComponentObserver || len(obs.Spec.Template.Spec.InitContainers) != 1 {
		t.Fatalf("observer Job labels %v, init containers %d: want the observer's, with the drive sidecar", obs.Labels, len(obs.Spec.Template.Spec.InitContainers))
	}
	// the provisioned volume has no device to read: its client needs no observer
	inno := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "away-run1-inno"}, inno)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: resources.ObserverJobName(b, resources.BenchPhaseRun, 1, "inno")}, &batchv1.Job{}); err == nil {
		t.Error("an observer for the provisioned volume")
	}

	pod := startPod(t, obs, "bench-node-ca", "")
	consistently(t, "no client Job while its observer is not ready", 2*time.Second, func() error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "away-run1-tenant1"}, &batchv1.Job{}); err == nil {
			return fmt.Errorf("the client's Job exists")
		}
		return nil
	})
	waitBenchEvent(t, b, "ObserverStarting")
	pod.Status.PodIP = "10.1.2.3"
	pod.Status.Conditions[1].Status = corev1.ConditionTrue
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	run := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "away-run1-tenant1"}, run)
	spec := run.Spec.Template.Spec
	if got := jobArg(run, "--observer"); got != "http://10.1.2.3:9106" || slices.Contains(spec.Containers[0].Command, "--device") || len(spec.InitContainers) != 0 {
		t.Errorf("the away client: --observer %q, command %v, %d init containers: want the observer's address, no device, no sidecar",
			got, spec.Containers[0].Command, len(spec.InitContainers))
	}

	finishOnNode(t, run, "client-node-1", runSummary("tenant1", 1, 300, 5, true), seriesLog(t, "tenant1", 1, 300))
	finishOnNode(t, inno, "client-node-2", runSummary("inno", 1, 100, 15, false), seriesLog(t, "inno", 1, 100))
	consistently(t, "no result while the observer's sidecar finishes", 2*time.Second, func() error {
		if ts := targetStatus(getBench(t, b), "tenant1"); len(ts.Iterations) != 0 {
			return fmt.Errorf("tenant1 has %d iteration(s)", len(ts.Iterations))
		}
		return nil
	})
	stopSidecar(t, pod, recordedDriveReport(t, "qemu-run-nvme1n1-ocp.json"))
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)

	z := targetStatus(done, "tenant1")
	if d := z.Iterations[0].Drive; d == nil || d.Counters == nil || d.Counters.MediaWrittenBytes != "50331648" {
		t.Errorf("tenant1's drive figures %+v: want the observer sidecar's report", d)
	}
	if c := z.Client; c == nil || c.Placement != v1alpha1.ClientsOnOtherNode || !slices.Equal(c.Nodes, []string{"client-node-1"}) ||
		c.DatabaseNode != "bench-node-ca" || c.SharedNode {
		t.Errorf("tenant1's client record %+v", c)
	}
	if c := targetStatus(done, "inno").Client; c == nil || !slices.Equal(c.Nodes, []string{"client-node-2"}) || c.SharedNode {
		t.Errorf("inno's client record %+v", c)
	}
}

// clientsInPool is a Benchmark of one target without a prepare, its clients on nodes labelled pool=pool.
func clientsInPool(ns, name, target, pool string) *v1alpha1.Benchmark {
	b := benchmark(ns, name, target)
	noPrepare(b)
	b.Spec.Clients = &v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsBySelector,
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}}}
	return b
}

// An observer that cannot be scheduled for three minutes fails its target with the scheduler's words, and a
// Warning Event; the target's client is never created.
func TestBenchmarkObserverUnschedulable(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-cu")
	b := clientsInPool(ns, "stuck", "tenant1", "clients")
	create(t, b)
	verifyAll(t, ns, "stuck", "tenant1")
	obs := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: resources.ObserverJobName(b, resources.BenchPhaseRun, 1, "tenant1")}, obs)
	pod := createJobPod(t, obs, "")
	pod.Status.Phase = corev1.PodPending
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.", LastTransitionTime: metav1.NewTime(time.Now().Add(-4 * time.Minute))}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	msg := waitBenchEvent(t, b, "ObserverFailed")
	if !strings.Contains(msg, "didn't match Pod's node affinity") {
		t.Errorf("ObserverFailed says %q", msg)
	}
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
	if ts := targetStatus(done, "tenant1"); ts.State != v1alpha1.TargetFailed || ts.Reason != "PodLost" {
		t.Errorf("tenant1: %s %s: %s", ts.State, ts.Reason, ts.Message)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stuck-run1-tenant1"}, &batchv1.Job{}); err == nil {
		t.Error("the client's Job was created beside an observer that never became ready")
	}
}

// Admission refuses a selector without Selector placement and the reverse, and clients for fio, which has none.
func TestBenchmarkClientsAdmission(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "clients"}}
	for _, bad := range []struct {
		name, want string
		clients    *v1alpha1.BenchmarkClients
		tool       v1alpha1.BenchmarkTool
	}{
		{"selector-missing", "nodeSelector goes with placement Selector", &v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsBySelector}, ""},
		{"selector-unused", "nodeSelector goes with placement Selector", &v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsOnOtherNode, NodeSelector: sel}, ""},
		{"selector-default", "nodeSelector goes with placement Selector", &v1alpha1.BenchmarkClients{NodeSelector: sel}, ""},
		{"placement-unknown", "Unsupported value: \"Elsewhere\"", &v1alpha1.BenchmarkClients{Placement: "Elsewhere"}, ""},
		{"fio", "spec.clients does not apply to a fio Benchmark", &v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsOnOtherNode}, v1alpha1.ToolFio},
	} {
		b := benchmark(ns, "bad-"+bad.name, "tenant1")
		b.Spec.Clients, b.Spec.Tool = bad.clients, bad.tool
		if err := k8s.Create(ctx, b); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want it refused with %q", bad.name, err, bad.want)
		}
	}
	good := benchmark(ns, "good", "tenant1")
	good.Spec.Clients = &v1alpha1.BenchmarkClients{}
	create(t, good)
	if got := getBench(t, good).Spec.Clients.Placement; got != v1alpha1.ClientsOnDatabaseNode {
		t.Errorf("spec.clients {} defaults placement to %q, want DatabaseNode", got)
	}
}

// A client's pod that the scheduler cannot place (a node selector that matches no node) fails its target once it
// has been stuck for three minutes, with the scheduler's words, instead of waiting out the Job's deadline.
func TestBenchmarkClientUnschedulable(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-cn")
	b := clientsInPool(ns, "nowhere", "inno", "nobody")
	create(t, b)
	verify := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "nowhere-verify-inno"}, verify)
	pod := createJobPod(t, verify, "")
	why := "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
	pod.Status.Phase = corev1.PodPending
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: why, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute))}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	consistently(t, "no failure within the grace", 2*time.Second, func() error {
		if ts := targetStatus(getBench(t, b), "inno"); ts.State == v1alpha1.TargetFailed {
			return fmt.Errorf("inno failed after a minute unschedulable: %s", ts.Message)
		}
		return nil
	})
	pod.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now().Add(-4 * time.Minute))
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkFailed)
	if ts := targetStatus(done, "inno"); ts.Reason != "PodLost" || !strings.Contains(ts.Message, why) {
		t.Errorf("inno: %s: %s, want PodLost with the scheduler's words", ts.Reason, ts.Message)
	}
	eventually(t, "the stuck client's Job deleted", func() error {
		j := &batchv1.Job{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(verify), j); apierrors.IsNotFound(err) || err == nil && !j.DeletionTimestamp.IsZero() {
			return nil
		} else if err != nil {
			return err
		}
		return errors.New("still there")
	})
}
