// Package opmetrics is what the operator adds to controller-runtime's metrics: the state of every Benchmark and
// ZNSDatabase, read from the manager's cache when Prometheus scrapes (so the series never disagree with the
// objects' status and cost nothing between scrapes), and counters of the device verdicts the reconcilers reach.
package opmetrics

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// Namespace is the prefix of every series this package defines.
const Namespace = "zns_mysql"

// Steps whose outcomes are counted.
const (
	StepPreflight = "preflight"
	StepFormat    = "format"
)

// outcomes counts the verdicts of the device steps by their Event reason (DeviceAccepted, DeviceRefused, Formatted,
// FormatRefused, DeviceBusy...). A counter, not a gauge of the last verdict: a device refused and retried every
// minute shows as a rate.
var outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: Namespace,
	Name:      "device_step_outcomes_total",
	Help:      "Verdicts of the preflight and format steps of zoned databases, by step and Event reason.",
}, []string{"step", "reason"})

// CountOutcome records one verdict of a device step.
func CountOutcome(step, reason string) { outcomes.WithLabelValues(step, reason).Inc() }

// KnownOutcome makes a step/reason series exist at zero before it happens, so that rate() and alerts see it from
// the start rather than from its first occurrence.
func KnownOutcome(step, reason string) { outcomes.WithLabelValues(step, reason) }

// Register adds the operator's collectors to reg. reader is the manager's cached client. Registering again (a
// restarted manager in one process, as tests do) replaces the reader.
func Register(reg prometheus.Registerer, reader client.Reader) error {
	if err := reg.Register(outcomes); err != nil && !isAlreadyRegistered(err) {
		return err
	}
	registered.Lock()
	defer registered.Unlock()
	if old, ok := registered.by[reg]; ok {
		reg.Unregister(old)
	}
	c := &stateCollector{reader: reader, now: time.Now}
	if err := reg.Register(c); err != nil {
		return err
	}
	registered.by[reg] = c
	return nil
}

var registered = struct {
	sync.Mutex
	by map[prometheus.Registerer]*stateCollector
}{by: map[prometheus.Registerer]*stateCollector{}}

func isAlreadyRegistered(err error) bool {
	var are prometheus.AlreadyRegisteredError
	return errors.As(err, &are)
}

