package controller

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/opmetrics"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// reconcileFormat puts the file system the database asked for on its device, the same way for every one
// (zenfs, a zoned btrfs or f2fs, storage.device's ext4 or xfs): the format Job makes (or finds) it through the
// device's Block claim, and mysqld starts only once it reported success. A new reformatToken stops mysqld and
// runs the Job again. For the file systems the kubelet mounts, the Filesystem-mode volume over the device exists
// only after that, so the kubelet mounts a file system the project checked and never formats the device itself.
func (r *ZNSDatabaseReconciler) reconcileFormat(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	if !db.HasBlockDevice() {
		return nil, nil
	}
	if !filesystemReady(db) {
		current, err := r.formatJobCurrent(ctx, db)
		if err != nil {
			return nil, err
		}
		if !current {
			// A Job is about to run: its report, not a status update that was lost, is what is missing.
			if res, err := r.stopForFormat(ctx, db); res != nil || err != nil {
				return res, err
			}
		}
		if db.UsesZenFS() {
			if err := r.ensureDataClaim(ctx, db); err != nil {
				return nil, err
			}
		}
		if res, err := r.runFormatJob(ctx, db); res != nil || err != nil {
			return res, err
		}
	}
	if !db.MountsFormattedFilesystem() {
		return nil, nil
	}
	id, known, problem, err := r.deviceIdentity(ctx, db)
	if err != nil {
		return nil, err
	}
	if !known {
		return r.invalidClaim(db, problem), nil
	}
	if db.Status.Device != nil && db.Status.Device.Node == "" {
		// A zonedClaim's node comes from its PersistentVolume; finalize needs it to find the volume again.
		db.Status.Device.Node = id.Node
	}
	var capacity int64
	if db.Status.Device != nil && db.Status.Device.Capacity != nil {
		capacity = db.Status.Device.Capacity.Value()
	}
	if capacity <= 0 {
		msg := "the preflight report has no device capacity; delete Job " + db.PreflightJobName() + " to inspect the device again"
		if !isBlockedBy(db, v1alpha1.ReasonPreflightFailed) {
			r.verdict(db, opmetrics.StepPreflight, event.PreflightFailed, msg)
		}
		blocked(db, v1alpha1.ReasonPreflightFailed, msg)
		return &ctrl.Result{}, nil
	}
	if err := r.apply(ctx, resources.FilesystemPV(db, id.Node, capacity)); err != nil {
		return nil, err
	}
	return nil, r.apply(ctx, resources.FilesystemClaim(db, id.Node, capacity))
}

// filesystemReady: the format Job reported a file system of the wanted type on the device, and ran with the
// reformatToken the spec holds now (or the spec holds none).
func filesystemReady(db *v1alpha1.ZNSDatabase) bool {
	fs := db.Status.Filesystem
	token := db.Spec.Format.ReformatToken
	return fs != nil && fs.Type == db.FormattedFilesystem() &&
		(fs.Action == string(fsformat.ActionFormat) || fs.Action == string(fsformat.ActionKeep)) &&
		(token == "" || fs.ReformatToken == token)
}

// stopForFormat makes sure mysqld does not hold the device while the format Job runs: a StatefulSet left from
// before (a new reformatToken, or a running database with no format report on record) is deleted, and the
// format waits until its pod is gone. Its claims are kept, and reconcileStatefulSet makes it again afterwards.
func (r *ZNSDatabaseReconciler) stopForFormat(ctx context.Context, db *v1alpha1.ZNSDatabase) (*ctrl.Result, error) {
	sts := &appsv1.StatefulSet{}
	err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.StatefulSetName()}, sts)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, err
	default:
		if sts.DeletionTimestamp.IsZero() {
			if err := r.Delete(ctx, sts, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			event.Reformatting.Emit(db, r.Recorder, reformatReason(db))
		}
		return reformatting(db, "stopping mysqld (deleting StatefulSet "+db.StatefulSetName()+") to run the format Job"), nil
	}
	err = r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.PodName()}, &corev1.Pod{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return reformatting(db, "waiting for pod "+db.PodName()+" to stop before the format Job runs"), nil
}

// formatJobCurrent: a format Job for the spec's reformatToken exists (running, or finished with a report to read).
func (r *ZNSDatabaseReconciler) formatJobCurrent(ctx context.Context, db *v1alpha1.ZNSDatabase) (bool, error) {
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.FormatJobName()}, job)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return job.DeletionTimestamp.IsZero() && jobToken(job) == db.Spec.Format.ReformatToken, nil
}

// reformatReason says why mysqld is stopped for the format Job.
func reformatReason(db *v1alpha1.ZNSDatabase) string {
	fs, token := db.Status.Filesystem, db.Spec.Format.ReformatToken
	if fs != nil && token != "" && fs.ReformatToken != token {
		return fmt.Sprintf("reformatToken %q is new to %s: mysqld is stopped and the format Job runs again; it "+
			"replaces the %s on the device and ALL its data unless the file system was made with this token "+
			"(format.policy Never keeps it)", token, describeDevice(db), fs.Type)
	}
	return fmt.Sprintf("no format report is on record for %s: mysqld is stopped while the format Job checks the "+
		"device (it keeps the file system asked for)", describeDevice(db))
}

func reformatting(db *v1alpha1.ZNSDatabase, msg string) *ctrl.Result {
	setCondition(db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonReformatting, msg)
	setCondition(db, v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonReformatting, msg)
	// The StatefulSet and its pod are watched; this only bounds a missed event.
	return &ctrl.Result{RequeueAfter: 5 * time.Second}
}

