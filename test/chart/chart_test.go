package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// valuesCase is one way to install the chart: the default values or a values file of testdata/.
type valuesCase struct {
	name  string
	file  string // "" for the chart's defaults
	setup func(t *testing.T)
}

var valuesCases = []valuesCase{
	{name: "default"},
	{name: "custom", file: "values-custom.yaml", setup: func(t *testing.T) {
		// values-custom.yaml names a PriorityClass; the Priority admission plugin resolves it, so it must exist.
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "zns-test-priority"}, Value: 1000}
		if err := k8s.Create(context.Background(), pc); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}},
	{name: "minimal", file: "values-minimal.yaml"},
}

func (c valuesCase) args() []string {
	if c.file == "" {
		return nil
	}
	return []string{"--values", filepath.Join(repoRoot, "test", "chart", "testdata", c.file)}
}

const release = "zns-mysql" // the release name of rendered manifests: object names are then "zns-mysql..."

// render runs `helm template` and decodes every object it prints.
func render(t *testing.T, c valuesCase, namespace string) []*unstructured.Unstructured {
	t.Helper()
	args := append([]string{"template", release, chartDir, "--namespace", namespace}, c.args()...)
	out := mustHelm(t, args...)
	objs, err := decodeAll([]byte(out))
	if err != nil {
		t.Fatalf("decoding the output of helm template (%s): %v\n%s", c.name, err, out)
	}
	if len(objs) == 0 {
		t.Fatalf("helm template (%s) rendered nothing", c.name)
	}
	return objs
}

func decodeAll(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

// decodeFile decodes the one object of a YAML file of the repository into out.
func decodeFile(t *testing.T, rel string, out any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(out); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func convert(t *testing.T, u *unstructured.Unstructured, out any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s does not decode as its Go type: %v", u.GetKind(), u.GetName(), err)
	}
}

func deploymentOf(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	var deps []*unstructured.Unstructured
	for _, o := range objs {
		if o.GroupVersionKind() == gvkDeployment {
			deps = append(deps, o)
		}
	}
	if len(deps) != 1 {
		t.Fatalf("want exactly one Deployment, rendered %d", len(deps))
	}
	var d appsv1.Deployment
	convert(t, deps[0], &d)
	return &d
}

func kindNames(objs []*unstructured.Unstructured) []string {
	var s []string
	for _, o := range objs {
		s = append(s, o.GetKind()+"/"+o.GetName())
	}
	sort.Strings(s)
	return s
}

func appVersion(t *testing.T) string {
	t.Helper()
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	decodeFile(t, "charts/zns-mysql/Chart.yaml", &c)
	if c.AppVersion == "" {
		t.Fatal("Chart.yaml has no appVersion")
	}
	return c.AppVersion
}

func namespaceObject(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// --- lint and render -----------------------------------------------------------------------

func TestLint(t *testing.T) {
	requireHelm(t)
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			out := mustHelm(t, append([]string{"lint", "--strict", chartDir, "--namespace", "zns-system"}, c.args()...)...)
			if !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
				t.Fatalf("helm lint did not pass:\n%s", out)
			}
		})
	}
}

