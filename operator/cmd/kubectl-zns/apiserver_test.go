package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
	"github.com/zns-mysql/zns-mysql/test/kubetest"
)

// TestPluginAgainstAPIServer runs the plugin as a user runs it, with a kubeconfig file and kubectl's flags,
// against a real kube-apiserver (envtest) holding a recorded Benchmark, its status and its series ConfigMaps.
func TestPluginAgainstAPIServer(t *testing.T) {
	env, cfg := startAPIServer(t)
	user, err := env.AddUser(envtest.User{Name: "lab", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "zns-demo"}}); err != nil {
		t.Fatal(err)
	}
	recorded := &v1alpha1.Benchmark{}
	readYAML(t, "pair.yaml", recorded)
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: recorded.Namespace, Name: recorded.Name}, Spec: recorded.Spec}
	if err := c.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	b.Status = recorded.Status
	if err := c.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	cms := &corev1.ConfigMapList{}
	readYAML(t, "pair-series.yaml", cms)
	for i := range cms.Items {
		cm := cms.Items[i].DeepCopy()
		cm.ResourceVersion, cm.OwnerReferences = "", nil // the recorded owner UID is not this Benchmark's
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}

	plugin := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		root := newRoot(testStreams(&out, &errb), nil)
		root.SetArgs(args)
		err := root.ExecuteContext(ctx)
		return out.String(), err
	}
	out, err := plugin("--kubeconfig", kubeconfig, "-n", "zns-demo", "report", "pair")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := report.Table(&want, recorded); err != nil {
		t.Fatal(err)
	}
	if out != want.String() {
		t.Errorf("report through the API server:\n%s\nwant:\n%s", out, want.String())
	}
	out, err = plugin("--kubeconfig", kubeconfig, "--namespace=zns-demo", "export", "pair", "--format", "csv", "--data", "series")
	if err != nil || strings.Count(out, "\n") < 10 {
		t.Errorf("export of the series ConfigMaps: %v\n%.300s", err, out)
	}
	// kubectl's flags mean what they mean there: the kubeconfig's namespace by default, a context by name.
	if _, err := plugin("--kubeconfig", kubeconfig, "report", "pair"); err == nil || !strings.Contains(err.Error(), "default/pair") {
		t.Errorf("without -n: %v", err)
	}
	if _, err := plugin("--kubeconfig", kubeconfig, "--context", "nosuch", "-n", "zns-demo", "report", "pair"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("--context nosuch: %v", err)
	}
}

// startAPIServer starts a real kube-apiserver and etcd (envtest) with the project's CRDs, stopped when t ends; it
// skips t when their binaries are not there.
func startAPIServer(t *testing.T) (*envtest.Environment, *rest.Config) {
	t.Helper()
	if reason := kubetest.SkipReason(); reason != "" {
		t.Skip(reason)
	}
	env, cfg, err := kubetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env, cfg
}
