package v1alpha1

// Condition types and reasons the operator sets in status.conditions. Clients (kubectl wait, scripts, the
// tests, the demo) match on these strings, so they are part of the API and defined here once. Reasons a pod
// reports (a format step's error reason, a device problem code) may appear too: they are what the pod said,
// admitted when they are valid reasons (docs/api.md lists the catalogue).

// Condition types of a ZNSDatabase.
const (
	// ConditionAvailable is True while mysqld accepts connections; its reason says why not otherwise.
	ConditionAvailable = "Available"
	// ConditionDeviceReady is True once the device's preflight accepted it (zoned and device storage).
	ConditionDeviceReady = "DeviceReady"
	// ConditionDeviceWarning is True while an accepted device carries a risk (low open or active zone limits).
	ConditionDeviceWarning = "DeviceWarning"
	// ConditionConfigReady is True once mysqld's configuration was generated from the spec.
	ConditionConfigReady = "ConfigReady"
	// ConditionProgressing is True while a rollout, an inspection or a format is under way.
	ConditionProgressing = "Progressing"
)

// Reasons of the ZNSDatabase conditions.
const (
	// Available: mysqld accepts connections.
	ReasonMySQLReady = "MySQLReady"
	// Available False: the pod is starting or not ready yet (the message says what it is doing).
	ReasonStarting = "Starting"
	// Available False: the scheduler cannot place the mysqld pod (the message quotes the scheduler).
	ReasonPodUnschedulable = "PodUnschedulable"
	// Available False: a container of the mysqld pod keeps exiting (the message gives its last exit).
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// Available False: a container of the mysqld pod cannot get its image.
	ReasonImagePullBackOff = "ImagePullBackOff"
	// Available False: the kubelet cannot create or start a container of the mysqld pod (the message quotes it).
	ReasonContainerCannotStart = "ContainerCannotStart"
	// Progressing False: the pod runs the current configuration.
	ReasonStable = "Stable"
	// Progressing: a new configuration or image is being rolled out.
	ReasonRollingOut = "RollingOut"
	// ConfigReady: my.cnf was generated from the spec.
	ReasonGenerated = "Generated"
	// ConfigReady False: the spec gives a configuration the operator refuses (the message says which option).
	ReasonInvalidConfig = "InvalidConfig"
	// Available False: no image is set for the flavor (the operator's flags or spec.image).
	ReasonNoImage = "NoImage"
	// Available False: the root password Secret named in the spec does not exist or lacks its key.
	ReasonSecretMissing = "SecretMissing"
	// Available False: the root password in the Secret is too short.
	ReasonPasswordTooShort = "PasswordTooShort"
	// DeviceReady Unknown: the preflight Job is reading the device.
	ReasonInspecting = "Inspecting"
	// DeviceReady: the preflight accepted the device.
	ReasonPreflightPassed = "PreflightPassed"
	// DeviceReady False: the preflight Job failed or its report could not be read.
	ReasonPreflightFailed = "PreflightFailed"
	// DeviceReady False: the preflight pod cannot be scheduled (the message quotes the scheduler).
	ReasonPreflightUnschedulable = "PreflightUnschedulable"
	// DeviceReady False: the device is unfit (not zoned, wrong scheduler, too small, ...); the message lists why.
	ReasonDeviceRefused = "DeviceRefused"
	// Available False: another process holds the device open.
	ReasonDeviceBusy = "DeviceBusy"
	// DeviceReady False: another ZNSDatabase already uses the device.
	ReasonDeviceConflict = "DeviceConflict"
	// DeviceReady False: no device of the inventory meets storage.zonedDevice.requirements (the message says what
	// each one lacks).
	ReasonNoDeviceFits = "NoDeviceFits"
	// DeviceWarning: the accepted device carries a risk (a low open or active zone limit).
	ReasonDeviceWarning = "DeviceWarning"
	// DeviceReady False: the named PersistentVolumeClaim is not bound.
	ReasonClaimUnbound = "ClaimUnbound"
	// DeviceReady False: the named claim cannot hold the database (the message says why).
	ReasonInvalidClaim = "InvalidClaim"
	// Available False: the API server rejected an object the operator creates (the message quotes it).
	ReasonChildRejected = "ChildRejected"
	// Available False: a ResourceQuota, LimitRange, policy or RBAC forbade an object the operator creates.
	ReasonChildForbidden = "ChildForbidden"
	// Available False: the format Job is making the file system.
	ReasonFormatting = "Formatting"
	// Available False: mysqld is being stopped so that the format Job can run (a new reformatToken, or no
	// format report on record for a running database).
	ReasonReformatting = "Reformatting"
	// Available False: the format Job needs CAP_SYS_ADMIN (xfs, or the drive counters), which the namespace's Pod
	// Security level refuses; the message says which label to set.
	ReasonPodSecurityRefused = "PodSecurityRefused"
	// Available False: the format step failed (the message has its error).
	ReasonFormatFailed = "FormatFailed"
	// Available False: the device holds data the format decision will not erase without a new reformatToken.
	ReasonFormatRefused = "FormatRefused"
	// ReasonNotOnZenFS: mysqld runs, but not on the ZenFS device (its rocksdb_fs_uri was not taken).
	ReasonNotOnZenFS = "NotOnZenFS"
)