// TestTemplate checks what each values case renders: the objects, and the operator's flags, images,
// ports and scheduling exactly as the values ask.
func TestTemplate(t *testing.T) {
	requireHelm(t)
	av := appVersion(t)
	type want struct {
		objects    []string
		args       []string
		image      string
		pullPolicy corev1.PullPolicy
		replicas   int32
		sa         string
		ports      map[string]int32
	}
	wants := map[string]want{
		"default": {
			objects: []string{
				"ClusterRole/zns-mysql-inventory", "ClusterRole/zns-mysql-manager", "ClusterRole/zns-mysql-metrics-reader",
				"ClusterRoleBinding/zns-mysql-inventory", "ClusterRoleBinding/zns-mysql-manager",
				"DaemonSet/zns-mysql-inventory", "Deployment/zns-mysql",
				"Role/zns-mysql-leader-election", "RoleBinding/zns-mysql-leader-election",
				"Service/zns-mysql-metrics", "ServiceAccount/zns-mysql", "ServiceAccount/zns-mysql-inventory",
			},
			args: []string{
				"--leader-elect=true", "--metrics-bind-address=:8443", "--metrics-secure=true", "--health-probe-bind-address=:8081",
				"--percona-image=zns-mysql/percona-zenfs:" + av, "--percona-8.4-image=zns-mysql/percona-84:" + av,
				"--mariadb-image=zns-mysql/mariadb-myrocks:" + av,
				"--bench-image=zns-mysql/bench:" + av, "--zap-log-level=info", "--zap-encoder=json",
				"--database-probe-period=5s",
			},
			image: "zns-mysql/operator:" + av, pullPolicy: corev1.PullIfNotPresent, replicas: 1, sa: "zns-mysql",
			ports: map[string]int32{"metrics": 8443, "health": 8081},
		},
		"custom": {
			objects: []string{
				"ClusterRole/zns-op-inventory", "ClusterRole/zns-op-manager", "ClusterRole/zns-op-metrics-reader",
				"ClusterRoleBinding/zns-op-inventory", "ClusterRoleBinding/zns-op-manager",
				"ConfigMap/zns-op-dashboard", "DaemonSet/zns-op-inventory", "Deployment/zns-op",
				"Role/zns-op-leader-election", "RoleBinding/zns-op-leader-election",
				"Service/zns-op-metrics", "ServiceAccount/zns-op-inventory", "ServiceAccount/zns-operator",
			},
			args: []string{
				"--leader-elect=true", "--metrics-bind-address=:9090", "--metrics-secure=false", "--health-probe-bind-address=:9091",
				"--percona-image=registry.example.test:5000/zns/percona-zenfs:8.0.36-28",
				"--percona-8.4-image=registry.example.test:5000/zns/percona-84:8.4.11-11",
				"--mariadb-image=registry.example.test:5000/zns/mariadb-myrocks:10.11",
				"--bench-image=registry.example.test:5000/zns/bench:custom",
				"--zap-log-level=debug", "--zap-encoder=console", "--database-probe-period=20s",
				"--preflight-retry=30s", "--blocked-retry=10s",
			},
			image: "registry.example.test:5000/zns/operator:v9.8.7-rc.1", pullPolicy: corev1.PullAlways, replicas: 2,
			sa: "zns-operator", ports: map[string]int32{"metrics": 9090, "health": 9091},
		},
		"minimal": {
			objects: []string{"ClusterRole/zns-mysql-manager", "ClusterRoleBinding/zns-mysql-manager", "Deployment/zns-mysql"},
			args: []string{
				"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=:8081",
				"--percona-image=zns-mysql/percona-zenfs:" + av, "--percona-8.4-image=zns-mysql/percona-84:" + av,
				"--mariadb-image=zns-mysql/mariadb-myrocks:" + av,
				"--bench-image=zns-mysql/bench:" + av, "--zap-log-level=error", "--zap-encoder=json",
				"--database-probe-period=5s",
			},
			image: "zns-mysql/operator:" + av, pullPolicy: corev1.PullIfNotPresent, replicas: 1, sa: "existing-operator-sa",
			ports: map[string]int32{"health": 8081},
		},
	}
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			w := wants[c.name]
			objs := render(t, c, "zns-system")
			if d := cmp.Diff(w.objects, kindNames(objs)); d != "" {
				t.Errorf("rendered objects (-want +got):\n%s", d)
			}
			for _, o := range objs {
				if o.GetKind() != "ClusterRole" && o.GetKind() != "ClusterRoleBinding" && o.GetNamespace() != "zns-system" {
					t.Errorf("%s %s: namespace %q, want the release namespace", o.GetKind(), o.GetName(), o.GetNamespace())
				}
			}
			d := deploymentOf(t, objs)
			ctr := d.Spec.Template.Spec.Containers[0]
			if diff := cmp.Diff(w.args, ctr.Args); diff != "" {
				t.Errorf("operator args (-want +got):\n%s", diff)
			}
			if ctr.Image != w.image || ctr.ImagePullPolicy != w.pullPolicy {
				t.Errorf("image %s (%s), want %s (%s)", ctr.Image, ctr.ImagePullPolicy, w.image, w.pullPolicy)
			}
			if got := *d.Spec.Replicas; got != w.replicas {
				t.Errorf("replicas %d, want %d", got, w.replicas)
			}
			if got := d.Spec.Template.Spec.ServiceAccountName; got != w.sa {
				t.Errorf("serviceAccountName %q, want %q", got, w.sa)
			}
			ports := map[string]int32{}
			for _, p := range ctr.Ports {
				ports[p.Name] = p.ContainerPort
			}
			if diff := cmp.Diff(w.ports, ports); diff != "" {
				t.Errorf("container ports (-want +got):\n%s", diff)
			}
			checkWiring(t, objs, d, w.sa)
			if c.name == "custom" {
				checkCustomScheduling(t, d)
			}
		})
	}
}

