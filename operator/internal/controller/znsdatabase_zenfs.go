package controller

import (
	"context"
	"fmt"
	"regexp"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/opmetrics"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// readFormatReport reads the format step's report from the mysqld pod into status.zenfs, overlaid with the
// newer space the readiness probe published on the pod, and stops with a condition and an Event when the step
// refused the device or failed.
func (r *ZNSDatabaseReconciler) readFormatReport(ctx context.Context, db *v1alpha1.ZNSDatabase) (*ctrl.Result, error) {
	pod := &corev1.Pod{}
	err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.PodName()}, pod)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	term := formatTermination(pod)
	if term == nil {
		return nil, nil
	}
	report, raw := parseReport(term)
	wasFormatted := isFormatted(db)
	if report != nil && report.Filesystem != nil {
		fs := filesystemStatus(report.Filesystem)
		if fs.ZenFS != nil {
			carrySpace(db.Status.ZenFSSpace(), fs.ZenFS)
			r.applySpace(ctx, db, fs.ZenFS, pod)
		}
		db.Status.Filesystem = fs
	}
	// The zone capacity is only in the zone report, which format is the first to read for a zonedDevice.
	if report != nil && report.Device != nil && report.Device.ZoneCapacityBytes > 0 && db.Status.Device != nil {
		db.Status.Device.ZoneCapacity = quantity(report.Device.ZoneCapacityBytes)
	}
	if term.ExitCode == 0 {
		if report != nil && report.Filesystem != nil && report.Filesystem.Action == fsformat.ActionFormat && !wasFormatted {
			r.verdict(db, opmetrics.StepFormat, event.Formatted, fmt.Sprintf("created ZenFS on %s: %s", describeDevice(db), report.Filesystem.Reason))
		}
		return nil, nil
	}
	reason, ev, detail := formatFailure(report, raw)
	msg := fmt.Sprintf("the format step for %s stopped mysqld from starting: %s", describeDevice(db), detail)
	if !isBlockedBy(db, reason) {
		r.verdict(db, opmetrics.StepFormat, ev, msg)
	}
	blocked(db, reason, msg)
	return &ctrl.Result{}, nil
}

// notOnZenFS reads what the readiness helper found when it asked the running mysqld for its rocksdb_fs_uri
// (dbinit.FSURIAnnotation on the pod). When MyRocks is not on the device (a server whose MyRocks lacks ZenFS
// ignores loose-rocksdb-fs-uri and writes to the datadir volume) the database is not Available, with the reason
// and a Warning Event, and msg says why; "" otherwise, including when nothing was found yet or the helper could
// not ask.
func (r *ZNSDatabaseReconciler) notOnZenFS(ctx context.Context, db *v1alpha1.ZNSDatabase) (msg string, err error) {
	pod := &corev1.Pod{}
	err = r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.PodName()}, pod)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	v, ok := pod.Annotations[dbinit.FSURIAnnotation]
	if !ok {
		return "", nil
	}
	check, err := dbinit.ParseFSURICheck(v)
	if err != nil {
		log.FromContext(ctx).Info("ignoring the pod's rocksdb_fs_uri annotation", "pod", pod.Name, "error", err.Error())
		return "", nil
	}
	// A check against another URI is not about this configuration.
	if check.Verdict != dbinit.FSURINotOnZenFS || check.Want != dbinit.ZenFSURI(db.ZonedDeviceName()) {
		return "", nil
	}
	msg = fmt.Sprintf("pod %s: %s", pod.Name, shorten(check.Message, 1024))
	if c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionAvailable); c == nil || c.Reason != v1alpha1.ReasonNotOnZenFS {
		event.NotOnZenFS.Emit(db, r.Recorder, msg)
	}
	setCondition(db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonNotOnZenFS, msg)
	return msg, nil
}

func formatTermination(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range pod.Status.InitContainerStatuses {
		if cs.Name != resources.FormatContainer {
			continue
		}
		if cs.State.Terminated != nil {
			return cs.State.Terminated
		}
		return cs.LastTerminationState.Terminated
	}
	return nil
}

