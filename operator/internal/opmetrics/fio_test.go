package opmetrics

import "testing"

// TestFioSeries: a fio Benchmark's runs are series per target, run (profile, grid point) and direction with the
// figures of its status (testdata/fio.yaml: real fio output), a failed target's runs included; a direction a run
// did no I/O in has none, and a sysbench Benchmark has no fio series. The figures are written out here: the
// fixture's are fixed captures (its README).
func TestFioSeries(t *testing.T) {
	fams := gather(t, readBenchmark(t, "fio.yaml"), readBenchmark(t, "pair.yaml"))
	l := func(target, profile, point, direction string, kv ...string) map[string]string {
		m := map[string]string{"namespace": "zns-demo", "benchmark": "raw", "target": target, "engine": "", "storage": "", "stack": "",
			"profile": profile, "point": point, "direction": direction}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	const (
		bw   = "zns_mysql_benchmark_result_fio_bytes_per_second"
		iops = "zns_mysql_benchmark_result_fio_iops"
		lat  = "zns_mysql_benchmark_result_fio_latency_microseconds"
	)
	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{bw, l("loop", "seqwrite-open-zones", "", "write"), 2532409962},
		{bw, l("loop", "randread-rate-limited-writes", "", "read"), 963540501},
		{bw, l("loop", "randread-rate-limited-writes", "", "write"), 16768831},
		{iops, l("loop", "grid", "bs=4096 jobs=1 qd=8", "read"), 159474.26},
		{iops, l("loop", "grid", "bs=4096 jobs=2 qd=8", "read"), 168146.43},
		{lat, l("loop", "seqread-128k-qd32", "", "read", "quantile", "p50"), 757.76},
		{lat, l("loop", "randread-rate-limited-writes", "", "write", "quantile", "p99"), 856.064},
		{lat, l("zoned", "seqwrite-open-zones", "", "write", "quantile", "p99.9"), 112721.92},
		{bw, l("zoned", "randread-4k", "", "read"), 9508279},
	} {
		if got, ok := Lookup(fams, c.family, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	// 9 directions in all (the mixed profile has both): one bandwidth and one IOPS series each, three latencies.
	for family, want := range map[string]int{bw: 9, iops: 9, lat: 27} {
		if n := len(fams[family].GetMetric()); n != want {
			t.Errorf("%s: %d series, want %d", family, n, want)
		}
	}
	if _, ok := Lookup(fams, bw, l("loop", "seqwrite-open-zones", "", "read")); ok {
		t.Error("a series for a direction the run did no I/O in")
	}
	for _, family := range []string{bw, iops, lat} {
		for _, m := range fams[family].GetMetric() {
			for _, lb := range m.GetLabel() {
				if lb.GetName() == "benchmark" && lb.GetValue() != "raw" {
					t.Errorf("%s: a sysbench Benchmark has fio series: %v", family, m)
				}
			}
		}
	}
	for _, m := range fams["zns_mysql_benchmark_result_tps"].GetMetric() {
		for _, lb := range m.GetLabel() {
			if lb.GetName() == "benchmark" && lb.GetValue() == "raw" {
				t.Errorf("a fio Benchmark has a TPS series: %v", m)
			}
		}
	}
}
