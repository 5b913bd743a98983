package resources

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
)

func clientsBench(c *v1alpha1.BenchmarkClients) *v1alpha1.Benchmark {
	b := driveBench(&v1alpha1.DriveSpec{Counters: true})
	b.Spec.Clients = c
	return b
}

func zonedXFSDB() *v1alpha1.ZNSDatabase {
	return &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n1",
			DeviceName: "nvme0n2", Filesystem: v1alpha1.FilesystemZonedXFS, MetadataDeviceName: "nvme0n1"}}}}
}

func command(job *batchv1ac.JobApplyConfiguration) []string {
	return job.Spec.Template.Spec.Containers[0].Command
}

// flagValue is the value after flag in args, "" when the flag is absent.
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// Clients on the database's node (the default) are today's Jobs: pinned to the device's node, reading the
// device and carrying the drive sidecar themselves; no observer.
func TestClientsOnDatabaseNode(t *testing.T) {
	for _, c := range []*v1alpha1.BenchmarkClients{nil, {Placement: v1alpha1.ClientsOnDatabaseNode}} {
		b := clientsBench(c)
		in := BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: zonedXFSDB()}
		if NeedsObserver(b, in) {
			t.Errorf("clients %+v: an observer for a client beside its device", c)
		}
		job := BenchJob(b, in)
		spec := job.Spec.Template.Spec
		if got := flagValue(command(job), "--device"); got != "nvme0n2+nvme0n1" {
			t.Errorf("clients %+v: --device %q", c, got)
		}
		if sidecarOf(spec) == nil {
			t.Errorf("clients %+v: no drive sidecar beside the runner", c)
		}
		if a := spec.Affinity; a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != "n1" {
			t.Errorf("clients %+v: affinity %+v, want node n1", c, a)
		}
	}
	// a provisioned volume's node is not known: beside the database's pod
	vol := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "v"},
		Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}}}
	spec := BenchJob(clientsBench(nil), BenchJobInput{Phase: BenchPhaseRun, Iteration: 1, DB: vol}).Spec.Template.Spec
	if a := spec.Affinity; a == nil || a.PodAffinity == nil || a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels[v1alpha1.LabelInstance] != "v" {
		t.Errorf("a provisioned volume's client: affinity %+v, want beside the database's pod", a)
	}
}

