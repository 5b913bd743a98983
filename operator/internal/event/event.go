// Package event is the catalog of Events the operator emits: one place to read every reason a user may see
// in `kubectl describe`.
package event

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// Event is a kind of Event with a fixed type and reason and a message template.
type Event struct {
	Type    string
	Reason  string
	Message string
}

// Emit records the event on obj, formatting its message with args.
func (e Event) Emit(obj runtime.Object, r record.EventRecorder, args ...any) {
	r.Event(obj, e.Type, e.Reason, fmt.Sprintf(e.Message, args...))
}

// ZNSDatabase events.
var (
	SecretMissing    = Event{corev1.EventTypeWarning, "SecretMissing", "%s"}
	PasswordTooShort = Event{corev1.EventTypeWarning, "PasswordTooShort", "%s"}
	SecretGenerated  = Event{corev1.EventTypeNormal, "SecretGenerated", "generated root password Secret %q"}
	ConfigInvalid    = Event{corev1.EventTypeWarning, "InvalidConfig", "%s"}
	ConfigUpdated    = Event{corev1.EventTypeNormal, "ConfigUpdated", "mysqld configuration is now in ConfigMap %q"}
	// LeaseEnded: the Benchmark holding the database is gone without handing it back; its own profile applies.
	LeaseEnded      = Event{corev1.EventTypeNormal, "LeaseEnded", "Benchmark %s, which held this database, is gone: the lease is removed and the database returns to its own profile (%s)"}
	DeviceConflict  = Event{corev1.EventTypeWarning, "DeviceConflict", "%s"}
	ClaimInvalid    = Event{corev1.EventTypeWarning, "InvalidClaim", "%s"}
	ClaimUnbound    = Event{corev1.EventTypeWarning, "ClaimUnbound", "%s"}
	PreflightFailed = Event{corev1.EventTypeWarning, "PreflightFailed", "%s"}
	DeviceRefused   = Event{corev1.EventTypeWarning, "DeviceRefused", "%s"}
	DeviceAccepted  = Event{corev1.EventTypeNormal, "DeviceAccepted", "%s"}
	DeviceWarning   = Event{corev1.EventTypeWarning, "DeviceWarning", "%s"}
	DeviceBusy      = Event{corev1.EventTypeWarning, "DeviceBusy", "%s"}
	FormatRefused   = Event{corev1.EventTypeWarning, "FormatRefused", "%s"}
	FormatFailed    = Event{corev1.EventTypeWarning, "FormatFailed", "%s"}
	Formatted       = Event{corev1.EventTypeNormal, "Formatted", "%s"}
	// Reformatting: mysqld is stopped so that the format Job can run, for a new reformatToken.
	Reformatting = Event{corev1.EventTypeNormal, "Reformatting", "%s"}
	SpaceFailed  = Event{corev1.EventTypeWarning, "ZenFSSpaceFailed", "%s"}
	Available    = Event{corev1.EventTypeNormal, "Available", "mysqld is ready at %s"}
	Unavailable  = Event{corev1.EventTypeWarning, "Unavailable", "%s"}
	// NotOnZenFS: a ZenFS database's running mysqld does not keep MyRocks on the device (its rocksdb_fs_uri, as
	// the readiness helper read it); the database is not Available.
	NotOnZenFS     = Event{corev1.EventTypeWarning, "NotOnZenFS", "%s"}
	DeviceReleased = Event{corev1.EventTypeNormal, "DeviceReleased", "released %s without touching its data"}
	ChildRejected  = Event{corev1.EventTypeWarning, "ChildRejected", "%s"}
	// ChildForbidden: admission refused a child with 403 Forbidden (a ResourceQuota, a policy); retried.
	ChildForbidden = Event{corev1.EventTypeWarning, "ChildForbidden", "%s"}
	// PodSecurityRefused: the format Job needs CAP_SYS_ADMIN, which the namespace's Pod Security level refuses.
	PodSecurityRefused = Event{corev1.EventTypeWarning, "PodSecurityRefused", "%s"}
	// PreflightUnschedulable: the scheduler cannot place the preflight pod (a node that does not exist, taints).
	PreflightUnschedulable = Event{corev1.EventTypeWarning, "PreflightUnschedulable", "%s"}
	// DeviceDriveCountersReset: the drive's counters went backwards while the format Job wrote (reset or replaced).
	DeviceDriveCountersReset = Event{corev1.EventTypeWarning, "DriveCountersReset", "%s"}
	// The precondition of storage.device, in the format Job: finished (steady, or no rounds asked for), finished
	// without reaching steady state within its rounds, not run for want of a new reformat token, or stopped.
	DevicePreconditioned        = Event{corev1.EventTypeNormal, "DevicePreconditioned", "%s"}
	DevicePreconditionNotSteady = Event{corev1.EventTypeWarning, "DevicePreconditionNotSteady", "%s"}
	DeviceNotPreconditioned     = Event{corev1.EventTypeWarning, "DeviceNotPreconditioned", "%s"}
	DevicePreconditionStopped   = Event{corev1.EventTypeWarning, "DevicePreconditionStopped", "%s"}
	// HeldDeviceGone: the inventory agent of the database's node no longer finds its device (a reboot without it,
	// a drive pulled); emitted once per disappearance, with the ZonedDevice that records it.
	HeldDeviceGone = Event{corev1.EventTypeWarning, "HeldDeviceGone", "%s"}
	// NoDeviceFits: no device of the inventory meets the database's requirements; emitted when the database starts
	// waiting, and again when what the devices lack changes.
	NoDeviceFits = Event{corev1.EventTypeWarning, "NoDeviceFits", "%s"}
	// DeviceBound: the operator chose a device for the database's requirements.
	DeviceBound = Event{corev1.EventTypeNormal, "DeviceBound", "%s"}
)

