package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// A fio Benchmark (spec.tool fio) measures devices, not databases: it has phases of its own. Pending checks what
// the runner on the node cannot see (a database that holds the device, a database target whose mysqld runs, a
// write token already used on the device, another fio Benchmark on it), takes each device, then creates every
// target's Job together (Running); each Job's report fills status.targets[].fio, and the Benchmark ends Completed
// or Failed, when its devices are handed back.

// fioDeviceWait is how often a fio Benchmark that waits for a device another one measures looks again.
const fioDeviceWait = 10 * time.Second

// fioStep runs the handler of a fio Benchmark's phase.
func (r *BenchmarkReconciler) fioStep(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	switch b.Status.Phase {
	case "", v1alpha1.BenchmarkPending:
		return r.fioStart(ctx, b)
	case v1alpha1.BenchmarkRunning:
		return r.fioRun(ctx, b)
	default: // Completed, Failed
		return ctrl.Result{}, r.fioSettle(ctx, b)
	}
}

// fioRefusal is why a fio Benchmark cannot run: a reason of the fixed set and a message that says what to do.
// wait: it may run later without a change of its spec (a database target's pod goes away), so the Benchmark waits
// for up to spec.targetTimeoutSeconds before it fails.
type fioRefusal struct {
	reason, msg string
	wait        bool
}

// fioStart checks every target, takes their devices, and creates their Jobs together.
func (r *BenchmarkReconciler) fioStart(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	if b.Status.StartedAt == nil {
		t := metav1.NewTime(r.now())
		b.Status.StartedAt = &t
		b.Status.Targets = nil
		for _, tg := range b.Spec.Targets {
			b.Status.Targets = append(b.Status.Targets, v1alpha1.TargetStatus{Name: tg.Name, State: v1alpha1.TargetPending})
		}
		benchplan.SetPhase(&b.Status, v1alpha1.BenchmarkPending, "checking devices", r.now())
	}
	var targets []resources.FioTarget
	for _, t := range b.Spec.Targets {
		tg, refused, err := r.resolveFioTarget(ctx, b, t)
		if err != nil {
			return ctrl.Result{}, err
		}
		if refused != nil {
			return r.fioWaitOrAbort(b, refused), nil
		}
		targets = append(targets, tg)
	}
	if refused, err := r.fioTokenUsed(ctx, b, targets); err != nil || refused != nil {
		if refused != nil {
			r.fioAbort(b, refused)
		}
		return ctrl.Result{}, err
	}
	// Devices are taken in one order (their PersistentVolume's name), so that two Benchmarks that want the same
	// two devices never hold one each and wait for the other forever.
	sort.Slice(targets, func(i, j int) bool {
		return v1alpha1.DevicePVName(targets[i].Node, targets[i].Device) < v1alpha1.DevicePVName(targets[j].Node, targets[j].Device)
	})
	for _, tg := range targets {
		wait, refused, err := r.takeFioDevice(ctx, b, tg)
		if err != nil {
			return ctrl.Result{}, err
		}
		if refused != nil {
			r.fioAbort(b, refused)
			return ctrl.Result{}, nil
		}
		if wait != "" {
			return r.fioWaitOrAbort(b, &fioRefusal{reason: failreason.TargetUnavailable, msg: wait, wait: true}), nil
		}
	}
	for _, tg := range targets {
		if tg.Claim == resources.FioClaimName(b, tg.Name) {
			if err := r.Apply(ctx, resources.FioDeviceClaim(b, tg), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
				return ctrl.Result{}, err
			}
		}
		job := resources.FioJob(b, tg, r.benchImage(b))
		err := r.Apply(ctx, job, client.FieldOwner(FieldManager), client.ForceOwnership)
		ts := targetStatus(b, tg.Name)
		if apierrors.IsInvalid(err) {
			r.failTarget(b, ts, event.JobRejected, failreason.JobRejected, fmt.Sprintf("the API server refused Job %s: %v", *job.Name, err))
			continue
		} else if err != nil {
			return ctrl.Result{}, err
		}
		// The token counts as used once a Job has it: the runner writes with it only to a device that holds
		// data, but whether it did is known only after, and a token must never write twice.
		ts.Fio = &v1alpha1.FioTargetStatus{Node: tg.Node, Device: tg.Device, WriteToken: b.Spec.Fio.WriteToken}
	}
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionTargetsReady,
		Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonTargetsReady, Message: "every target's device is free",
		ObservedGeneration: b.Generation})
	event.BenchmarkStarted.Emit(b, r.Recorder, len(targets), "fio")
	benchplan.SetPhase(&b.Status, v1alpha1.BenchmarkRunning, fmt.Sprintf("fio on %d device(s)", len(targets)), r.now())
	return requeue, nil
}

