package apidocs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const apiDir = "../../api/v1alpha1"

func generate(t *testing.T) string {
	t.Helper()
	out, err := Generate(apiDir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rowOf finds the table row of a field in the section of a type.
func rowOf(t *testing.T, out, typ, field string) string {
	t.Helper()
	_, sec, ok := strings.Cut(out, "## "+typ+"\n")
	if !ok {
		t.Fatalf("no section %s", typ)
	}
	if i := strings.Index(sec, "\n#"); i >= 0 {
		sec = sec[:i]
	}
	for _, l := range strings.Split(sec, "\n") {
		if strings.HasPrefix(l, "| `"+field+"` |") {
			return l
		}
	}
	t.Fatalf("no field %s in %s:\n%s", field, typ, sec)
	return ""
}

func TestReferenceRendersFieldsWithTheirMarkers(t *testing.T) {
	out := generate(t)
	for _, c := range []struct {
		typ, field string
		want       []string
	}{
		// required, bounds and a default from the kubebuilder markers
		{"BenchmarkSpec", "targets", []string{"[[]BenchmarkTarget](#benchmarktarget)", "**required**", "minItems 1", "maxItems 8"}},
		{"BenchmarkSpec", "threads", []string{"`int32`", "minimum 1", "maximum 4096", "default `16`"}},
		// an enum from the marker, and one from the string type's constants
		{"BenchmarkSpec", "workload", []string{"one of `oltp_update_index`"}},
		{"Ratios", "tpsVerdict", []string{"`Verdict`", "`NoSignificantDifference`", "Welch"}},
		// inline fields appear in the type that embeds them
		{"IterationResult", "tps", []string{"transactions per second"}},
		{"DeviceStatus", "zoneCapacity", []string{"`resource.Quantity`"}},
	} {
		row := rowOf(t, out, c.typ, c.field)
		for _, w := range c.want {
			if !strings.Contains(row, w) {
				t.Errorf("%s.%s: %q lacks %q", c.typ, c.field, row, w)
			}
		}
	}
	if strings.Contains(out, "+kubebuilder") || strings.Contains(out, "| `` |") {
		t.Error("markers or embedded metadata leaked into the reference")
	}
	for _, w := range []string{"| `ConditionAvailable` | `Available` |", "| `ReasonFormatRefused` | `FormatRefused` |"} {
		if !strings.Contains(out, w) {
			t.Errorf("conditions table lacks %q", w)
		}
	}
}

// TestCommittedReferenceIsCurrent is the drift check: docs/api.md is what make api-docs writes today.
func TestCommittedReferenceIsCurrent(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(committed) != generate(t) {
		t.Error("docs/api.md differs from the API types: run `make api-docs` and commit it")
	}
}
