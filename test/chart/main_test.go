// Package chart tests the Helm chart in charts/zns-mysql with the pinned helm binary and a real
// kube-apiserver (envtest): lint, render, schema rejections, strict server-side dry-run of every
// rendered object, a real `helm install`, and the drift of its CRDs and RBAC from the generated ones.
//
// Needs:
//   - helm: $ZNS_HELM, or the binary hack/helm.sh caches (tools/helm-<HELM_VERSION> in the cache);
//     `make test` provides it.
//   - KUBEBUILDER_ASSETS (kube-apiserver, etcd) for the API-server tests; `make test` provides it.
//
// Tests that miss one of them skip with a one-line reason.
package chart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/zns-mysql/zns-mysql/test/kubetest"
)

var (
	repoRoot   string
	chartDir   string
	helmBin    string // "" when helm is missing; helmReason says why
	helmReason string

	k8s            client.Client
	restCfg        *rest.Config
	kubeconfigPath string // a kubeconfig of the envtest admin, for helm
	envReason      string // why there is no API server, "" when there is
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Join(filepath.Dir(file), "..", "..")
	chartDir = filepath.Join(repoRoot, "charts", "zns-mysql")
	helmBin, helmReason = findHelm()

	scratch, err := os.MkdirTemp("", "zns-chart-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(scratch) }()
	// helm keeps repositories, plugins and caches under these; keep the user's own out of the tests.
	for _, kv := range [][2]string{
		{"HELM_CACHE_HOME", "helm-cache"}, {"HELM_CONFIG_HOME", "helm-config"}, {"HELM_DATA_HOME", "helm-data"},
	} {
		_ = os.Setenv(kv[0], filepath.Join(scratch, kv[1]))
	}

	if envReason = kubetest.SkipReason(); envReason != "" {
		return m.Run()
	}
	env, cfg, err := kubetest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	restCfg = cfg
	k8s, err = client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	admin, err := env.AddUser(envtest.User{Name: "chart-test-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kubeconfigPath = filepath.Join(scratch, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kc, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// findHelm: $ZNS_HELM, else the binary hack/helm.sh caches for the versions.mk pin.
func findHelm() (path, reason string) {
	const how = "`make test` builds it with hack/helm.sh; or set ZNS_HELM"
	if p := os.Getenv("ZNS_HELM"); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			return "", fmt.Sprintf("needs helm: ZNS_HELM=%s is not a file (%s)", p, how)
		}
		return p, ""
	}
	pin, err := readPin("HELM_VERSION")
	if err != nil {
		return "", fmt.Sprintf("needs helm: %v (%s)", err, how)
	}
	cache := os.Getenv("ZNS_CACHE_DIR")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "zns-mysql")
	}
	p := filepath.Join(cache, "tools", "helm-"+pin)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Sprintf("needs helm %s (not at %s; %s)", pin, p, how)
	}
	return p, ""
}

// readPin reads a `NAME := value` line of versions.mk, as the hack/ scripts do.
func readPin(name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "versions.mk"))
	if err != nil {
		return "", err
	}
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `\s*[:?]?=\s*([^\s#]+)`)
	ms := re.FindAllSubmatch(data, -1)
	if len(ms) == 0 {
		return "", fmt.Errorf("versions.mk has no %s line", name)
	}
	return string(ms[len(ms)-1][1]), nil
}

func requireHelm(t *testing.T) {
	t.Helper()
	if helmBin == "" {
		t.Skip(helmReason)
	}
}

func requireEnv(t *testing.T) {
	t.Helper()
	requireHelm(t)
	if envReason != "" {
		t.Skip(envReason)
	}
}

// pinnedKubeVersion is versions.mk's K8S_VERSION: the Kubernetes the chart is rendered and linted for, the
// same that envtest and the kind node run (helm's own default follows its client-go, a newer minor).
func pinnedKubeVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "versions.mk"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^K8S_VERSION\s*:=\s*(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("versions.mk has no K8S_VERSION := line")
	}
	return "v" + strings.TrimPrefix(string(m[1]), "v")
}

// helm runs the helm binary and returns its combined output and error. `template` and `lint` render for the
// pinned Kubernetes version.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	if len(args) > 0 && (args[0] == "template" || args[0] == "lint") && !slices.Contains(args, "--kube-version") {
		args = append(args[:len(args):len(args)], "--kube-version", pinnedKubeVersion(t))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, helmBin, args...)
	cmd.Env = os.Environ()
	if kubeconfigPath != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfigPath)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// mustHelm runs helm and fails the test, with helm's output, when it fails.
func mustHelm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

var nsSeq int

// newNamespace creates a namespace for real (a release namespace must exist before the release).
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	nsSeq++
	name := fmt.Sprintf("%s-%d-%d", prefix, time.Now().Unix()%100000, nsSeq)
	ns := namespaceObject(name)
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

var gvkDeployment = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
