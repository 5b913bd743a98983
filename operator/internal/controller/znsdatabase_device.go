package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/logtail"
	"github.com/zns-mysql/zns-mysql/operator/internal/opmetrics"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// reconcileDeviceClaim checks a user's zonedClaim before the preflight mounts it.
func (r *ZNSDatabaseReconciler) reconcileDeviceClaim(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	if db.Spec.Storage.ZonedClaim == nil {
		return nil, nil
	}
	pvc := &corev1.PersistentVolumeClaim{}
	err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.DeviceClaimName()}, pvc)
	var msg string
	switch {
	case apierrors.IsNotFound(err):
		msg = fmt.Sprintf("PersistentVolumeClaim %q not found in namespace %q: create a Block-mode claim bound to the zoned device", db.DeviceClaimName(), db.Namespace)
	case err != nil:
		return nil, err
	case pvc.Spec.VolumeMode == nil || *pvc.Spec.VolumeMode != corev1.PersistentVolumeBlock:
		msg = fmt.Sprintf("PersistentVolumeClaim %q has volumeMode Filesystem: ZenFS needs the raw device, so the claim must have volumeMode Block", pvc.Name)
	default:
		return nil, nil
	}
	return r.invalidClaim(db, msg), nil
}

// reconcilePreflight runs the read-only preflight Job and turns its report into the DeviceReady condition.
// Once the device passed, the Job is not run again: the storage of a database cannot change.
func (r *ZNSDatabaseReconciler) reconcilePreflight(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	if !db.HasBlockDevice() || conditionTrue(db, v1alpha1.ConditionDeviceReady) {
		return nil, nil
	}
	image, err := resources.Image(db, r.Images)
	if err != nil {
		blocked(db, v1alpha1.ReasonNoImage, err.Error())
		return &ctrl.Result{}, nil
	}
	job, res, err := r.ensureJob(ctx, db, db.PreflightJobName(), resources.PreflightJob(db, image))
	if res != nil || err != nil {
		return res, err
	}
	if job == nil {
		return r.inspecting(db), nil
	}
	finished, failed, at := jobFinished(job)
	if !finished {
		if res, err := r.preflightUnschedulable(ctx, db, job); res != nil || err != nil {
			return res, err
		}
		return r.inspecting(db), nil
	}

	report, raw, err := r.containerReport(ctx, db, resources.ComponentPreflight, resources.PreflightContainer, false)
	if err != nil {
		return nil, err
	}
	if report != nil && report.Device != nil {
		db.Status.Device = deviceStatus(db, report)
	}
	switch {
	case !failed && report != nil && report.Device != nil && len(report.Problems) == 0:
		if res, err := r.checkDevice(ctx, st, true); res != nil || err != nil {
			return res, err
		}
		msg := acceptedDevice(db, report.Device)
		r.verdict(db, opmetrics.StepPreflight, event.DeviceAccepted, msg)
		setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionTrue, v1alpha1.ReasonPreflightPassed, msg)
		r.setDeviceWarnings(db, report)
		return nil, nil
	case report != nil && len(report.Problems) > 0:
		msg := fmt.Sprintf("%s cannot hold %s: %s", describeDevice(db), wantedFilesystem(db), joinProblems(report))
		if !isBlockedBy(db, v1alpha1.ReasonDeviceRefused) {
			r.verdict(db, opmetrics.StepPreflight, event.DeviceRefused, msg)
		}
		setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonDeviceRefused, msg)
		blocked(db, v1alpha1.ReasonDeviceRefused, msg)
	default:
		detail := raw
		if report != nil && report.Error != "" {
			detail = report.Error
		}
		if detail == "" {
			detail = jobFailure(job, r.PreflightRetry)
		}
		if detail == "" {
			detail = "its pod left no report (was it deleted or evicted?)"
		}
		msg := fmt.Sprintf("the preflight of %s failed: %s", describeDevice(db), detail)
		if !isBlockedBy(db, v1alpha1.ReasonPreflightFailed) {
			r.verdict(db, opmetrics.StepPreflight, event.PreflightFailed, msg)
		}
		setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed, msg)
		blocked(db, v1alpha1.ReasonPreflightFailed, msg)
	}
	// Look again later: the user may fix the device (scheduler, zones) without touching the resource.
	return r.retryJob(ctx, job, at)
}

