package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func fioBenchmark(ns, name string) *v1alpha1.Benchmark {
	return &v1alpha1.Benchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.BenchmarkSpec{
			Tool: v1alpha1.ToolFio,
			Targets: []v1alpha1.BenchmarkTarget{
				{Name: "dev", Device: &v1alpha1.FioDevice{NodeName: "node-a", DeviceName: "nvme0n2"}},
			},
			Fio: &v1alpha1.FioSpec{Profiles: []v1alpha1.FioProfile{v1alpha1.FioSeqWriteOpenZones, v1alpha1.FioSeqRead128KQD32}},
		},
	}
}

// The API server refuses a fio Benchmark that cannot run, each with a message that says what to change.
func TestFioBenchmarkRefusedByTheAPI(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	if err := k8s.Create(ctx, fioBenchmark(ns, "ok"), client.DryRunAll); err != nil {
		t.Fatalf("a good fio Benchmark is refused: %v", err)
	}
	grid := func(bs []int64, jobs, qd []int32) *v1alpha1.FioGridSpec {
		return &v1alpha1.FioGridSpec{BlockSizes: bs, NumJobs: jobs, IODepths: qd}
	}
	tests := []struct {
		name string
		edit func(*v1alpha1.BenchmarkSpec)
		says string
	}{
		{"no spec.fio", func(s *v1alpha1.BenchmarkSpec) { s.Fio = nil }, "spec.tool fio needs spec.fio"},
		{"spec.fio with sysbench", func(s *v1alpha1.BenchmarkSpec) { s.Tool = v1alpha1.ToolSysbench }, "spec.fio goes with spec.tool fio"},
		{"a target with neither", func(s *v1alpha1.BenchmarkSpec) { s.Targets[0].Device = nil }, "each target names either device"},
		{"a target with both", func(s *v1alpha1.BenchmarkSpec) { s.Targets[0].Database = "db" }, "each target names either device"},
		{"a device target of sysbench", func(s *v1alpha1.BenchmarkSpec) { s.Tool, s.Fio = v1alpha1.ToolSysbench, nil }, "name neither"},
		{"unknown profile", func(s *v1alpha1.BenchmarkSpec) { s.Fio.Profiles = []v1alpha1.FioProfile{"randtrim"} }, "Unsupported value"},
		{"repeated profile", func(s *v1alpha1.BenchmarkSpec) {
			s.Fio.Profiles = []v1alpha1.FioProfile{v1alpha1.FioRandRead4K, v1alpha1.FioRandRead4K}
		}, "must not repeat a profile"},
		{"grid without its points", func(s *v1alpha1.BenchmarkSpec) { s.Fio.Profiles = []v1alpha1.FioProfile{v1alpha1.FioGrid} }, "profile grid needs spec.fio.grid"},
		{"points without the grid", func(s *v1alpha1.BenchmarkSpec) {
			s.Fio.Grid = grid([]int64{4096}, []int32{1}, []int32{1})
		}, "used only by profile grid"},
		{"grid of 36 points", func(s *v1alpha1.BenchmarkSpec) {
			s.Fio.Profiles = []v1alpha1.FioProfile{v1alpha1.FioGrid}
			s.Fio.Grid = grid([]int64{4096, 8192, 16384, 65536}, []int32{1, 2, 4}, []int32{1, 8, 32})
		}, "at most 27 points"},
		{"odd block size", func(s *v1alpha1.BenchmarkSpec) {
			s.Fio.Profiles = []v1alpha1.FioProfile{v1alpha1.FioGrid}
			s.Fio.Grid = grid([]int64{1000}, []int32{1}, []int32{1})
		}, "multiples of 512"},
		{"a partition", func(s *v1alpha1.BenchmarkSpec) { s.Targets[0].Device.DeviceName = "sda/1" }, "deviceName"},
		{"sysbench's fields", func(s *v1alpha1.BenchmarkSpec) { s.Workloads = []string{"oltp_read_only"} }, "are for databases"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := fioBenchmark(ns, "bad")
			tt.edit(&b.Spec)
			err := k8s.Create(ctx, b, client.DryRunAll)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Create = %v; want a refusal saying %q", err, tt.says)
			}
		})
	}
}
