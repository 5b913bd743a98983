package chart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func inventoryDaemonSet(t *testing.T, objs []*unstructured.Unstructured) *appsv1.DaemonSet {
	t.Helper()
	var found *appsv1.DaemonSet
	for _, o := range objs {
		if o.GetKind() != "DaemonSet" {
			continue
		}
		if found != nil {
			t.Fatalf("more than one DaemonSet rendered")
		}
		found = &appsv1.DaemonSet{}
		convert(t, o, found)
	}
	return found
}

// TestInventoryDaemonSet: the agent runs the operator's image as `manager inventory` with the node's name from
// the downward API and the values' interval and scheduling, mounts nothing (sysfs is the container's own /sys),
// runs as its own ServiceAccount, and its pods and the operator's never match each other's selectors. With
// inventory.enabled=false nothing of it is rendered.
func TestInventoryDaemonSet(t *testing.T) {
	requireHelm(t)
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			objs := render(t, c, "zns-system")
			ds := inventoryDaemonSet(t, objs)
			if c.name == "minimal" {
				if ds != nil {
					t.Fatal("inventory.enabled=false rendered a DaemonSet")
				}
				for _, kn := range kindNames(objs) {
					if strings.HasSuffix(kn, "-inventory") {
						t.Errorf("inventory.enabled=false rendered %s", kn)
					}
				}
				return
			}
			if ds == nil {
				t.Fatal("no DaemonSet rendered")
			}
			d := deploymentOf(t, objs)
			pod := ds.Spec.Template.Spec
			ctr := pod.Containers[0]
			op := d.Spec.Template.Spec.Containers[0]
			if ctr.Image != op.Image || ctr.ImagePullPolicy != op.ImagePullPolicy {
				t.Errorf("agent image %s (%s), want the operator's %s (%s)", ctr.Image, ctr.ImagePullPolicy, op.Image, op.ImagePullPolicy)
			}
			if diff := cmp.Diff([]string{"/manager", "inventory"}, ctr.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			wantInterval := map[string]string{"default": "60s", "custom": "5m"}[c.name]
			if !slices.Contains(ctr.Args, "--interval="+wantInterval) || !slices.Contains(ctr.Args, "--sysfs=/sys") {
				t.Errorf("args %q lack --interval=%s and --sysfs=/sys", ctr.Args, wantInterval)
			}
			if len(ctr.Env) != 1 || ctr.Env[0].Name != "NODE_NAME" || ctr.Env[0].ValueFrom == nil ||
				ctr.Env[0].ValueFrom.FieldRef == nil || ctr.Env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
				t.Errorf("env %+v, want NODE_NAME from spec.nodeName", ctr.Env)
			}
			if len(pod.Volumes) != 0 || len(ctr.VolumeMounts) != 0 {
				t.Errorf("the agent mounts %+v %+v; it needs nothing but its own /sys", pod.Volumes, ctr.VolumeMounts)
			}
			if pod.ServiceAccountName == d.Spec.Template.Spec.ServiceAccountName || find(objs, "ServiceAccount", pod.ServiceAccountName) == nil {
				t.Errorf("the agent runs as %q, want a ServiceAccount of its own", pod.ServiceAccountName)
			}
			binding := find(objs, "ClusterRoleBinding", ds.Name)
			if binding == nil {
				t.Fatalf("no ClusterRoleBinding %s", ds.Name)
			}
			subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
			if len(subjects) != 1 || subjects[0].(map[string]any)["name"] != pod.ServiceAccountName {
				t.Errorf("ClusterRoleBinding %s binds %v, want %s", ds.Name, subjects, pod.ServiceAccountName)
			}
			agentPods, opPods := labels.Set(ds.Spec.Template.Labels), labels.Set(d.Spec.Template.Labels)
			if labelSelectorMatches(d.Spec.Selector.MatchLabels, agentPods) || labelSelectorMatches(ds.Spec.Selector.MatchLabels, opPods) {
				t.Error("the operator's and the agent's selectors overlap")
			}
			if !labelSelectorMatches(ds.Spec.Selector.MatchLabels, agentPods) {
				t.Error("the DaemonSet's selector does not select its own pods")
			}
			if c.name == "custom" {
				if pod.NodeSelector["example.test/zoned"] != "true" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "example.test/databases" {
					t.Errorf("scheduling from inventory values: nodeSelector %v, tolerations %+v", pod.NodeSelector, pod.Tolerations)
				}
				if got := ctr.Resources.Limits.Memory().String(); got != "96Mi" {
					t.Errorf("memory limit %s, want inventory.resources'", got)
				}
			}
		})
	}
}