var (
	benchLabels  = []string{"namespace", "benchmark"}
	targetLabels = []string{"namespace", "benchmark", "target", "engine", "storage", "stack"}
	dbLabels     = []string{"namespace", "database", "engine", "storage"}

	descBenchPhase = newDesc(Namespace+"_benchmark_phase",
		"1 for the phase the Benchmark is in, 0 for the others.", append(benchLabels, "phase"), nil)
	descBenchPhaseSeconds = newDesc(Namespace+"_benchmark_phase_duration_seconds",
		"Time the Benchmark spent in each phase it entered (status.phaseHistory); the current phase counts up to now.",
		append(benchLabels, "phase"), nil)
	descBenchIteration = newDesc(Namespace+"_benchmark_iteration",
		"The run (1-based) the Benchmark is in or last finished.", benchLabels, nil)
	descLiveTPS = newDesc(Namespace+"_benchmark_live_tps",
		"Transactions per second of the last report interval of a run in progress (status.targets[].live).", targetLabels, nil)
	descLiveLatency = newDesc(Namespace+"_benchmark_live_latency_milliseconds",
		"Latency at spec.percentile over the last report interval of a run in progress.", append(targetLabels, "percentile"), nil)
	descResultTPS = newDesc(Namespace+"_benchmark_result_tps",
		"Mean transactions per second over the finished runs (status.targets[].mean).", targetLabels, nil)
	descResultQPS = newDesc(Namespace+"_benchmark_result_qps",
		"Mean queries per second over the finished runs.", targetLabels, nil)
	descResultLatency = newDesc(Namespace+"_benchmark_result_latency_milliseconds",
		"Mean latency over the finished runs: avg, max, the spec's percentile, and p50/p95/p99/p99.9 of the histogram.",
		append(targetLabels, "quantile"), nil)
	descResultBytesPerTxn = newDesc(Namespace+"_benchmark_result_device_bytes_per_transaction",
		"Bytes the kernel counted as written to the target's device per transaction.", targetLabels, nil)
	descResultVsBaseline = newDesc(Namespace+"_benchmark_result_ratio_to_baseline",
		"Target / baseline for tps, latency (the spec's percentile) and device bytes per transaction.",
		append(targetLabels, "figure"), nil)
	descResultPValue = newDesc(Namespace+"_benchmark_result_p_value",
		"p-value of Welch's two-sided t-test of the target's runs against the baseline's, for tps and latency (the spec's "+
			"percentile): below 0.05 the difference is larger than the runs' noise.", append(targetLabels, "figure"), nil)
	descResultCI95 = newDesc(Namespace+"_benchmark_result_ci95_half_width",
		"Half-width of the 95% confidence interval of the mean over the runs, for tps and latency (milliseconds).",
		append(targetLabels, "figure"), nil)
	descResultDriveHost = newDesc(Namespace+"_benchmark_result_drive_host_bytes_per_transaction",
		"Bytes the drive itself counted as received per transaction over the runs (its SMART or FDP log; measured, spec.drive).",
		targetLabels, nil)
	descResultDriveMedia = newDesc(Namespace+"_benchmark_result_drive_media_bytes_per_transaction",
		"Bytes the drive counted as written to its flash per transaction over the runs (its OCP C0h or FDP log; measured). "+
			"Emulated drives (QEMU) have no FTL: there it equals the host bytes.",
		targetLabels, nil)
	descResultDriveWA = newDesc(Namespace+"_benchmark_result_drive_write_amplification",
		"The drive's media bytes over its host bytes over the runs (measured), with the logs they come from (smart+ocp, fdp).",
		append(targetLabels, "source"), nil)
	descResultModelledWA = newDesc(Namespace+"_benchmark_result_modelled_write_amplification",
		"Write amplification of a page-mapped FTL with greedy GC fed the device's block trace over the runs, at each "+
			"over-provisioning factor of spec.drive (modelled, not measured; conventional targets only).",
		append(targetLabels, "over_provisioning_percent"), nil)
	descTargetFailed = newDesc(Namespace+"_benchmark_target_failed",
		"1 when the target failed, with the reason from the fixed set (docs/benchmark.md).", append(targetLabels, "reason"), nil)

	descDBAvailable = newDesc(Namespace+"_database_available",
		"1 when the ZNSDatabase's Available condition is True.", dbLabels, nil)
	descDBZenFS = newDesc(Namespace+"_database_zenfs_bytes",
		"ZenFS space as the database's readiness probe last published it (status.filesystem.zenfs): free, used, reclaimable.",
		append(dbLabels, "kind"), nil)
	descDBZones = newDesc(Namespace+"_database_device_zones",
		"Zones of the database's zoned device (status.device.zones).", append(dbLabels, "device"), nil)
)

// familyNames are the series families this package defines, for checks of what dashboards query.
var familyNames = []string{Namespace + "_device_step_outcomes_total"}

func newDesc(name, help string, labels []string, constLabels prometheus.Labels) *prometheus.Desc {
	familyNames = append(familyNames, name)
	return prometheus.NewDesc(name, help, labels, constLabels)
}

// FamilyNames lists every series family the operator adds to controller-runtime's.
func FamilyNames() []string { return append([]string(nil), familyNames...) }

// stateCollector turns the objects in the cache into series at scrape time.
type stateCollector struct {
	reader client.Reader
	now    func() time.Time
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBenchPhase, descBenchPhaseSeconds, descBenchIteration, descLiveTPS,
		descLiveLatency, descResultTPS, descResultQPS, descResultLatency, descResultBytesPerTxn, descResultVsBaseline, descResultPValue, descResultCI95,
		descResultDriveHost, descResultDriveMedia, descResultDriveWA, descResultModelledWA, descTargetFailed, descDBAvailable, descDBZenFS, descDBZones} {
		ch <- d
	}
	for _, d := range ycsbDescs {
		ch <- d
	}
	for _, d := range fioDescs {
		ch <- d
	}
}