// ensureJob reads the Job name, creating it from build when there is none (job is then nil); a Job being
// deleted gives a short requeue.
func (r *ZNSDatabaseReconciler) ensureJob(ctx context.Context, db *v1alpha1.ZNSDatabase, name string,
	build *batchv1ac.JobApplyConfiguration) (*batchv1.Job, *ctrl.Result, error) {
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: name}, job)
	if apierrors.IsNotFound(err) {
		return nil, nil, r.apply(ctx, build)
	}
	if err != nil {
		return nil, nil, err
	}
	if !job.DeletionTimestamp.IsZero() {
		return nil, &ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return job, nil, nil
}

// retryJob deletes a finished Job PreflightRetry after it finished, so that it runs again.
func (r *ZNSDatabaseReconciler) retryJob(ctx context.Context, job *batchv1.Job, finishedAt time.Time) (*ctrl.Result, error) {
	if wait := time.Until(finishedAt.Add(r.PreflightRetry)); wait > 0 {
		return &ctrl.Result{RequeueAfter: wait}, nil
	}
	if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	return &ctrl.Result{RequeueAfter: time.Second}, nil
}

func (r *ZNSDatabaseReconciler) inspecting(db *v1alpha1.ZNSDatabase) *ctrl.Result {
	msg := fmt.Sprintf("a read-only preflight Job %s is inspecting %s", db.PreflightJobName(), describeDevice(db))
	setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionUnknown, v1alpha1.ReasonInspecting, msg)
	setCondition(db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonInspecting, msg)
	setCondition(db, v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonInspecting, msg)
	return &ctrl.Result{}
}

func conditionTrue(db *v1alpha1.ZNSDatabase, typ string) bool {
	for _, c := range db.Status.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// jobFinished tells whether a Job completed or failed, and when.
func jobFinished(job *batchv1.Job) (finished, failed bool, at time.Time) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, false, c.LastTransitionTime.Time
		case batchv1.JobFailed:
			return true, true, c.LastTransitionTime.Time
		}
	}
	return false, false, time.Time{}
}

func joinProblems(report *dbinit.Report) string {
	msgs := make([]string, 0, len(report.Problems))
	for _, p := range report.Problems {
		msgs = append(msgs, p.Message)
	}
	return strings.Join(msgs, "; ")
}

// containerReport finds the newest pod of a component of db and parses the JSON report its container left
// as termination message. raw is the message when it is not a report (logs, with FallbackToLogsOnError).
func (r *ZNSDatabaseReconciler) containerReport(ctx context.Context, db *v1alpha1.ZNSDatabase, component, container string, init bool) (*dbinit.Report, string, error) {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(db.Namespace), client.MatchingLabels(db.Labels(component))); err != nil {
		return nil, "", err
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	for _, pod := range pods.Items {
		statuses := pod.Status.ContainerStatuses
		if init {
			statuses = pod.Status.InitContainerStatuses
		}
		for _, cs := range statuses {
			if cs.Name != container {
				continue
			}
			term := cs.State.Terminated
			if term == nil {
				term = cs.LastTerminationState.Terminated
			}
			if term == nil {
				continue
			}
			report, raw := parseReport(term)
			return report, raw, nil
		}
	}
	return nil, "", nil
}

func parseReport(term *corev1.ContainerStateTerminated) (*dbinit.Report, string) {
	msg := strings.TrimSpace(term.Message)
	report := &dbinit.Report{}
	if msg != "" && json.Unmarshal([]byte(msg), report) == nil {
		return report, ""
	}
	if msg == "" {
		msg = fmt.Sprintf("exit code %d (%s)", term.ExitCode, term.Reason)
	}
	return nil, logtail.Last(msg, 5)
}