// Away from the database, the client neither reads the device nor carries the sidecar: it names the observer,
// which sits on the device's node with the sidecar and a readiness probe.
func TestClientsOnOtherNode(t *testing.T) {
	b := clientsBench(&v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsOnOtherNode})
	db := zonedXFSDB()
	for phase, want := range map[string]bool{BenchPhaseRun: true, BenchPhaseSteady: true, BenchPhasePrepare: true,
		BenchPhaseVerify: false, BenchPhasePrecondition: false} {
		if got := NeedsObserver(b, BenchJobInput{Phase: phase, DB: db}); got != want {
			t.Errorf("%s: needs an observer %v, want %v", phase, got, want)
		}
	}
	if NeedsObserver(clientsBench(&v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsOnOtherNode}),
		BenchJobInput{Phase: BenchPhaseRun, DB: &v1alpha1.ZNSDatabase{Spec: v1alpha1.ZNSDatabaseSpec{Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{}}}}}) {
		t.Error("an observer for a provisioned volume, whose device is not known")
	}
	noDrive := clientsBench(&v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsOnOtherNode})
	noDrive.Spec.Drive = nil
	if NeedsObserver(noDrive, BenchJobInput{Phase: BenchPhasePrepare, DB: db}) {
		t.Error("an observer for a prepare without spec.drive: the prepare counts no device bytes")
	}

	in := BenchJobInput{Phase: BenchPhaseRun, Iteration: 2, DB: db, ObserverURL: ObserverURL("10.0.0.7")}
	job := BenchJob(b, in)
	args, spec := command(job), job.Spec.Template.Spec
	if flagValue(args, "--device") != "" || flagValue(args, "--observer") != "http://10.0.0.7:9106" {
		t.Errorf("away client's args %v, want --observer and no --device", args)
	}
	if sidecarOf(spec) != nil || volumeNamed(spec, volumeDev) != nil {
		t.Error("the away client carries the drive sidecar or the device")
	}
	a := spec.Affinity
	if a == nil || a.PodAntiAffinity == nil || a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels[v1alpha1.LabelInstance] != "x" {
		t.Fatalf("affinity %+v, want away from the database's pod", a)
	}
	req := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
	if *req.Key != corev1.LabelHostname || *req.Operator != corev1.NodeSelectorOpNotIn || req.Values[0] != "n1" {
		t.Errorf("node requirement %+v, want hostname NotIn n1", req)
	}
	prep := command(BenchJob(b, BenchJobInput{Phase: BenchPhasePrepare, DB: db, ObserverURL: in.ObserverURL}))
	if flagValue(prep, "--observer") != in.ObserverURL {
		t.Errorf("away prepare %v, want --observer", prep)
	}

	obs := ObserverJob(b, in)
	ospec := obs.Spec.Template.Spec
	if *obs.Name != "b-obsrun2-x" || obs.Labels[v1alpha1.LabelComponent] != ComponentObserver || ospec.Containers[0].Name == nil || *ospec.Containers[0].Name != ObserverContainer {
		t.Errorf("observer Job %s labels %v", *obs.Name, obs.Labels)
	}
	oargs := command(obs)
	if oargs[1] != "observe" || flagValue(oargs, "--device") != "nvme0n2+nvme0n1" || flagValue(oargs, "--listen") != ":9106" {
		t.Errorf("observer args %v", oargs)
	}
	if slices.Contains(oargs, "--drive-dir") != true {
		t.Errorf("observer args %v: no --drive-dir, so it would not wait for its sidecar", oargs)
	}
	if p := ospec.Containers[0].ReadinessProbe; p == nil || *p.HTTPGet.Path != "/ready" || p.HTTPGet.Port.IntValue() != ObserverPort {
		t.Errorf("observer readiness probe %+v", p)
	}
	if sidecarOf(ospec) == nil || volumeNamed(ospec, volumeDev) == nil {
		t.Error("the observer lacks the drive sidecar or the device")
	}
	if na := ospec.Affinity.NodeAffinity; na == nil || na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != "n1" {
		t.Errorf("observer affinity %+v, want node n1", ospec.Affinity)
	}
	for _, e := range ospec.Containers[0].Env {
		if strings.Contains(*e.Name, "PASSWORD") {
			t.Errorf("the observer gets %s: it never talks to the database", *e.Name)
		}
	}
}

// Selector placement turns the label selector into the scheduler's node selector, labels and expressions alike.
func TestClientsBySelector(t *testing.T) {
	b := clientsBench(&v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsBySelector, NodeSelector: &metav1.LabelSelector{
		MatchLabels:      map[string]string{"pool": "clients", "arch": "amd64"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"a", "b"}}},
	}})
	in := BenchJobInput{Phase: BenchPhaseVerify, DB: zonedXFSDB(), Volume: deviceid.ID{}}
	spec := BenchJob(b, in).Spec.Template.Spec
	if spec.Affinity.PodAntiAffinity != nil || spec.Affinity.PodAffinity != nil {
		t.Errorf("selector placement also has pod terms: %+v", spec.Affinity)
	}
	var got []string
	for _, r := range spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions {
		got = append(got, *r.Key+" "+string(*r.Operator)+" "+strings.Join(r.Values, ","))
	}
	want := []string{"arch In amd64", "pool In clients", "zone NotIn a,b"}
	if !slices.Equal(got, want) {
		t.Errorf("node requirements %q, want %q", got, want)
	}
}

// Observer Job names fit where the runner's do: the longest Benchmark and target names admission lets through.
func TestObserverJobNameLength(t *testing.T) {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("b", 24)}}
	target := strings.Repeat("t", 25) // 49 with the Benchmark's name, admission's limit
	for _, tc := range []struct {
		phase string
		it    int32
	}{{BenchPhasePrepare, 0}, {BenchPhaseRun, 100}, {BenchPhaseSteady, 100}} {
		name := ObserverJobName(b, tc.phase, tc.it, target)
		if len(name) > len(BenchJobName(b, BenchPhasePrecondition, 0, target)) {
			t.Errorf("%s: %d characters, longer than the precondition Job's", name, len(name))
		}
	}
}