// formatFailure names why the format step failed: a condition reason a user can act on (the device is busy,
// zenfs aborted on the data, the aux directory is unusable, ...), the Event kind, and the detail.
func formatFailure(report *dbinit.Report, raw string) (reason string, ev event.Event, detail string) {
	switch {
	case report == nil:
		return v1alpha1.ReasonFormatFailed, event.FormatFailed, raw
	case report.Filesystem != nil && report.Filesystem.Action == fsformat.ActionRefuse:
		return v1alpha1.ReasonFormatRefused, event.FormatRefused, report.Filesystem.Reason
	case len(report.Problems) > 0:
		for _, p := range report.Problems {
			if p.Code == zbd.CodeDeviceBusy {
				return v1alpha1.ReasonDeviceBusy, event.DeviceBusy, p.Message
			}
		}
		return v1alpha1.ReasonDeviceRefused, event.DeviceRefused, joinProblems(report)
	case report.Error != "":
		return conditionReason(report.ErrorReason, v1alpha1.ReasonFormatFailed), event.FormatFailed, report.Error
	}
	return v1alpha1.ReasonFormatFailed, event.FormatFailed, raw
}

// reasonPattern is what the API server accepts as a condition reason.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// conditionReason uses reason from a pod's report when it is a valid condition reason, else fallback: a pod
// must not be able to make the status unwritable.
func conditionReason(reason, fallback string) string {
	if len(reason) <= 64 && reasonPattern.MatchString(reason) {
		return reason
	}
	return fallback
}

// carrySpace keeps in z the space the status already shows when it was measured after the format step's df
// (by the readiness probe): the pod's annotation holds only the latest measurement, which may be a failure.
func carrySpace(prev, z *v1alpha1.ZenFSSpaceStatus) {
	if prev == nil || prev.MeasuredAt == nil || z.MeasuredAt == nil || !prev.MeasuredAt.After(z.MeasuredAt.Time) {
		return
	}
	*z = *prev
}

// applySpace overlays z with the space the readiness probe published on the pod, when it is newer than what z
// holds. A failed measurement keeps the figures and says why.
func (r *ZNSDatabaseReconciler) applySpace(ctx context.Context, db *v1alpha1.ZNSDatabase, z *v1alpha1.ZenFSSpaceStatus, pod *corev1.Pod) {
	v, ok := pod.Annotations[v1alpha1.AnnotationZenFSSpace]
	if !ok {
		return
	}
	s, err := dbinit.ParseSpace(v)
	if err != nil {
		log.FromContext(ctx).Info("ignoring the pod's ZenFS space annotation", "pod", pod.Name, "error", err.Error())
		return
	}
	if z.MeasuredAt != nil && !s.At.After(z.MeasuredAt.Time) {
		return // measured before the format step's df: stale
	}
	if s.Error != "" {
		z.Error = shorten(s.Error, 512)
		if prev := db.Status.ZenFSSpace(); prev == nil || prev.Error != z.Error {
			event.SpaceFailed.Emit(db, r.Recorder, fmt.Sprintf("measuring ZenFS space on %s (%s): %s",
				describeDevice(db), conditionReason(s.ErrorReason, "ZenFSFailed"), z.Error))
		}
		return
	}
	*z = spaceStatus(s)
}

// spaceStatus is a ZenFS space measurement as the status shows it.
func spaceStatus(s dbinit.Space) v1alpha1.ZenFSSpaceStatus {
	at := metav1.NewTime(s.At)
	return v1alpha1.ZenFSSpaceStatus{MeasuredAt: &at,
		Free:        resource.NewQuantity(s.FreeBytes, resource.BinarySI),
		Used:        resource.NewQuantity(s.UsedBytes, resource.BinarySI),
		Reclaimable: resource.NewQuantity(s.ReclaimableBytes, resource.BinarySI)}
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isFormatted(db *v1alpha1.ZNSDatabase) bool {
	return db.Status.Filesystem != nil && db.Status.Filesystem.Action == string(fsformat.ActionFormat)
}

// filesystemStatus is the format step's report as status.filesystem shows it, for every file system.
func filesystemStatus(fs *dbinit.FilesystemState) *v1alpha1.FilesystemStatus {
	s := &v1alpha1.FilesystemStatus{Type: fs.Type, Found: fs.Found, UUID: fs.UUID, Label: fs.Label,
		Action: string(fs.Action), Reason: shorten(fs.Reason, 400), ZonesReset: int32(min(fs.ZonesReset, 1<<31-1))}
	if fs.Space != nil {
		z := spaceStatus(*fs.Space)
		s.ZenFS = &z
	}
	return s
}

// reconcileIdentity gives a zoned database's pod its service account and the Role that lets it annotate its
// own pod (see resources.ServiceAccount), before the StatefulSet names them.
func (r *ZNSDatabaseReconciler) reconcileIdentity(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	if !db.UsesZenFS() {
		return nil, nil
	}
	if err := r.apply(ctx, resources.ServiceAccount(db)); err != nil {
		return nil, err
	}
	if err := r.apply(ctx, resources.PodRole(db)); err != nil {
		return nil, err
	}
	return nil, r.apply(ctx, resources.PodRoleBinding(db))
}
