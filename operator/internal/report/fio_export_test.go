package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
)

// fioData is testdata/fio.yaml (assembled around real fio output, testdata/README.md) as the plugin reads it.
func fioData(t *testing.T) Data {
	t.Helper()
	d, err := Collect(load(t, "fio"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The results in fio.yaml are what the operator makes of the fio captures, so that the figures the export tests
// expect are real fio output, run through the same conversion as a Job's report.
func TestFioFixtureIsTheCaptures(t *testing.T) {
	run := func(p fio.Profile, point, file string) fio.Result {
		raw, err := os.ReadFile(filepath.Join("..", "fio", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		r, err := fio.ResultOf(fio.Step{Profile: p, Point: point}, raw)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return r
	}
	want := map[string]*v1alpha1.FioTargetStatus{
		"loop": benchplan.FioTargetStatus(fio.RunnerReport{Device: "loop1", Found: "empty", Results: []fio.Result{
			run(fio.ProfileSeqWriteOpenZones, "", "profile-seqwrite-open-zones.json"),
			run(fio.ProfileRandRead4K, "", "profile-randread-4k.json"),
			run(fio.ProfileRandReadUnderWrites, "", "profile-randread-rate-limited-writes.json"),
			run(fio.ProfileSeqRead128KQD32, "", "profile-seqread-128k-qd32.json"),
			run(fio.ProfileGrid, fio.PointName(4096, 1, 8), "profile-grid-bs4096-jobs1-qd8.json"),
			run(fio.ProfileGrid, fio.PointName(4096, 2, 8), "profile-grid-bs4096-jobs2-qd8.json"),
		}}, "dev-host", ""),
		"zoned": benchplan.FioTargetStatus(fio.RunnerReport{Device: "nullb0", Zoned: true, Found: "empty", Results: []fio.Result{
			run(fio.ProfileSeqWriteOpenZones, "", "zbd-seqwrite-nullb0.json"),
			run(fio.ProfileRandRead4K, "", "zbd-randread-nullb0.json"),
		}}, "zns-guest", ""),
	}
	b := load(t, "fio")
	if len(b.Status.Targets) != len(want) {
		t.Fatalf("%d targets in fio.yaml, want %d", len(b.Status.Targets), len(want))
	}
	for _, ts := range b.Status.Targets {
		if d := cmp.Diff(want[ts.Name], ts.Fio); d != "" {
			t.Errorf("target %s of fio.yaml is not its captures (-captures +fio.yaml):\n%s", ts.Name, d)
		}
	}
}

// readFioCSV writes d's fio CSV and reads it back without the csv package's own check of the row widths, so that
// the tests see rows of another width than the header's.
func readFioCSV(t *testing.T, d Data) [][]string {
	t.Helper()
	var out bytes.Buffer
	if err := FioCSV(&out, d); err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(&out)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("no header")
	}
	return recs
}

// A fio Benchmark's CSV has one row per target, run and direction, in the order they ran, read before write; a
// failed target's runs before its failure are there; every figure is the status's, unrounded.
func TestFioCSV(t *testing.T) {
	recs := readFioCSV(t, fioData(t))
	wantHead := "benchmark,target,node,device,zoned,profile,point,direction,bytes,bytes_per_sec,iops,latency_p50_us,latency_p99_us,latency_p999_us"
	if got := strings.Join(recs[0], ","); got != wantHead {
		t.Fatalf("header\n%s\nwant\n%s", got, wantHead)
	}
	var keys []string
	for _, r := range recs[1:] {
		if len(r) != len(recs[0]) {
			t.Fatalf("row of %d columns under a header of %d: %q", len(r), len(recs[0]), r)
		}
		keys = append(keys, strings.Join(r[1:8], "|"))
	}
	wantKeys := []string{
		"loop|dev-host|loop1|false|seqwrite-open-zones||write",
		"loop|dev-host|loop1|false|randread-4k||read",
		"loop|dev-host|loop1|false|randread-rate-limited-writes||read",
		"loop|dev-host|loop1|false|randread-rate-limited-writes||write",
		"loop|dev-host|loop1|false|seqread-128k-qd32||read",
		"loop|dev-host|loop1|false|grid|bs=4096 jobs=1 qd=8|read",
		"loop|dev-host|loop1|false|grid|bs=4096 jobs=2 qd=8|read",
		"zoned|zns-guest|nullb0|true|seqwrite-open-zones||write",
		"zoned|zns-guest|nullb0|true|randread-4k||read",
	}
	if d := cmp.Diff(wantKeys, keys); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	rows := map[string]bool{}
	for _, r := range recs[1:] {
		rows[strings.Join(r, ",")] = true
	}
	for _, want := range []string{
		"raw,loop,dev-host,loop1,false,randread-rate-limited-writes,,write,33554432,16768831,127.94,112.128,856.064,978.944",
		"raw,loop,dev-host,loop1,false,grid,bs=4096 jobs=2 qd=8,read,1378144256,688727764,168146.43,69.12,522.24,2932.736",
		"raw,zoned,zns-guest,nullb0,true,seqwrite-open-zones,,write,134217728,93662057,714.58,38535.168,100139.008,112721.92",
	} {
		if !rows[want] {
			t.Errorf("no row %s", want)
		}
	}
}

// A direction the status has only some figures of still fills every column (empty cells), and a target without
// fio status (one that failed before its Job ran) has no row: each row is as wide as the header.
func TestFioCSVRowsAsWideAsHeader(t *testing.T) {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "sparse"},
		Spec: v1alpha1.BenchmarkSpec{Tool: v1alpha1.ToolFio, Fio: &v1alpha1.FioSpec{Profiles: []v1alpha1.FioProfile{v1alpha1.FioRandReadUnderWrites}}},
		Status: v1alpha1.BenchmarkStatus{Targets: []v1alpha1.TargetStatus{
			{Name: "dev", State: v1alpha1.TargetDone, Fio: &v1alpha1.FioTargetStatus{Device: "nullb1", Results: []v1alpha1.FioRunResult{
				{Profile: v1alpha1.FioRandReadUnderWrites, Read: &v1alpha1.FioDirection{Bytes: 4096, IOPS: "1.00"}, Write: &v1alpha1.FioDirection{}}}}},
			{Name: "gone", State: v1alpha1.TargetFailed, Reason: "TimedOut"},
		}}}
	recs := readFioCSV(t, Data{Benchmark: b})
	if len(recs) != 3 {
		t.Fatalf("%d records, want the header and 2 rows: %q", len(recs), recs)
	}
	for _, r := range recs[1:] {
		if len(r) != len(recs[0]) {
			t.Errorf("row of %d columns under a header of %d: %q", len(r), len(recs[0]), r)
		}
	}
	if got := strings.Join(recs[1], ","); got != "sparse,dev,,nullb1,false,randread-rate-limited-writes,,read,4096,,1.00,,," {
		t.Errorf("row %s", got)
	}
}

// The fio CSV refuses a database Benchmark, and the database CSVs a fio Benchmark, each saying where the figures
// are, before writing anything (not even a header).
func TestFioAndDatabaseCSVsRefuseEachOther(t *testing.T) {
	var out bytes.Buffer
	if err := FioCSV(&out, loadData(t, "pair")); err == nil || !strings.Contains(err.Error(), "runs sysbench, not fio") || out.Len() > 0 {
		t.Errorf("fio CSV of a sysbench Benchmark: %v, wrote %q", err, out.String())
	}
	d := fioData(t)
	for name, write := range map[string]func(*bytes.Buffer, Data) error{
		"summary":    func(w *bytes.Buffer, d Data) error { return SummaryCSV(w, d) },
		"series":     func(w *bytes.Buffer, d Data) error { return SeriesCSV(w, d) },
		"operations": func(w *bytes.Buffer, d Data) error { return OperationsCSV(w, d) },
	} {
		out.Reset()
		err := write(&out, d)
		if err == nil || !strings.Contains(err.Error(), "zns-demo/raw runs fio on devices") || !strings.Contains(err.Error(), "--data fio") || out.Len() > 0 {
			t.Errorf("%s CSV of a fio Benchmark: %v, wrote %q", name, err, out.String())
		}
	}
}

// The JSON export of a fio Benchmark carries spec.fio and each target's fio status (a failed target's too) and
// leaves out the database fields the API server defaulted (workload, tables, threads, percentile...): they never
// ran. It has no runs, and the targets no database figures.
func TestFioJSONExport(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, fioData(t)); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"workload", "workloads", "tables", "tableSize", "threads", "durationSeconds", "percentile"} {
		if v, ok := doc[k]; ok {
			t.Errorf("%s: %v in a fio Benchmark's export", k, v)
		}
	}
	if doc["tool"] != "fio" || doc["phase"] != "Failed" || doc["result"] != "zoned failed (Other)" {
		t.Errorf("tool %v, phase %v, result %v", doc["tool"], doc["phase"], doc["result"])
	}
	if runs, ok := doc["runs"].([]any); !ok || len(runs) != 0 {
		t.Errorf("runs %v, want []", doc["runs"])
	}
	spec, _ := json.Marshal(doc["fio"])
	wantSpec := `{"grid":{"blockSizes":[4096],"ioDepths":[8],"numJobs":[1,2],"rw":"randread"},` +
		`"profiles":["seqwrite-open-zones","randread-4k","randread-rate-limited-writes","seqread-128k-qd32","grid"],` +
		`"runtimeSeconds":2,"span":"128Mi","writeRate":"16Mi"}`
	if string(spec) != wantSpec {
		t.Errorf("fio\n%s\nwant\n%s", spec, wantSpec)
	}
	targets, _ := doc["targets"].([]any)
	if len(targets) != 2 {
		t.Fatalf("targets %v", doc["targets"])
	}
	for _, tg := range targets {
		for _, k := range []string{"mean", "acrossRuns", "vsBaseline", "sweep", "workloads", "alone", "ycsb"} {
			if v, ok := tg.(map[string]any)[k]; ok {
				t.Errorf("%s: %v on a fio target", k, v)
			}
		}
	}
	zoned, _ := json.Marshal(targets[1])
	wantZoned := `{"fio":{"device":"nullb0","found":"empty","node":"zns-guest","results":[` +
		`{"profile":"seqwrite-open-zones","write":{"bytes":134217728,"bytesPerSec":"93662057","iops":"714.58",` +
		`"latencyP50Us":"38535.168","latencyP999Us":"112721.92","latencyP99Us":"100139.008"}},` +
		`{"profile":"randread-4k","read":{"bytes":9527296,"bytesPerSec":"9508279","iops":"2321.36",` +
		`"latencyP50Us":"12124.16","latencyP999Us":"36438.016","latencyP99Us":"22151.168"}}],"zoned":true},` +
		`"message":"fio failed: randread-rate-limited-writes: fio: exit status 1 \u003cnil\u003e: fio: io_u error on file /dev/nullb0: ` +
		`Input/output error: write offset=67108864, buflen=131072","name":"zoned","reason":"Other","stack":"?","state":"Failed"}`
	if string(zoned) != wantZoned {
		t.Errorf("target zoned\n%s\nwant\n%s", zoned, wantZoned)
	}
	var e Export
	if err := json.Unmarshal(buf.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if f := e.Targets[0].Fio; f == nil || len(f.Results) != 6 || f.Results[5].Point != "bs=4096 jobs=2 qd=8" || f.Results[2].Write.BytesPerSec != "16768831" {
		t.Errorf("target loop: %+v", e.Targets[0].Fio)
	}
}

// A database Benchmark's export keeps the spec fields a fio export leaves out.
func TestDatabaseJSONExportKeepsItsSpec(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, loadData(t, "pair")); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	b := load(t, "pair")
	for k, want := range map[string]any{"workload": b.Spec.Workload, "tables": float64(b.Spec.Tables), "tableSize": float64(b.Spec.TableSize),
		"threads": float64(b.Spec.Threads), "durationSeconds": float64(b.Spec.DurationSeconds), "percentile": float64(b.Spec.Percentile)} {
		if doc[k] != want {
			t.Errorf("%s: %v, want %v", k, doc[k], want)
		}
	}
	if _, ok := doc["fio"]; ok {
		t.Error("spec.fio in a sysbench Benchmark's export")
	}
}
