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
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// readZenFSSpace overlays status.filesystem.zenfs with the newer space the readiness probe published on the
// mysqld pod; the format Job's report gave the first figures.
func (r *ZNSDatabaseReconciler) readZenFSSpace(ctx context.Context, db *v1alpha1.ZNSDatabase) error {
	fs := db.Status.Filesystem
	if fs == nil {
		return nil
	}
	pod := &corev1.Pod{}
	err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.PodName()}, pod)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	z := &v1alpha1.ZenFSSpaceStatus{}
	if fs.ZenFS != nil {
		z = fs.ZenFS.DeepCopy()
	}
	r.applySpace(ctx, db, z, pod)
	if z.MeasuredAt != nil || z.Error != "" {
		fs.ZenFS = z
	}
	return nil
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
