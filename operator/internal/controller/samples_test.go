package controller_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// TestSamplesAreValid submits every sample under config/samples to the API server as a dry run, so that a
// sample that drifted from the CRD's schema or validation rules fails here rather than in a user's hands.
func TestSamplesAreValid(t *testing.T) {
	requireEnv(t)
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "samples")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	checked := 0
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			var obj client.Object = &v1alpha1.ZNSDatabase{}
			if strings.Contains(doc, "kind: Benchmark") {
				obj = &v1alpha1.Benchmark{}
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Errorf("%s: %v", filepath.Base(f), err)
				continue
			}
			obj.SetNamespace(ns)
			if err := k8s.Create(ctx, obj, client.DryRunAll); err != nil {
				t.Errorf("%s: the API server rejects it: %v", filepath.Base(f), err)
			}
			checked++
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d samples, expected at least 3 in %s", checked, dir)
	}
}