// PodStalled is the Warning for a mysqld pod that cannot become ready by waiting; its reason is the Available
// condition's (v1alpha1.ReasonPodUnschedulable, ReasonCrashLoopBackOff, ReasonImagePullBackOff,
// ReasonContainerCannotStart).
func PodStalled(reason string) Event { return Event{corev1.EventTypeWarning, reason, "%s"} }

// Benchmark events.
var (
	BenchmarkStarted  = Event{corev1.EventTypeNormal, "Started", "benchmark of %d target(s) with %s started"}
	TargetsMissing    = Event{corev1.EventTypeWarning, "TargetsMissing", "%s"}
	TargetsBusy       = Event{corev1.EventTypeNormal, "TargetsBusy", "%s"}
	TargetsReady      = Event{corev1.EventTypeNormal, "TargetsReady", "%s"}
	TargetNotFound    = Event{corev1.EventTypeWarning, "TargetNotFound", "%s"}
	TargetDeleted     = Event{corev1.EventTypeWarning, "TargetDeleted", "%s"}
	TargetUnavailable = Event{corev1.EventTypeWarning, "TargetUnavailable", "%s"}
	JobsStopped       = Event{corev1.EventTypeNormal, "JobsStopped", "stopped Job(s) %s: %s"}
	ManyIgnoredErrors = Event{corev1.EventTypeWarning, "ManyIgnoredErrors", "target %s: %s"}
	ProfileSwitched   = Event{corev1.EventTypeNormal, "ProfileSwitched", "switched ZNSDatabase %s to the %s profile (%s)"}
	PrepareFailed     = Event{corev1.EventTypeWarning, "PrepareFailed", "%s"}
	// PrepareRetried: sysbench's prepare could not connect at first and the runner prepared again from scratch.
	PrepareRetried     = Event{corev1.EventTypeWarning, "PrepareRetried", "target %s: sysbench's prepare could not connect at first; it succeeded on attempt %d"}
	PreconditionFailed = Event{corev1.EventTypeWarning, "PreconditionFailed", "%s"}
	RowCountMismatch   = Event{corev1.EventTypeWarning, "RowCountMismatch", "%s"}
	VerifyFailed       = Event{corev1.EventTypeWarning, "VerifyFailed", "%s"}
	JobRejected        = Event{corev1.EventTypeWarning, "JobRejected", "%s"}
	RunFailed          = Event{corev1.EventTypeWarning, "RunFailed", "%s"}
	IterationDone      = Event{corev1.EventTypeNormal, "IterationDone", "run %d of %d finished"}
	// RunnersReady: every runner of a run waits at the start barrier; the common start is set.
	RunnersReady  = Event{corev1.EventTypeNormal, "RunnersReady", "%s"}
	SeriesMissing = Event{corev1.EventTypeWarning, "SeriesMissing", "no interval series for target %s run %d: %s"}
	// SeriesDownsampled: a run had more intervals than its series ConfigMap holds (benchresult.Fit).
	SeriesDownsampled = Event{corev1.EventTypeNormal, "SeriesDownsampled", "target %s run %d: %s"}
	// ProfileChanged: a held target left the workload profile during its runs; the target fails.
	ProfileChanged = Event{corev1.EventTypeWarning, "ProfileChanged", "%s"}
	// TooFewConnections: a target's max_connections is below what the Benchmark opens; it fails before any Job.
	TooFewConnections = Event{corev1.EventTypeWarning, "TooFewConnections", "%s"}
	// The write-only phase (spec.steadyState).
	SteadyStateReached    = Event{corev1.EventTypeNormal, "SteadyStateReached", "target %s: %s"}
	SteadyStateNotReached = Event{corev1.EventTypeWarning, "SteadyStateNotReached", "target %s: %s"}
	SteadyStateFailed     = Event{corev1.EventTypeWarning, "SteadyStateFailed", "%s"}
	// DriveCountersReset: a drive counter went backwards during a phase (the drive was reset or replaced).
	DriveCountersReset = Event{corev1.EventTypeWarning, "DriveCountersReset", "target %s %s: %s"}
	// ObserverStarting: a client away from its device waits for the observer on the device's node.
	ObserverStarting = Event{corev1.EventTypeNormal, "ObserverStarting", "target %s %s: the client waits for observer pod %s on node %s: %s"}
	// ObserverFailed: the observer of a client away from its device did not become ready; the target fails.
	ObserverFailed = Event{corev1.EventTypeWarning, "ObserverFailed", "%s"}
	// DriveFiguresMissing: the drive sidecar of a phase left no report.
	DriveFiguresMissing = Event{corev1.EventTypeWarning, "DriveFiguresMissing", "target %s %s: %s"}
	BenchmarkCompleted  = Event{corev1.EventTypeNormal, "Completed", "%s"}
	BenchmarkFailed     = Event{corev1.EventTypeWarning, "Failed", "%s"}
)
