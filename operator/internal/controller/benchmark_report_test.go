package controller_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/controller"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// runningPod plays the kubelet for a run Job whose runner is still running: a Running pod, Ready (its runner
// reached the start barrier), whose log so far is text (recorded sysbench output).
func runningPod(t *testing.T, ns, job, text string) *corev1.Pod {
	t.Helper()
	return runningPodAt(t, ns, job, text, "")
}

// runningPodAt is runningPod with the pod's IP (none when ip is ""), set in the same status write that makes it
// Ready: the operator may act on a Ready pod at once.
func runningPodAt(t *testing.T, ns, job, text, ip string) *corev1.Pod {
	t.Helper()
	j := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: job}, j)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: job + "-", Labels: j.Spec.Template.Labels},
		Spec: j.Spec.Template.Spec}
	create(t, pod)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the operator may annotate it meanwhile
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		pod.Status.Phase, pod.Status.PodIP = corev1.PodRunning, ip
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: resources.RunnerContainer, Image: benchTestImage, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		return k8s.Status().Update(ctx, pod)
	})
	if err != nil {
		t.Fatal(err)
	}
	podLogs.set(ns, pod.Name, text)
	return pod
}

// TestBenchmarkLiveResultAndElapsed: while a run is under way, status carries the last report interval of each
// running runner (read from its log), the elapsed time and the estimated end of the runs; once done, the
// one-line result that `kubectl get benchmarks` prints, and the elapsed time stops.
func TestBenchmarkLiveResultAndElapsed(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "node-"+ns) // a node per run: -count=N reuses no device
	b := benchmark(ns, "live", "tenant1", "inno")
	b.Spec.Prepare = ptr.To(false)
	b.Spec.Baseline = "inno"
	b.Spec.Iterations = 2
	create(t, b)
	for _, target := range []string{"tenant1", "inno"} {
		sum := okSummary("verify", target)
		sum.RowsExpected, sum.RowsFound = 2000, 2000
		finishBenchJob(t, ns, "live-verify-"+target, sum, "", false)
	}

	// Real sysbench output, cut after its third interval line, as the log of a runner still running.
	raw, err := os.ReadFile("../sysbench/testdata/run-rocksdb-ri1.txt")
	if err != nil {
		t.Fatal(err)
	}
	var partial []string
	intervals := 0
	for _, line := range strings.Split(string(raw), "\n") {
		partial = append(partial, line)
		if strings.HasPrefix(line, "[ ") {
			if intervals++; intervals == 3 {
				break
			}
		}
	}
	iv, ok := controller.LastInterval(strings.Join(partial, "\n"))
	if !ok || iv.Time != 3 {
		t.Fatalf("the cut log's last interval: %+v %v", iv, ok)
	}
	runningPod(t, ns, "live-run1-tenant1", strings.Join(partial, "\n"))
	runningPod(t, ns, "live-run1-inno", "") // at the barrier too, or no run starts

	var cur *v1alpha1.Benchmark
	eventually(t, "live figures of tenant1", func() error {
		cur = getBench(t, b)
		l := targetStatus(cur, "tenant1").Live
		if l == nil {
			return fmt.Errorf("no live figures; status %+v", cur.Status)
		}
		if l.Iteration != 1 || l.Seconds != "3" || l.TPS != fmt.Sprintf("%.2f", iv.TPS) || l.LatencyPctMs != fmt.Sprintf("%.2f", iv.LatencyMS) {
			return fmt.Errorf("live %+v, want the interval at 3 s: tps %.2f lat %.2f", l, iv.TPS, iv.LatencyMS)
		}
		return nil
	})
	metrics := newMetricsClient(t, ns, true)
	checkLiveMetrics(t, metrics, ns, "live", "tenant1", iv.TPS)
	if targetStatus(cur, "inno").Live != nil {
		t.Errorf("inno's runner printed no interval, yet live %+v", targetStatus(cur, "inno").Live)
	}
	want := cur.Status.StartAt.Add(time.Duration(b.Spec.DurationSeconds)*time.Second +
		time.Duration(b.Spec.StartDelaySeconds+b.Spec.DurationSeconds)*time.Second)
	if e := cur.Status.EstimatedCompletionAt; e == nil || !e.Time.Equal(want) {
		t.Errorf("estimatedCompletionAt %v, want run 1's start + its duration + one more run with its delay = %v", e, want)
	}
	// Under way, nothing follows the clock (kubectl shows the time since startedAt): no status write per poll.
	if cur.Status.Elapsed != "" || cur.Status.StartedAt == nil || cur.Status.Result != "" {
		t.Errorf("elapsed %q, startedAt %v, result %q while running", cur.Status.Elapsed, cur.Status.StartedAt, cur.Status.Result)
	}

	// finishBenchJob terminates the running pods; run 2's are new ones, Ready at once
	for it := 1; it <= 2; it++ {
		finishBenchJob(t, ns, fmt.Sprintf("live-run%d-tenant1", it), runSummary("tenant1", it, 150, 10, false), seriesLog(t, "tenant1", it, 150), false)
		finishBenchJob(t, ns, fmt.Sprintf("live-run%d-inno", it), runSummary("inno", it, 100, 20, false), seriesLog(t, "inno", it, 100), false)
	}
	cur = waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	// inno, a volume, ran its runs without the write-only phase: the result says so.
	if got, want := cur.Status.Result, "tenant1 1.50x, p95 0.50x vs inno (baseline not in steady state)"; got != want || got != report.ResultLine(cur) {
		t.Errorf("result %q, want %q", got, want)
	}
	el, _ := report.Elapsed(cur, time.Now())
	if cur.Status.Elapsed != report.Short(el) || cur.Status.EstimatedCompletionAt != nil {
		t.Errorf("elapsed %q (want %s from startedAt to completedAt), estimate %v", cur.Status.Elapsed, report.Short(el), cur.Status.EstimatedCompletionAt)
	}
	if l := targetStatus(cur, "tenant1").Live; l != nil {
		t.Errorf("live figures kept after the run: %+v", l)
	}
	checkResultMetrics(t, metrics, ns, "live", map[string]float64{"tenant1": 150, "inno": 100}, map[string]float64{"tenant1": 1.5})

	// kubectl get benchmarks prints them.
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := k8s.Get(ctx, client.ObjectKey{Name: "benchmarks.zns-mysql.dev"}, crd); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	cols := map[string]string{}
	if len(versions) > 0 {
		list, _, _ := unstructured.NestedSlice(versions[0].(map[string]any), "additionalPrinterColumns")
		for _, c := range list {
			m := c.(map[string]any)
			cols[fmt.Sprint(m["name"])] = fmt.Sprint(m["jsonPath"])
		}
	}
	if cols["Result"] != ".status.result" || cols["Started"] != ".status.startedAt" || cols["Took"] != ".status.elapsed" {
		t.Errorf("printer columns %v", cols)
	}
}
