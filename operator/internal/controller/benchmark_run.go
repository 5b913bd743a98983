package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/podprogress"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// run gathers what the Running decision needs (benchplan.Run) and carries it out.
func (r *BenchmarkReconciler) run(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	obs, err := r.observeRun(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.carryOut(ctx, b, benchplan.Run(obs))
}

// observeRun reads the databases of the active targets and, of each target whose run of this iteration is not
// recorded yet, its run Job: where its runner is at the start barrier (barrierView); the live figures while it
// runs; once it finished well, the drive sidecar's outcome and the interval series.
func (r *BenchmarkReconciler) observeRun(ctx context.Context, b *v1alpha1.Benchmark) (benchplan.RunObserved, error) {
	it := b.Status.Iteration
	obs := benchplan.RunObserved{
		PhaseObserved: benchplan.PhaseObserved{Benchmark: b, Databases: map[string]*v1alpha1.ZNSDatabase{},
			Jobs: map[benchplan.JobKey]benchplan.Job{}, Now: r.now()},
		Live: map[string]*v1alpha1.LiveFigures{}, Series: map[string]benchresult.Series{}, SeriesMissing: map[string]string{},
	}
	for _, ts := range active(b) {
		db, err := r.getDB(ctx, b, ts.Name)
		if err != nil {
			return obs, err
		}
		if db == nil {
			continue
		}
		obs.Databases[ts.Name] = db
		if benchplan.HasIteration(ts, it) {
			continue
		}
		sum, done, exists, err := r.jobResult(ctx, b, resources.BenchPhaseRun, it, db)
		if err != nil {
			return obs, err
		}
		job := benchplan.Job{Exists: exists, Done: done, Summary: sum}
		switch {
		case exists && !done:
			pod, term, err := r.barrierView(ctx, b, it, ts.Name, &job)
			if err != nil {
				return obs, err
			}
			if b.Status.StartAt == nil {
				break
			}
			if live := r.readLive(ctx, pod, term, it); live != nil {
				obs.Live[ts.Name] = live
			}
		case done && sum.OK:
			job.Drive, job.DrivePending, job.DriveEvents, err = r.driveView(ctx, b, resources.BenchPhaseRun, it, db, sum.Transactions)
			if err != nil {
				return obs, err
			}
			if job.ClientNode, job.DatabaseNode, err = r.clientNodes(ctx, b, resources.BenchPhaseRun, it, db); err != nil {
				return obs, err
			}
			if !job.DrivePending {
				if err := r.readSeries(ctx, b, it, ts.Name, &obs); err != nil {
					return obs, err
				}
			}
		}
		obs.Jobs[benchplan.JobKey{Phase: resources.BenchPhaseRun, Iteration: it, Target: ts.Name}] = job
	}
	return obs, nil
}

// barrierView reads where a run Job under way is at the common start: when it was created, whether its runner
// waits at the barrier (its pod Ready) and whether its pod carries the start in status.startAt. It returns the
// Job's pod (nil when there is none yet) and its runner's end, for readLive.
func (r *BenchmarkReconciler) barrierView(ctx context.Context, b *v1alpha1.Benchmark, it int32, target string, job *benchplan.Job) (*corev1.Pod, *corev1.ContainerStateTerminated, error) {
	j := &batchv1.Job{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: resources.BenchJobName(b, resources.BenchPhaseRun, it, target)}, j); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	job.Created = j.CreationTimestamp.Time
	pod, term, err := r.jobPod(ctx, b, j)
	if err != nil || pod == nil {
		return nil, nil, err
	}
	if c := podprogress.Condition(pod, corev1.PodReady); c != nil {
		job.Ready = c.Status == corev1.ConditionTrue
	}
	if b.Status.StartAt != nil {
		job.StartGiven = pod.Annotations[resources.AnnotationStartAt] == startAnnotation(b.Status.StartAt.Time)
	}
	return pod, term, nil
}

func startAnnotation(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// giveStart is the GiveStart action: the common start as an annotation on the run's pod, which the kubelet writes
// into the runner's start file, then posted to the runner (postStart). A pod that is gone has nothing to give it
// to: its Job's end fails the target.
func (r *BenchmarkReconciler) giveStart(ctx context.Context, b *v1alpha1.Benchmark, a benchplan.Action) error {
	j := &batchv1.Job{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: resources.BenchJobName(b, a.Phase, a.Iteration, a.Target)}, j); err != nil {
		return client.IgnoreNotFound(err)
	}
	pod, _, err := r.jobPod(ctx, b, j)
	if err != nil || pod == nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		resources.AnnotationStartAt: startAnnotation(a.StartAt)}}})
	if err != nil {
		return err
	}
	if err := r.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.postStart(ctx, pod, a.StartAt)
	return nil
}

// startPostTimeout bounds the call that hands a runner its start: the annotation stays the way there.
const startPostTimeout = 3 * time.Second

// postStart posts the common start to the runner's endpoint too: the annotation reaches the runner only when the
// kubelet rewrites its file, which took 75 s under emulation (a run missed its start so). A pod without an IP
// (envtest's) or a call that fails (a NetworkPolicy that keeps the operator out) leaves the annotation alone to
// carry it; the failure is logged, not retried.
func (r *BenchmarkReconciler) postStart(ctx context.Context, pod *corev1.Pod, at time.Time) {
	if pod.Status.PodIP == "" {
		return
	}
	url := fmt.Sprintf("http://%s%s", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(resources.RunnerReadyPort)), resources.RunnerStartPath)
	ctx, cancel := context.WithTimeout(ctx, startPostTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(startAnnotation(at)))
	if err == nil {
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1024))
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusConflict {
				err = fmt.Errorf("the runner answered %s", resp.Status)
			}
		}
	}
	if err != nil {
		log.FromContext(ctx).Info("the start could not be posted to the runner; its pod's annotation carries it", "pod", pod.Name, "url", url, "error", err.Error())
	}
}
