package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// Run is one target's run: its figures from status and its interval series from the ConfigMap the status
// names (nil when that ConfigMap is gone or was never written).
type Run struct {
	Target    string
	Iteration int32
	Threads   int32
	// Workload is the run's sysbench script (from the spec's plan for runs recorded without it).
	Workload string
	// Alone marks a run of the target alone (spec.measureInterference).
	Alone   bool
	Figures v1alpha1.IterationResult
	Series  *benchresult.Series
}

// Data is one Benchmark with the series of its runs.
type Data struct {
	Benchmark *v1alpha1.Benchmark
	Runs      []Run
	// Missing names the series ConfigMaps that status names but that were not found.
	Missing []string
}

// Collect joins a Benchmark's status with its series ConfigMaps (the ones status.targets[].iterations[] name).
func Collect(b *v1alpha1.Benchmark, cms []corev1.ConfigMap) (Data, error) {
	byName := map[string]*corev1.ConfigMap{}
	for i := range cms {
		byName[cms[i].Name] = &cms[i]
	}
	d := Data{Benchmark: b}
	for _, ts := range b.Status.Targets {
		for _, it := range ts.Iterations {
			r := Run{Target: ts.Name, Iteration: it.Iteration, Threads: it.Threads, Workload: runWorkload(b, &it),
				Alone: runAlone(b, ts.Name, &it), Figures: it}
			if r.Threads == 0 { // recorded before thread sweeps existed
				r.Threads, _ = b.Spec.RunThreads(it.Iteration)
			}
			if it.SeriesConfigMap != "" {
				cm, ok := byName[it.SeriesConfigMap]
				if !ok {
					d.Missing = append(d.Missing, it.SeriesConfigMap)
				} else {
					var s benchresult.Series
					if err := json.Unmarshal([]byte(cm.Data["series.json"]), &s); err != nil {
						return d, fmt.Errorf("ConfigMap %s: series.json: %w", cm.Name, err)
					}
					if s.Len() != len(s.TPS) || s.Len() != len(s.LatencyMS) {
						return d, fmt.Errorf("ConfigMap %s: series.json has columns of different lengths", cm.Name)
					}
					r.Series = &s
				}
			}
			d.Runs = append(d.Runs, r)
		}
	}
	sort.SliceStable(d.Runs, func(i, j int) bool { return d.Runs[i].Iteration < d.Runs[j].Iteration })
	return d, nil
}

// Export is the JSON document of `kubectl zns export --format json`: figures are numbers (null when absent).
type Export struct {
	Namespace string `json:"namespace"`
	Benchmark string `json:"benchmark"`
	Phase     string `json:"phase"`
	// Workload names what the runs ran (spec.workloads joined by commas), and Workloads lists spec.workloads.
	// They and tables to percentile are left out for a fio Benchmark: it runs no database, but the API server
	// defaults them on every Benchmark.
	Workload  string   `json:"workload,omitempty"`
	Workloads []string `json:"workloads,omitempty"`
	// MeasureInterference: each target ran alone before the runs together (runs[].alone, targets[].alone).
	MeasureInterference bool   `json:"measureInterference,omitempty"`
	Tables              int32  `json:"tables,omitempty"`
	TableSize           int64  `json:"tableSize,omitempty"`
	Threads             int32  `json:"threads,omitempty"`
	DurationSec         int32  `json:"durationSeconds,omitempty"`
	Percentile          int32  `json:"percentile,omitempty"`
	Baseline            string `json:"baseline"`
	Result              string `json:"result,omitempty"`
	// DriveSources, with drive figures, says what is measured and what modelled.
	DriveSources map[string]string `json:"driveSources,omitempty"`
	Targets      []ExportTarget    `json:"targets"`
	Runs         []ExportRun       `json:"runs"`
	// Tool and YCSB are spec.tool and spec.ycsb: with ycsb, the targets, sweep points and runs carry each
	// operation type's figures (operations).
	Tool string             `json:"tool,omitempty"`
	YCSB *v1alpha1.YCSBSpec `json:"ycsb,omitempty"`
	// Fio is spec.fio: with fio the targets carry each device's runs (targets[].fio) and there are no runs[].
	Fio *v1alpha1.FioSpec `json:"fio,omitempty"`
}

