package resources

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/observe"
)

// Clients away from their databases (spec.clients): the runner cannot see the device, so an observer Job on the
// device's node reads its block-layer counters (`znsbench observe`) and, with spec.drive, carries the drive
// sidecar that the runner's pod would have carried. The runner asks the observer over HTTP to read the counters
// right before and right after its phase; the observer exits after the second reading, which stops the sidecar,
// which then reads the drive's last counters, exactly as in a runner's pod.
const (
	// ObserverContainer is the observer's main container.
	ObserverContainer = "observer"
	// ObserverPort is where `znsbench observe` listens.
	ObserverPort = observe.DefaultPort
	// ComponentObserver labels observer Jobs and pods: another component than the runners', so that a runner
	// Job's pods are never confused with its observer's.
	ComponentObserver = "benchmark-observer"
)

// clientPhase reports whether a phase is a client's: everything but the precondition, which writes the
// database's own volume and so runs beside it.
func clientPhase(phase string) bool { return phase != BenchPhasePrecondition }

// NeedsObserver reports whether the phase of in runs its client away from the device, with a device to read:
// a phase that counts the device's writes or has the drive sidecar.
func NeedsObserver(b *v1alpha1.Benchmark, in BenchJobInput) bool {
	if !b.Spec.ClientsAway() || !clientPhase(in.Phase) || in.writtenDevices() == "" {
		return false
	}
	switch in.Phase {
	case BenchPhaseRun, BenchPhaseSteady:
		return true
	case BenchPhasePrepare:
		return PlanDrive(b, in).Sidecar()
	}
	return false
}

// deviceArgs is how a run's runner counts the device's writes: itself (--device) or through the observer.
func (in BenchJobInput) deviceArgs() []string {
	if in.ObserverURL != "" {
		return []string{"--observer", in.ObserverURL}
	}
	if dev := in.writtenDevices(); dev != "" {
		return []string{"--device", dev}
	}
	return nil
}

// ObserverURL is the address the runner reaches an observer pod at.
func ObserverURL(podIP string) string { return fmt.Sprintf("http://%s:%d", podIP, ObserverPort) }

// ObserverJobName is the observer of the Job BenchJobName names: "obs" before the phase keeps it within the
// length the longest phase (precondition) leaves.
func ObserverJobName(b *v1alpha1.Benchmark, phase string, iteration int32, target string) string {
	if phase == BenchPhaseRun || phase == BenchPhaseSteady {
		return fmt.Sprintf("%s-obs%s%d-%s", b.Name, phase, iteration, target)
	}
	return fmt.Sprintf("%s-obs%s-%s", b.Name, phase, target)
}

// ObserverLabels label an observer's Job and pod.
func ObserverLabels(b *v1alpha1.Benchmark, phase, target string, iteration int32) map[string]string {
	l := BenchLabels(b, phase, target, iteration)
	l[v1alpha1.LabelComponent] = ComponentObserver
	return l
}

// clientAffinity places a client's pod by spec.clients; nil leaves it to the scheduler.
func clientAffinity(b *v1alpha1.Benchmark, in BenchJobInput) *corev1ac.AffinityApplyConfiguration {
	if !clientPhase(in.Phase) {
		return onDeviceNode(in)
	}
	node := in.device().Node
	switch b.Spec.ClientPlacement() {
	case v1alpha1.ClientsOnOtherNode:
		a := corev1ac.Affinity().WithPodAntiAffinity(corev1ac.PodAntiAffinity().
			WithRequiredDuringSchedulingIgnoredDuringExecution(besideDatabase(in.DB)))
		if node != "" {
			// the database's pod may be restarting, and away from its node the client must be all the same
			notThere := corev1ac.NodeSelectorRequirement().WithKey(corev1.LabelHostname).WithOperator(corev1.NodeSelectorOpNotIn).WithValues(node)
			a.WithNodeAffinity(corev1ac.NodeAffinity().WithRequiredDuringSchedulingIgnoredDuringExecution(
				corev1ac.NodeSelector().WithNodeSelectorTerms(corev1ac.NodeSelectorTerm().WithMatchExpressions(notThere))))
		}
		return a
	case v1alpha1.ClientsBySelector:
		return corev1ac.Affinity().WithNodeAffinity(corev1ac.NodeAffinity().
			WithRequiredDuringSchedulingIgnoredDuringExecution(nodeSelectorOf(b.Spec.Clients.NodeSelector)))
	}
	return onDeviceNode(in)
}

