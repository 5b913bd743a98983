package controller_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// finishFioJob plays the Job controller and kubelet for a fio target's Job: its pod's runner terminates with the
// report as termination message, and the Job completes or fails.
func finishFioJob(t *testing.T, ns, name string, rep fio.RunnerReport, failed bool) {
	t.Helper()
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: name}, job)
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: name + "-", Labels: job.Spec.Template.Labels},
		Spec:       job.Spec.Template.Spec,
	}
	create(t, pod)
	now := metav1.Now()
	exit := int32(0)
	pod.Status.Phase = corev1.PodSucceeded
	if failed {
		exit, pod.Status.Phase = 1, corev1.PodFailed
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: resources.RunnerContainer, Image: benchTestImage,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Message: string(raw), StartedAt: now, FinishedAt: now}},
	}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	setJobDone(t, job, failed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
}

func failedWith(t *testing.T, b *v1alpha1.Benchmark, reason, says string) *v1alpha1.Benchmark {
	t.Helper()
	var cur *v1alpha1.Benchmark
	eventually(t, "the fio Benchmark fails with "+reason, func() error {
		cur = getBench(t, b)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionFailed)
		if cur.Status.Phase != v1alpha1.BenchmarkFailed || c == nil || c.Reason != reason || !strings.Contains(c.Message, says) {
			return fmt.Errorf("phase %s (%s), condition %+v", cur.Status.Phase, cur.Status.Progress, c)
		}
		return nil
	})
	return cur
}

func noFioJobs(t *testing.T, ns string) {
	t.Helper()
	jobs := &batchv1.JobList{}
	if err := k8s.List(ctx, jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if j.Labels[resources.LabelBenchPhase] == resources.BenchPhaseFio {
			t.Errorf("Job %s created", j.Name)
		}
	}
}

// A device target runs: the operator takes the device (a Block PersistentVolume named like a database's of that
// device, and a claim), runs znsbench fio on its node unprivileged with the token in the environment, fills the
// report into status, hands the device back, and a second Benchmark with the same token is refused.
func TestFioDeviceTargetRuns(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	// a database named like the target, in the namespace: the database state machine must leave it alone
	db := volumeDB(ns, "dev", v1alpha1.EngineInnoDB, v1alpha1.FlavorMariaDB)
	create(t, db)
	b := fioBenchmark(ns, "fio")
	b.Spec.Targets[0].Device.NodeName = "node-run"
	b.Spec.Fio.WriteToken = "2026-11-27"
	b.Spec.Fio.RuntimeSeconds = 5
	create(t, b)
	waitBenchPhase(t, b, v1alpha1.BenchmarkRunning)

	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "fio-fio-dev"}, job)
	c := job.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Command[:4], []string{"znsbench", "fio", "--device", "nvme0n2"}) || !slices.Contains(c.Command, "seqwrite-open-zones,seqread-128k-qd32") ||
		strings.Contains(strings.Join(c.Command, " "), "2026-11-27") {
		t.Errorf("command %q", c.Command)
	}
	if len(c.Env) != 1 || c.Env[0].Name != fio.WriteTokenEnv || c.Env[0].Value != "2026-11-27" {
		t.Errorf("env %+v", c.Env)
	}
	ps, sc := job.Spec.Template.Spec.SecurityContext, c.SecurityContext
	if !*ps.RunAsNonRoot || *ps.RunAsUser != 1000 || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("security: pod %+v container %+v", ps, sc)
	}
	// the API server's default of device.deviceGroupID: a host's root:disk 0660 device node opens for the runner
	if !slices.Equal(ps.SupplementalGroups, []int64{6}) {
		t.Errorf("supplemental groups %v, want [6] (disk) by default", ps.SupplementalGroups)
	}
	pvName := v1alpha1.DevicePVName("node-run", "nvme0n2")
	pv := &corev1.PersistentVolume{}
	waitObject(t, client.ObjectKey{Name: pvName}, pv)
	if pv.Annotations[resources.AnnotationFioBenchmark] != ns+"/fio" || *pv.Spec.VolumeMode != corev1.PersistentVolumeBlock || pv.Spec.Local.Path != "/dev/nvme0n2" {
		t.Errorf("pv %v %+v", pv.Annotations, pv.Spec)
	}
	if claim := (&corev1.PersistentVolumeClaim{}); k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fio-fio-dev"}, claim) != nil || claim.Spec.VolumeName != pvName {
		t.Errorf("claim %+v", claim.Spec)
	}
	if cur := getBench(t, b); targetStatus(cur, "dev").Fio == nil || targetStatus(cur, "dev").Fio.WriteToken != "2026-11-27" {
		t.Errorf("the token is not recorded when the Job has it: %+v", targetStatus(cur, "dev").Fio)
	}

	written := int64(1 << 30)
	finishFioJob(t, ns, "fio-fio-dev", fio.RunnerReport{Device: "nvme0n2", Zoned: true, Found: "a written zone", BlockLayerWrittenBytes: &written,
		Results: []fio.Result{
			{Profile: fio.ProfileSeqWriteOpenZones, Write: &fio.Direction{Bytes: written, BWBytes: 500 << 20, IOPS: 4000, P50Ns: 150000, P99Ns: 900500, P999Ns: 2000000}},
			{Profile: fio.ProfileSeqRead128KQD32, Read: &fio.Direction{Bytes: written, BWBytes: 2 << 30, IOPS: 16384, P50Ns: 1500, P99Ns: 3000, P999Ns: 4000}},
		}}, false)
	cur := waitBenchPhase(t, b, v1alpha1.BenchmarkCompleted)
	st := targetStatus(cur, "dev")
	if st.State != v1alpha1.TargetDone || st.Fio == nil || st.Fio.Node != "node-run" || !st.Fio.Zoned || len(st.Fio.Results) != 2 || st.Fio.WriteToken != "2026-11-27" {
		t.Fatalf("target %+v fio %+v", st, st.Fio)
	}
	if w := st.Fio.Results[0].Write; w == nil || w.LatencyP99Us != "900.5" || w.BytesPerSec != "524288000" || st.Fio.Results[0].Read != nil {
		t.Errorf("write figures %+v", w)
	}
	if st.Fio.Drive == nil || st.Fio.Drive.BlockLayerWrittenBytes != "1073741824" {
		t.Errorf("drive %+v", st.Fio.Drive)
	}
	// deleted (envtest has no controller to lift the pv-protection finalizer: deleting is what can be seen)
	eventually(t, "the device's PersistentVolume is handed back", func() error {
		return absent(client.ObjectKey{Name: pvName}, &corev1.PersistentVolume{})
	})
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil || db.Annotations["zns-mysql.dev/benchmark-profile"] != "" {
		t.Errorf("the database named like the target was touched: %v %v", err, db.Annotations)
	}

	// the token is one-shot on this device, from any namespace
	again := fioBenchmark(newNamespace(t), "again")
	again.Spec.Targets[0].Device.NodeName = "node-run"
	again.Spec.Fio.WriteToken = "2026-11-27"
	create(t, again)
	failedWith(t, again, "JobRejected", "one-shot")
	noFioJobs(t, again.Namespace)
}