func quantity(bytes int64) *resource.Quantity {
	if bytes <= 0 {
		return nil
	}
	return resource.NewQuantity(bytes, resource.BinarySI)
}

func deviceStatus(db *v1alpha1.ZNSDatabase, report *dbinit.Report) *v1alpha1.DeviceStatus {
	d := report.Device
	ds := &v1alpha1.DeviceStatus{
		Path:           db.DevicePath(),
		Model:          d.Model,
		Zones:          d.NrZones,
		ZoneSize:       quantity(d.ZoneSizeBytes),
		ZoneCapacity:   quantity(d.ZoneCapacityBytes),
		MaxOpenZones:   d.MaxOpenZones,
		MaxActiveZones: d.MaxActiveZones,
		Scheduler:      d.Scheduler,
		Capacity:       quantity(d.CapacityBytes),
	}
	ds.Node = db.DeviceNode()
	if m := report.MetadataDevice; m != nil {
		ds.MetadataDevice, ds.MetadataCapacity = db.MetadataDevicePath(), quantity(m.CapacityBytes)
	}
	for _, p := range report.Problems {
		ds.Problems = append(ds.Problems, p.Message)
	}
	for _, w := range report.Warnings {
		ds.Warnings = append(ds.Warnings, w.Message)
	}
	return ds
}

// setDeviceWarnings shows the risks of an accepted device (zone limits below the smallest seen to work) as
// the DeviceWarning condition and, when they are new, a Warning Event. The device is not refused for them.
func (r *ZNSDatabaseReconciler) setDeviceWarnings(db *v1alpha1.ZNSDatabase, report *dbinit.Report) {
	if len(report.Warnings) == 0 {
		meta.RemoveStatusCondition(&db.Status.Conditions, v1alpha1.ConditionDeviceWarning)
		return
	}
	msgs := make([]string, 0, len(report.Warnings))
	for _, w := range report.Warnings {
		msgs = append(msgs, w.Message)
	}
	msg := fmt.Sprintf("%s is accepted, with a risk: %s", describeDevice(db), strings.Join(msgs, "; "))
	if c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionDeviceWarning); c == nil || c.Message != msg {
		event.DeviceWarning.Emit(db, r.Recorder, msg)
	}
	setCondition(db, v1alpha1.ConditionDeviceWarning, metav1.ConditionTrue, conditionReason(report.Warnings[0].Code, v1alpha1.ReasonDeviceWarning), msg)
}

// reconcileDeviceVolume creates the local Block PersistentVolume and its pre-bound claim for a device named by
// node (zonedDevice, device), only after the device passed its preflight.
func (r *ZNSDatabaseReconciler) reconcileDeviceVolume(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	if db.DeviceNode() == "" {
		return nil, nil
	}
	var capacity int64
	if db.Status.Device != nil && db.Status.Device.Capacity != nil {
		capacity = db.Status.Device.Capacity.Value()
	}
	if capacity <= 0 {
		// The preflight passed without a size: never guess one for a PersistentVolume.
		msg := "the preflight report has no device capacity; delete Job " + db.PreflightJobName() + " to inspect the device again"
		setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed, msg)
		blocked(db, v1alpha1.ReasonPreflightFailed, msg)
		return &ctrl.Result{}, nil
	}
	if err := r.apply(ctx, resources.DevicePV(db, capacity)); err != nil {
		return nil, err
	}
	if err := r.apply(ctx, resources.DeviceClaim(db, capacity)); err != nil {
		return nil, err
	}
	if db.MetadataDeviceName() == "" {
		return nil, nil
	}
	var metaCapacity int64
	if db.Status.Device.MetadataCapacity != nil {
		metaCapacity = db.Status.Device.MetadataCapacity.Value()
	}
	if metaCapacity <= 0 {
		msg := "the preflight report has no capacity for the metadata device " + db.MetadataDevicePath() +
			"; delete Job " + db.PreflightJobName() + " to inspect the devices again"
		setCondition(db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed, msg)
		blocked(db, v1alpha1.ReasonPreflightFailed, msg)
		return &ctrl.Result{}, nil
	}
	if err := r.apply(ctx, resources.MetadataDevicePV(db, metaCapacity)); err != nil {
		return nil, err
	}
	return nil, r.apply(ctx, resources.MetadataDeviceClaim(db, metaCapacity))
}