// checkWiring: probes hit the health port, the Service targets the metrics port and selects the pods,
// every binding names the ServiceAccount the pods run as (the inventory agent's, its own: TestInventoryDaemonSet).
func checkWiring(t *testing.T, objs []*unstructured.Unstructured, d *appsv1.Deployment, sa string) {
	t.Helper()
	ctr := d.Spec.Template.Spec.Containers[0]
	for name, p := range map[string]*corev1.Probe{"liveness": ctr.LivenessProbe, "readiness": ctr.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.String() != "health" {
			t.Errorf("%s probe %+v, want an HTTP probe on the health port", name, p)
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the Deployment's selector %s does not match its pod labels %v", sel, d.Spec.Template.Labels)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "Service":
			var s corev1.Service
			convert(t, o, &s)
			if !labelSelectorMatches(s.Spec.Selector, d.Spec.Template.Labels) {
				t.Errorf("Service %s selects %v, which the operator pods (%v) do not carry", s.Name, s.Spec.Selector, d.Spec.Template.Labels)
			}
			if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].TargetPort.String() != "metrics" {
				t.Errorf("Service %s ports %+v, want one targeting the metrics port", s.Name, s.Spec.Ports)
			}
		case "ClusterRoleBinding", "RoleBinding":
			if strings.HasSuffix(o.GetName(), "-inventory") {
				continue
			}
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			if len(subjects) != 1 || subjects[0].(map[string]any)["name"] != sa {
				t.Errorf("%s %s binds %v, want the ServiceAccount %s", o.GetKind(), o.GetName(), subjects, sa)
			}
		}
	}
}

func labelSelectorMatches(sel, podLabels map[string]string) bool {
	return len(sel) > 0 && labels.SelectorFromSet(sel).Matches(labels.Set(podLabels))
}

