package controller_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/test/kubetest"
)

// autoReady plays the StatefulSet controller and kubelet for a namespace: every StatefulSet becomes ready on
// its current generation shortly after it changes, the way a rolled pod becomes ready.
func autoReady(t *testing.T, ns string) {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		kubetest.ReadyStatefulSets(c, k8s, 150*time.Millisecond, nil, client.InNamespace(ns))
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func benchmark(ns, name string, targets ...string) *v1alpha1.Benchmark {
	b := &v1alpha1.Benchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.BenchmarkSpec{
			Workload: "oltp_update_index", Tables: 2, TableSize: 1000, Threads: 8, DurationSeconds: 10,
			ReportIntervalSeconds: 1, Iterations: 1,
		},
	}
	for _, tg := range targets {
		b.Spec.Targets = append(b.Spec.Targets, v1alpha1.BenchmarkTarget{Name: tg})
	}
	return b
}

func getBench(t *testing.T, b *v1alpha1.Benchmark) *v1alpha1.Benchmark {
	t.Helper()
	out := &v1alpha1.Benchmark{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func waitBenchPhase(t *testing.T, b *v1alpha1.Benchmark, phase v1alpha1.BenchmarkPhase) *v1alpha1.Benchmark {
	t.Helper()
	var cur *v1alpha1.Benchmark
	eventually(t, "benchmark phase "+string(phase), func() error {
		cur = getBench(t, b)
		if cur.Status.Phase != phase {
			return fmt.Errorf("phase %q (%s), targets %+v", cur.Status.Phase, cur.Status.Progress, cur.Status.Targets)
		}
		return nil
	})
	return cur
}

func targetStatus(b *v1alpha1.Benchmark, name string) v1alpha1.TargetStatus {
	for _, ts := range b.Status.Targets {
		if ts.Name == name {
			return ts
		}
	}
	return v1alpha1.TargetStatus{}
}

func waitBenchEvent(t *testing.T, b *v1alpha1.Benchmark, reason string) string {
	t.Helper()
	var msg string
	eventually(t, "benchmark event "+reason, func() error {
		list := &corev1.EventList{}
		if err := k8s.List(ctx, list, client.InNamespace(b.Namespace)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "Benchmark" && e.InvolvedObject.Name == b.Name && e.Reason == reason {
				msg = e.Message
				return nil
			}
		}
		return errors.New("not yet")
	})
	return msg
}

// absentReason fails when the Benchmark has an Event with reason.
func absentReason(t *testing.T, b *v1alpha1.Benchmark, reason string) error {
	t.Helper()
	list := &corev1.EventList{}
	if err := k8s.List(ctx, list, client.InNamespace(b.Namespace)); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Benchmark" && e.InvolvedObject.Name == b.Name && e.Reason == reason {
			return fmt.Errorf("event %s: %s", reason, e.Message)
		}
	}
	return nil
}

// startRun plays the runners of a run reaching the start barrier: a Running, Ready pod for each Job. It returns
// the common start the operator sets then, once every pod carries it.
func startRun(t *testing.T, b *v1alpha1.Benchmark, jobs ...string) string {
	t.Helper()
	if at := getBench(t, b).Status.StartAt; at != nil {
		t.Errorf("the start %s is set before the runners of %v are ready", at, jobs)
	}
	// The first runner is reachable at 127.0.0.1 (the operator runs in this process): it is posted the start too.
	// Its pod carries that address from the moment it is Ready, since the operator may give the start at once.
	posted := make(chan string, 4)
	firstIP := "127.0.0.1"
	if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(resources.RunnerReadyPort))); err != nil {
		t.Logf("port %d is taken here: the start's post is not checked (%v)", resources.RunnerReadyPort, err)
		posted, firstIP = nil, ""
	} else {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			posted <- r.Method + " " + r.URL.Path + " " + string(body)
			w.WriteHeader(http.StatusNoContent)
		})}
		go func() { _ = srv.Serve(l) }()
		defer srv.Close()
	}
	var pods []*corev1.Pod
	for i, job := range jobs {
		ip := ""
		if i == 0 {
			ip = firstIP
		}
		pods = append(pods, runningPodAt(t, b.Namespace, job, "", ip))
	}
	var startAt string
	eventually(t, "the common start given to "+strings.Join(jobs, ", "), func() error {
		at := getBench(t, b).Status.StartAt
		if at == nil {
			return fmt.Errorf("no start yet")
		}
		startAt = at.UTC().Format(time.RFC3339)
		for _, pod := range pods {
			cur := &corev1.Pod{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
				return err
			}
			if got := cur.Annotations[resources.AnnotationStartAt]; got != startAt {
				return fmt.Errorf("pod %s: start %q, want the common %s", pod.Name, got, startAt)
			}
		}
		return nil
	})
	if posted != nil {
		select {
		case got := <-posted:
			if want := "POST " + resources.RunnerStartPath + " " + startAt; got != want {
				t.Errorf("posted to the runner: %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("the start was not posted to the runner at 127.0.0.1:%d", resources.RunnerReadyPort)
		}
	}
	return startAt
}

// finishBenchJob plays the Job controller and kubelet for a runner Job: its pod terminates with the summary as
// termination message and log, and the Job completes or fails.
func finishBenchJob(t *testing.T, ns, name string, sum *benchresult.Summary, log string, failed bool) *batchv1.Job {
	t.Helper()
	job, _ := finishBenchJobWith(t, ns, name, sum, log, failed, nil)
	return job
}

// finishBenchJobWith is finishBenchJob for a pod with the drive sidecar, in the state given (nil: no sidecar).
func finishBenchJobWith(t *testing.T, ns, name string, sum *benchresult.Summary, log string, failed bool, sidecar *corev1.ContainerState) (*batchv1.Job, *corev1.Pod) {
	t.Helper()
	job := &batchv1.Job{}
	var pod *corev1.Pod
	waitObject(t, client.ObjectKey{Namespace: ns, Name: name}, job)
	if sum != nil {
		msg, err := sum.Encode()
		if err != nil {
			t.Fatal(err)
		}
		// A Job of backoffLimit 0 has one pod: the one a test made Running (startRun) terminates, else a new one.
		if pod = runningJobPod(t, job); pod == nil {
			pod = &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: name + "-", Labels: job.Spec.Template.Labels},
				Spec:       job.Spec.Template.Spec,
			}
			create(t, pod)
		}
		now := metav1.Now()
		exit := int32(0)
		phase := corev1.PodSucceeded
		if failed {
			exit, phase = 1, corev1.PodFailed
		}
		// the operator may annotate the pod meanwhile (the common start): write the status on its latest version
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
				return err
			}
			pod.Status.Phase = phase
			pod.Status.Conditions = nil
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name: resources.RunnerContainer, Image: benchTestImage,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Message: string(msg), StartedAt: now, FinishedAt: now}},
			}}
			if sidecar != nil {
				pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: resources.DriveContainer, Image: benchTestImage, State: *sidecar}}
			}
			return k8s.Status().Update(ctx, pod)
		})
		if err != nil {
			t.Fatal(err)
		}
		podLogs.set(ns, pod.Name, log+"\n"+benchresult.SummaryPrefix+string(msg)+"\n")
	}
	setJobDone(t, job, failed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
	return job, pod
}