// onDeviceNode places a pod on the node of in's device, or beside the database's pod when the device's node
// is not known (a provisioned volume).
func onDeviceNode(in BenchJobInput) *corev1ac.AffinityApplyConfiguration {
	if node := in.device().Node; node != "" {
		return corev1ac.Affinity().WithNodeAffinity(corev1ac.NodeAffinity().
			WithRequiredDuringSchedulingIgnoredDuringExecution(hostnameSelector(node)))
	}
	return corev1ac.Affinity().WithPodAffinity(corev1ac.PodAffinity().
		WithRequiredDuringSchedulingIgnoredDuringExecution(besideDatabase(in.DB)))
}

// besideDatabase is the node of the database's pod, as a pod (anti-)affinity term.
func besideDatabase(db *v1alpha1.ZNSDatabase) *corev1ac.PodAffinityTermApplyConfiguration {
	return corev1ac.PodAffinityTerm().
		WithLabelSelector(metav1ac.LabelSelector().WithMatchLabels(db.SelectorLabels())).
		WithTopologyKey(corev1.LabelHostname)
}

// nodeSelectorOf turns a label selector into the node selector the scheduler takes: each label a requirement In
// its one value, each expression as it is (the operators are the same words).
func nodeSelectorOf(sel *metav1.LabelSelector) *corev1ac.NodeSelectorApplyConfiguration {
	term := corev1ac.NodeSelectorTerm()
	if sel != nil {
		for _, k := range slices.Sorted(maps.Keys(sel.MatchLabels)) {
			term.WithMatchExpressions(corev1ac.NodeSelectorRequirement().WithKey(k).WithOperator(corev1.NodeSelectorOpIn).WithValues(sel.MatchLabels[k]))
		}
		for _, e := range sel.MatchExpressions {
			term.WithMatchExpressions(corev1ac.NodeSelectorRequirement().WithKey(e.Key).
				WithOperator(corev1.NodeSelectorOperator(e.Operator)).WithValues(e.Values...))
		}
	}
	return corev1ac.NodeSelector().WithNodeSelectorTerms(term)
}

// ObserverJob is the observer of one phase of one target whose client runs away from the device: on the
// device's node, unprivileged itself, with the drive sidecar when spec.drive reads anything. It is ready once
// the sidecar has taken its first readings, and the runner's Job is created only then.
func ObserverJob(b *v1alpha1.Benchmark, in BenchJobInput) *batchv1ac.JobApplyConfiguration {
	labels := ObserverLabels(b, in.Phase, in.DB.Name, in.Iteration)
	args := []string{runnerBinary, "observe", "--listen", fmt.Sprintf(":%d", ObserverPort), "--device", in.writtenDevices(),
		"--target", in.DB.Name, "--phase", in.Phase}
	c := corev1ac.Container().
		WithName(ObserverContainer).
		WithImage(in.Image).
		WithCommand(args...).
		WithPorts(corev1ac.ContainerPort().WithName("observe").WithContainerPort(ObserverPort)).
		WithReadinessProbe(corev1ac.Probe().WithHTTPGet(corev1ac.HTTPGetAction().WithPath(observe.PathReady).
			WithPort(intstr.FromInt32(ObserverPort))).WithPeriodSeconds(2).WithFailureThreshold(1)).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError).
		WithSecurityContext(containerSecurity())
	spec := corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithAffinity(onDeviceNode(in)).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).WithRunAsUser(BenchUID).WithRunAsGroup(BenchUID).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)))
	if plan := PlanDrive(b, in); plan.Sidecar() {
		addDriveSidecar(spec, c, in.Image, DriveArgs(b, in), plan, driveBlockClaim(in.DB), in.device().Device)
	}
	spec.WithContainers(c)
	return batchv1ac.Job(ObserverJobName(b, in.Phase, in.Iteration, in.DB.Name), b.Namespace).
		WithLabels(labels).
		WithOwnerReferences(BenchOwnerReference(b)).
		WithSpec(batchv1ac.JobSpec().
			WithBackoffLimit(0).
			WithActiveDeadlineSeconds(benchJobDeadline(b, in.Phase) + 600).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(spec)))
}
