package resources

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
)

// Benchmark label keys and the runner's contract.
const (
	LabelBenchmark   = "zns-mysql.dev/benchmark"
	LabelBenchPhase  = "zns-mysql.dev/bench-phase"
	LabelBenchTarget = "zns-mysql.dev/bench-target"
	LabelBenchIter   = "zns-mysql.dev/bench-iteration"
	// AnnotationStartAt on a run Job's pod is the run's common start (RFC 3339), which the operator sets once
	// every target's runner is ready; the runner reads it through a downward API volume (startFile).
	AnnotationStartAt  = "zns-mysql.dev/start-at"
	RunnerContainer    = "znsbench"
	runnerBinary       = "znsbench"
	runnerPasswordEnv  = "MYSQL_PASSWORD"
	ComponentBenchmark = "benchmark"
	// BenchUID is the non-root user of the bench image.
	BenchUID int64 = 1000
)

// Benchmark phases a Job runs (the runner's subcommands).
const (
	BenchPhasePrepare = "prepare"
	BenchPhaseVerify  = "verify"
	BenchPhaseRun     = "run"
	// BenchPhasePrecondition fills a conventional target's volume with fio.
	BenchPhasePrecondition = "precondition"
	// BenchPhaseSteady is one round of the write-only phase (spec.steadyState): the runner's run, numbered by
	// round, without a common start.
	BenchPhaseSteady  = "steady"
	preconditionMount = "/data"
)

// BenchJobName is deterministic in benchmark, phase, iteration and target, so that a restarted operator finds
// the Job it created before instead of creating a second one.
func BenchJobName(b *v1alpha1.Benchmark, phase string, iteration int32, target string) string {
	if phase == BenchPhaseRun || phase == BenchPhaseSteady {
		return fmt.Sprintf("%s-%s%d-%s", b.Name, phase, iteration, target)
	}
	return fmt.Sprintf("%s-%s-%s", b.Name, phase, target)
}

// SeriesConfigMapName holds one run's interval series.
func SeriesConfigMapName(b *v1alpha1.Benchmark, iteration int32, target string) string {
	return fmt.Sprintf("%s-series%d-%s", b.Name, iteration, target)
}

