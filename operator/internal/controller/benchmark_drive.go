package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// driveSidecarSlack is how long after the sidecar's grace period the operator still waits for its report once
// the runner's Job finished, before it records the figures as missing.
const driveSidecarSlack = time.Minute

// driveOutcome reads what the drive sidecar reported for a finished Job of one phase of one target (spec.drive)
// and records the Events reading it found; nil without spec.drive. pending is true while the sidecar still
// finishes: the kubelet stops it only after the runner ended, and it then reads the last counters and runs the
// rest of the trace through the model.
func (r *BenchmarkReconciler) driveOutcome(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase, transactions int64) (*v1alpha1.DriveFigures, bool, error) {
	figures, pending, events, err := r.driveView(ctx, b, phase, it, db, transactions)
	for _, e := range events {
		e.Event.Emit(b, r.Recorder, e.Args...)
	}
	return figures, pending, err
}

// driveView is driveOutcome without recording anything: the Events are returned for the decision to record.
func (r *BenchmarkReconciler) driveView(ctx context.Context, b *v1alpha1.Benchmark, phase string, it int32, db *v1alpha1.ZNSDatabase, transactions int64) (*v1alpha1.DriveFigures, bool, []benchplan.Emit, error) {
	if !b.Spec.Drive.Enabled() {
		return nil, false, nil, nil
	}
	in, err := r.jobInput(ctx, b, phase, it, db, time.Time{})
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
	pod, _, err := r.jobPod(ctx, b, job)
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
	return driveFigures(rep, transactions), false, events, nil
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
			return rep, false, fmt.Sprintf("the drive sidecar's report is unreadable: %v: %s", err, lastLines(msg, 3))
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

// driveFigures turns a sidecar report into status figures; transactions (0 outside runs) gives the per
// transaction figures.
func driveFigures(rep drivereport.Report, transactions int64) *v1alpha1.DriveFigures {
	f := &v1alpha1.DriveFigures{Device: rep.Device, CountersUnavailable: rep.CountersUnavailable, ModelUnavailable: rep.ModelUnavailable}
	if rep.DeviceBytes > 0 {
		f.DeviceBytes = strconv.FormatInt(rep.DeviceBytes, 10)
	}
	if rep.BlockLayerWrittenBytes != nil {
		f.BlockLayerWrittenBytes = strconv.FormatInt(*rep.BlockLayerWrittenBytes, 10)
	}
	if c := rep.Counters; c != nil {
		dc := &v1alpha1.DriveCounters{
			Logs:                       c.Logs,
			HostWrittenBytes:           strconv.FormatInt(c.HostWrittenBytes, 10),
			HostWrittenResolutionBytes: strconv.FormatInt(c.HostResolutionBytes, 10),
			HostWriteCommands:          strconv.FormatInt(c.HostWriteCommands, 10),
			HostBytesPerTransaction:    perTransaction(c.HostWrittenBytes, transactions),
			MediaUnavailable:           c.NoMedia,
		}
		if c.MediaWrittenBytes != nil {
			dc.MediaWrittenBytes = strconv.FormatInt(*c.MediaWrittenBytes, 10)
			dc.MediaSource = c.MediaSource
			dc.MediaBytesPerTransaction = perTransaction(*c.MediaWrittenBytes, transactions)
			if wa, ok := c.WriteAmplification(); ok {
				dc.WriteAmplification = strconv.FormatFloat(wa, 'f', 3, 64)
			}
		}
		f.Counters = dc
	}
	for _, m := range rep.Model {
		md := v1alpha1.ModelledDrive{
			OverProvisioningPercent:  int32(m.OverProvisioningPercent),
			Label:                    drivereport.Label(m.OverProvisioningPercent),
			HostWrittenBytes:         strconv.FormatInt(m.HostWrittenBytes, 10),
			MediaWrittenBytes:        strconv.FormatInt(m.MediaWrittenBytes, 10),
			MediaBytesPerTransaction: perTransaction(m.MediaWrittenBytes, transactions),
			SteadyState:              m.SteadyState,
		}
		if wa, ok := m.WriteAmplification(); ok {
			md.WriteAmplification = strconv.FormatFloat(wa, 'f', 3, 64)
		}
		f.Modelled = append(f.Modelled, md)
	}
	return f
}

func perTransaction(bytes, transactions int64) string {
	if v, ok := drivereport.PerTransaction(bytes, transactions); ok {
		return decimal(v)
	}
	return ""
}

// meanDrive is the drive figures of a target's runs taken together: bytes summed over the runs (so that the
// write amplification is total media over total host, not a mean of ratios) and per transaction divided by all
// their transactions. Counters count only when every run has them, a modelled factor only when every run has it:
// a mean never silently covers part of the runs.
func meanDrive(its []v1alpha1.IterationResult) *v1alpha1.DriveFigures {
	if len(its) == 0 || its[0].Drive == nil {
		return nil
	}
	first := its[0].Drive
	out := &v1alpha1.DriveFigures{Device: first.Device, CountersUnavailable: first.CountersUnavailable, ModelUnavailable: first.ModelUnavailable}
	var tx int64
	for _, it := range its {
		tx += it.Transactions
	}
	if c, ok := sumCounters(its); ok {
		out.Counters = c
		host, _ := strconv.ParseInt(c.HostWrittenBytes, 10, 64)
		c.HostBytesPerTransaction = perTransaction(host, tx)
		if media, err := strconv.ParseInt(c.MediaWrittenBytes, 10, 64); err == nil {
			c.MediaBytesPerTransaction = perTransaction(media, tx)
			if host > 0 {
				c.WriteAmplification = strconv.FormatFloat(float64(media)/float64(host), 'f', 3, 64)
			}
		}
	} else if out.CountersUnavailable == "" && first.Counters != nil {
		out.CountersUnavailable = "not every run has drive counters"
	}
	for _, m := range first.Modelled {
		if md, ok := sumModelled(its, m.OverProvisioningPercent, tx); ok {
			out.Modelled = append(out.Modelled, md)
		}
	}
	return out
}

func sumCounters(its []v1alpha1.IterationResult) (*v1alpha1.DriveCounters, bool) {
	var host, media, cmds int64
	mediaKnown := true
	var base *v1alpha1.DriveCounters
	for _, it := range its {
		if it.Drive == nil || it.Drive.Counters == nil {
			return nil, false
		}
		c := it.Drive.Counters
		if base == nil {
			base = c
		}
		h, err1 := strconv.ParseInt(c.HostWrittenBytes, 10, 64)
		n, err2 := strconv.ParseInt(c.HostWriteCommands, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		host, cmds = host+h, cmds+n
		if m, err := strconv.ParseInt(c.MediaWrittenBytes, 10, 64); err == nil && c.MediaSource == base.MediaSource {
			media += m
		} else {
			mediaKnown = false
		}
	}
	out := &v1alpha1.DriveCounters{Logs: base.Logs, HostWrittenBytes: strconv.FormatInt(host, 10),
		HostWrittenResolutionBytes: base.HostWrittenResolutionBytes, HostWriteCommands: strconv.FormatInt(cmds, 10)}
	switch {
	case mediaKnown:
		out.MediaWrittenBytes, out.MediaSource = strconv.FormatInt(media, 10), base.MediaSource
	case base.MediaUnavailable != "":
		out.MediaUnavailable = base.MediaUnavailable
	default:
		out.MediaUnavailable = "not every run has the drive's media bytes"
	}
	return out, true
}

func sumModelled(its []v1alpha1.IterationResult, op int32, tx int64) (v1alpha1.ModelledDrive, bool) {
	out := v1alpha1.ModelledDrive{OverProvisioningPercent: op, Label: drivereport.Label(int(op)), SteadyState: true}
	var host, media int64
	for _, it := range its {
		if it.Drive == nil {
			return out, false
		}
		found := false
		for _, m := range it.Drive.Modelled {
			h, err1 := strconv.ParseInt(m.HostWrittenBytes, 10, 64)
			md, err2 := strconv.ParseInt(m.MediaWrittenBytes, 10, 64)
			if m.OverProvisioningPercent == op && err1 == nil && err2 == nil {
				host, media, found = host+h, media+md, true
				out.SteadyState = out.SteadyState && m.SteadyState
			}
		}
		if !found {
			return out, false
		}
	}
	out.HostWrittenBytes, out.MediaWrittenBytes = strconv.FormatInt(host, 10), strconv.FormatInt(media, 10)
	out.MediaBytesPerTransaction = perTransaction(media, tx)
	if host > 0 {
		out.WriteAmplification = strconv.FormatFloat(float64(media)/float64(host), 'f', 3, 64)
	}
	return out, true
}
