package controller_test

import (
	"testing"
	"testing/fstest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/zns-mysql/zns-mysql/config/samples"
)

// TestSamplesAreValid submits every object of every scenario under config/samples to the API server as a dry
// run, as the manifest hack/scenario writes for make demo, so that a sample that drifted from the CRD's schema
// or validation rules fails here rather than in a user's hands, the demo's or an e2e flow's.
func TestSamplesAreValid(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	checked := 0
	for _, dir := range []string{samples.Lab, samples.ZonedNode, samples.Fleet} {
		s, err := samples.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		s.Place(samples.Placement{Namespace: ns, TimeScale: 4})
		manifest, err := s.YAML()
		if err != nil {
			t.Fatal(err)
		}
		applied, err := samples.LoadFS(fstest.MapFS{"m/manifest.yaml": {Data: manifest}}, "m")
		if err != nil {
			t.Fatalf("%s: the manifest does not read back: %v", dir, err)
		}
		var objs []client.Object
		for _, db := range applied.Databases {
			objs = append(objs, db)
		}
		for _, b := range applied.Benchmarks {
			objs = append(objs, b)
		}
		for _, obj := range objs {
			if err := k8s.Create(ctx, obj, client.DryRunAll); err != nil {
				t.Errorf("%s (%s): the API server rejects it: %v", obj.GetName(), s.Files[obj.GetName()], err)
			}
			checked++
		}
	}
	if checked < 19 {
		t.Fatalf("checked %d samples, expected the 8 of the lab, the 9 of the zoned node and the 2 of the fleet", checked)
	}
}