// BenchOwnerReference makes the Benchmark the controller of its Jobs and ConfigMaps.
func BenchOwnerReference(b *v1alpha1.Benchmark) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(v1alpha1.GroupVersion.String()).
		WithKind("Benchmark").
		WithName(b.Name).
		WithUID(b.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// BenchLabels label everything of a benchmark.
func BenchLabels(b *v1alpha1.Benchmark, phase, target string, iteration int32) map[string]string {
	return map[string]string{
		v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue,
		v1alpha1.LabelComponent: ComponentBenchmark,
		LabelBenchmark:          b.Name,
		LabelBenchPhase:         phase,
		LabelBenchTarget:        target,
		LabelBenchIter:          strconv.Itoa(int(iteration)),
	}
}

// BenchJobInput is what a runner Job needs beyond the Benchmark.
type BenchJobInput struct {
	Phase     string
	Iteration int32
	DB        *v1alpha1.ZNSDatabase
	Image     string
	// Volume is the block device under a conventional database's volume, when its PersistentVolume is made
	// of one (deviceid.OfLocalVolume): the run counts that device's writes, as it counts a zoned device's.
	Volume deviceid.ID
	// ObserverURL is the observer's address (http://IP:PORT) when the client runs away from the device
	// (NeedsObserver): the runner asks it to read the device's counters in place of reading them itself.
	ObserverURL string
}

// device is the block device whose writes a run of in counts, and its node; empty when there is none.
func (in BenchJobInput) device() deviceid.ID {
	if node := in.DB.DeviceNode(); node != "" {
		return deviceid.ID{Node: node, Device: in.DB.DeviceName()}
	}
	if name := in.DB.ZonedDeviceName(); name != "" {
		return deviceid.ID{Device: name}
	}
	return in.Volume
}

// DeviceName is the kernel name of the device whose writes a run of in counts, "" when there is none.
func (in BenchJobInput) DeviceName() string { return in.device().Device }

// writtenDevices is what a run counts the writes of: the device, and zoned XFS's metadata device with it
// ("nvme0n2+nvme0n1"), which takes the file system's metadata and log writes of the same transactions.
func (in BenchJobInput) writtenDevices() string {
	if meta := in.DB.MetadataDeviceName(); meta != "" && in.device().Device != "" {
		return in.device().Device + "+" + meta
	}
	return in.device().Device
}

// RunnerArgs is the znsbench command line. It carries no secret: the password comes from the environment.
func RunnerArgs(b *v1alpha1.Benchmark, in BenchJobInput) []string {
	if _, ok := ycsbSubcommand(in.Phase); ok && b.Spec.Tool == v1alpha1.ToolYCSB && b.Spec.YCSB != nil {
		return ycsbRunnerArgs(b, in)
	}
	s := b.Spec
	db := in.DB
	threads, workload := s.Threads, s.RunWorkloads()[0]
	switch in.Phase {
	case BenchPhasePrepare:
		threads = s.PrepareThreads
	case BenchPhaseRun:
		threads, _ = s.RunThreads(in.Iteration)
		workload = s.RunWorkload(in.Iteration)
	}
	args := []string{runnerBinary, in.Phase,
		"--target", db.Name,
		"--workload", workload,
		"--tables", strconv.Itoa(int(s.Tables)),
		"--table-size", strconv.FormatInt(s.TableSize, 10),
		"--threads", strconv.Itoa(int(threads)),
		"--mysql-host", db.ServiceName() + "." + db.Namespace + ".svc",
		"--mysql-port", strconv.Itoa(v1alpha1.MySQLPort),
		"--mysql-user", "root",
		"--storage-engine", string(db.Spec.Engine),
	}
	if in.Phase == BenchPhasePrecondition {
		p := s.Precondition
		args = []string{runnerBinary, in.Phase, "--target", db.Name, "--dir", preconditionMount,
			"--passes", strconv.Itoa(int(p.Passes)), "--fill-percent", strconv.Itoa(int(p.FillPercent))}
		if p.MaxBytesPerPass != nil {
			args = append(args, "--max-bytes", strconv.FormatInt(p.MaxBytesPerPass.Value(), 10))
		}
		return args
	}
	if in.Phase == BenchPhasePrepare {
		// A Benchmark prepares fresh tables: those of an earlier Benchmark on the same database go first.
		args = append(args, "--create-database", "--drop-existing")
		if in.ObserverURL != "" {
			// the observer's drive sidecar reports the prepare's drive figures once the runner says it is over
			args = append(args, "--observer", in.ObserverURL)
		}
	}
	if in.Phase == BenchPhaseVerify && db.MetricsEnabled() {
		// The usable capacity (status.targets[].capacity) comes from the database pod's metrics sidecar.
		args = append(args, "--metrics-url", MetricsURL(db), "--usable-source", UsableSource(db))
	}
	if in.Phase == BenchPhaseSteady {
		return steadyArgs(b, in, args)
	}
	if in.Phase == BenchPhaseRun {
		args = append(args,
			"--iteration", strconv.Itoa(int(in.Iteration)),
			"--time", strconv.Itoa(int(s.DurationSeconds)),
			"--report-interval", strconv.Itoa(int(s.ReportIntervalSeconds)),
			"--percentile", strconv.Itoa(int(s.Percentile)),
		)
		args = append(args, startArgs()...)
		args = append(args, in.deviceArgs()...)
	}
	return args
}

// The common start of a run: the runner opens its readiness endpoint at the barrier (the pod turns Ready), the
// operator sets the start once every target's pod is Ready, annotates the pods with it (the kubelet writes the
// annotation into the file the runner reads) and posts it to each runner's endpoint.
const (
	startVolume    = "start"
	startDir       = "/etc/zns-start"
	startFile      = startDir + "/start-at"
	readyPath      = "/readyz"
	readyPortName  = "ready"
	readyPeriodSec = 2
)

// RunnerReadyPort is the run's runner endpoint at the start barrier: GET /readyz (its readiness probe) and
// RunnerStartPath, where the operator posts the common start as well as annotating the pod with it (the kubelet
// can take more than a minute to write an annotation into the file under emulation).
const (
	RunnerReadyPort = 9107
	RunnerStartPath = "/start"
)

func startArgs() []string {
	return []string{"--start-file", startFile, "--ready-listen", ":" + strconv.Itoa(RunnerReadyPort)}
}

// withStartBarrier gives a run's runner container what startArgs needs: the annotation as a file, the probe that
// makes the pod Ready once the runner is at the barrier.
func withStartBarrier(spec *corev1ac.PodSpecApplyConfiguration, c *corev1ac.ContainerApplyConfiguration) {
	spec.WithVolumes(corev1ac.Volume().WithName(startVolume).WithDownwardAPI(corev1ac.DownwardAPIVolumeSource().
		WithItems(corev1ac.DownwardAPIVolumeFile().WithPath("start-at").
			WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.annotations['" + AnnotationStartAt + "']")))))
	c.WithVolumeMounts(corev1ac.VolumeMount().WithName(startVolume).WithMountPath(startDir).WithReadOnly(true)).
		WithPorts(corev1ac.ContainerPort().WithName(readyPortName).WithContainerPort(RunnerReadyPort).WithProtocol(corev1.ProtocolTCP)).
		WithReadinessProbe(corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath(readyPath).WithPort(intstr.FromString(readyPortName))).
			WithInitialDelaySeconds(1).WithPeriodSeconds(readyPeriodSec).WithTimeoutSeconds(5).WithFailureThreshold(1))
}

// steadyArgs makes a write-only round a run of the round's workload, length and threads: the runner's run
// subcommand, without a common start (each target goes at its own pace) and without a histogram.
func steadyArgs(b *v1alpha1.Benchmark, in BenchJobInput, args []string) []string {
	st := b.Spec.SteadyState
	threads := st.Threads
	if threads == 0 {
		threads, _ = b.Spec.RunThreads(1)
	}
	args[1] = BenchPhaseRun
	for i := 2; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--workload":
			args[i+1] = st.Workload
		case "--threads":
			args[i+1] = strconv.Itoa(int(threads))
		}
	}
	args = append(args,
		"--iteration", strconv.Itoa(int(in.Iteration)),
		"--time", strconv.Itoa(int(st.RoundSeconds)),
		"--report-interval", strconv.Itoa(int(max(1, min(5, st.RoundSeconds/2)))),
		"--histogram=false",
	)
	return append(args, in.deviceArgs()...)
}

// BenchJob runs one runner phase against one target. It runs once (no retries: a second sysbench run would
// double-count) and, for a target on a known device (zoned, or a local volume's), on the device's node so that
// the runner can read the device's write counters.
func BenchJob(b *v1alpha1.Benchmark, in BenchJobInput) *batchv1ac.JobApplyConfiguration {
	db := in.DB
	labels := BenchLabels(b, in.Phase, db.Name, in.Iteration)
	c := corev1ac.Container().
		WithName(RunnerContainer).
		WithImage(in.Image).
		WithCommand(RunnerArgs(b, in)...).
		WithEnv(corev1ac.EnvVar().WithName(runnerPasswordEnv).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(db.RootSecretName()).WithKey(v1alpha1.RootPasswordKey)))).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithSecurityContext(containerSecurity())
	if r := b.Spec.Resources; len(r.Limits) > 0 || len(r.Requests) > 0 {
		rr := corev1ac.ResourceRequirements()
		if len(r.Limits) > 0 {
			rr.WithLimits(r.Limits)
		}
		if len(r.Requests) > 0 {
			rr.WithRequests(r.Requests)
		}
		c.WithResources(rr)
	}
	spec := corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(BenchUID).
			WithRunAsGroup(BenchUID).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)))
	spec.WithAffinity(clientAffinity(b, in))
	if in.Phase == BenchPhasePrecondition {
		// The datadir volume is ReadWriteOnce: the Job runs beside the database's pod, as the mysql user that
		// owns the volume.
		spec.WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).WithRunAsUser(MySQLUID).WithRunAsGroup(MySQLGID).WithFSGroup(MySQLGID).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
			WithAffinity(corev1ac.Affinity().WithPodAffinity(corev1ac.PodAffinity().
				WithRequiredDuringSchedulingIgnoredDuringExecution(corev1ac.PodAffinityTerm().
					WithLabelSelector(metav1ac.LabelSelector().WithMatchLabels(db.SelectorLabels())).
					WithTopologyKey(corev1.LabelHostname)))).
			WithVolumes(corev1ac.Volume().WithName("data").WithPersistentVolumeClaim(
				corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(db.DataClaimName())))
		c.WithVolumeMounts(corev1ac.VolumeMount().WithName("data").WithMountPath(preconditionMount))
		c.Env = nil // fio needs no password
	}
	// The root filesystem is read-only; sysbench's config-file password mode writes a private file to /tmp.
	spec.WithVolumes(corev1ac.Volume().WithName("tmp").WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
	c.WithVolumeMounts(corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp"))
	if in.Phase == BenchPhaseRun {
		withStartBarrier(spec, c)
	}
	// away from the device, the sidecar is the observer's (ObserverJob)
	if PlanDrive(b, in).Sidecar() && (!b.Spec.ClientsAway() || !clientPhase(in.Phase)) {
		withDriveSidecar(b, in, spec, c)
	}
	spec.WithContainers(c)
	deadline := benchJobDeadline(b, in.Phase)
	return batchv1ac.Job(BenchJobName(b, in.Phase, in.Iteration, db.Name), b.Namespace).
		WithLabels(labels).
		WithOwnerReferences(BenchOwnerReference(b)).
		WithSpec(batchv1ac.JobSpec().
			WithBackoffLimit(0).
			WithActiveDeadlineSeconds(deadline).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(spec)))
}

