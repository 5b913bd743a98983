package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// fioRun reads each finished Job's report into its target's status; once every target is done or failed, the
// Benchmark ends.
func (r *BenchmarkReconciler) fioRun(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		if ts.State == v1alpha1.TargetDone || ts.State == v1alpha1.TargetFailed {
			continue
		}
		if err := r.fioTargetResult(ctx, b, ts); err != nil {
			return ctrl.Result{}, err
		}
	}
	var done, failed []string
	for _, ts := range b.Status.Targets {
		switch ts.State {
		case v1alpha1.TargetDone:
			done = append(done, ts.Name)
		case v1alpha1.TargetFailed:
			failed = append(failed, fmt.Sprintf("%s (%s: %s)", ts.Name, ts.Reason, ts.Message))
		}
	}
	if len(done)+len(failed) < len(b.Status.Targets) {
		benchplan.SetPhase(&b.Status, v1alpha1.BenchmarkRunning,
			fmt.Sprintf("fio: %d of %d device(s) done", len(done)+len(failed), len(b.Status.Targets)), r.now())
		return ctrl.Result{}, nil // the Jobs and their pods wake the Benchmark
	}
	if len(failed) > 0 {
		reason := b.Status.Targets[0].Reason
		for _, ts := range b.Status.Targets {
			if ts.State == v1alpha1.TargetFailed {
				reason = ts.Reason
				break
			}
		}
		r.fioAbort(b, &fioRefusal{reason: reason, msg: "fio failed on target(s) " + strings.Join(failed, "; ")})
		return ctrl.Result{}, nil
	}
	t := metav1.NewTime(r.now())
	b.Status.CompletedAt = &t
	msg := fmt.Sprintf("fio ran on %d device(s): %s", len(done), strings.Join(done, ", "))
	benchplan.SetPhase(&b.Status, v1alpha1.BenchmarkCompleted, "completed", r.now())
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionCompleted, Status: metav1.ConditionTrue,
		Reason: "Completed", Message: msg, ObservedGeneration: b.Generation})
	event.BenchmarkCompleted.Emit(b, r.Recorder, msg)
	return requeue, nil // settle hands the devices back
}

// fioTargetResult looks at one target's Job: when it finished, its report (termination message, else the last
// JSON line of its log) fills the target's status, and the target is done or failed.
func (r *BenchmarkReconciler) fioTargetResult(ctx context.Context, b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus) error {
	job := &batchv1.Job{}
	name := resources.BenchJobName(b, resources.BenchPhaseFio, 0, ts.Name)
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, job); apierrors.IsNotFound(err) {
		r.failTarget(b, ts, event.TargetUnavailable, failreason.PodLost, fmt.Sprintf("Job %s is gone before it reported", name))
		return nil
	} else if err != nil {
		return err
	}
	finished, failedJob, _ := jobFinished(job)
	if !finished {
		return nil
	}
	rep, ok, err := r.fioReport(ctx, b, job)
	if err != nil {
		return err
	}
	node, token := "", ""
	if ts.Fio != nil {
		node, token = ts.Fio.Node, ts.Fio.WriteToken
	}
	switch {
	case !ok:
		reason := failreason.InvalidOutput
		if failedJob {
			reason = jobReason(job, failreason.Crashed)
		}
		r.failTarget(b, ts, event.TargetUnavailable, reason, fmt.Sprintf("Job %s ended (%s) without a report of znsbench fio", name, jobState(job)))
		return nil
	case rep.Refused != "":
		ts.Fio = benchplan.FioTargetStatus(rep, node, token)
		r.failTarget(b, ts, event.TargetUnavailable, failreason.TargetUnavailable, "znsbench fio refused the device: "+rep.Refused)
	case rep.Failed != "":
		ts.Fio = benchplan.FioTargetStatus(rep, node, token)
		r.failTarget(b, ts, event.TargetUnavailable, failreason.Other, "fio failed: "+rep.Failed)
	default:
		ts.Fio = benchplan.FioTargetStatus(rep, node, token)
		ts.State = v1alpha1.TargetDone
	}
	return nil
}

func jobState(job *batchv1.Job) string {
	if _, failed, _ := jobFinished(job); failed {
		return "failed: " + jobFailureReason(job)
	}
	return "completed"
}

// fioReport reads znsbench fio's report from the Job's newest pod.
func (r *BenchmarkReconciler) fioReport(ctx context.Context, b *v1alpha1.Benchmark, job *batchv1.Job) (fio.RunnerReport, bool, error) {
	pod, term, err := r.jobPod(ctx, b, job)
	if err != nil || pod == nil {
		return fio.RunnerReport{}, false, err
	}
	if term != nil {
		if rep, ok := decodeFioReport(term.Message); ok {
			return rep, true, nil
		}
	}
	if r.Logs != nil {
		if text, err := r.Logs.Read(ctx, pod.Namespace, pod.Name, resources.RunnerContainer); err == nil {
			lines := strings.Split(strings.TrimSpace(text), "\n")
			for i := len(lines) - 1; i >= 0; i-- {
				if rep, ok := decodeFioReport(lines[i]); ok {
					return rep, true, nil
				}
			}
		}
	}
	return fio.RunnerReport{}, false, nil
}

// decodeFioReport takes a JSON object that names its device as znsbench fio's report.
func decodeFioReport(s string) (fio.RunnerReport, bool) {
	s = strings.TrimSpace(s)
	var rep fio.RunnerReport
	if !strings.HasPrefix(s, "{") || json.Unmarshal([]byte(s), &rep) != nil || rep.Device == "" {
		return fio.RunnerReport{}, false
	}
	return rep, true
}

// fioSettle stops the Jobs and hands the devices back: the device targets' PersistentVolumes this Benchmark made
// go (their claims go with the Benchmark, or now), and the lock leaves the database targets' volumes. Idempotent.
func (r *BenchmarkReconciler) fioSettle(ctx context.Context, b *v1alpha1.Benchmark) error {
	if err := r.stopJobs(ctx, b, ""); err != nil {
		return err
	}
	me := b.Namespace + "/" + b.Name
	for _, t := range b.Spec.Targets {
		var node, dev string
		if t.Device != nil {
			node, dev = t.Device.NodeName, t.Device.DeviceName
			claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: resources.FioClaimName(b, t.Name)}}
			if err := r.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
				return err
			}
		} else if ts := targetStatus(b, t.Name); ts != nil && ts.Fio != nil {
			node, dev = ts.Fio.Node, ts.Fio.Device
		} else if db, err := r.getDB(ctx, b, t.Database); err != nil {
			return err
		} else if db != nil {
			node, dev = db.DeviceNode(), db.DeviceName()
		}
		if node == "" || dev == "" {
			continue
		}
		pv := &corev1.PersistentVolume{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: v1alpha1.DevicePVName(node, dev)}, pv)
		if apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return err
		}
		if pv.Annotations[resources.AnnotationFioBenchmark] != me {
			continue
		}
		if pv.Annotations[v1alpha1.AnnotationOwner] == resources.FioOwnerValue(b) {
			// Retain: the device keeps whatever fio wrote; only the Kubernetes object goes.
			if err := r.Delete(ctx, pv); client.IgnoreNotFound(err) != nil {
				return err
			}
			continue
		}
		delete(pv.Annotations, resources.AnnotationFioBenchmark)
		if err := r.Update(ctx, pv); err != nil {
			return err
		}
	}
	return nil
}