// scrapeTimeout bounds the cache reads of one scrape; the cache answers from memory, so this only matters before it
// has synced.
const scrapeTimeout = 5 * time.Second

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	var dbs v1alpha1.ZNSDatabaseList
	if err := c.reader.List(ctx, &dbs); err != nil {
		ch <- prometheus.NewInvalidMetric(descDBAvailable, err)
	}
	for i := range dbs.Items {
		collectDatabase(ch, &dbs.Items[i])
	}
	var benches v1alpha1.BenchmarkList
	if err := c.reader.List(ctx, &benches); err != nil {
		ch <- prometheus.NewInvalidMetric(descBenchPhase, err)
	}
	now := c.now()
	for i := range benches.Items {
		collectBenchmark(ch, &benches.Items[i], now)
	}
}

// The phases a Benchmark can be in, in order: every one is exported so that a dashboard's state timeline has a
// series per phase.
var phases = []v1alpha1.BenchmarkPhase{
	v1alpha1.BenchmarkPending, v1alpha1.BenchmarkWaitingForTargets, v1alpha1.BenchmarkPreconditioning,
	v1alpha1.BenchmarkPreparing, v1alpha1.BenchmarkVerifying, v1alpha1.BenchmarkRunning,
	v1alpha1.BenchmarkCompleted, v1alpha1.BenchmarkFailed,
}

func collectBenchmark(ch chan<- prometheus.Metric, b *v1alpha1.Benchmark, now time.Time) {
	labels := []string{b.Namespace, b.Name}
	for _, p := range phases {
		v := 0.0
		if b.Status.Phase == p {
			v = 1
		}
		ch <- gauge(descBenchPhase, v, append(labels, string(p))...)
	}
	for phase, d := range PhaseDurations(b.Status.PhaseHistory, b.Status.Phase, now) {
		ch <- gauge(descBenchPhaseSeconds, d.Seconds(), append(labels, string(phase))...)
	}
	if b.Status.Iteration > 0 {
		ch <- gauge(descBenchIteration, float64(b.Status.Iteration), labels...)
	}
	percentile := strconv.Itoa(int(b.Spec.Percentile))
	for i := range b.Status.Targets {
		t := &b.Status.Targets[i]
		tl := []string{b.Namespace, b.Name, t.Name, t.Engine, t.Storage, Stack(t.Engine, t.Storage)}
		if t.State == v1alpha1.TargetFailed {
			ch <- gauge(descTargetFailed, 1, append(tl, t.Reason)...)
		}
		if b.Status.Phase == v1alpha1.BenchmarkRunning && t.Live != nil {
			emit(ch, descLiveTPS, t.Live.TPS, tl...)
			emit(ch, descLiveLatency, t.Live.LatencyPctMs, append(tl, percentile)...)
		}
		if m := t.Mean; m != nil {
			emit(ch, descResultTPS, m.TPS, tl...)
			emit(ch, descResultQPS, m.QPS, tl...)
			emit(ch, descResultBytesPerTxn, m.BytesPerTransaction, tl...)
			// The spec's percentile is usually one the histogram also gives (95, 99): then one series, the histogram's.
			quantiles := map[string]string{"avg": m.LatencyAvgMs, "max": m.LatencyMaxMs, "p" + percentile: m.LatencyPctMs}
			for q, v := range map[string]string{"p50": m.LatencyP50Ms, "p95": m.LatencyP95Ms, "p99": m.LatencyP99Ms, "p99.9": m.LatencyP999Ms} {
				if v != "" {
					quantiles[q] = v
				}
			}
			for q, v := range quantiles {
				emit(ch, descResultLatency, v, append(tl, q)...)
			}
		}
		collectDrive(ch, t.DriveMean, tl)
		collectYCSB(ch, t, tl)
		collectFio(ch, t, tl)
		if r := t.VsBaseline; r != nil {
			emit(ch, descResultVsBaseline, r.TPS, append(tl, "tps")...)
			emit(ch, descResultVsBaseline, r.LatencyPct, append(tl, "latency")...)
			emit(ch, descResultVsBaseline, r.BytesPerTransaction, append(tl, "device_bytes_per_transaction")...)
			emit(ch, descResultPValue, r.TPSPValue, append(tl, "tps")...)
			emit(ch, descResultPValue, r.LatencyPctPValue, append(tl, "latency")...)
		}
		if s := t.AcrossRuns; s != nil {
			emit(ch, descResultCI95, s.TPSCI95, append(tl, "tps")...)
			emit(ch, descResultCI95, s.LatencyPctCI95Ms, append(tl, "latency")...)
		}
	}
}

