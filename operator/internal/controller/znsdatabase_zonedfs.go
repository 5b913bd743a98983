package controller

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/opmetrics"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// reconcileZonedFilesystem puts the file system of MountsFormattedFilesystem (a zoned btrfs or f2fs, or
// storage.device's ext4 or xfs) in front of mysqld: the format Job makes (or finds) the file system through the
// device's Block claim, preconditioning a conventional device first when asked to, and only once it reported
// success does the Filesystem-mode volume over the device exist, so the kubelet mounts a file system the
// project checked and never formats the device itself.
func (r *ZNSDatabaseReconciler) reconcileZonedFilesystem(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	if !db.MountsFormattedFilesystem() {
		return nil, nil
	}
	if !filesystemReady(db) {
		if res, err := r.runFormatJob(ctx, db); res != nil || err != nil {
			return res, err
		}
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

// filesystemReady: the format Job reported a file system of the wanted type on the device.
func filesystemReady(db *v1alpha1.ZNSDatabase) bool {
	fs := db.Status.Filesystem
	return fs != nil && fs.Type == db.FormattedFilesystem() &&
		(fs.Action == string(fsformat.ActionFormat) || fs.Action == string(fsformat.ActionKeep))
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
	job, res, err := r.ensureJob(ctx, db, db.FormatJobName(), resources.FormatJob(db, image, r.BenchImage))
	if res != nil || err != nil {
		return res, err
	}
	if job == nil {
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
	if report != nil && report.Filesystem != nil {
		db.Status.Filesystem = filesystemStatus(report.Filesystem)
	}
	if fs := db.Status.Filesystem; !failed && formatSucceeded(report) {
		if fs.Action == string(fsformat.ActionFormat) {
			mode := ""
			if db.IsZoned() {
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

// formatSucceeded: the report describes a file system that was made or kept, and nothing went wrong.
func formatSucceeded(report *dbinit.Report) bool {
	return report != nil && report.Error == "" && len(report.Problems) == 0 && report.Filesystem.Present()
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