// benchImage is spec.image, or the operator's bench image.
func (r *BenchmarkReconciler) benchImage(b *v1alpha1.Benchmark) string {
	if b.Spec.Image != "" {
		return b.Spec.Image
	}
	return r.Image
}

// fioWaitOrAbort fails the Benchmark for a refusal, or, for one that may pass by itself, waits (progress and an
// Event say for what) until spec.targetTimeoutSeconds have passed in Pending.
func (r *BenchmarkReconciler) fioWaitOrAbort(b *v1alpha1.Benchmark, f *fioRefusal) ctrl.Result {
	if !f.wait {
		r.fioAbort(b, f)
		return ctrl.Result{}
	}
	if benchplan.TimedOut(b, &b.Status, r.now()) {
		r.fioAbort(b, &fioRefusal{reason: f.reason, msg: fmt.Sprintf("%s (waited spec.targetTimeoutSeconds, %d s)", f.msg, b.Spec.TargetTimeoutSeconds)})
		return ctrl.Result{}
	}
	progress := "waiting: " + f.msg
	if b.Status.Progress != progress {
		event.TargetsBusy.Emit(b, r.Recorder, f.msg)
	}
	benchplan.SetPhase(&b.Status, v1alpha1.BenchmarkPending, progress, r.now())
	// as the sysbench path's wait does: the condition, not only the progress line, says what it waits for
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionTargetsReady,
		Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonTargetsBusy, Message: f.msg, ObservedGeneration: b.Generation})
	return ctrl.Result{RequeueAfter: fioDeviceWait}
}

func (r *BenchmarkReconciler) fioAbort(b *v1alpha1.Benchmark, f *fioRefusal) {
	e := benchplan.Abort(&b.Status, b.Generation, f.reason, f.msg, r.now())
	e.Event.Emit(b, r.Recorder, e.Args...)
}

