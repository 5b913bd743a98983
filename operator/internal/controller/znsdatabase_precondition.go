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

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/precondition"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// wantedFilesystem is what the device is judged for: ZenFS, a zoned btrfs or f2fs, or storage.device's ext4 or
// xfs.
func wantedFilesystem(db *v1alpha1.ZNSDatabase) string {
	if fs := db.FormattedFilesystem(); fs != "" {
		return fs
	}
	return string(db.ZonedFilesystem())
}

// acceptedDevice describes a device that passed its preflight, in the words of its kind.
func acceptedDevice(db *v1alpha1.ZNSDatabase, d *zbd.Device) string {
	if !db.IsZoned() {
		return fmt.Sprintf("%s is a conventional device of %s, scheduler %s", describeDevice(db),
			resource.NewQuantity(d.CapacityBytes, resource.BinarySI), d.Scheduler)
	}
	return fmt.Sprintf("%s is %s with %d zones of %s, scheduler %s", describeDevice(db), d.Model,
		d.NrZones, resource.NewQuantity(d.ZoneSizeBytes, resource.BinarySI), d.Scheduler)
}

// recordPrecondition copies what the format Job's preconditioning did into status.precondition, and announces it
// once: a finished one with its totals (a Warning when its rounds did not reach steady state), one that did not
// run or stopped with why. A failed Job's report is read again until the Job runs again, so an unchanged record
// says nothing new.
func (r *ZNSDatabaseReconciler) recordPrecondition(db *v1alpha1.ZNSDatabase, p *dbinit.PreconditionState, drive *v1alpha1.DriveFigures) {
	st := preconditionStatus(p)
	st.Drive = drive
	if equality.Semantic.DeepEqual(db.Status.Precondition, st) {
		return
	}
	db.Status.Precondition = st
	msg := fmt.Sprintf("%s: %s", describeDevice(db), st.Message)
	switch {
	case p.Complete && p.RoundsAsked > 0 && !p.SteadyState:
		event.DevicePreconditionNotSteady.Emit(db, r.Recorder, msg)
	case p.Complete:
		event.DevicePreconditioned.Emit(db, r.Recorder, msg)
	case len(p.Passes) == 0 && len(p.Rounds) == 0 && p.StartedAt.IsZero():
		event.DeviceNotPreconditioned.Emit(db, r.Recorder, msg)
	default:
		event.DevicePreconditionStopped.Emit(db, r.Recorder, msg)
	}
}

// preconditionStatus is the API's form of a precondition report: figures as decimal strings, lists bounded as
// the CRD bounds them.
func preconditionStatus(p *dbinit.PreconditionState) *v1alpha1.DevicePreconditionStatus {
	st := &v1alpha1.DevicePreconditionStatus{
		Preconditioned:    p.Complete,
		WrittenBytes:      precondition.WrittenBytes(*p),
		SteadyState:       p.SteadyState,
		SteadyStateReason: shorten(p.SteadyReason, 400),
	}
	switch {
	case p.Complete:
		st.Message = shorten(precondition.Summary(*p), 600)
	case len(p.Passes) > 0 || len(p.Rounds) > 0:
		st.Message = shorten(p.Note+"; before that it "+precondition.Summary(*p), 600)
	default:
		st.Message = shorten(p.Note, 600)
	}
	if !p.StartedAt.IsZero() {
		st.StartedAt = &metav1.Time{Time: p.StartedAt}
	}
	if !p.FinishedAt.IsZero() {
		st.FinishedAt = &metav1.Time{Time: p.FinishedAt}
	}
	for i, f := range p.Passes[:min(len(p.Passes), v1alpha1.MaxPreconditionPasses)] {
		st.Passes = append(st.Passes, v1alpha1.PreconditionPass{Pass: int32(i + 1), Bytes: f.Bytes,
			Seconds: trimmedDecimal(f.Seconds, 3), MBPerSecond: trimmedDecimal(f.MBps, 1)})
	}
	first := max(0, len(p.Rounds)-v1alpha1.MaxPreconditionRounds)
	for i, f := range p.Rounds[first:] {
		st.Rounds = append(st.Rounds, v1alpha1.PreconditionRound{Round: int32(first + i + 1), WriteIOPS: trimmedDecimal(f.WriteIOPS, 1),
			Bytes: f.Bytes, Seconds: trimmedDecimal(f.Seconds, 3)})
	}
	return st
}

// trimmedDecimal writes x with at most digits decimals, and none that are trailing zeros.
func trimmedDecimal(x float64, digits int) string {
	s := strconv.FormatFloat(x, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// formatDrive is what the format Job's drive sidecar reported (storage.device.precondition.driveCounters); nil
// without one. pending is true while the sidecar still finishes after the format ended.
func (r *ZNSDatabaseReconciler) formatDrive(ctx context.Context, db *v1alpha1.ZNSDatabase, job *batchv1.Job, finishedAt time.Time) (*v1alpha1.DriveFigures, bool, error) {
	if !resources.FormatDriveCounters(db) {
		return nil, false, nil
	}
	if r.BenchImage == "" {
		return &v1alpha1.DriveFigures{Device: db.DeviceName(), CountersUnavailable: "no drive counters: the operator has no bench image for the drive sidecar (its --bench-image flag)"}, false, nil
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(db.Namespace), client.MatchingLabels(job.Spec.Template.Labels)); err != nil {
		return nil, false, err
	}
	var newest *corev1.Pod
	for i := range pods.Items {
		if p := &pods.Items[i]; newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp) {
			newest = p
		}
	}
	rep, pending, missing := sidecarReport(newest, finishedAt, time.Now())
	switch {
	case pending:
		return nil, true, nil
	case missing != "":
		return &v1alpha1.DriveFigures{Device: db.DeviceName(), CountersUnavailable: missing}, false, nil
	}
	if rep.CountersReset {
		event.DeviceDriveCountersReset.Emit(db, r.Recorder, rep.CountersUnavailable)
	}
	return benchplan.DriveFiguresOf(rep, 0), false, nil
}