func checkCustomScheduling(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	ps := d.Spec.Template.Spec
	if diff := cmp.Diff(map[string]string{"kubernetes.io/os": "linux", "example.test/pool": "control"}, ps.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	if len(ps.Tolerations) != 1 || ps.Tolerations[0].Key != "example.test/dedicated" || ps.Tolerations[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("tolerations %+v", ps.Tolerations)
	}
	if ps.Affinity == nil || ps.Affinity.NodeAffinity == nil {
		t.Errorf("affinity %+v, want the node affinity of values-custom.yaml", ps.Affinity)
	}
	if len(ps.ImagePullSecrets) != 1 || ps.ImagePullSecrets[0].Name != "regcred" {
		t.Errorf("imagePullSecrets %+v", ps.ImagePullSecrets)
	}
	if ps.PriorityClassName != "zns-test-priority" {
		t.Errorf("priorityClassName %q", ps.PriorityClassName)
	}
	if got := d.Spec.Template.Annotations["example.test/owner"]; got != "storage-team" {
		t.Errorf("pod annotation example.test/owner = %q", got)
	}
	if got := d.Spec.Template.Labels["example.test/tier"]; got != "control" {
		t.Errorf("pod label example.test/tier = %q", got)
	}
	res := ps.Containers[0].Resources
	if res.Limits.Memory().String() != "512Mi" || res.Requests.Cpu().String() != "50m" {
		t.Errorf("resources %+v", res)
	}
}

// --- values.schema.json and the template checks --------------------------------------------

// TestBadValuesRejected: each bad values file fails `helm template` (and `helm install` against the API
// server, which must then hold no release) with a message that names the value and what is allowed.
func TestBadValuesRejected(t *testing.T) {
	requireHelm(t)
	cases := []struct {
		file string
		set  []string
		want []string
	}{
		{file: "bad-pullpolicy.yaml", want: []string{
			"values don't meet the specifications of the schema",
			"at '/image/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'"}},
		{file: "bad-loglevel.yaml", want: []string{"at '/logLevel': value must be one of 'debug', 'info', 'error', 'panic'"}},
		{file: "bad-missing-repository.yaml", want: []string{"at '/benchImage': missing property 'repository'"}},
		{file: "bad-unknown-key.yaml", want: []string{"additional properties 'nodeselector' not allowed"}},
		{file: "bad-types.yaml", want: []string{"at '/replicaCount': got string, want integer", "at '/metrics/port': maximum"}},
		{file: "bad-inventory.yaml", want: []string{"at '/inventory/interval'", "at '/inventory/enabled': got string, want boolean"}},
		// checks across values, made by the templates
		{set: []string{"metrics.port=8081"}, want: []string{"metrics.port and healthProbe.port are both 8081"}},
		{set: []string{"replicaCount=2", "leaderElection.enabled=false"}, want: []string{"replicaCount=2 needs leaderElection.enabled=true"}},
		{set: []string{"serviceAccount.create=false"}, want: []string{"serviceAccount.name is required when serviceAccount.create is false"}},
	}
	for i, c := range cases {
		name := strings.TrimSuffix(c.file, ".yaml")
		if name == "" {
			name = strings.Join(c.set, ",")
		}
		t.Run(name, func(t *testing.T) {
			var args []string
			if c.file != "" {
				args = append(args, "--values", filepath.Join(repoRoot, "test", "chart", "testdata", c.file))
			}
			for _, s := range c.set {
				args = append(args, "--set", s)
			}
			check := func(t *testing.T, what string, out string, err error) {
				t.Helper()
				if err == nil {
					t.Fatalf("%s accepted the bad values:\n%s", what, out)
				}
				for _, w := range c.want {
					if !strings.Contains(out, w) {
						t.Errorf("%s: the message lacks %q:\n%s", what, w, out)
					}
				}
			}
			t.Run("template", func(t *testing.T) {
				out, err := helm(t, append([]string{"template", release, chartDir}, args...)...)
				check(t, "helm template", out, err)
			})
			t.Run("install", func(t *testing.T) {
				requireEnv(t)
				ns := newNamespace(t, "bad")
				rel := fmt.Sprintf("bad-%d", i)
				out, err := helm(t, append([]string{"install", rel, chartDir, "--namespace", ns}, args...)...)
				check(t, "helm install", out, err)
				if out, err := helm(t, "status", rel, "--namespace", ns); err == nil {
					t.Errorf("helm install failed but left a release:\n%s", out)
				}
				var deps appsv1.DeploymentList
				if err := k8s.List(context.Background(), &deps, client.InNamespace(ns)); err != nil {
					t.Fatal(err)
				}
				if len(deps.Items) != 0 {
					t.Errorf("helm install failed but created %d Deployments", len(deps.Items))
				}
			})
		})
	}
}

// --- the API server -------------------------------------------------------------------------

// dryRunCreate creates obj with server-side dry-run and strict field validation: the API server
// validates it against its schema (unknown or duplicate fields, wrong types, invalid values,
// admission) and stores nothing.
func dryRunCreate(obj *unstructured.Unstructured) error {
	return k8s.Create(context.Background(), obj.DeepCopy(), client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
}

// TestServerSideDryRun sends every rendered object of each values case to the real API server (with
// the CRDs of config/crd/bases installed) as a strict dry-run create, in a release namespace that
// exists; any schema error of a template fails here.
func TestServerSideDryRun(t *testing.T) {
	requireEnv(t)
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup(t)
			}
			ns := newNamespace(t, "dryrun-"+c.name)
			objs := render(t, c, ns)
			for _, o := range objs {
				if err := dryRunCreate(o); err != nil {
					t.Errorf("%s %s rejected by the API server: %v", o.GetKind(), o.GetName(), err)
				}
			}
			// dry-run stored nothing
			d := deploymentOf(t, objs)
			err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: d.Name}, &appsv1.Deployment{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("after a dry-run the Deployment exists (err=%v)", err)
			}
		})
	}
	// The check bites: the same path rejects what a broken template would render.
	t.Run("broken-template-is-rejected", func(t *testing.T) {
		ns := newNamespace(t, "dryrun-broken")
		dep := find(render(t, valuesCases[0], ns), "Deployment", "zns-mysql")
		if dep == nil {
			t.Fatal("no Deployment zns-mysql rendered")
		}
		unknown := dep.DeepCopy()
		ctrs, _, _ := unstructured.NestedSlice(unknown.Object, "spec", "template", "spec", "containers")
		ctrs[0].(map[string]any)["imagePullPolicyy"] = "Always" // a typo in a template
		_ = unstructured.SetNestedSlice(unknown.Object, ctrs, "spec", "template", "spec", "containers")
		if err := dryRunCreate(unknown); err == nil || !strings.Contains(err.Error(), `unknown field "spec.template.spec.containers[0].imagePullPolicyy"`) {
			t.Errorf("an unknown field: err = %v, want it rejected as unknown", err)
		}
		wrongType := dep.DeepCopy()
		_ = unstructured.SetNestedField(wrongType.Object, "one", "spec", "replicas")
		if err := dryRunCreate(wrongType); err == nil {
			t.Error(`spec.replicas: "one" was accepted`)
		}
		invalid := dep.DeepCopy()
		_ = unstructured.SetNestedField(invalid.Object, map[string]any{"app": "other"}, "spec", "template", "metadata", "labels")
		if err := dryRunCreate(invalid); err == nil || !strings.Contains(err.Error(), "selector") {
			t.Errorf("pod labels that the selector does not match: err = %v, want it rejected", err)
		}
	})
}

