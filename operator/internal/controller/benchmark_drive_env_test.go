package controller_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// recordedDriveReport is a report the sidecar left in the QEMU guest (operator/internal/drivereport/testdata).
func recordedDriveReport(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "drivereport", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// finishWithSidecar plays the kubelet for a runner Job whose pod has the drive sidecar: the runner terminated
// with its summary, the sidecar in the given state, and the Job done.
func finishWithSidecar(t *testing.T, ns, name string, sum *benchresult.Summary, log string, sidecar corev1.ContainerState) *corev1.Pod {
	t.Helper()
	_, pod := finishBenchJobWith(t, ns, name, sum, log, false, &sidecar)
	return pod
}

func stopSidecar(t *testing.T, pod *corev1.Pod, report string) {
	t.Helper()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	pod.Status.InitContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: report, StartedAt: now, FinishedAt: now}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

// A Benchmark with spec.drive gives the zoned target's run Job the sidecar (counters only: a ZNS drive needs no
// model), waits for the sidecar's report after the runner ended, and keeps measured and modelled figures apart;
// the provisioned volume gets no sidecar and its reasons instead of figures.
func TestBenchmarkDriveFigures(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-dr")
	b := benchmark(ns, "wa", "tenant1", "inno")
	noPrepare(b)
	b.Spec.Drive = &v1alpha1.DriveSpec{Counters: true, ModelOverProvisioningPercent: []int32{7, 28}}
	create(t, b)
	verifyAll(t, ns, "wa", "tenant1", "inno")

	zjob, cjob := &batchv1.Job{}, &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "wa-run1-tenant1"}, zjob)
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "wa-run1-inno"}, cjob)
	zpod := zjob.Spec.Template.Spec
	if len(zpod.InitContainers) != 1 || zpod.InitContainers[0].Name != resources.DriveContainer {
		t.Fatalf("zoned run pod init containers %+v, want the drive sidecar", zpod.InitContainers)
	}
	sc := zpod.InitContainers[0]
	if cmd := strings.Join(sc.Command, " "); !strings.Contains(cmd, "--counters") || !strings.Contains(cmd, "--model-unavailable") {
		t.Errorf("sidecar command %q", cmd)
	}
	if len(sc.VolumeDevices) != 1 || sc.VolumeDevices[0].DevicePath != "/dev/nullb0" || !claimsDevice(zpod.Volumes, "tenant1-zoned") {
		t.Errorf("sidecar devices %+v, volumes %+v", sc.VolumeDevices, zpod.Volumes)
	}
	if !slices.Contains(zpod.Containers[0].Command, "--drive-dir") {
		t.Errorf("the runner does not wait for the sidecar: %v", zpod.Containers[0].Command)
	}
	if n := len(cjob.Spec.Template.Spec.InitContainers); n != 0 {
		t.Errorf("the provisioned volume's run has %d init containers: nothing to read needs no privileged sidecar", n)
	}

	// The runner ended but the sidecar still finishes: no result yet.
	report := recordedDriveReport(t, "qemu-run-nvme1n1-ocp.json")
	zp := finishWithSidecar(t, ns, "wa-run1-tenant1", runSummary("tenant1", 1, 300, 5, true), seriesLog(t, "tenant1", 1, 300),
		corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}})
	finishBenchJob(t, ns, "wa-run1-inno", runSummary("inno", 1, 100, 15, false), seriesLog(t, "inno", 1, 100), false)
	consistently(t, "no result while the sidecar finishes", 2*time.Second, func() error {
		if ts := targetStatus(getBench(t, b), "tenant1"); len(ts.Iterations) != 0 {
			return fmt.Errorf("tenant1 has %d iteration(s)", len(ts.Iterations))
		}
		return nil
	})
	stopSidecar(t, zp, report)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)

	z := targetStatus(done, "tenant1").Iterations[0].Drive
	if z == nil || z.Counters == nil || z.Counters.MediaSource != "smart+ocp" || z.Counters.MediaWrittenBytes != "50331648" ||
		z.Counters.WriteAmplification == "" || z.Counters.HostBytesPerTransaction == "" {
		t.Fatalf("tenant1 drive figures %+v", z)
	}
	// Every modelled figure is labelled as such.
	for _, m := range z.Modelled {
		if !strings.HasPrefix(m.Label, "modelled") {
			t.Errorf("modelled figure without its label: %+v", m)
		}
	}
	if mean := targetStatus(done, "tenant1").DriveMean; mean == nil || mean.Counters == nil || mean.Counters.MediaWrittenBytes != "50331648" {
		t.Errorf("tenant1 drive mean %+v", mean)
	}
	in := targetStatus(done, "inno").Iterations[0].Drive
	if in == nil || in.Counters != nil || len(in.Modelled) != 0 ||
		!strings.Contains(in.CountersUnavailable, "not a device the operator knows") || !strings.Contains(in.ModelUnavailable, "block trace cannot be captured") {
		t.Errorf("inno drive figures %+v: want reasons, no figures", in)
	}
}

// A drive whose counters went backwards during a phase (reset or replaced) loses that phase's figure, with a
// Warning Event; a sidecar that left no report gives a reason, not a zero.
func TestBenchmarkDriveCountersReset(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	availableDBs(t, ns, "bench-node-dz")
	b := benchmark(ns, "reset", "tenant1", "inno")
	noPrepare(b)
	b.Spec.Iterations = 2
	b.Spec.Drive = &v1alpha1.DriveSpec{Counters: true}
	create(t, b)
	verifyAll(t, ns, "reset", "tenant1", "inno")
	reset, err := drivereport.Report{Phase: "run", Device: "nullb0", CountersReset: true,
		CountersUnavailable: "drive counters dropped: nullb0: drive counters went backwards: Data Units Written 900 -> 12"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	finishWithSidecar(t, ns, "reset-run1-tenant1", runSummary("tenant1", 1, 300, 5, true), seriesLog(t, "tenant1", 1, 300),
		corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: string(reset)}})
	finishBenchJob(t, ns, "reset-run1-inno", runSummary("inno", 1, 100, 15, false), seriesLog(t, "inno", 1, 100), false)
	if msg := waitBenchEvent(t, b, "DriveCountersReset"); !strings.Contains(msg, "went backwards") {
		t.Errorf("event %q", msg)
	}
	finishWithSidecar(t, ns, "reset-run2-tenant1", runSummary("tenant1", 2, 300, 5, true), seriesLog(t, "tenant1", 2, 300),
		corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}})
	finishBenchJob(t, ns, "reset-run2-inno", runSummary("inno", 2, 100, 15, false), seriesLog(t, "inno", 2, 100), false)
	done := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	its := targetStatus(done, "tenant1").Iterations
	if d := its[0].Drive; d == nil || d.Counters != nil || !strings.Contains(d.CountersUnavailable, "went backwards") {
		t.Errorf("run 1 drive %+v", d)
	}
	if d := its[1].Drive; d == nil || d.Counters != nil || !strings.Contains(d.CountersUnavailable, "OOMKilled") {
		t.Errorf("run 2 drive %+v", d)
	}
	if m := targetStatus(done, "tenant1").DriveMean; m != nil && m.Counters != nil {
		t.Errorf("a mean over runs without counters: %+v", m.Counters)
	}
	waitBenchEvent(t, b, "DriveFiguresMissing")
}
