package e2e

import (
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// TestZonedFioBenchmark is a fio Benchmark (spec.tool fio) on the zoned node's real kubelet: its Job writes and
// reads nvme0n2, the second ZNS namespace of the emulated drive, which no database of the suite uses, with the
// open-zone write and the 4 KiB random read. The node may have been used before, so the Benchmark gives a
// write token. QEMU's NVMe model has no FTL: the figures are the emulation's.
//
//	hack/qemu/zoned-node.sh up && eval "$(hack/qemu/zoned-node.sh env)" && \
//	  ZNS_HELM=$(hack/helm.sh) go test -count=1 -v -run '^TestZonedFioBenchmark$' ./test/e2e/
func TestZonedFioBenchmark(t *testing.T) {
	node := zonedNode(t)
	ns := newNamespace(t, "e2e-zonedfio")
	span := resource.MustParse("256Mi") // 16 zones of 16 MiB: a zone of its own for each open-zone writer
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fio-nvme0n2"}, Spec: v1alpha1.BenchmarkSpec{
		Tool:    v1alpha1.ToolFio,
		Targets: []v1alpha1.BenchmarkTarget{{Name: "nvme0n2", Device: &v1alpha1.FioDevice{NodeName: node, DeviceName: "nvme0n2"}}},
		Fio: &v1alpha1.FioSpec{
			Profiles:       []v1alpha1.FioProfile{v1alpha1.FioSeqWriteOpenZones, v1alpha1.FioRandRead4K},
			RuntimeSeconds: 5, Span: &span, WriteToken: "e2e-" + ns,
		},
		TargetTimeoutSeconds: int32(300 * timeScale),
	}}
	start := time.Now()
	if err := k8s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitCompletedWithin(t, b, 5*time.Minute*timeScale)
	t.Logf("ZONED-FIO Benchmark Completed %s after the apply", time.Since(start).Round(time.Second))
	if len(b.Status.Targets) != 1 {
		t.Fatalf("targets %+v", b.Status.Targets)
	}
	ts := b.Status.Targets[0]
	f := ts.Fio
	if ts.State != v1alpha1.TargetDone || f == nil || f.Node != node || !f.Zoned || len(f.Results) != 2 {
		t.Fatalf("target %+v, fio %+v: want Done on zoned %s with two results", ts, f, node)
	}
	for _, r := range f.Results {
		d := r.Read
		if r.Profile == v1alpha1.FioSeqWriteOpenZones {
			d = r.Write
		}
		bps, _ := strconv.ParseFloat(ptrOr(d).BytesPerSec, 64)
		p99, _ := strconv.ParseFloat(ptrOr(d).LatencyP99Us, 64)
		if bps <= 0 || p99 <= 0 {
			t.Errorf("%s: %+v, want throughput and a p99 latency", r.Profile, d)
			continue
		}
		t.Logf("ZONED-FIO %s on nvme0n2: %.1f MiB/s, p99 %.0f us (emulated NVMe ZNS: no FTL)", r.Profile, bps/(1<<20), p99)
	}
}

func ptrOr(d *v1alpha1.FioDirection) v1alpha1.FioDirection {
	if d == nil {
		return v1alpha1.FioDirection{}
	}
	return *d
}
