package chart

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

// TestOperationsChart: a YCSB Benchmark's p99 per operation type is drawn, one colour per target; a sysbench
// Benchmark has no such chart and says why.
func TestOperationsChart(t *testing.T) {
	ops := func(read, update string) *v1alpha1.YCSBTargetStatus {
		return &v1alpha1.YCSBTargetStatus{Operations: []v1alpha1.YCSBOperation{
			{Operation: "READ", LatencyP99Ms: read}, {Operation: "UPDATE", LatencyP99Ms: update}}}
	}
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Name: "ycsb"}, Spec: v1alpha1.BenchmarkSpec{Tool: v1alpha1.ToolYCSB},
		Status: v1alpha1.BenchmarkStatus{Targets: []v1alpha1.TargetStatus{
			{Name: "zns", State: v1alpha1.TargetDone, YCSB: ops("1.2", "10.5")},
			{Name: "xfs", State: v1alpha1.TargetDone, YCSB: ops("2.5", "30.0")}}}}
	d := report.Data{Benchmark: b}
	var buf bytes.Buffer
	if _, err := Figure(&buf, d, "svg", []Kind{Operations}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p99 latency per YCSB operation", "READ", "UPDATE", "zns", "xfs"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("svg lacks %q", want)
		}
	}
	buf.Reset()
	if _, err := Figure(&buf, d, "png", []Kind{Operations}); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, ts := range b.Status.Targets {
		if n := hasColor(img, colorOf(i)); n < 50 {
			t.Errorf("%s's bars cover %d pixels", ts.Name, n)
		}
	}
	if err := Available(report.Data{Benchmark: &v1alpha1.Benchmark{}}, Operations); err == nil || !strings.Contains(err.Error(), "not a YCSB Benchmark") {
		t.Errorf("a sysbench Benchmark: %v", err)
	}
}