// A device that a ZNSDatabase in another namespace names is refused before anything exists, naming the database
// in the condition and in an Event.
func TestFioDeviceHeldByDatabaseRefused(t *testing.T) {
	requireEnv(t)
	dbNS, ns := newNamespace(t), newNamespace(t)
	create(t, zonedDB(dbNS, "owner", "node-held", "nvme0n2"))
	b := fioBenchmark(ns, "fio")
	b.Spec.Targets[0].Device.NodeName = "node-held"
	create(t, b)
	failedWith(t, b, "TargetUnavailable", "held by ZNSDatabase "+dbNS+"/owner")
	if msg := waitBenchEvent(t, b, "Failed"); !strings.Contains(msg, dbNS+"/owner") {
		t.Errorf("event %q", msg)
	}
	noFioJobs(t, ns)
	pv := &corev1.PersistentVolume{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: v1alpha1.DevicePVName("node-held", "nvme0n2")}, pv); err == nil && pv.Annotations[resources.AnnotationFioBenchmark] != "" {
		t.Errorf("the database's volume got the fio lock: %v", pv.Annotations)
	}
}

// A database target waits while the database's mysqld pod exists, saying so, and runs on the database's own
// device claim once the pod is gone; a report that the runner refused the device fails the target, and the lock
// leaves the database's volume.
func TestFioDatabaseTargetWaitsForItsPod(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := zonedDB(ns, "zdb", "node-db", "nullb3")
	create(t, db)
	// what the database's preflight would have made: its device's volume and claim
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DevicePVName("node-db", "nullb3"), Annotations: map[string]string{v1alpha1.AnnotationOwner: ns + "/zdb"},
			Labels: map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: ptrTo(corev1.PersistentVolumeBlock),
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/dev/nullb3"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node-db"}}}}}}},
		},
	}
	if err := k8s.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: db.DeviceClaimName()},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: ptrTo(corev1.PersistentVolumeBlock),
			VolumeName: pv.Name, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
	if err := k8s.Create(ctx, claim); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: db.PodName(), Labels: db.SelectorLabels()},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysqld", Image: "example.test/mysql"}}}}
	create(t, pod)

	b := fioBenchmark(ns, "fio")
	b.Spec.Targets[0] = v1alpha1.BenchmarkTarget{Name: "db", Database: "zdb"}
	create(t, b)
	eventually(t, "the Benchmark waits for the database's pod", func() error {
		cur := getBench(t, b)
		if cur.Status.Phase != v1alpha1.BenchmarkPending || !strings.Contains(cur.Status.Progress, "mysqld pod "+db.PodName()+" exists") {
			return fmt.Errorf("phase %s (%s)", cur.Status.Phase, cur.Status.Progress)
		}
		return nil
	})
	if msg := waitBenchEvent(t, b, "TargetsBusy"); !strings.Contains(msg, "starts once the pod is gone") {
		t.Errorf("event %q", msg)
	}
	noFioJobs(t, ns)

	if err := k8s.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	waitBenchPhase(t, b, v1alpha1.BenchmarkRunning)
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: "fio-fio-db"}, job)
	vols := job.Spec.Template.Spec.Volumes
	if i := slices.IndexFunc(vols, func(v corev1.Volume) bool { return v.PersistentVolumeClaim != nil }); i < 0 || vols[i].PersistentVolumeClaim.ClaimName != db.DeviceClaimName() {
		t.Errorf("volumes %+v", vols)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Name: pv.Name}, pv); err != nil || pv.Annotations[resources.AnnotationFioBenchmark] != ns+"/fio" {
		t.Errorf("the database's volume is not locked: %v %v", err, pv.Annotations)
	}
	// the database does not take its device back while fio runs on it
	dbMeasured(t, db, ns+"/fio")

	finishFioJob(t, ns, "fio-fio-db", fio.RunnerReport{Device: "nullb3", Zoned: true, Found: "a written zone",
		Refused: "/dev/nullb3 holds a written zone and the profiles write to it"}, true)
	cur := failedWith(t, b, "TargetUnavailable", "refused the device")
	if st := targetStatus(cur, "db"); st.Fio == nil || st.Fio.Found != "a written zone" {
		t.Errorf("target %+v", st)
	}
	eventually(t, "the lock leaves the database's volume", func() error {
		if err := k8s.Get(ctx, client.ObjectKey{Name: pv.Name}, pv); err != nil {
			return err
		}
		if v, ok := pv.Annotations[resources.AnnotationFioBenchmark]; ok || pv.Annotations[v1alpha1.AnnotationOwner] != ns+"/zdb" {
			return fmt.Errorf("annotations %v (lock %q)", pv.Annotations, v)
		}
		return nil
	})
}