// resolveFioTarget finds a target's device and claim, and refuses a device a database holds.
func (r *BenchmarkReconciler) resolveFioTarget(ctx context.Context, b *v1alpha1.Benchmark, t v1alpha1.BenchmarkTarget) (resources.FioTarget, *fioRefusal, error) {
	if t.Device != nil {
		id := deviceid.ID{Node: t.Device.NodeName, Device: t.Device.DeviceName}
		holders, err := r.databasesHolding(ctx, id)
		if err != nil || len(holders) > 0 {
			return resources.FioTarget{}, fioHeld(t.Name, id, holders), err
		}
		return resources.FioTarget{Name: t.Name, Node: id.Node, Device: id.Device, Claim: resources.FioClaimName(b, t.Name),
			DeviceGroup: t.Device.DeviceGroupID}, nil, nil
	}
	db, err := r.getDB(ctx, b, t.Database)
	if err != nil {
		return resources.FioTarget{}, nil, err
	}
	if db == nil {
		return resources.FioTarget{}, &fioRefusal{reason: failreason.TargetNotFound, msg: fmt.Sprintf("target %s: ZNSDatabase %s/%s does not exist", t.Name, b.Namespace, t.Database)}, nil
	}
	if !db.HasBlockDevice() || db.DeviceNode() == "" {
		return resources.FioTarget{}, &fioRefusal{reason: failreason.TargetUnavailable, msg: fmt.Sprintf(
			"target %s: ZNSDatabase %s names no device on a node (a volume, or a zonedClaim, which a fio target does not resolve yet): name the device with device: {nodeName, deviceName}", t.Name, db.Name)}, nil
	}
	pod := &corev1.Pod{}
	err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.PodName()}, pod)
	if err == nil {
		return resources.FioTarget{}, &fioRefusal{reason: failreason.TargetUnavailable, msg: fmt.Sprintf(
			"target %s: ZNSDatabase %s's mysqld pod %s exists: fio runs on a database's device only while the database does not run (fio's writes would destroy its data, and mysqld holds the device); the Benchmark starts once the pod is gone", t.Name, db.Name, pod.Name), wait: true}, nil
	} else if !apierrors.IsNotFound(err) {
		return resources.FioTarget{}, nil, err
	}
	pvc := &corev1.PersistentVolumeClaim{}
	err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.DeviceClaimName()}, pvc)
	if apierrors.IsNotFound(err) {
		return resources.FioTarget{}, &fioRefusal{reason: failreason.TargetUnavailable, msg: fmt.Sprintf(
			"target %s: ZNSDatabase %s has no device claim %s yet (its preflight makes it): name the device with device: {nodeName, deviceName} instead", t.Name, db.Name, db.DeviceClaimName())}, nil
	} else if err != nil {
		return resources.FioTarget{}, nil, err
	}
	return resources.FioTarget{Name: t.Name, Node: db.DeviceNode(), Device: db.DeviceName(), Claim: pvc.Name, DeviceGroup: db.Spec.DeviceGroupID}, nil, nil
}

func fioHeld(target string, id deviceid.ID, holders []string) *fioRefusal {
	if len(holders) == 0 {
		return nil
	}
	return &fioRefusal{reason: failreason.TargetUnavailable, msg: fmt.Sprintf(
		"target %s: %s is held by ZNSDatabase %s: fio does not run on a database's device (its writes would destroy the data); to measure it, name the database as the target (database: NAME) while its pod does not run, or delete the database",
		target, id, strings.Join(holders, ", "))}
}

// databasesHolding names the ZNSDatabases, in any namespace, that hold a device: their spec names it (as their
// device or zoned XFS's metadata device), a zonedClaim's volume is it, or the operator's PersistentVolume of the
// device names one as its owner (a database being deleted whose volume is not released yet).
func (r *BenchmarkReconciler) databasesHolding(ctx context.Context, id deviceid.ID) ([]string, error) {
	all := &v1alpha1.ZNSDatabaseList{}
	if err := r.APIReader.List(ctx, all); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i := range all.Items {
		db := &all.Items[i]
		held := db.DeviceNode() == id.Node && (db.DeviceName() == id.Device || db.MetadataDeviceName() == id.Device)
		if src := db.Spec.Storage.ZonedClaim; !held && src != nil && src.DeviceName == id.Device {
			if got, ok, err := r.claimDevice(ctx, db); err != nil {
				return nil, err
			} else if ok && got == id {
				held = true
			}
		}
		if held {
			seen[db.Namespace+"/"+db.Name] = true
		}
	}
	pv := &corev1.PersistentVolume{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: v1alpha1.DevicePVName(id.Node, id.Device)}, pv)
	if err == nil {
		if owner := pv.Annotations[v1alpha1.AnnotationOwner]; owner != "" && !strings.HasPrefix(owner, "benchmark:") && !seen[owner] {
			seen[owner+" (its PersistentVolume "+pv.Name+")"] = true
		}
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// claimDevice is the device behind a zonedClaim database's bound claim.
func (r *BenchmarkReconciler) claimDevice(ctx context.Context, db *v1alpha1.ZNSDatabase) (deviceid.ID, bool, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.DeviceClaimName()}, pvc); err != nil || pvc.Spec.VolumeName == "" {
		return deviceid.ID{}, false, client.IgnoreNotFound(err)
	}
	pv := &corev1.PersistentVolume{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
		return deviceid.ID{}, false, client.IgnoreNotFound(err)
	}
	id, err := deviceid.FromPV(pv, db.Spec.Storage.ZonedClaim.DeviceName)
	return id, err == nil, nil
}