// ensureDataClaim makes the datadir claim ZenFS's aux directory is on, for the format Job, before the
// StatefulSet that adopts it. Created once and never updated: admission keeps dataVolume as it was.
func (r *ZNSDatabaseReconciler) ensureDataClaim(ctx context.Context, db *v1alpha1.ZNSDatabase) error {
	err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.DataClaimName()}, &corev1.PersistentVolumeClaim{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	return r.apply(ctx, resources.DataClaim(db))
}

// runFormatJob creates the format Job and reads its report into status.filesystem; a result stops the
// reconcile while the Job runs or after it refused or failed (then it runs again after PreflightRetry, so that
// a user who freed the device or set a token sees it go on without touching anything else).
func (r *ZNSDatabaseReconciler) runFormatJob(ctx context.Context, db *v1alpha1.ZNSDatabase) (*ctrl.Result, error) {
	image, err := resources.Image(db, r.Images)
	if err != nil {
		blocked(db, v1alpha1.ReasonNoImage, err.Error())
		return &ctrl.Result{}, nil
	}
	if res, err := r.formatPodSecurityRefused(ctx, db); res != nil || err != nil {
		return res, err
	}
	job, res, err := r.ensureJob(ctx, db, db.FormatJobName(), resources.FormatJob(db, image, r.BenchImage))
	if res != nil || err != nil {
		return res, err
	}
	if job == nil {
		return formatting(db), nil
	}
	if jobToken(job) != db.Spec.Format.ReformatToken {
		// Made for another token: its report is not about this one.
		if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		return formatting(db), nil
	}
	finished, failed, at := jobFinished(job)
	if !finished {
		return formatting(db), nil
	}
	report, raw, err := r.containerReport(ctx, db, resources.ComponentFormat, resources.FormatContainer, false)
	if err != nil {
		return nil, err
	}
	// The format's zone report gives the zone capacity the sysfs-only preflight could not know, as ZenFS's does.
	if report != nil && report.Device != nil && report.Device.ZoneCapacityBytes > 0 && db.Status.Device != nil {
		db.Status.Device.ZoneCapacity = quantity(report.Device.ZoneCapacityBytes)
	}
	drive, pending, err := r.formatDrive(ctx, db, job, at)
	if err != nil || pending {
		return formatting(db), err
	}
	if report != nil && report.Precondition != nil {
		r.recordPrecondition(db, report.Precondition, drive)
	}
	if fs := filesystemOnRecord(report, failed); fs != nil {
		db.Status.Filesystem = filesystemStatus(fs)
		db.Status.Filesystem.ReformatToken = jobToken(job)
	}
	if fs := db.Status.Filesystem; !failed && formatSucceeded(report) {
		if fs.Action == string(fsformat.ActionFormat) {
			mode := ""
			if db.HasZonedFilesystem() {
				mode = " in zoned mode"
			}
			r.verdict(db, opmetrics.StepFormat, event.Formatted, fmt.Sprintf("created %s%s on %s: %s", fs.Type, mode, describeDevice(db), fs.Reason))
		}
		return nil, nil
	}
	reason, ev, detail := formatFailure(report, raw)
	if detail == "" {
		detail = "its pod left no report (was it deleted or evicted?)"
	}
	msg := fmt.Sprintf("the format Job for %s %s: %s", describeDevice(db), describeFailure(reason), detail)
	if !isBlockedBy(db, reason) {
		r.verdict(db, opmetrics.StepFormat, ev, msg)
	}
	blocked(db, reason, msg)
	return r.retryJob(ctx, job, at)
}

// filesystemOnRecord is what status.filesystem takes from a format report: a file system made or kept, or a
// refusal with its reason; nil for a failure (mkfs, zenfs or a busy device), whose report would otherwise
// claim a format that did not happen, and which the condition describes.
func filesystemOnRecord(report *dbinit.Report, failed bool) *dbinit.FilesystemState {
	switch {
	case report == nil || report.Filesystem == nil:
		return nil
	case !failed && formatSucceeded(report), report.Filesystem.Action == fsformat.ActionRefuse:
		return report.Filesystem
	}
	return nil
}

// formatSucceeded: the report describes a file system that was made or kept, and nothing went wrong.
func formatSucceeded(report *dbinit.Report) bool {
	return report != nil && report.Error == "" && len(report.Problems) == 0 && report.Filesystem.Present()
}

// jobToken is the reformat token the format Job runs with.
func jobToken(job *batchv1.Job) string {
	for _, c := range job.Spec.Template.Spec.Containers {
		if c.Name != resources.FormatContainer {
			continue
		}
		for _, e := range c.Env {
			if e.Name == resources.ReformatTokenEnv {
				return e.Value
			}
		}
	}
	return ""
}

func describeFailure(reason string) string {
	switch reason {
	case v1alpha1.ReasonFormatRefused:
		return "refused to format"
	case v1alpha1.ReasonDeviceBusy:
		return "found the device in use"
	case v1alpha1.ReasonDeviceRefused:
		return "found the device unfit"
	}
	return "failed"
}

func formatting(db *v1alpha1.ZNSDatabase) *ctrl.Result {
	msg := fmt.Sprintf("the format Job %s is making %s on %s", db.FormatJobName(), db.FormattedFilesystem(), describeDevice(db))
	if db.DevicePrecondition() != nil && db.Spec.Format.ReformatToken != "" {
		msg += ", preconditioning the whole device first if reformatToken is new to it (its log shows each pass and round)"
	}
	setCondition(db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonFormatting, msg)
	setCondition(db, v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonFormatting, msg)
	// The Job and its pod are watched; this only bounds a missed event.
	return &ctrl.Result{RequeueAfter: 30 * time.Second}
}