// TestHelmInstall installs the chart for real (default values) into the API server, then asks the
// API server's authorizer what the operator's ServiceAccount may do, and uninstalls it.
func TestHelmInstall(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t, "install")
	const rel = "zns-real"
	out := mustHelm(t, "install", rel, chartDir, "--namespace", ns)
	if !strings.Contains(out, "STATUS: deployed") {
		t.Fatalf("helm install:\n%s", out)
	}
	full := rel + "-zns-mysql"
	var dep appsv1.Deployment
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: full}, &dep); err != nil {
		t.Fatalf("the operator Deployment after helm install: %v", err)
	}
	sa := dep.Spec.Template.Spec.ServiceAccountName
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: sa}, &corev1.ServiceAccount{}); err != nil {
		t.Fatalf("the operator's ServiceAccount %s: %v", sa, err)
	}

	// What the operator needs (from its controllers) is allowed; the rest is not.
	allowed := []authorizationv1.ResourceAttributes{
		{Namespace: "tenants", Verb: "create", Group: "apps", Resource: "statefulsets"},
		{Namespace: "tenants", Verb: "delete", Group: "batch", Resource: "jobs"},
		{Verb: "create", Resource: "persistentvolumes"},
		{Namespace: "tenants", Verb: "get", Resource: "pods", Subresource: "log"},
		{Namespace: "tenants", Verb: "update", Group: "zns-mysql.dev", Resource: "znsdatabases", Subresource: "status"},
		{Namespace: "tenants", Verb: "update", Group: "zns-mysql.dev", Resource: "benchmarks", Subresource: "finalizers"},
		{Namespace: "tenants", Verb: "watch", Group: "zns-mysql.dev", Resource: "benchmarks"},
		{Namespace: ns, Verb: "update", Group: "coordination.k8s.io", Resource: "leases"},
		// A zoned database's pod gets an identity that may annotate itself; granting that needs it too.
		{Namespace: "tenants", Verb: "create", Resource: "serviceaccounts"},
		{Namespace: "tenants", Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "roles"},
		{Namespace: "tenants", Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings"},
		{Namespace: "tenants", Verb: "patch", Resource: "pods"},
	}
	denied := []authorizationv1.ResourceAttributes{
		{Namespace: "tenants", Verb: "list", Resource: "secrets"},
		{Namespace: "tenants", Verb: "delete", Resource: "secrets"},
		{Namespace: "tenants", Verb: "create", Resource: "pods"},
		{Namespace: "tenants", Verb: "create", Group: "zns-mysql.dev", Resource: "znsdatabases"},
		{Namespace: "tenants", Verb: "delete", Group: "zns-mysql.dev", Resource: "benchmarks"},
		{Namespace: "default", Verb: "update", Group: "coordination.k8s.io", Resource: "leases"},
		{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
		{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		{Namespace: "tenants", Verb: "delete", Group: "rbac.authorization.k8s.io", Resource: "roles"},
		{Verb: "delete", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
	}
	user := fmt.Sprintf("system:serviceaccount:%s:%s", ns, sa)
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	for want, list := range map[bool][]authorizationv1.ResourceAttributes{true: allowed, false: denied} {
		for _, ra := range list {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: groups, ResourceAttributes: &ra,
			}}
			if err := k8s.Create(ctx, sar); err != nil {
				t.Fatal(err)
			}
			if sar.Status.Allowed != want {
				t.Errorf("%s %s %s/%s in %q: allowed=%v, want %v (%s)", ra.Verb, ra.Group, ra.Resource, ra.Subresource,
					ra.Namespace, sar.Status.Allowed, want, sar.Status.Reason)
			}
		}
	}

	mustHelm(t, "uninstall", rel, "--namespace", ns)
	if err := k8s.Get(ctx, types.NamespacedName{Name: full + "-manager"}, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
		t.Errorf("after helm uninstall the ClusterRole is still there (err=%v)", err)
	}
	// helm never deletes CRDs: the users' databases outlive the operator.
	var crd unstructured.Unstructured
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := k8s.Get(ctx, types.NamespacedName{Name: "znsdatabases.zns-mysql.dev"}, &crd); err != nil {
		t.Errorf("after helm uninstall: %v", err)
	}
}

// --- drift from the generated files ---------------------------------------------------------

// TestCRDsIdenticalToGenerated: charts/zns-mysql/crds holds exactly the files of config/crd/bases, byte for byte.
func TestCRDsIdenticalToGenerated(t *testing.T) {
	src := filepath.Join(repoRoot, "config", "crd", "bases")
	dst := filepath.Join(chartDir, "crds")
	names := func(dir string) []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, e := range ents {
			if !e.IsDir() {
				s = append(s, e.Name())
			}
		}
		return s
	}
	const fix = "run `make generate` (it copies config/crd/bases into charts/zns-mysql/crds)"
	want, got := names(src), names(dst)
	if len(want) == 0 {
		t.Fatal("config/crd/bases is empty")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the chart's CRD files differ from config/crd/bases (-generated +chart); %s:\n%s", fix, diff)
	}
	for _, n := range want {
		a, _ := os.ReadFile(filepath.Join(src, n))
		b, _ := os.ReadFile(filepath.Join(dst, n))
		if !bytes.Equal(a, b) {
			t.Errorf("charts/zns-mysql/crds/%s differs from config/crd/bases/%s; %s", n, n, fix)
		}
	}
}