func ptrTo[T any](v T) *T { return &v }

// Two fio Benchmarks on one device: the second waits, saying which Benchmark has the device, and creates nothing
// meanwhile (a fio run ends by itself, so waiting beats failing).
func TestFioSecondBenchmarkOnADeviceWaits(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	first := fioBenchmark(ns, "first")
	first.Spec.Targets[0].Device.NodeName = "node-twice"
	create(t, first)
	waitBenchPhase(t, first, v1alpha1.BenchmarkRunning)
	otherNS := newNamespace(t)
	second := fioBenchmark(otherNS, "second")
	second.Spec.Targets[0].Device.NodeName = "node-twice"
	create(t, second)
	eventually(t, "the second Benchmark waits for the device", func() error {
		cur := getBench(t, second)
		if cur.Status.Phase != v1alpha1.BenchmarkPending || !strings.Contains(cur.Status.Progress, "being measured by fio Benchmark "+ns+"/first") {
			return fmt.Errorf("phase %s (%s)", cur.Status.Phase, cur.Status.Progress)
		}
		return nil
	})
	noFioJobs(t, otherNS)
	// a database created meanwhile on the device waits for the fio Benchmark too, creating nothing
	late := zonedDB(newNamespace(t), "late", "node-twice", "nvme0n2")
	create(t, late)
	dbMeasured(t, late, ns+"/first")
	if err := absent(client.ObjectKey{Namespace: late.Namespace, Name: late.PreflightJobName()}, &batchv1.Job{}); err != nil {
		t.Error(err)
	}
	pv := &corev1.PersistentVolume{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: v1alpha1.DevicePVName("node-twice", "nvme0n2")}, pv); err != nil || pv.Annotations[resources.AnnotationFioBenchmark] != ns+"/first" {
		t.Errorf("the device's volume: %v %v", err, pv.Annotations)
	}
}

// dbMeasured waits until the database says that a fio Benchmark measures its device.
func dbMeasured(t *testing.T, db *v1alpha1.ZNSDatabase, bench string) {
	t.Helper()
	eventually(t, "the database waits for the fio Benchmark", func() error {
		cur := &v1alpha1.ZNSDatabase{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionDeviceReady)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "being measured by fio Benchmark "+bench) {
			return fmt.Errorf("DeviceReady %+v", c)
		}
		return nil
	})
}
