package opmetrics

import (
	"github.com/prometheus/client_golang/prometheus"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// A fio Benchmark's figures (status.targets[].fio.results): one series per run (a profile, or a grid point with
// its point) and direction. They are one run's, not means: a fio Benchmark runs each profile once per device.
// A failed target's runs before its failure are measurements and are exported too. The database families above
// have nothing for a fio Benchmark.
var (
	fioLabels = append(append([]string(nil), targetLabels...), "profile", "point", "direction")

	descFioBytesPerSec = newDesc(Namespace+"_benchmark_result_fio_bytes_per_second",
		"A fio Benchmark's bandwidth of each run (profile, grid point) and direction (read, write) on the target's device.",
		fioLabels, nil)
	descFioIOPS = newDesc(Namespace+"_benchmark_result_fio_iops",
		"A fio Benchmark's I/O operations per second of each run and direction on the target's device.", fioLabels, nil)
	descFioLatency = newDesc(Namespace+"_benchmark_result_fio_latency_microseconds",
		"A fio Benchmark's completion latency (clat) of each run and direction on the target's device: p50, p99, p99.9.",
		append(append([]string(nil), fioLabels...), "quantile"), nil)
	fioDescs = []*prometheus.Desc{descFioBytesPerSec, descFioIOPS, descFioLatency}
)

// collectFio exports a fio target's runs; nothing for a target without them.
func collectFio(ch chan<- prometheus.Metric, t *v1alpha1.TargetStatus, tl []string) {
	if t.Fio == nil {
		return
	}
	for _, r := range t.Fio.Results {
		for _, d := range []struct {
			direction string
			figures   *v1alpha1.FioDirection
		}{{"read", r.Read}, {"write", r.Write}} {
			if d.figures == nil {
				continue
			}
			rl := append(append([]string(nil), tl...), string(r.Profile), r.Point, d.direction)
			emit(ch, descFioBytesPerSec, d.figures.BytesPerSec, rl...)
			emit(ch, descFioIOPS, d.figures.IOPS, rl...)
			for q, v := range map[string]string{"p50": d.figures.LatencyP50Us, "p99": d.figures.LatencyP99Us, "p99.9": d.figures.LatencyP999Us} {
				emit(ch, descFioLatency, v, append(rl, q)...)
			}
		}
	}
}