// benchJobDeadline bounds a runner Job of phase: the run's length, the wait for the other runners and the common
// start, with room; an hour for a
// verify, a day for what writes a whole drive or loads big tables.
func benchJobDeadline(b *v1alpha1.Benchmark, phase string) int64 {
	switch phase {
	case BenchPhaseRun:
		// the wait for every runner to be ready is bounded by the target timeout
		return int64(b.Spec.DurationSeconds) + int64(b.Spec.TargetTimeoutSeconds) + int64(b.Spec.StartDelaySeconds) + 600
	case BenchPhaseSteady:
		return int64(b.Spec.SteadyState.RoundSeconds) + 600
	case BenchPhasePrepare, BenchPhasePrecondition:
		return 24 * 3600
	}
	return 3600
}

// SeriesConfigMap keeps one run's interval series where kubectl can read it: JSON for programs and CSV for
// spreadsheets (benchresult.Fit bounds them to what a ConfigMap holds).
func SeriesConfigMap(b *v1alpha1.Benchmark, iteration int32, target, seriesJSON, csv string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(SeriesConfigMapName(b, iteration, target), b.Namespace).
		WithLabels(BenchLabels(b, BenchPhaseRun, target, iteration)).
		WithOwnerReferences(BenchOwnerReference(b)).
		WithData(map[string]string{"series.json": seriesJSON, "series.csv": csv})
}