// TestRBACMatchesGenerated: the ClusterRole the chart renders has exactly the rules controller-gen
// generated from the reconcilers' markers (config/rbac/role.yaml), the leader-election Role those of
// config/rbac/leader_election_role.yaml, the metrics reader those of config/rbac/metrics_reader_role.yaml, and
// the inventory agent's those of config/inventory/role.yaml.
func TestRBACMatchesGenerated(t *testing.T) {
	const fix = "run `make generate` (it copies config/rbac/role.yaml into charts/zns-mysql/files/manager-role.yaml)"
	a, err := os.ReadFile(filepath.Join(repoRoot, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(chartDir, "files", "manager-role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("charts/zns-mysql/files/manager-role.yaml differs from config/rbac/role.yaml; %s", fix)
	}

	requireHelm(t)
	var generated rbacv1.ClusterRole
	decodeFile(t, "config/rbac/role.yaml", &generated)
	var leader rbacv1.Role
	decodeFile(t, "config/rbac/leader_election_role.yaml", &leader)
	var metricsReader rbacv1.ClusterRole
	decodeFile(t, "config/rbac/metrics_reader_role.yaml", &metricsReader)
	var inventoryRole rbacv1.ClusterRole
	decodeFile(t, "config/inventory/role.yaml", &inventoryRole)
	if len(generated.Rules) == 0 || len(leader.Rules) == 0 || len(metricsReader.Rules) == 0 || len(inventoryRole.Rules) == 0 {
		t.Fatal("config/rbac has no rules to compare with")
	}
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			var clusterRoles, roles int
			for _, o := range render(t, c, "zns-system") {
				switch o.GetKind() {
				case "ClusterRole":
					clusterRoles++
					var cr rbacv1.ClusterRole
					convert(t, o, &cr)
					if cr.AggregationRule != nil {
						t.Errorf("ClusterRole %s aggregates other roles", cr.Name)
					}
					want, from := generated.Rules, "config/rbac/role.yaml (-generated +chart); "+fix
					switch {
					case strings.HasSuffix(cr.Name, "-metrics-reader"):
						want, from = metricsReader.Rules, "config/rbac/metrics_reader_role.yaml (-config +chart)"
					case strings.HasSuffix(cr.Name, "-inventory"):
						want, from = inventoryRole.Rules, "config/inventory/role.yaml (-config +chart)"
					}
					if diff := cmp.Diff(want, cr.Rules); diff != "" {
						t.Errorf("ClusterRole %s rules differ from %s:\n%s", cr.Name, from, diff)
					}
				case "Role":
					roles++
					var r rbacv1.Role
					convert(t, o, &r)
					if diff := cmp.Diff(leader.Rules, r.Rules); diff != "" {
						t.Errorf("Role %s rules differ from config/rbac/leader_election_role.yaml (-config +chart):\n%s", r.Name, diff)
					}
				}
			}
			wantRoles, wantClusterRoles := 1, 3 // the manager's, the metrics reader's and the inventory agent's
			if c.name == "minimal" {            // leader election, metrics and inventory off: no Role, no reader, no agent
				wantRoles, wantClusterRoles = 0, 1
			}
			if clusterRoles != wantClusterRoles || roles != wantRoles {
				t.Errorf("rendered %d ClusterRoles and %d Roles, want %d and %d", clusterRoles, roles, wantClusterRoles, wantRoles)
			}
		})
	}
}

