package debugbundle

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

const (
	ns              = "lab"
	password        = "s3cret-Root-pw!" // the Secret's value; it must appear nowhere in a bundle
	preflightReport = `{"device":{"name":"nullb0","model":"host-managed","nrZones":64}}`
)

var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func om(name, uid string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + uid), Labels: labels,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "zns-mysql-operator", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}}}`)}}}
}

// zonedCluster is a ZenFS database as the operator leaves it once mysqld runs, plus its Secret and another
// database's pod that must stay out of the bundle.
func zonedCluster() (*v1alpha1.ZNSDatabase, []client.Object) {
	db := &v1alpha1.ZNSDatabase{ObjectMeta: om("tenant1", "db", nil)}
	db.Namespace = ns
	db.Spec.Storage.ZonedDevice = &v1alpha1.ZonedDeviceSource{NodeName: "node-1", DeviceName: "nullb0"}
	db.Status.ConfigMapName = "tenant1-mycnf-0123456789"
	db.Status.RootPasswordSecretName = db.RootSecretName()
	secret := &corev1.Secret{ObjectMeta: om(db.RootSecretName(), "secret", db.Labels(resources.ComponentSecret)),
		StringData: map[string]string{v1alpha1.RootPasswordKey: password}, Data: map[string][]byte{v1alpha1.RootPasswordKey: []byte(password)}}
	cm := &corev1.ConfigMap{ObjectMeta: om(db.Status.ConfigMapName, "cm", db.Labels(resources.ComponentConfig)),
		Data: map[string]string{v1alpha1.ConfigFileName: "[mysqld]\nrocksdb_fs_uri=zenfs://dev:nullb0\n"}}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: om(db.DeviceClaimName(), "pvc", db.Labels(resources.ComponentDevice)),
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: v1alpha1.DevicePVName("node-1", "nullb0")}}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvc.Spec.VolumeName, UID: "uid-pv"}}
	sts := &appsv1.StatefulSet{ObjectMeta: om(db.StatefulSetName(), "sts", db.Labels(resources.ComponentDatabase))}
	svc := &corev1.Service{ObjectMeta: om(db.ServiceName(), "svc", db.Labels(resources.ComponentDatabase))}

	secretEnv := corev1.EnvVar{Name: "MYSQL_ROOT_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: db.RootSecretName()}, Key: v1alpha1.RootPasswordKey}}}
	pod := &corev1.Pod{ObjectMeta: om(db.PodName(), "pod", db.Labels(resources.ComponentDatabase)),
		Spec: corev1.PodSpec{NodeName: "node-1",
			InitContainers: []corev1.Container{{Name: resources.FormatContainer, Image: "percona-zenfs:test",
				Env: []corev1.EnvVar{{Name: "ZNS_REFORMAT_TOKEN", Value: "yes-wipe-it"}}}},
			Containers: []corev1.Container{{Name: resources.MySQLContainer, Image: "percona-zenfs:test",
				// A hand-edited pod with the password written in: the scrub's reason to exist.
				Env:  []corev1.EnvVar{secretEnv, {Name: "DB_PASSWORD", Value: password}, {Name: "ZNS_MYSQL_FLAVOR", Value: "percona"}},
				Args: []string{"--defaults-file=/etc/zns-mysql/my.cnf", "--password=" + password}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: resources.FormatContainer, ImageID: "sha256:aaa",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: `{"zenfs":{"action":"keep"}}`}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: resources.MySQLContainer, ImageID: "sha256:bbb", RestartCount: 1,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}},
		}}
	pod.Annotations = map[string]string{lastApplied: `{"env":[{"name":"DB_PASSWORD","value":"` + password + `"}]}`}
	job := &batchv1.Job{ObjectMeta: om(db.PreflightJobName(), "job", db.Labels(resources.ComponentPreflight))}
	jobPod := &corev1.Pod{ObjectMeta: om(db.PreflightJobName()+"-x7k2p", "jobpod", db.Labels(resources.ComponentPreflight)),
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: resources.PreflightContainer, Image: "percona-zenfs:test"}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: resources.PreflightContainer,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: preflightReport}}}}}}
	other := &v1alpha1.ZNSDatabase{ObjectMeta: om("other", "other", nil)}
	otherPod := &corev1.Pod{ObjectMeta: om(other.PodName(), "otherpod", other.Labels(resources.ComponentDatabase))}
	return db, []client.Object{db, secret, cm, pvc, pv, sts, svc, pod, job, jobPod, other, otherPod}
}

func event(name, kind, obj, uid string, at time.Time) corev1.Event {
	return corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: obj, UID: types.UID(uid)},
		Type:           "Normal", Reason: name, Message: "about " + obj, LastTimestamp: metav1.NewTime(at)}
}

func collect(t *testing.T, src Source, opts Options) (Result, map[string]string) {
	t.Helper()
	opts.Namespace, opts.Now, opts.TailLines = ns, t0, 100
	var buf bytes.Buffer
	res, err := Collect(context.Background(), src, opts, &buf)
	if err != nil {
		t.Fatal(err)
	}
	root, files := untar(t, buf.Bytes())
	if root != res.Root || root != "zns-debug-lab-20260701T120000Z" {
		t.Errorf("root %q, result %q", root, res.Root)
	}
	if res.Items != len(files) {
		t.Errorf("%d items reported, %d in the tarball", res.Items, len(files))
	}
	return res, files
}

func TestCollectZonedDatabase(t *testing.T) {
	db, objs := zonedCluster()
	src := newFake(objs...)
	src.logs["tenant1-mysql-0/mysqld"] = "mysqld log\n"
	src.logs["tenant1-mysql-0/mysqld/previous"] = "killed\n"
	src.logs["tenant1-mysql-0/format"] = "format log\n"
	src.logErr = errors.New(`pods "tenant1-preflight-x7k2p" not found on any node`)
	src.execOut["znsdb"] = preflightReport
	src.execErr["znsdb"] = exitError(1) // the device has a problem: still the report we want
	src.execOut["grep"] = "/sys/block/nullb0/queue/zoned:host-managed\n"
	src.execOut["/usr/bin/zenfs"] = "Free: 100 MB\n"
	src.events = []corev1.Event{
		event("Late", "Pod", db.PodName(), "uid-pod", t0.Add(time.Minute)),
		event("Early", "ZNSDatabase", "tenant1", "uid-db", t0.Add(-time.Hour)),
		event("RetriedJobPod", "Pod", db.PreflightJobName()+"-gone1", "uid-gone", t0),
		event("Unrelated", "Pod", "other-mysql-0", "uid-otherpod", t0),
	}
	res, files := collect(t, src, Options{Database: "tenant1", Command: "kubectl zns debug tenant1"})

	for _, want := range []string{
		ReadmePath, ErrorsPath, VersionsPath, EventsPath, EventsYAML,
		"objects/znsdatabase/tenant1.yaml", "objects/statefulset/tenant1-mysql.yaml", "objects/service/tenant1-mysql.yaml",
		"objects/pod/tenant1-mysql-0.yaml", "objects/pod/tenant1-preflight-x7k2p.yaml", "objects/job/tenant1-preflight.yaml",
		"objects/persistentvolumeclaim/tenant1-zoned.yaml", "objects/persistentvolume/" + v1alpha1.DevicePVName("node-1", "nullb0") + ".yaml",
		"objects/configmap/tenant1-mycnf-0123456789.yaml", "databases/tenant1/my.cnf",
		"databases/tenant1/reports/tenant1-preflight-x7k2p.preflight.json", "databases/tenant1/reports/tenant1-mysql-0.format.json",
		"databases/tenant1/device/preflight.txt", "databases/tenant1/device/sysfs.txt", "databases/tenant1/device/zenfs-df.txt",
		"logs/tenant1-mysql-0/mysqld.log", "logs/tenant1-mysql-0/mysqld.previous.log", "logs/tenant1-mysql-0/format.log",
	} {
		if _, ok := files[want]; !ok {
			t.Errorf("no %s in the bundle", want)
		}
	}
	for name, content := range files {
		if strings.Contains(name, "secret") || strings.Contains(name, "other") {
			t.Errorf("%s is in the bundle", name)
		}
		if strings.Contains(content, password) || strings.Contains(content, "managedFields:") || strings.Contains(content, lastApplied) {
			t.Errorf("%s holds the password, managedFields or the last-applied annotation:\n%s", name, content)
		}
	}
	if files["databases/tenant1/my.cnf"] != "[mysqld]\nrocksdb_fs_uri=zenfs://dev:nullb0\n" {
		t.Errorf("my.cnf: %q", files["databases/tenant1/my.cnf"])
	}
	pod := files["objects/pod/tenant1-mysql-0.yaml"]
	for _, want := range []string{"kind: Pod", "name: " + db.RootSecretName(), "value: " + Redacted, "--password=" + Redacted, "value: percona"} {
		if !strings.Contains(pod, want) {
			t.Errorf("pod YAML lacks %q:\n%s", want, pod)
		}
	}
	if !strings.Contains(files["databases/tenant1/reports/tenant1-preflight-x7k2p.preflight.json"], `"nrZones": 64`) {
		t.Errorf("preflight report: %s", files["databases/tenant1/reports/tenant1-preflight-x7k2p.preflight.json"])
	}
	wantExecs := [][]string{
		{"znsdb", "preflight", "--device", "nullb0", "--termination-log="},
		append([]string{"grep", "-H", "."}, sysfsPaths("nullb0")...),
		{"/usr/bin/zenfs", "df", "--zbd=nullb0"},
	}
	if !slices.EqualFunc(src.execs, wantExecs, slices.Equal) {
		t.Errorf("exec'd %q\nwant %q", src.execs, wantExecs)
	}
	if p := files["databases/tenant1/device/preflight.txt"]; !strings.Contains(p, "exit status 1") || !strings.Contains(p, preflightReport) {
		t.Errorf("preflight output:\n%s", p)
	}
	ev := files[EventsPath]
	if !(strings.Index(ev, "Early") < strings.Index(ev, "RetriedJobPod") && strings.Index(ev, "RetriedJobPod") < strings.Index(ev, "Late")) ||
		strings.Contains(ev, "Unrelated") || strings.Count(ev, "\n") != 4 {
		t.Errorf("events, oldest first, only about the bundle's objects:\n%s", ev)
	}
	errs := files[ErrorsPath]
	if len(res.Failures) != 1 || !strings.Contains(errs, "log of pod tenant1-preflight-x7k2p container preflight: pods") {
		t.Errorf("errors.txt (want only the preflight pod's log):\n%s", errs)
	}
	for _, want := range []string{"pod tenant1-mysql-0 container mysqld image percona-zenfs:test imageID sha256:bbb",
		"server: v1.36.3", "operator: no Deployment labelled app.kubernetes.io/name=zns-mysql in any namespace"} {
		if !strings.Contains(files[VersionsPath], want) {
			t.Errorf("versions.txt lacks %q:\n%s", want, files[VersionsPath])
		}
	}
	readme := files[ReadmePath]
	for _, want := range []string{"command:   kubectl zns debug tenant1", "selection: znsdatabase tenant1",
		"pod/tenant1-mysql-0 container mysqld env DB_PASSWORD", "pod/tenant1-mysql-0 container format env ZNS_REFORMAT_TOKEN",
		"pod/tenant1-mysql-0 container mysqld flag password", "databases/tenant1/my.cnf", "1 item that could not be collected"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.txt lacks %q:\n%s", want, readme)
		}
	}
}

func sysfsPaths(dev string) []string {
	var out []string
	for _, f := range SysfsFiles {
		out = append(out, "/sys/block/"+dev+"/"+f)
	}
	return out
}

// A pod that is not running is not exec'd into, a Benchmark's missing target is named, and the bundle completes.
func TestCollectBenchmarkWithMissingTargetAndPendingPod(t *testing.T) {
	db, objs := zonedCluster()
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && p.Name == db.PodName() {
			p.Status, p.Spec.NodeName = corev1.PodStatus{Phase: corev1.PodPending}, ""
		}
	}
	b := &v1alpha1.Benchmark{ObjectMeta: om("compare", "bench", nil)}
	b.Spec.Targets = []v1alpha1.BenchmarkTarget{{Name: "tenant1"}, {Name: "gone"}}
	run := &batchv1.Job{ObjectMeta: om("compare-run1-tenant1", "run", map[string]string{
		v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue, resources.LabelBenchmark: "compare"})}
	src := newFake(append(objs, b, run)...)
	src.logErr = errors.New("no kubelet")
	_, files := collect(t, src, Options{Benchmark: "compare"})
	if len(src.execs) != 0 {
		t.Errorf("exec'd into a pending pod: %q", src.execs)
	}
	for _, want := range []string{"objects/benchmark/compare.yaml", "objects/job/compare-run1-tenant1.yaml", "objects/znsdatabase/tenant1.yaml"} {
		if _, ok := files[want]; !ok {
			t.Errorf("no %s", want)
		}
	}
	errs := files[ErrorsPath]
	for _, want := range []string{`znsdatabase lab/gone: znsdatabases.zns-mysql.dev "gone" not found`,
		"device nullb0 of znsdatabase tenant1 (exec in tenant1-mysql-0): pod not running (phase Pending)",
		"logs of pod tenant1-mysql-0: the pod is not scheduled to a node", "log of pod tenant1-preflight-x7k2p container preflight: no kubelet",
		"my.cnf of znsdatabase gone"} {
		if !strings.Contains(errs, want) {
			t.Errorf("errors.txt lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(files[ReadmePath], "selection: benchmark compare and its targets [tenant1 gone]") {
		t.Errorf("README.txt:\n%s", files[ReadmePath])
	}
}

// Without a name: every database and benchmark of the namespace, and nothing collected twice.
func TestCollectNamespace(t *testing.T) {
	_, objs := zonedCluster()
	src := newFake(objs...)
	src.logErr, src.eventErr = errors.New("no kubelet"), errors.New("events: forbidden")
	_, files := collect(t, src, Options{})
	for _, want := range []string{"objects/znsdatabase/tenant1.yaml", "objects/znsdatabase/other.yaml", "objects/pod/other-mysql-0.yaml"} {
		if _, ok := files[want]; !ok {
			t.Errorf("no %s", want)
		}
	}
	if !strings.Contains(files[ErrorsPath], "list events in lab: events: forbidden") {
		t.Errorf("errors.txt:\n%s", files[ErrorsPath])
	}
}