// ExportTarget is one target's summary.
type ExportTarget struct {
	Name    string `json:"name"`
	Stack   string `json:"stack"`
	Engine  string `json:"engine,omitempty"`
	Storage string `json:"storage,omitempty"`
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Rows    int64  `json:"rows,omitempty"`
	// Zones is a zoned target's zone geometry.
	Zones *v1alpha1.ZoneGeometry `json:"zones,omitempty"`
	// Drive is the drive under the target, and SharesDriveWith the other targets on it.
	Drive           string   `json:"drive,omitempty"`
	SharesDriveWith []string `json:"sharesDriveWith,omitempty"`
	// Client is where the target's run clients ran (spec.clients) and whether they shared its database's node.
	Client     *v1alpha1.ClientNodes `json:"client,omitempty"`
	Mean       map[string]*float64   `json:"mean,omitempty"`
	AcrossRuns map[string]*float64   `json:"acrossRuns,omitempty"`
	VsBaseline map[string]*float64   `json:"vsBaseline,omitempty"`
	// Verdicts says whether each difference from the baseline is larger than the runs' noise.
	Verdicts map[string]string  `json:"verdicts,omitempty"`
	Notes    []string           `json:"notes,omitempty"`
	Sweep    []ExportSweepPoint `json:"sweep,omitempty"`
	// Workloads are, with spec.workloads, each workload's figures (Mean and the others are the first's).
	Workloads []ExportWorkloadPoint `json:"workloads,omitempty"`
	// Alone is, with spec.measureInterference, the target's runs alone and the interference, together / alone
	// (Mean and the others are of its runs together).
	Alone *ExportAlone       `json:"alone,omitempty"`
	Size  *v1alpha1.DataSize `json:"size,omitempty"`
	// The drive's figures of the precondition, the prepare and the runs taken together (spec.drive), and the
	// usable capacity.
	PreconditionDrive *ExportDrive               `json:"preconditionDrive,omitempty"`
	PrepareDrive      *ExportDrive               `json:"prepareDrive,omitempty"`
	DriveMean         *ExportDrive               `json:"driveMean,omitempty"`
	Capacity          *ExportCapacity            `json:"capacity,omitempty"`
	YCSB              *v1alpha1.YCSBTargetStatus `json:"ycsb,omitempty"`
	// Fio is a fio Benchmark's device and runs, a failed target's too: the runs before its failure are
	// measurements, and what it found on the device says why it was refused.
	Fio *v1alpha1.FioTargetStatus `json:"fio,omitempty"`
}

// ExportSweepPoint is one target's mean and ratios at one thread count of a sweep.
type ExportSweepPoint struct {
	Threads    int32                    `json:"threads"`
	Mean       map[string]*float64      `json:"mean"`
	AcrossRuns map[string]*float64      `json:"acrossRuns,omitempty"`
	VsBaseline map[string]*float64      `json:"vsBaseline,omitempty"`
	Verdicts   map[string]string        `json:"verdicts,omitempty"`
	Operations []v1alpha1.YCSBOperation `json:"operations,omitempty"`
}

// ExportRun is one run with its interval series.
type ExportRun struct {
	Target       string                   `json:"target"`
	Iteration    int32                    `json:"iteration"`
	Threads      int32                    `json:"threads"`
	Workload     string                   `json:"workload"`
	Alone        bool                     `json:"alone,omitempty"`
	StartTime    string                   `json:"startTime,omitempty"`
	EndTime      string                   `json:"endTime,omitempty"`
	Transactions int64                    `json:"transactions,omitempty"`
	DataBytes    int64                    `json:"dataBytes,omitempty"`
	Figures      map[string]*float64      `json:"figures"`
	Drive        *ExportDrive             `json:"drive,omitempty"`
	Series       *benchresult.Series      `json:"series"`
	Operations   []v1alpha1.YCSBOperation `json:"operations,omitempty"`
}