// TestNoWildcardRBAC: no rule of any values case grants a wildcard verb, resource, group, name or URL.
func TestNoWildcardRBAC(t *testing.T) {
	requireHelm(t)
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			for _, o := range render(t, c, "zns-system") {
				if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
					continue
				}
				var cr rbacv1.ClusterRole // a Role has the same rules field
				convert(t, o, &cr)
				for i, r := range cr.Rules {
					for field, vals := range map[string][]string{
						"verbs": r.Verbs, "resources": r.Resources, "apiGroups": r.APIGroups,
						"resourceNames": r.ResourceNames, "nonResourceURLs": r.NonResourceURLs,
					} {
						if slices.ContainsFunc(vals, func(v string) bool { return strings.Contains(v, "*") }) {
							t.Errorf("%s %s rule %d: wildcard in %s %v", o.GetKind(), o.GetName(), i, field, vals)
						}
					}
					if len(r.Verbs) == 0 || (len(r.Resources) == 0 && len(r.NonResourceURLs) == 0) {
						t.Errorf("%s %s rule %d is empty: %+v", o.GetKind(), o.GetName(), i, r)
					}
				}
			}
		})
	}
}

// TestPodsUnprivilegedNonRoot: in every values case, every container of every pod template runs as
// a non-root user, unprivileged, without privilege escalation or capabilities, on a read-only root
// filesystem, with the RuntimeDefault seccomp profile, and the pod uses no host namespace or path.
func TestPodsUnprivilegedNonRoot(t *testing.T) {
	requireHelm(t)
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			pods := 0
			for _, o := range render(t, c, "zns-system") {
				tmpl, found, _ := unstructured.NestedMap(o.Object, "spec", "template")
				if !found {
					continue
				}
				pods++
				var pt corev1.PodTemplateSpec
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &pt); err != nil {
					t.Fatal(err)
				}
				checkPodSecurity(t, o.GetKind()+"/"+o.GetName(), &pt.Spec)
			}
			if pods == 0 {
				t.Fatal("no pod template rendered")
			}
		})
	}
}

