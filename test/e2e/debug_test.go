package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// checkDebugBundle runs `kubectl zns debug` on a running database of a real cluster, where logs and exec work (the
// envtest suite can only see them fail), and checks the bundle holds them and not the root password.
func checkDebugBundle(t *testing.T, db *v1alpha1.ZNSDatabase) {
	t.Helper()
	dir := t.TempDir()
	plugin := filepath.Join(dir, "kubectl-zns")
	build := exec.Command("go", "build", "-o", plugin, "./operator/cmd/kubectl-zns")
	build.Dir = repoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	bundle := filepath.Join(dir, "bundle.tar.gz")
	args := []string{"debug", "-n", db.Namespace, db.Name, "-o", bundle}
	if kc := os.Getenv("ZNS_E2E_KUBECONFIG"); kc != "" {
		args = append(args, "--kubeconfig", kc)
	}
	out, err := exec.Command(plugin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl zns %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("kubectl zns debug: %s", strings.TrimSpace(string(out)))

	cur := &v1alpha1.ZNSDatabase{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: cur.Status.RootPasswordSecretName}, secret); err != nil {
		t.Fatal(err)
	}
	password := secret.Data[v1alpha1.RootPasswordKey]
	if len(password) < 8 {
		t.Fatalf("root password of %d bytes", len(password))
	}
	forbidden := [][]byte{password, []byte(base64.StdEncoding.EncodeToString(password))}

	files := readBundle(t, bundle)
	pod := db.PodName()
	want := []string{"objects/znsdatabase/" + db.Name + ".yaml", "databases/" + db.Name + "/my.cnf",
		"logs/" + pod + "/mysqld.log", "logs/" + pod + "/mysqld-exporter.log", "logs/" + pod + "/zns-metrics.log",
		"events.txt", "versions.txt", "README.txt"}
	for _, w := range want {
		if len(files[w]) == 0 {
			t.Errorf("the bundle has no (or an empty) %s", w)
		}
	}
	if !bytes.Contains(files["logs/"+pod+"/mysqld.log"], []byte("ready for connections")) {
		t.Errorf("mysqld's log in the bundle does not show the server starting:\n%s", tail(string(files["logs/"+pod+"/mysqld.log"]), 10))
	}
	for name, content := range files {
		for _, f := range forbidden {
			if bytes.Contains(content, f) {
				t.Errorf("%s holds the root password", name)
			}
		}
	}
}

// readBundle maps every file of the bundle, by its path below the bundle's top directory, to its content.
func readBundle(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		_, rel, _ := strings.Cut(h.Name, "/")
		files[rel] = b
	}
	return files
}