// figureColumns are RunFigures in the order of the CSV columns, with their export names.
var figureColumns = []column[v1alpha1.RunFigures]{
	{"tps", func(f *v1alpha1.RunFigures) string { return f.TPS }},
	{"qps", func(f *v1alpha1.RunFigures) string { return f.QPS }},
	{"latency_avg_ms", func(f *v1alpha1.RunFigures) string { return f.LatencyAvgMs }},
	{"latency_pct_ms", func(f *v1alpha1.RunFigures) string { return f.LatencyPctMs }},
	{"latency_max_ms", func(f *v1alpha1.RunFigures) string { return f.LatencyMaxMs }},
	{"latency_p50_ms", func(f *v1alpha1.RunFigures) string { return f.LatencyP50Ms }},
	{"latency_p95_ms", func(f *v1alpha1.RunFigures) string { return f.LatencyP95Ms }},
	{"latency_p99_ms", func(f *v1alpha1.RunFigures) string { return f.LatencyP99Ms }},
	{"latency_p999_ms", func(f *v1alpha1.RunFigures) string { return f.LatencyP999Ms }},
	{"errors_per_s", func(f *v1alpha1.RunFigures) string { return f.ErrorsPerSec }},
	{"reconnects_per_s", func(f *v1alpha1.RunFigures) string { return f.ReconnectsPerSec }},
	{"tps_reldev_pct", func(f *v1alpha1.RunFigures) string { return f.TPSRelDevPct }},
	{"latency_reldev_pct", func(f *v1alpha1.RunFigures) string { return f.LatencyRelDevPct }},
	{"device_written_bytes", func(f *v1alpha1.RunFigures) string { return f.DeviceWrittenBytes }},
	{"bytes_per_tx", func(f *v1alpha1.RunFigures) string { return f.BytesPerTransaction }},
}

var ratioColumns = []column[v1alpha1.Ratios]{
	{"tps", func(r *v1alpha1.Ratios) string { return r.TPS }},
	{"latency_pct", func(r *v1alpha1.Ratios) string { return r.LatencyPct }},
	{"latency_avg", func(r *v1alpha1.Ratios) string { return r.LatencyAvg }},
	{"bytes_per_tx", func(r *v1alpha1.Ratios) string { return r.BytesPerTransaction }},
	{"best_tps", func(r *v1alpha1.Ratios) string { return r.BestTPS }},
	{"best_latency_pct", func(r *v1alpha1.Ratios) string { return r.BestLatencyPct }},
	{"tps_p", func(r *v1alpha1.Ratios) string { return r.TPSPValue }},
	{"latency_pct_p", func(r *v1alpha1.Ratios) string { return r.LatencyPctPValue }},
}

// verdictColumns are the significance test's verdicts, words rather than figures.
var verdictColumns = []column[v1alpha1.Ratios]{
	{"tps_verdict", func(r *v1alpha1.Ratios) string { return string(r.TPSVerdict) }},
	{"latency_pct_verdict", func(r *v1alpha1.Ratios) string { return string(r.LatencyPctVerdict) }},
}

// spreadColumns are RunSpread: how a target's runs differ from one another.
var spreadColumns = []column[v1alpha1.RunSpread]{
	{"runs", func(s *v1alpha1.RunSpread) string { return strconv.Itoa(int(s.Runs)) }},
	{"best_iteration", func(s *v1alpha1.RunSpread) string {
		if s.BestIteration == 0 {
			return ""
		}
		return strconv.Itoa(int(s.BestIteration))
	}},
	{"best_tps", func(s *v1alpha1.RunSpread) string { return s.BestTPS }},
	{"best_latency_pct_ms", func(s *v1alpha1.RunSpread) string { return s.BestLatencyPctMs }},
	{"tps_ci95", func(s *v1alpha1.RunSpread) string { return s.TPSCI95 }},
	{"latency_pct_ci95_ms", func(s *v1alpha1.RunSpread) string { return s.LatencyPctCI95Ms }},
	{"tps_run_reldev_pct", func(s *v1alpha1.RunSpread) string { return s.TPSRunRelDevPct }},
}