// finalize releases what the database claimed on the device without touching the device's data: the
// StatefulSet and the preflight Job stop using it, then the claim and the Retain PersistentVolume go. The
// datadir claim and a generated Secret stay, so that the same database can be created again over its data.
func (r *ZNSDatabaseReconciler) finalize(ctx context.Context, db *v1alpha1.ZNSDatabase) error {
	if !controllerutil.ContainsFinalizer(db, Finalizer) {
		return nil
	}
	background := client.PropagationPolicy(metav1.DeletePropagationBackground)
	children := []client.Object{
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, Name: db.PreflightJobName()}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, Name: db.StatefulSetName()}},
	}
	if node := db.DeviceNode(); node != "" {
		children = append(children, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, Name: db.DeviceClaimName()}})
		owner, err := r.devicePVOwner(ctx, deviceid.ID{Node: node, Device: db.DeviceName()})
		if err != nil {
			return err
		}
		if owner == db.OwnerAnnotationValue() {
			children = append(children, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DevicePVName(node, db.DeviceName())}})
		}
		if meta := db.MetadataDeviceName(); meta != "" {
			children = append(children, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, Name: db.MetadataClaimName()}})
			name := v1alpha1.DevicePVName(node, meta)
			if owner, err := r.pvOwner(ctx, name); err != nil {
				return err
			} else if owner == db.OwnerAnnotationValue() {
				children = append(children, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}})
			}
		}
	}
	if db.HasBlockDevice() {
		children = append(children, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, Name: db.FormatJobName()}})
	}
	if db.MountsFormattedFilesystem() {
		children = append(children,
			&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, Name: db.FilesystemClaimName()}})
		if db.Status.Device != nil && db.Status.Device.Node != "" {
			name := v1alpha1.FilesystemPVName(db.Status.Device.Node, db.DeviceName())
			owner, err := r.pvOwner(ctx, name)
			if err != nil {
				return err
			}
			if owner == db.OwnerAnnotationValue() {
				children = append(children, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}})
			}
		}
	}
	for _, obj := range children {
		if err := r.Delete(ctx, obj, background); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if db.HasBlockDevice() {
		event.DeviceReleased.Emit(db, r.Recorder, describeDevice(db))
	}
	patch := client.MergeFrom(db.DeepCopy())
	controllerutil.RemoveFinalizer(db, Finalizer)
	return r.Patch(ctx, db, patch)
}

// verdict announces a device step's outcome with its Event and counts it in the operator's metrics.
func (r *ZNSDatabaseReconciler) verdict(db *v1alpha1.ZNSDatabase, step string, ev event.Event, msg string) {
	ev.Emit(db, r.Recorder, msg)
	opmetrics.CountOutcome(step, ev.Reason)
}

// knownOutcomes are the verdicts the metrics list at zero from the start.
func knownOutcomes() {
	for _, ev := range []event.Event{event.DeviceAccepted, event.DeviceRefused, event.PreflightFailed} {
		opmetrics.KnownOutcome(opmetrics.StepPreflight, ev.Reason)
	}
	for _, ev := range []event.Event{event.Formatted, event.FormatRefused, event.FormatFailed, event.DeviceBusy, event.DeviceRefused} {
		opmetrics.KnownOutcome(opmetrics.StepFormat, ev.Reason)
	}
}