// runningJobPod is the pod of job that a test made Running, nil when there is none.
func runningJobPod(t *testing.T, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	if err := k8s.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p
		}
	}
	return nil
}

func setJobDone(t *testing.T, job *batchv1.Job, failed bool, reason, message string) {
	t.Helper()
	now := metav1.Now()
	job.Status.StartTime = &now
	if failed {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: reason, Message: message},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: reason, Message: message},
		}
	} else {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	}
	if err := k8s.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}

func okSummary(phase, target string) *benchresult.Summary {
	return &benchresult.Summary{Phase: phase, Target: target, OK: true}
}

func runSummary(target string, it int, tps, latPct float64, device bool) *benchresult.Summary {
	s := &benchresult.Summary{
		Phase: "run", Target: target, Iteration: it, OK: true, Workload: "oltp_update_index", Threads: 8,
		DurationSec: 10, Transactions: int64(tps * 10), TPS: tps, QPS: tps * 4, LatencyAvgMS: latPct / 2,
		LatencyPctMS: latPct, LatencyMaxMS: latPct * 3, Percentile: 95, ErrorsPerSec: 0.5, Intervals: 10,
		TPSRelDevPct: 3.5, LatencyRelDevPct: 7.25, ReportIntervalSec: 1,
	}
	if device {
		s.Device, s.DeviceWrittenBytes = "nullb0", int64(tps*10)*4096
		s.BytesPerTransaction = 4096
	}
	return s
}

func seriesLog(t *testing.T, target string, it int, tps float64) string {
	t.Helper()
	s := benchresult.Series{Target: target, Iteration: it, Percentile: 95, ReportIntervalSec: 1,
		Time: []float64{1, 2, 3}, TPS: []float64{tps - 1, tps, tps + 1}, QPS: []float64{4 * tps, 4 * tps, 4 * tps},
		LatencyMS: []float64{5, 6, 7}, ErrorsPerSec: []float64{0, 1, 0}, ReconnectsPerSec: []float64{0, 0, 0}}
	line, err := s.Line()
	if err != nil {
		t.Fatal(err)
	}
	return "[ 1s ] thds: 8 tps: ...\n" + line
}

func jobArg(job *batchv1.Job, flag string) string {
	args := job.Spec.Template.Spec.Containers[0].Command
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// profileOf is the profile of the database's configuration: its own, or while held the one its lease names.
func profileOf(t *testing.T, ns, name string) v1alpha1.Profile {
	t.Helper()
	db := &v1alpha1.ZNSDatabase{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, db); err != nil {
		t.Fatal(err)
	}
	return db.Status.Profile
}

func waitProfile(t *testing.T, ns, name string, p v1alpha1.Profile) {
	t.Helper()
	eventually(t, name+" profile "+string(p), func() error {
		if got := profileOf(t, ns, name); got != p {
			return fmt.Errorf("profile %s", got)
		}
		return nil
	})
}

// availableDBs creates a zoned MyRocks database (its preflight passed) and a conventional InnoDB one, and
// waits until both are Available.
func availableDBs(t *testing.T, ns, node string) (zoned, innodb *v1alpha1.ZNSDatabase) {
	t.Helper()
	autoReady(t, ns)
	zoned = zonedDB(ns, "tenant1", node, "nullb0")
	innodb = volumeDB(ns, "inno", v1alpha1.EngineInnoDB, v1alpha1.FlavorPercona)
	create(t, zoned)
	create(t, innodb)
	passPreflight(t, zoned, "nullb0")
	passFormat(t, zoned)
	waitCondition(t, zoned, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
	waitCondition(t, innodb, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")
	return zoned, innodb
}

// onePreparePerTarget: a Benchmark of several runs over the same data made one prepare and one verify per target.
func onePreparePerTarget(t *testing.T, ns string, targets int) {
	t.Helper()
	for _, phase := range []string{resources.BenchPhasePrepare, resources.BenchPhaseVerify} {
		jobs := &batchv1.JobList{}
		if err := k8s.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{resources.LabelBenchPhase: phase}); err != nil {
			t.Fatal(err)
		}
		if len(jobs.Items) != targets {
			t.Errorf("%d %s Jobs, want one per target", len(jobs.Items), phase)
		}
	}
}