// column is one export column of a status type: its name and how to read it.
type column[T any] struct {
	name string
	get  func(*T) string
}

// values reads every column of v (an empty string for each when v is nil, as a CSV row wants).
func values[T any](v *T, cols []column[T]) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		if v != nil {
			out[i] = c.get(v)
		}
	}
	return out
}

// numbers is v's columns as JSON numbers; a missing figure is null when withNulls, else left out.
func numbers[T any](v *T, cols []column[T], withNulls bool) map[string]*float64 {
	if v == nil {
		return nil
	}
	out := map[string]*float64{}
	for _, c := range cols {
		if x, ok := num(c.get(v)); ok {
			out[c.name] = &x
		} else if withNulls {
			out[c.name] = nil
		}
	}
	return out
}

func verdictMap(r *v1alpha1.Ratios) map[string]string {
	if r == nil {
		return nil
	}
	out := map[string]string{}
	for _, c := range verdictColumns {
		if v := c.get(r); v != "" {
			out[c.name] = v
		}
	}
	return out
}

func spreadMap(s *v1alpha1.RunSpread) map[string]*float64  { return numbers(s, spreadColumns, false) }
func figureMap(f *v1alpha1.RunFigures) map[string]*float64 { return numbers(f, figureColumns, true) }
func ratioMap(r *v1alpha1.Ratios) map[string]*float64      { return numbers(r, ratioColumns, false) }

// ToExport builds the JSON document.
func ToExport(d Data) Export {
	b := d.Benchmark
	e := Export{Namespace: b.Namespace, Benchmark: b.Name, Phase: string(b.Status.Phase), Workload: b.Spec.WorkloadLabel(),
		Workloads: b.Spec.Workloads, MeasureInterference: b.Spec.MeasureInterference,
		Tables: b.Spec.Tables, TableSize: b.Spec.TableSize, Threads: b.Spec.Threads, DurationSec: b.Spec.DurationSeconds,
		Percentile: b.Spec.Percentile, Baseline: b.Status.Baseline, Result: ResultLine(b),
		Targets: []ExportTarget{}, Runs: []ExportRun{}, Tool: string(b.Spec.Tool), YCSB: b.Spec.YCSB, Fio: b.Spec.Fio}
	if b.IsFio() {
		e.Workload, e.Workloads = "", nil
		e.Tables, e.TableSize, e.Threads, e.DurationSec, e.Percentile = 0, 0, 0, 0, 0
	}
	for _, ts := range b.Status.Targets {
		t := ExportTarget{Name: ts.Name, Stack: Stack(ts), Engine: ts.Engine, Storage: ts.Storage, State: string(ts.State),
			Reason: ts.Reason, Message: ts.Message, Rows: ts.Rows, Zones: ts.Zones, Drive: ts.Drive, SharesDriveWith: ts.SharesDriveWith, Client: ts.Client, Notes: ts.Notes, Size: ts.Size,
			PreconditionDrive: exportDrive(ts.PreconditionDrive), PrepareDrive: exportDrive(ts.PrepareDrive),
			DriveMean: exportDrive(ts.DriveMean), Capacity: exportCapacity(ts.Capacity), Fio: ts.Fio}
		if t.PreconditionDrive != nil || t.PrepareDrive != nil || t.DriveMean != nil {
			e.DriveSources = DriveSourcesExport
		}
		if ts.State != v1alpha1.TargetFailed {
			t.Mean, t.AcrossRuns = figureMap(ts.Mean), spreadMap(ts.AcrossRuns)
			t.VsBaseline, t.Verdicts = ratioMap(ts.VsBaseline), verdictMap(ts.VsBaseline)
			for _, p := range ts.Sweep {
				t.Sweep = append(t.Sweep, ExportSweepPoint{Threads: p.Threads, Mean: figureMap(p.Mean), AcrossRuns: spreadMap(p.AcrossRuns),
					VsBaseline: ratioMap(p.VsBaseline), Verdicts: verdictMap(p.VsBaseline), Operations: p.Operations})
			}
			t.Workloads = exportWorkloads(ts)
			t.Alone = exportAlone(ts)
			t.YCSB = ts.YCSB
		}
		e.Targets = append(e.Targets, t)
	}
	for _, r := range d.Runs {
		e.Runs = append(e.Runs, ExportRun{Target: r.Target, Iteration: r.Iteration, Threads: r.Threads, Workload: r.Workload, Alone: r.Alone,
			StartTime: r.Figures.StartTime,
			EndTime:   r.Figures.EndTime, Transactions: r.Figures.Transactions, DataBytes: r.Figures.DataBytes, Figures: figureMap(&r.Figures.RunFigures),
			Drive: exportDrive(r.Figures.Drive), Series: r.Series, Operations: r.Figures.Operations})
		if r.Figures.Drive != nil {
			e.DriveSources = DriveSourcesExport
		}
	}
	return e
}