func checkPodSecurity(t *testing.T, where string, ps *corev1.PodSpec) {
	t.Helper()
	if ps.HostNetwork || ps.HostPID || ps.HostIPC {
		t.Errorf("%s uses a host namespace", where)
	}
	for _, v := range ps.Volumes {
		if v.HostPath != nil {
			t.Errorf("%s mounts the host path %s", where, v.HostPath.Path)
		}
	}
	psc := ps.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	var all []corev1.Container
	all = append(all, ps.InitContainers...)
	all = append(all, ps.Containers...)
	for _, ctr := range all {
		at := where + " container " + ctr.Name
		sc := ctr.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		// the container's settings win over the pod's
		nonRoot := firstBool(sc.RunAsNonRoot, psc.RunAsNonRoot)
		uid := firstInt(sc.RunAsUser, psc.RunAsUser)
		if nonRoot == nil || !*nonRoot {
			t.Errorf("%s: runAsNonRoot is not true", at)
		}
		if uid == nil {
			t.Errorf("%s: no runAsUser; set a non-zero uid (the kubelet cannot verify runAsNonRoot for an image whose USER is a name)", at)
		} else if *uid == 0 {
			t.Errorf("%s: runAsUser 0 (root)", at)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s is privileged", at)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation is not false", at)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: readOnlyRootFilesystem is not true", at)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) != 0 {
			t.Errorf("%s: capabilities %+v, want drop ALL and add none", at, sc.Capabilities)
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = psc.SeccompProfile
		}
		if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: seccomp profile %+v, want RuntimeDefault", at, seccomp)
		}
	}
}

func firstBool(a, b *bool) *bool {
	if a != nil {
		return a
	}
	return b
}

func firstInt(a, b *int64) *int64 {
	if a != nil {
		return a
	}
	return b
}

// --- the operator accepts what the chart passes it ------------------------------------------

// TestManagerAcceptsRenderedArgs builds operator/cmd/manager and has it parse the exact arguments each
// values case renders (followed by -h, which stops it after parsing): an unknown flag or a bad value
// (say, a log level zap does not know) makes it exit non-zero.
func TestManagerAcceptsRenderedArgs(t *testing.T) {
	requireHelm(t)
	bin := filepath.Join(t.TempDir(), "manager")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./operator/cmd/manager")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./operator/cmd/manager: %v\n%s", err, out)
	}
	parse := func(args []string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, append(slices.Clone(args), "-h")...)
		cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent") // it must not get as far as a cluster
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			d := deploymentOf(t, render(t, c, "zns-system"))
			ctr := d.Spec.Template.Spec.Containers[0]
			if diff := cmp.Diff([]string{"/manager"}, ctr.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if out, err := parse(ctr.Args); err != nil {
				t.Errorf("the manager rejects the chart's arguments %q: %v\n%s", ctr.Args, err, out)
			}
		})
	}
	// The check bites.
	for _, bad := range [][]string{{"--no-such-flag=1"}, {"--zap-log-level=verbose"}} {
		if out, err := parse(bad); err == nil {
			t.Errorf("the manager accepted %q:\n%s", bad, out)
		}
	}
}

// --- the chart README -------------------------------------------------------------------------

// TestReadmeListsEveryValue: every value of values.yaml is in the README's table (itself or a parent
// object), and every key of that table is a value of values.yaml.
func TestReadmeListsEveryValue(t *testing.T) {
	var values map[string]any
	decodeFile(t, "charts/zns-mysql/values.yaml", &values)
	var leaves []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			p := prefix + k
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				leaves = append(leaves, p) // a parent may document its children as a whole
				walk(p+".", sub)
				continue
			}
			leaves = append(leaves, p)
		}
	}
	walk("", values)
	known := map[string]bool{}
	for _, l := range leaves {
		known[l] = true
	}

	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z0-9_.]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		documented[m[1]] = true
		if !known[m[1]] {
			t.Errorf("README.md documents %q, which values.yaml does not have", m[1])
		}
	}
	if len(documented) == 0 {
		t.Fatal("README.md has no values table (rows like | `image.tag` | ...)")
	}
	for _, l := range leaves {
		covered := false
		for p := l; ; {
			if documented[p] {
				covered = true
				break
			}
			i := strings.LastIndex(p, ".")
			if i < 0 {
				break
			}
			p = p[:i]
		}
		if !covered {
			if sub, ok := lookup(values, l).(map[string]any); ok && len(sub) > 0 {
				continue // a parent: its children are checked one by one
			}
			t.Errorf("README.md does not document the value %q", l)
		}
	}
}

func lookup(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}
