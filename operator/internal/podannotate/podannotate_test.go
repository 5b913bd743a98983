package podannotate

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// apiServer stands for kube-apiserver over TLS; the service account dir
// holds its CA, as the kubelet mounts it.
func apiServer(t *testing.T, handler http.HandlerFunc) (getenv func(string) string, saDir string) {
	t.Helper()
	srv := httptest.NewTLSServer(handler)
	t.Cleanup(srv.Close)
	saDir = t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for name, content := range map[string]string{"ca.crt": string(ca), "token": "secret-token\n", "namespace": "db-ns"} {
		if err := os.WriteFile(filepath.Join(saDir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := url.Parse(srv.URL)
	env := map[string]string{"KUBERNETES_SERVICE_HOST": u.Hostname(), "KUBERNETES_SERVICE_PORT": u.Port(), PodNameEnv: "tenant1-mysql-0"}
	return func(k string) string { return env[k] }, saDir
}

func TestAnnotate(t *testing.T) {
	var got struct {
		method, path, contentType, auth string
		body                            map[string]any
	}
	getenv, sa := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.contentType, got.auth = r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &got.body)
		w.Write([]byte(`{"kind":"Pod"}`))
	})
	c, err := InCluster(getenv, sa)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Annotate(context.Background(), "zns-mysql.dev/zenfs-space", `{"freeBytes":1}`); err != nil {
		t.Fatal(err)
	}
	if got.method != http.MethodPatch || got.path != "/api/v1/namespaces/db-ns/pods/tenant1-mysql-0" ||
		got.contentType != "application/merge-patch+json" || got.auth != "Bearer secret-token" {
		t.Errorf("request %+v", got)
	}
	ann := got.body["metadata"].(map[string]any)["annotations"].(map[string]any)
	if len(got.body) != 1 || len(ann) != 1 || ann["zns-mysql.dev/zenfs-space"] != `{"freeBytes":1}` {
		t.Errorf("patch body %v: want only the one annotation", got.body)
	}
}

func TestAnnotateRefused(t *testing.T) {
	getenv, sa := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"kind":"Status","message":"pods \"tenant1-mysql-0\" is forbidden: User \"system:serviceaccount:db-ns:default\" cannot patch resource \"pods\""}`))
	})
	c, err := InCluster(getenv, sa)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Annotate(context.Background(), "k", "v")
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "cannot patch resource") {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(err.Error(), "secret-token") {
		t.Errorf("the token leaked into an error: %v", err)
	}
}

func TestInClusterNeedsThePod(t *testing.T) {
	getenv, sa := apiServer(t, func(http.ResponseWriter, *http.Request) {})
	if _, err := InCluster(func(string) string { return "" }, sa); err == nil || !strings.Contains(err.Error(), "not in a pod") {
		t.Errorf("no API server env: %v", err)
	}
	noPod := func(k string) string {
		if k == PodNameEnv {
			return ""
		}
		return getenv(k)
	}
	if _, err := InCluster(noPod, sa); err == nil || !strings.Contains(err.Error(), PodNameEnv) {
		t.Errorf("no pod name: %v", err)
	}
	if _, err := InCluster(getenv, t.TempDir()); err == nil || !strings.Contains(err.Error(), "automountServiceAccountToken") {
		t.Errorf("no service account: %v", err)
	}
	// POD_NAMESPACE wins over the service account's namespace.
	withNS := func(k string) string {
		if k == PodNamespaceEnv {
			return "other"
		}
		return getenv(k)
	}
	if c, err := InCluster(withNS, sa); err != nil || c.Namespace != "other" {
		t.Errorf("namespace %+v, %v", c, err)
	}
}