// JSON writes the export document, indented.
func JSON(w io.Writer, d Data) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ToExport(d))
}

// SummaryCSV writes one row per target and run plus one "mean" row per target (per thread count of a sweep, per
// workload of spec.workloads; with spec.measureInterference the mean of the runs together, then an "alone-mean"
// row of the runs alone whose ratio columns are together / alone): tidy data, one header line.
func SummaryCSV(w io.Writer, d Data) error {
	b := d.Benchmark
	if err := notForFio(b, "database runs to summarize"); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	head := []string{"benchmark", "target", "stack", "state", "reason", "threads", "iteration", "percentile"}
	for _, c := range figureColumns {
		head = append(head, c.name)
	}
	for _, c := range ratioColumns {
		head = append(head, c.name+"_vs_baseline")
	}
	for _, c := range verdictColumns {
		head = append(head, c.name)
	}
	// On mean rows: how the runs differ (runs, best run, confidence intervals).
	for _, c := range spreadColumns {
		head = append(head, c.name)
	}
	// data_bytes: after that run; on mean rows, the size after the prepare and after the runs.
	head = append(head, "data_bytes", "data_after_prepare_bytes", "data_after_runs_bytes", "data_source")
	// The drive's figures (a run's, or on mean rows the runs' together) and, on mean rows, the usable capacity.
	ops := ModelOPs(b)
	head = append(head, driveHead(ops)...)
	// A zoned target's zone geometry, on every row of the target (zone size is a variable of the comparison).
	head = append(head, "zone_count", "zone_size_bytes", "zone_capacity_bytes", "max_open_zones", "max_active_zones")
	// The drive under the target and the other targets on it (separated by spaces).
	head = append(head, "drive", "shares_drive_with")
	// The run's workload; on mean rows the workload the mean is of (last, so that columns keep their places).
	head = append(head, "workload")
	// Whether the run was of the target alone (spec.measureInterference); true on the alone-mean row.
	head = append(head, "alone")
	if err := cw.Write(head); err != nil {
		return err
	}
	pct := strconv.Itoa(int(b.Spec.Percentile))
	size := func(n int64) string {
		if n <= 0 {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	row := func(ts v1alpha1.TargetStatus, threads int32, workload, iteration string, alone bool, f *v1alpha1.RunFigures, r *v1alpha1.Ratios,
		spread *v1alpha1.RunSpread, runBytes int64, drive *v1alpha1.DriveFigures) error {
		rec := []string{b.Name, ts.Name, Stack(ts), string(ts.State), ts.Reason, strconv.Itoa(int(threads)), iteration, pct}
		rec = append(rec, values(f, figureColumns)...)
		rec = append(rec, values(r, ratioColumns)...)
		rec = append(rec, values(r, verdictColumns)...)
		rec = append(rec, values(spread, spreadColumns)...)
		rec = append(rec, size(runBytes))
		if iteration == "mean" && ts.Size != nil {
			rec = append(rec, size(ts.Size.AfterPrepareBytes), size(ts.Size.AfterRunBytes), ts.Size.Source)
		} else {
			rec = append(rec, "", "", "")
		}
		var capacity *v1alpha1.TargetCapacity
		if iteration == "mean" {
			capacity = ts.Capacity
		}
		rec = append(rec, driveRecord(drive, capacity, ops)...)
		rec = append(rec, zoneRecord(ts.Zones)...)
		rec = append(rec, ts.Drive, strings.Join(ts.SharesDriveWith, " "), workload, aloneCell(alone))
		return cw.Write(rec)
	}
	for _, ts := range b.Status.Targets {
		for i := range ts.Iterations {
			it := &ts.Iterations[i]
			th := it.Threads
			if th == 0 {
				th, _ = b.Spec.RunThreads(it.Iteration)
			}
			if err := row(ts, th, runWorkload(b, it), strconv.Itoa(int(it.Iteration)), runAlone(b, ts.Name, it), &it.RunFigures, nil, nil,
				it.DataBytes, it.Drive); err != nil {
				return err
			}
		}
		if ts.State == v1alpha1.TargetFailed {
			if err := row(ts, b.Spec.Threads, b.Spec.WorkloadLabel(), "mean", false, nil, nil, nil, 0, nil); err != nil {
				return err
			}
			continue
		}
		if len(ts.Sweep) > 0 { // a mean per thread count (the target's mean is the last one's, and so is its drive mean)
			for i, p := range ts.Sweep {
				var drive *v1alpha1.DriveFigures
				if i == len(ts.Sweep)-1 {
					drive = ts.DriveMean
				}
				if err := row(ts, p.Threads, meanWorkload(b), "mean", false, p.Mean, p.VsBaseline, p.AcrossRuns, 0, drive); err != nil {
					return err
				}
			}
			continue
		}
		if len(ts.Workloads) > 0 { // a mean per workload (the target's own are the first's)
			for _, p := range ts.Workloads {
				if err := row(ts, b.Spec.Threads, p.Workload, "mean", false, p.Mean, p.VsBaseline, p.AcrossRuns, 0, p.DriveMean); err != nil {
					return err
				}
			}
			continue
		}
		if err := row(ts, b.Spec.Threads, meanWorkload(b), "mean", false, ts.Mean, ts.VsBaseline, ts.AcrossRuns, 0, ts.DriveMean); err != nil {
			return err
		}
		if a := ts.Alone; a != nil && a.Mean != nil { // the runs alone; the ratio columns are together / alone
			if err := row(ts, b.Spec.Threads, meanWorkload(b), aloneMean, true, a.Mean, a.Interference, a.AcrossRuns, 0, nil); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// SeriesCSV writes every interval of every run: one row per target, run and interval (the run's workload, then
// whether the target ran alone, last).
func SeriesCSV(w io.Writer, d Data) error {
	if err := notForFio(d.Benchmark, "interval series"); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"benchmark", "target", "threads", "iteration", "time_s", "tps", "qps", "latency_ms", "percentile",
		"errors_per_s", "reconnects_per_s", "workload", "alone"}); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range d.Runs {
		if r.Series == nil {
			continue
		}
		s := r.Series
		for i := 0; i < s.Len(); i++ {
			if err := cw.Write([]string{d.Benchmark.Name, r.Target, strconv.Itoa(int(r.Threads)), strconv.Itoa(int(r.Iteration)),
				f(s.Time[i]), f(s.TPS[i]), f(s.QPS[i]), f(s.LatencyMS[i]), f(s.Percentile), f(s.ErrorsPerSec[i]), f(s.ReconnectsPerSec[i]), r.Workload,
				aloneCell(r.Alone)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// zoneRecord is the zone columns of a target's CSV rows, empty for a target without zones.
func zoneRecord(g *v1alpha1.ZoneGeometry) []string {
	if g == nil {
		return []string{"", "", "", "", ""}
	}
	bytes := func(q *resource.Quantity) string {
		if q == nil {
			return ""
		}
		return strconv.FormatInt(q.Value(), 10)
	}
	return []string{strconv.FormatInt(g.Count, 10), bytes(g.Size), bytes(g.Capacity), strconv.FormatInt(g.MaxOpen, 10),
		strconv.FormatInt(g.MaxActive, 10)}
}
