package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/debugbundle"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

const (
	debugNS       = "zns-lab"
	debugPassword = "Known-root-pw-4711" // the Secret's value: no byte of the bundle may hold it
	debugCnf      = "[mysqld]\nrocksdb_fs_uri=zenfs://dev:nullb0\nrocksdb_block_cache_size=512M\n"
	preflightJSON = `{"device":{"name":"nullb0","model":"host-managed","nrZones":64,"scheduler":"mq-deadline"}}`
	formatJSON    = `{"filesystem":{"type":"zenfs","found":"zenfs","action":"keep","reason":"holds ZenFS"}}`
)

// TestDebugBundleAgainstAPIServer runs `kubectl zns debug` as a user runs it (a kubeconfig, -n) against a real
// kube-apiserver holding a zoned database, the children the operator's own builders make, a running pod and a
// finished preflight pod (no kubelet: their logs and the exec fail and are listed), events, and the database's
// Secret. Then again as a user whom RBAC denies every Secret: the same bundle, so the tool never needs one.
func TestDebugBundleAgainstAPIServer(t *testing.T) {
	env, cfg := startAPIServer(t)
	dir := t.TempDir()
	kubeconfig := func(u envtest.User) string {
		au, err := env.AddUser(u, cfg)
		if err != nil {
			t.Fatal(err)
		}
		kc, err := au.KubeConfig()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, u.Name+".kubeconfig")
		if err := os.WriteFile(p, kc, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	admin := kubeconfig(envtest.User{Name: "lab", Groups: []string{"system:masters"}})
	reader := kubeconfig(envtest.User{Name: "reader", Groups: []string{"zns-debuggers"}})
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: debugbundle.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	db := debugCluster(t, ctx, c)
	grantDebugRole(t, ctx, c)

	plugin := func(kc string, args ...string) (string, map[string]string) {
		t.Helper()
		out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(kc), ".kubeconfig")+".tar.gz")
		var stdout, stderr bytes.Buffer
		root := newRoot(testStreams(&stdout, &stderr), nil)
		root.SetArgs(append([]string{"--kubeconfig", kc, "-n", debugNS, "debug", "-o", out}, args...))
		if err := root.ExecuteContext(ctx); err != nil {
			t.Fatalf("kubectl zns debug: %v\n%s", err, stderr.String())
		}
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(out) + `: [0-9.]+ (KiB|bytes), [0-9]+ items, [0-9]+ errors \(see zns-debug-zns-lab-[0-9TZ]+/errors.txt\)\n$`).MatchString(stdout.String()) {
			t.Errorf("summary line %q", stdout.String())
		}
		// A bundle to look at: ZNS_DEBUG_BUNDLE=/tmp/b.tar.gz go test -run TestDebugBundle ./operator/cmd/kubectl-zns/
		if keep := os.Getenv("ZNS_DEBUG_BUNDLE"); keep != "" && kc == admin {
			raw, err := os.ReadFile(out)
			if err != nil || os.WriteFile(keep, raw, 0o644) != nil {
				t.Errorf("keeping the bundle in %s: %v", keep, err)
			}
		}
		return stdout.String(), readBundle(t, out)
	}
	_, files := plugin(admin, db.Name)
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	t.Logf("bundle (admin):\n%s", strings.Join(names, "\n"))

	for _, want := range []string{
		"README.txt", "errors.txt", "versions.txt", "events.txt", "events.yaml", "databases/tenant1/my.cnf",
		"databases/tenant1/reports/tenant1-preflight-t5x9q.preflight.json", "databases/tenant1/reports/tenant1-format-r2d4q.format.json",
		"objects/job/tenant1-format.yaml", "objects/pod/tenant1-format-r2d4q.yaml",
		"objects/znsdatabase/tenant1.yaml", "objects/statefulset/tenant1-mysql.yaml", "objects/pod/tenant1-mysql-0.yaml",
		"objects/pod/tenant1-preflight-t5x9q.yaml", "objects/job/tenant1-preflight.yaml", "objects/service/tenant1-mysql.yaml",
		"objects/persistentvolumeclaim/tenant1-zoned.yaml", "objects/persistentvolume/" + v1alpha1.DevicePVName("node-1", "nullb0") + ".yaml",
		"objects/configmap/" + resources.ConfigMapName(db, debugCnf) + ".yaml",
	} {
		if _, ok := files[want]; !ok {
			t.Errorf("no %s in the bundle", want)
		}
	}
	if files["databases/tenant1/my.cnf"] != debugCnf {
		t.Errorf("my.cnf %q, want %q", files["databases/tenant1/my.cnf"], debugCnf)
	}
	noSecret(t, files)
	if !strings.Contains(files["objects/pod/tenant1-mysql-0.yaml"], "name: "+db.RootSecretName()) {
		t.Error("the pod's reference to its Secret lost the name")
	}
	errs := files["errors.txt"]
	for _, want := range []string{
		"log of pod tenant1-mysql-0 container mysqld:", "logs of pod tenant1-format-r2d4q: the pod is not scheduled to a node",
		`log of pod tenant1-mysql-0 container mysqld: the server could not find the requested resource (get pods tenant1-mysql-0): pods "node-1" not found`,
		"logs of pod tenant1-preflight-t5x9q: the pod is not scheduled to a node",
		`exec "znsdb preflight --device nullb0 --termination-log=" in tenant1-mysql-0/mysqld:`,
		`exec "/usr/bin/zenfs df --zbd=nullb0" in tenant1-mysql-0/mysqld:`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("errors.txt lacks %q:\n%s", want, errs)
		}
	}
	ev := files["events.txt"]
	if !strings.Contains(ev, "FailedMount") || !strings.Contains(ev, "Formatted") || strings.Contains(ev, "Unrelated") ||
		strings.Index(ev, "Formatted") > strings.Index(ev, "FailedMount") {
		t.Errorf("events.txt:\n%s", ev)
	}
	for _, want := range []string{"server: v1.", "operator: deployment zns-system/zns-mysql-controller-manager container manager image zns-mysql/operator:test",
		"pod tenant1-mysql-0 container mysqld image percona-zenfs:test"} {
		if !strings.Contains(files["versions.txt"], want) {
			t.Errorf("versions.txt lacks %q:\n%s", want, files["versions.txt"])
		}
	}

	// The reader may not even see that Secrets exist; the bundle is the same, and nothing was refused.
	rc, err := client.New(restConfigFor(t, reader), client.Options{Scheme: debugbundle.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Get(ctx, client.ObjectKey{Namespace: debugNS, Name: db.RootSecretName()}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the reader reads the Secret: %v", err)
	}
	_, rfiles := plugin(reader, db.Name)
	var rnames []string
	for name := range rfiles {
		rnames = append(rnames, name)
	}
	slices.Sort(rnames)
	if !slices.Equal(rnames, names) {
		t.Errorf("the reader's bundle:\n%s\nthe admin's:\n%s", strings.Join(rnames, "\n"), strings.Join(names, "\n"))
	}
	if strings.Contains(strings.ToLower(rfiles["errors.txt"]), "forbidden") {
		t.Errorf("the reader was refused something:\n%s", rfiles["errors.txt"])
	}
	noSecret(t, rfiles)

	// The admin could read the Secret; the plugin's own clients cannot, whichever way they ask.
	s := &session{flags: genericclioptions.NewConfigFlags(true)}
	*s.flags.KubeConfig = admin
	src, _, err := s.debugSource()
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Get(ctx, client.ObjectKey{Namespace: debugNS, Name: db.RootSecretName()}, &corev1.Secret{}); !errors.Is(err, debugbundle.ErrSecret) {
		t.Errorf("object reader: %v", err)
	}
	if _, err := src.(*clusterSource).cs.CoreV1().Secrets(debugNS).List(ctx, metav1.ListOptions{}); !errors.Is(err, debugbundle.ErrSecret) {
		t.Errorf("clientset: %v", err)
	}
}

// noSecret fails when the Secret's value, or its base64, is anywhere in the bundle.
func noSecret(t *testing.T, files map[string]string) {
	t.Helper()
	b64 := base64.StdEncoding.EncodeToString([]byte(debugPassword))
	for name, content := range files {
		if strings.Contains(content, debugPassword) || strings.Contains(content, b64) {
			t.Errorf("%s holds the password", name)
		}
	}
}

func readBundle(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := debugbundle.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for name, b := range raw {
		files[name] = string(b)
	}
	return files
}

func restConfigFor(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	f := genericclioptions.NewConfigFlags(true)
	*f.KubeConfig = kubeconfig
	cfg, err := f.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
