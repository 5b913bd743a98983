package controller

import (
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
)

// TailLogs reads only the end of a container's log. PodLogs that implement it are asked for the last lines of
// a running runner's log instead of all of it, to follow a run without reading hours of intervals each time.
type TailLogs interface {
	Tail(ctx context.Context, namespace, pod, container string, lines int64) (string, error)
}

// liveTailLines is enough for the last interval line even with sysbench warnings in between.
const liveTailLines = 20

// Tail implements TailLogs.
func (c ClientsetPodLogs) Tail(ctx context.Context, namespace, pod, container string, lines int64) (string, error) {
	rc, err := c.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &lines}).Stream(ctx)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	return string(b), err
}

// readLive reads the last report interval of a target's running run from its pod (barrierView found it), nil
// when there is none to read. The decision keeps it in status.targets[].live only when a new interval appeared,
// so that following a run costs one status write per interval at most. Any error leaves live as it was: it is a
// view, not a result.
func (r *BenchmarkReconciler) readLive(ctx context.Context, pod *corev1.Pod, term *corev1.ContainerStateTerminated, it int32) *v1alpha1.LiveFigures {
	if r.Logs == nil || pod == nil || term != nil || pod.Status.Phase != corev1.PodRunning {
		return nil
	}
	var err error
	var text string
	if t, ok := r.Logs.(TailLogs); ok {
		text, err = t.Tail(ctx, pod.Namespace, pod.Name, resources.RunnerContainer, liveTailLines)
	} else {
		text, err = r.Logs.Read(ctx, pod.Namespace, pod.Name, resources.RunnerContainer)
	}
	if err != nil {
		return nil
	}
	iv, ok := LastInterval(text)
	if !ok {
		return nil
	}
	return &v1alpha1.LiveFigures{Iteration: it, Seconds: strconv.FormatFloat(iv.Time, 'f', -1, 64), TPS: benchplan.Decimal(iv.TPS),
		LatencyPctMs: benchplan.Decimal(iv.LatencyMS), ReadAt: metav1.NewTime(r.now().Truncate(time.Second))}
}

// LastInterval is the last sysbench interval line in a piece of log.
func LastInterval(text string) (sysbench.Interval, bool) {
	p := sysbench.NewParser()
	for _, line := range strings.Split(text, "\n") {
		p.Line(line)
	}
	res, _ := p.Result()
	if res == nil || len(res.Intervals) == 0 {
		return sysbench.Interval{}, false
	}
	return res.Intervals[len(res.Intervals)-1], true
}

// timing fills what `kubectl get benchmarks` and `kubectl zns watch` show: the one-line result, the whole
// length once it ended and, once the runs are scheduled, the estimated end. Nothing here follows the clock, so
// that a Benchmark that waits writes nothing: while it is under way `kubectl get` shows the time since
// status.startedAt (a date column) and watch computes it; the estimate comes from the run's common start.
func (r *BenchmarkReconciler) timing(b *v1alpha1.Benchmark) {
	b.Status.Result = report.ResultLine(b)
	b.Status.Elapsed = ""
	if el, ok := report.Elapsed(b, r.now()); ok && b.Status.CompletedAt != nil {
		b.Status.Elapsed = report.Short(el)
	}
	switch {
	case b.Status.Phase == v1alpha1.BenchmarkCompleted || b.Status.Phase == v1alpha1.BenchmarkFailed:
		b.Status.EstimatedCompletionAt = nil
	case b.Status.Phase == v1alpha1.BenchmarkRunning && b.Status.StartAt != nil:
		if left, ok := report.Remaining(b, b.Status.StartAt.Time); ok {
			t := metav1.NewTime(b.Status.StartAt.Add(left))
			b.Status.EstimatedCompletionAt = &t
		}
	}
}