// collectDrive exports the drive's figures over a target's runs: measured and modelled in separate families, and
// nothing for a figure the status lacks.
func collectDrive(ch chan<- prometheus.Metric, d *v1alpha1.DriveFigures, tl []string) {
	if d == nil {
		return
	}
	if c := d.Counters; c != nil {
		emit(ch, descResultDriveHost, c.HostBytesPerTransaction, tl...)
		emit(ch, descResultDriveMedia, c.MediaBytesPerTransaction, tl...)
		emit(ch, descResultDriveWA, c.WriteAmplification, append(tl, c.MediaSource)...)
	}
	for _, m := range d.Modelled {
		emit(ch, descResultModelledWA, m.WriteAmplification, append(tl, strconv.Itoa(int(m.OverProvisioningPercent)))...)
	}
}

func collectDatabase(ch chan<- prometheus.Metric, db *v1alpha1.ZNSDatabase) {
	labels := []string{db.Namespace, db.Name, string(db.Spec.Engine), db.Status.Storage}
	available := 0.0
	if meta.IsStatusConditionTrue(db.Status.Conditions, v1alpha1.ConditionAvailable) {
		available = 1
	}
	ch <- gauge(descDBAvailable, available, labels...)
	if z := db.Status.ZenFSSpace(); z != nil && z.Free != nil {
		ch <- gauge(descDBZenFS, z.Free.AsApproximateFloat64(), append(labels, "free")...)
		if z.Used != nil {
			ch <- gauge(descDBZenFS, z.Used.AsApproximateFloat64(), append(labels, "used")...)
		}
		if z.Reclaimable != nil {
			ch <- gauge(descDBZenFS, z.Reclaimable.AsApproximateFloat64(), append(labels, "reclaimable")...)
		}
	}
	if d := db.Status.Device; d != nil && d.Zones > 0 {
		ch <- gauge(descDBZones, float64(d.Zones), append(labels, d.Path)...)
	}
}

// Stack names a target's engine on its storage the way dashboards group tenants: "rocksdb/zoned".
func Stack(engine, storage string) string {
	if storage == "" {
		return engine
	}
	return engine + "/" + storage
}

// PhaseDurations is the time spent in each phase of history, the last one up to now unless the Benchmark has ended.
// A phase entered twice (a retried wait) adds up.
func PhaseDurations(history []v1alpha1.PhaseTransition, current v1alpha1.BenchmarkPhase, now time.Time) map[v1alpha1.BenchmarkPhase]time.Duration {
	out := map[v1alpha1.BenchmarkPhase]time.Duration{}
	ended := current == v1alpha1.BenchmarkCompleted || current == v1alpha1.BenchmarkFailed
	for i, h := range history {
		var d time.Duration
		switch {
		case i+1 < len(history):
			d = history[i+1].Time.Sub(h.Time.Time)
		case !ended:
			d = now.Sub(h.Time.Time)
		}
		// A terminal phase has no duration (it is where the Benchmark stays) but is listed, at 0.
		out[h.Phase] += max(d, 0)
	}
	return out
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

// emit exports a decimal string from status; an empty or unparsable figure is left out rather than shown as 0.
func emit(ch chan<- prometheus.Metric, d *prometheus.Desc, value string, labels ...string) {
	if value == "" {
		return
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return
	}
	ch <- gauge(d, v, labels...)
}

// Lookup finds, among gathered or scraped families, the value of the first series of family name whose labels
// include want. Tests and checks of a scrape use it; ok is false when there is none.
func Lookup(fams map[string]*dto.MetricFamily, name string, want map[string]string) (value float64, ok bool) {
next:
	for _, m := range fams[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}
