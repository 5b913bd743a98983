package controller_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
)

// TestFailureReasonsMatchTheAPI: the enum of status.targets[].reason in the CRD is exactly the fixed set the
// runner and the operator produce, so a reason can never be refused by the status update that records it.
func TestFailureReasonsMatchTheAPI(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "crd", "bases", "zns-mysql.dev_benchmarks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The CRD as plain data: the schema path is spec.versions[0].schema.openAPIV3Schema...
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties struct {
							Status struct {
								Properties struct {
									Targets struct {
										Items struct {
											Properties struct {
												Reason struct {
													Enum []string `json:"enum"`
												} `json:"reason"`
											} `json:"properties"`
										} `json:"items"`
									} `json:"targets"`
								} `json:"properties"`
							} `json:"status"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil || len(crd.Spec.Versions) != 1 {
		t.Fatalf("%v (%d versions)", err, len(crd.Spec.Versions))
	}
	enum := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties.Status.Properties.Targets.Items.Properties.Reason.Enum
	if !slices.Equal(enum, failreason.All) {
		t.Errorf("CRD enum %v\nfailreason.All %v", enum, failreason.All)
	}
}