// fioTokenUsed refuses spec.fio.writeToken when another Benchmark already handed it to a Job on one of the
// devices (status.targets[].fio.writeToken): the token is one-shot per device.
func (r *BenchmarkReconciler) fioTokenUsed(ctx context.Context, b *v1alpha1.Benchmark, targets []resources.FioTarget) (*fioRefusal, error) {
	token := b.Spec.Fio.WriteToken
	if token == "" {
		return nil, nil
	}
	all := &v1alpha1.BenchmarkList{}
	if err := r.APIReader.List(ctx, all); err != nil {
		return nil, err
	}
	for _, other := range all.Items {
		if other.UID == b.UID {
			continue
		}
		for _, ts := range other.Status.Targets {
			if ts.Fio == nil || ts.Fio.WriteToken != token {
				continue
			}
			for _, tg := range targets {
				if ts.Fio.Node == tg.Node && ts.Fio.Device == tg.Device {
					return &fioRefusal{reason: failreason.JobRejected, msg: fmt.Sprintf(
						"target %s: spec.fio.writeToken %q was already given to fio on %s by Benchmark %s/%s: a write token is one-shot per device; set a fresh value (a date, say) to consent again",
						tg.Name, token, deviceid.ID{Node: tg.Node, Device: tg.Device}, other.Namespace, other.Name)}, nil
				}
			}
		}
	}
	return nil, nil
}

// takeFioDevice takes a target's device for this Benchmark: a device target's PersistentVolume is created (its
// name is the device's, so it exists once), a database target's gets the AnnotationFioBenchmark lock. wait says
// which Benchmark measures the device now: this one waits for it, since a fio run ends by itself
// (spec.fio.runtimeSeconds per run), rather than fail for a device that is free minutes later.
func (r *BenchmarkReconciler) takeFioDevice(ctx context.Context, b *v1alpha1.Benchmark, tg resources.FioTarget) (wait string, refused *fioRefusal, err error) {
	me := b.Namespace + "/" + b.Name
	name := v1alpha1.DevicePVName(tg.Node, tg.Device)
	id := deviceid.ID{Node: tg.Node, Device: tg.Device}
	if tg.Claim == resources.FioClaimName(b, tg.Name) {
		pv := &corev1.PersistentVolume{}
		raw, err := json.Marshal(resources.FioDevicePV(b, tg))
		if err != nil {
			return "", nil, err
		}
		if err := json.Unmarshal(raw, pv); err != nil {
			return "", nil, err
		}
		if err = r.Create(ctx, pv); err == nil || !apierrors.IsAlreadyExists(err) {
			return "", nil, err
		}
	}
	pv := &corev1.PersistentVolume{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, pv); apierrors.IsNotFound(err) {
		return "", &fioRefusal{reason: failreason.TargetUnavailable, msg: fmt.Sprintf("target %s: the PersistentVolume %s of %s does not exist", tg.Name, name, id)}, nil
	} else if err != nil {
		return "", nil, err
	}
	switch holder := pv.Annotations[resources.AnnotationFioBenchmark]; {
	case holder == me:
		return "", nil, nil
	case holder != "":
		return fmt.Sprintf("%s is being measured by fio Benchmark %s; this one starts when it ends", id, holder), nil, nil
	case tg.Claim == resources.FioClaimName(b, tg.Name):
		// the volume is not a fio Benchmark's: a database's, made since the check
		return "", fioHeld(tg.Name, id, []string{pv.Annotations[v1alpha1.AnnotationOwner]}), nil
	}
	if pv.Annotations == nil {
		pv.Annotations = map[string]string{}
	}
	pv.Annotations[resources.AnnotationFioBenchmark] = me
	// Update, not patch: its resourceVersion makes two Benchmarks that race for the lock see a conflict.
	if err := r.Update(ctx, pv); apierrors.IsConflict(err) {
		return "taking " + id.String(), nil, nil
	} else if err != nil {
		return "", nil, err
	}
	return "", nil, nil
}