// TestInventoryAgentRunsWithItsRole: the real binary takes the chart's arguments, and, installed by helm and
// impersonating the agent's ServiceAccount, publishes a recorded node's zoned devices: its ClusterRole is enough,
// and it allows nothing the agent does not do.
func TestInventoryAgentRunsWithItsRole(t *testing.T) {
	requireEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "manager")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./operator/cmd/manager")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./operator/cmd/manager: %v\n%s", err, out)
	}
	for _, c := range valuesCases[:2] {
		args := inventoryDaemonSet(t, render(t, c, "zns-system")).Spec.Template.Spec.Containers[0].Args
		cmd := exec.CommandContext(ctx, bin, append(append([]string{"inventory"}, args...), "-h")...)
		cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: manager inventory rejects the chart's arguments %q: %v\n%s", c.name, args, err, out)
		}
	}

	ns := newNamespace(t, "inventory")
	const rel = "zns-inv"
	mustHelm(t, "install", rel, chartDir, "--namespace", ns)
	defer mustHelm(t, "uninstall", rel, "--namespace", ns)
	var ds appsv1.DaemonSet
	if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: rel + "-zns-mysql-inventory"}, &ds); err != nil {
		t.Fatalf("the inventory DaemonSet after helm install: %v", err)
	}
	sa := ds.Spec.Template.Spec.ServiceAccountName
	user := fmt.Sprintf("system:serviceaccount:%s:%s", ns, sa)
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	zdev := func(verb, sub string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Verb: verb, Group: "zns-mysql.dev", Resource: "zoneddevices", Subresource: sub}
	}
	allowed := []authorizationv1.ResourceAttributes{zdev("get", ""), zdev("list", ""), zdev("create", ""), zdev("patch", ""),
		zdev("patch", "status"), {Verb: "get", Resource: "nodes"}}
	denied := []authorizationv1.ResourceAttributes{zdev("delete", ""), zdev("deletecollection", ""), zdev("update", ""),
		{Verb: "list", Resource: "nodes"}, {Verb: "patch", Resource: "nodes"}, {Namespace: "tenants", Verb: "get", Resource: "secrets"},
		{Namespace: "tenants", Verb: "patch", Group: "zns-mysql.dev", Resource: "znsdatabases", Subresource: "status"},
		{Namespace: "tenants", Verb: "create", Resource: "pods"}}
	for want, list := range map[bool][]authorizationv1.ResourceAttributes{true: allowed, false: denied} {
		for _, ra := range list {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &ra}}
			if err := k8s.Create(ctx, sar); err != nil {
				t.Fatal(err)
			}
			if sar.Status.Allowed != want {
				t.Errorf("%s %s %s/%s: allowed=%v, want %v", ra.Verb, ra.Group, ra.Resource, ra.Subresource, sar.Status.Allowed, want)
			}
		}
	}

	// The agent itself, as that ServiceAccount, on a node of its own with the QEMU guest's recorded sysfs.
	node := "inv-" + ns
	if err := k8s.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = k8s.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}) }()
	sys := filepath.Join(repoRoot, "operator", "internal", "qemuguest", "testdata", "sys")
	kc, err := clientcmd.LoadFromFile(kubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range kc.AuthInfos {
		ai.Impersonate, ai.ImpersonateGroups = user, groups
	}
	agentKubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, agentKubeconfig); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"inventory"}, ds.Spec.Template.Spec.Containers[0].Args...), "--sysfs="+sys, "--node-name="+node)
	agent := exec.CommandContext(ctx, bin, args...)
	agent.Env = append(os.Environ(), "KUBECONFIG="+agentKubeconfig)
	var log bytes.Buffer
	agent.Stdout, agent.Stderr = &log, &log
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = agent.Process.Kill(); _ = agent.Wait() }()

	want := zonedIn(t, sys)
	var got []string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(v1alpha1.GroupVersion.String())
		list.SetKind("ZonedDeviceList")
		if err := k8s.List(ctx, list, client.MatchingLabels{v1alpha1.LabelZonedDeviceNode: node}); err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, o := range list.Items {
			if state, _, _ := unstructured.NestedString(o.Object, "status", "state"); state == string(v1alpha1.ZonedDevicePresent) {
				name, _, _ := unstructured.NestedString(o.Object, "status", "kernelName")
				got = append(got, name)
			}
		}
		sort.Strings(got)
		if slices.Equal(got, want) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("as its ServiceAccount the agent published %q, want %q; its log:\n%s", got, want, log.String())
}

// zonedIn lists the devices of a recorded sysfs whose zone model is not none, read without the code under test.
func zonedIn(t *testing.T, sys string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(sys, "block"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(sys, "block", e.Name(), "queue", "zoned"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(b)) != "none" {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatalf("%s has no zoned device", sys)
	}
	return out
}