// Condition types of a Benchmark.
const (
	// ConditionTargetsReady is True once every target is taken for this Benchmark and Available.
	ConditionTargetsReady = "TargetsReady"
	// ConditionCompleted is True once the runs ended (with some targets failed, its reason says so).
	ConditionCompleted = "Completed"
	// ConditionFailed is True when the Benchmark stopped without results.
	ConditionFailed = "Failed"
	// ConditionSeriesKept is False once a run's interval series could not be kept (its figures are).
	ConditionSeriesKept = "SeriesKept"
	// ConditionRunnersReady is False while a run waits for its runners to reach the start barrier, and True once
	// they all did and the common start (status.startAt) is set.
	ConditionRunnersReady = "RunnersReady"
)

// Reasons of the Benchmark conditions. A Failed condition may also carry a target failure reason
// (TargetStatus.Reason), such as TooFewConnections.
const (
	// TargetsReady: every target is taken and Available.
	ReasonTargetsReady = "Ready"
	// TargetsReady False (or Failed): a target ZNSDatabase does not exist.
	ReasonTargetsMissing = "TargetsMissing"
	// TargetsReady False: a target is used by another Benchmark.
	ReasonTargetsBusy = "TargetsBusy"
	// TargetsReady False (or Failed): a target is not Available in the workload profile.
	ReasonTargetsUnavailable = "TargetsUnavailable"
	// Failed: a target failed before the runs, so no run started.
	ReasonTargetFailed = "TargetFailed"
	// Failed: no target finished its runs.
	ReasonNoTargetFinished = "NoTargetFinished"
	// Completed: every target finished.
	ReasonAllTargetsFinished = "AllTargetsFinished"
	// Completed: the runs ended with some targets failed (their status says why).
	ReasonSomeTargetsFailed = "SomeTargetsFailed"
	// SeriesKept: every finished run's interval series is in its ConfigMap.
	ReasonSeriesKept = "Kept"
	// SeriesKept False: a run's series could not be kept (its figures are recorded).
	ReasonSeriesMissing = "SeriesMissing"
	// RunnersReady False: some of the run's runners are not at the start barrier yet (their pods not Ready).
	ReasonRunnersStarting = "RunnersStarting"
	// RunnersReady: every runner of the run waits at the barrier; the common start is set.
	ReasonRunnersReady = "AllRunnersReady"
)

// Condition types of a ZonedDevice (set by the operator; the rest of its status is the node agent's).
const (
	// ConditionHeldDeviceGone is True while a ZNSDatabase holds the device and its node no longer lists it (a
	// node rebooted without it, a drive pulled); False, with reason Present, while a held device is there.
	ConditionHeldDeviceGone = "HeldDeviceGone"
)

// Reasons of the ZonedDevice conditions.
const (
	// HeldDeviceGone: the device's node no longer lists it while a database holds it.
	ReasonGoneWhileHeld = "GoneWhileHeld"
	// HeldDeviceGone False: the held device is present.
	ReasonPresent = "Present"
)
