package debugbundle

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Every way of asking the object reader for Secrets fails before the cluster is asked; other kinds pass.
func TestNoSecretsRefusesEveryFormOfSecret(t *testing.T) {
	_, objs := zonedCluster()
	src := newFake(objs...)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: ns, Name: "tenant1-root"}
	secretGVK := corev1.SchemeGroupVersion.WithKind("Secret")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(secretGVK)
	ul := &unstructured.UnstructuredList{}
	ul.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	pm := &metav1.PartialObjectMetadata{}
	pm.SetGroupVersionKind(secretGVK)
	pml := &metav1.PartialObjectMetadataList{}
	pml.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	for name, err := range map[string]error{
		"typed get":         src.Get(ctx, key, &corev1.Secret{}),
		"typed list":        src.List(ctx, &corev1.SecretList{}),
		"unstructured get":  src.Get(ctx, key, u),
		"unstructured list": src.List(ctx, ul),
		"metadata get":      src.Get(ctx, key, pm),
		"metadata list":     src.List(ctx, pml),
	} {
		if !errors.Is(err, ErrSecret) {
			t.Errorf("%s of a Secret: %v, want ErrSecret", name, err)
		}
	}
	if err := src.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tenant1-mysql-0"}, &corev1.Pod{}); err != nil {
		t.Errorf("a pod: %v", err)
	}
}

// The transport guard stops client-go's typed clientset, which NoSecrets does not wrap, before the request
// leaves the process.
func TestRefuseSecretsStopsRequestsBeforeTheServer(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}`))
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL}
	cfg.Wrap(RefuseSecrets)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Secrets("lab").Get(ctx, "tenant1-root", metav1.GetOptions{}); !errors.Is(err, ErrSecret) {
		t.Errorf("get: %v", err)
	}
	if _, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); !errors.Is(err, ErrSecret) {
		t.Errorf("list in all namespaces: %v", err)
	}
	if _, err := cs.CoreV1().Secrets("lab").Watch(ctx, metav1.ListOptions{}); !errors.Is(err, ErrSecret) {
		t.Errorf("watch: %v", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests for Secrets reached the server", n)
	}
	if _, err := cs.CoreV1().Pods("lab").Get(ctx, "p", metav1.GetOptions{}); err != nil || requests.Load() != 1 {
		t.Errorf("a pod: %v, %d requests", err, requests.Load())
	}
}

func TestIsSecretsPath(t *testing.T) {
	for path, want := range map[string]bool{
		"/api/v1/secrets":                               true,
		"/api/v1/namespaces/lab/secrets":                true,
		"/api/v1/namespaces/lab/secrets/tenant1-root":   true,
		"/api/v1/watch/namespaces/lab/secrets":          true,
		"/k8s/clusters/c-1/api/v1/namespaces/x/secrets": true,  // behind a proxy's path prefix
		"/api/v1/namespaces/secrets/pods":               false, // a namespace called secrets
		"/api/v1/namespaces/secrets":                    false,
		"/api/v1/namespaces/lab/pods/secrets/log":       false, // a pod called secrets
		"/apis/example.com/v1/namespaces/lab/secrets":   false, // another group's resource
		"/api/v1/namespaces/lab/configmaps":             false,
		"/version":                                      false,
	} {
		if got := IsSecretsPath(path); got != want {
			t.Errorf("IsSecretsPath(%q) = %v, want %v", path, got, want)
		}
	}
}
