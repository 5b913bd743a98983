package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/logtail"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// driveSidecarSlack is how long after the sidecar's grace period the operator still waits for its report once
// the runner's Job finished, before it records the figures as missing.
const driveSidecarSlack = time.Minute

// driveView reads what the drive sidecar reported for a finished Job of one phase of one target (spec.drive);
// nil without spec.drive. pending is true while the sidecar still finishes: the kubelet stops it only after the
// runner ended, and it then reads the last counters and runs the rest of the trace through the model. What
// reading it found worth an Event (figures missing, a counter reset) is returned for the decision to record.
func (r *BenchmarkReconciler) driveView(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase, transactions int64) (*v1alpha1.DriveFigures, bool, []benchplan.Emit, error) {
	if !b.Spec.Drive.Enabled() {
		return nil, false, nil, nil
	}
	in, err := r.jobInput(ctx, b, phase, it, db)
	if err != nil {
		return nil, false, nil, err
	}
	plan := resources.PlanDrive(b, in)
	if !plan.Sidecar() {
		return &v1alpha1.DriveFigures{CountersUnavailable: plan.CountersUnavailable, ModelUnavailable: plan.ModelUnavailable}, false, nil, nil
	}
	job := &batchv1.Job{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: resources.BenchJobName(b, phase, it, db.Name)}, job); err != nil {
		return nil, false, nil, client.IgnoreNotFound(err)
	}
	pod, err := r.sidecarPod(ctx, b, in, job)
	if err != nil {
		return nil, false, nil, err
	}
	_, _, finishedAt := jobFinished(job)
	rep, pending, missing := sidecarReport(pod, finishedAt, r.now())
	if pending {
		return nil, true, nil, nil
	}
	what := phaseLabel(phase, it)
	if missing != "" {
		return &v1alpha1.DriveFigures{Device: in.DeviceName(), CountersUnavailable: missing, ModelUnavailable: missing}, false,
			[]benchplan.Emit{{Event: event.DriveFiguresMissing, Args: []any{db.Name, what, missing}}}, nil
	}
	var events []benchplan.Emit
	if rep.CountersReset {
		events = append(events, benchplan.Emit{Event: event.DriveCountersReset, Args: []any{db.Name, what, rep.CountersUnavailable}})
	}
	return benchplan.DriveFiguresOf(rep, transactions), false, events, nil
}

// sidecarPod is the pod whose drive sidecar read the phase: the runner's, or its observer's when the client ran
// away from the device.
func (r *BenchmarkReconciler) sidecarPod(ctx context.Context, b *v1alpha1.Benchmark, in resources.BenchJobInput, runner *batchv1.Job) (*corev1.Pod, error) {
	if !resources.NeedsObserver(b, in) {
		pod, _, err := r.jobPod(ctx, b, runner)
		return pod, err
	}
	return r.newestPod(ctx, b.Namespace, resources.ObserverLabels(b, in.Phase, in.DB.Name, in.Iteration))
}

func phaseLabel(phase string, it int32) string {
	if phase == resources.BenchPhaseRun {
		return fmt.Sprintf("run %d", it)
	}
	return phase
}

// sidecarReport is the drive sidecar's report in a Job's pod; pending while it may still come, otherwise a
// reason when there is none.
func sidecarReport(pod *corev1.Pod, finishedAt, now time.Time) (rep drivereport.Report, pending bool, missing string) {
	if pod == nil {
		return rep, false, "the drive sidecar's pod is gone, and its report with it"
	}
	for _, cs := range pod.Status.InitContainerStatuses {
		if cs.Name != resources.DriveContainer {
			continue
		}
		t := cs.State.Terminated
		if t == nil {
			break
		}
		msg := strings.TrimSpace(t.Message)
		if msg == "" {
			return rep, false, fmt.Sprintf("the drive sidecar ended (exit %d, %s) without a report", t.ExitCode, t.Reason)
		}
		rep, err := drivereport.Decode([]byte(msg))
		if err != nil {
			return rep, false, fmt.Sprintf("the drive sidecar's report is unreadable: %v: %s", err, logtail.Last(msg, 3))
		}
		return rep, false, ""
	}
	limit := driveSidecarSlack
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		limit += time.Duration(*g) * time.Second
	}
	if finishedAt.IsZero() || now.Sub(finishedAt) < limit {
		return rep, true, ""
	}
	return rep, false, fmt.Sprintf("the drive sidecar did not report within %s of the runner's end", limit)
}
