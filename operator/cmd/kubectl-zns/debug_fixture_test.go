package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// debugCluster makes what the operator would have made for config/samples/zoned-nullb0.yaml, with the
// operator's own builders, plus what the kubelet and the StatefulSet and Job controllers would have (there are
// none in envtest): the database pod, running on node-1, and a finished preflight pod. The database pod also
// carries the password literally, in an env var and kubectl's last-applied annotation, as a hand-edited pod
// might: the scrub must catch it.
func debugCluster(t *testing.T, ctx context.Context, c client.Client) *v1alpha1.ZNSDatabase {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	apply := func(ac runtime.ApplyConfiguration) {
		t.Helper()
		must(c.Apply(ctx, ac, client.FieldOwner("zns-mysql-operator"), client.ForceOwnership))
	}
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: debugNS}}))
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "zns-system"}}))

	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "samples", "zoned-nullb0.yaml"))
	must(err)
	db := &v1alpha1.ZNSDatabase{}
	must(yaml.Unmarshal(raw, db))
	db.Namespace = debugNS
	db.Spec.Storage.ZonedDevice.NodeName = "node-1"
	must(c.Create(ctx, db))
	secret := resources.GeneratedSecret(db, debugPassword)
	must(c.Create(ctx, secret))
	db.Status.ConfigMapName = resources.ConfigMapName(db, debugCnf)
	db.Status.RootPasswordSecretName = db.RootSecretName()
	db.Status.Storage = "zoned"
	must(c.Status().Update(ctx, db))

	apply(resources.ConfigMap(db, debugCnf))
	apply(resources.Service(db))
	apply(resources.DevicePV(db, 1<<30))
	apply(resources.DeviceClaim(db, 1<<30))
	apply(resources.PreflightJob(db, "percona-zenfs:test"))
	apply(resources.FormatJob(db, "percona-zenfs:test", ""))
	apply(resources.StatefulSet(db, resources.StatefulSetInput{Image: "percona-zenfs:test", ConfigMapName: db.Status.ConfigMapName}))

	sts := &appsv1.StatefulSet{}
	must(c.Get(ctx, client.ObjectKey{Namespace: debugNS, Name: db.StatefulSetName()}, sts))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: debugNS, Name: db.PodName(), Labels: sts.Spec.Template.Labels,
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{"containers":[{"env":[{"name":"DB_PASSWORD","value":"` + debugPassword + `"}]}]}}`}},
		Spec: sts.Spec.Template.Spec}
	pod.Spec.NodeName = "node-1" // no such Node: the API server cannot reach a kubelet for logs or exec
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == resources.MySQLContainer {
			pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, corev1.EnvVar{Name: "DB_PASSWORD", Value: debugPassword})
		}
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: v1alpha1.DataClaimTemplateName, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: db.DataClaimName()}}})
	must(c.Create(ctx, pod))
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{Name: resources.MySQLContainer, Image: "percona-zenfs:test", ImageID: "sha256:feed",
			Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	must(c.Status().Update(ctx, pod))

	job := &batchv1.Job{}
	must(c.Get(ctx, client.ObjectKey{Namespace: debugNS, Name: db.PreflightJobName()}, job))
	jobPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: debugNS, Name: db.PreflightJobName() + "-t5x9q", Labels: job.Spec.Template.Labels},
		Spec: job.Spec.Template.Spec}
	must(c.Create(ctx, jobPod))
	jobPod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: resources.PreflightContainer,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: preflightJSON, FinishedAt: now}}}}}
	must(c.Status().Update(ctx, jobPod))
	for _, j := range []struct{ job, pod, container, report string }{
		{db.FormatJobName(), db.FormatJobName() + "-r2d4q", resources.FormatContainer, formatJSON},
	} {
		fj := &batchv1.Job{}
		must(c.Get(ctx, client.ObjectKey{Namespace: debugNS, Name: j.job}, fj))
		fp := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: debugNS, Name: j.pod, Labels: fj.Spec.Template.Labels},
			Spec: fj.Spec.Template.Spec}
		must(c.Create(ctx, fp))
		fp.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: j.container,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: j.report, FinishedAt: now}}}}}
		must(c.Status().Update(ctx, fp))
	}

	event := func(name, reason string, obj client.Object, kind string, at time.Time) {
		must(c.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: debugNS, Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: debugNS, Name: obj.GetName(), UID: obj.GetUID()},
			Reason:         reason, Message: reason + " of " + obj.GetName(), Type: corev1.EventTypeNormal,
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Count: 1, Source: corev1.EventSource{Component: "test"}}))
	}
	event("e1", "FailedMount", pod, "Pod", now.Time)
	event("e2", "Formatted", db, "ZNSDatabase", now.Add(-time.Hour))
	event("e3", "Unrelated", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "someone-else"}}, "Pod", now.Time)

	labels := map[string]string{v1alpha1.LabelName: "zns-mysql"}
	must(c.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "zns-system", Name: "zns-mysql-controller-manager", Labels: labels},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "zns-mysql/operator:test"}}}}}}))
	return db
}

// grantDebugRole gives the group zns-debuggers what docs/debug-bundle.md says the tool needs, and nothing on
// Secrets.
func grantDebugRole(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	read := []string{"get", "list"}
	ns := []rbacv1.PolicyRule{
		{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"znsdatabases", "benchmarks"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"pods", "persistentvolumeclaims", "services", "configmaps", "events"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"get", "create"}},
		{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: read},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: read},
	}
	cluster := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"list"}},
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "zns-debuggers"}}
	for _, o := range []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: debugNS, Name: "zns-debug"}, Rules: ns},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: debugNS, Name: "zns-debug"}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "zns-debug"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "zns-debug"}, Rules: cluster},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "zns-debug"}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "zns-debug"}},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}
