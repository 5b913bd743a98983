package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/report"
)

const testdata = "../../internal/report/testdata"

// fakeCluster holds the recorded Benchmarks and their series ConfigMaps (real captures, see that README).
func fakeCluster(t *testing.T, names ...string) (client.Reader, map[string]*v1alpha1.Benchmark) {
	t.Helper()
	var objs []client.Object
	bs := map[string]*v1alpha1.Benchmark{}
	for _, n := range names {
		b := &v1alpha1.Benchmark{}
		readYAML(t, n+".yaml", b)
		bs[n] = b
		objs = append(objs, b)
		cms := &corev1.ConfigMapList{}
		if _, err := os.Stat(filepath.Join(testdata, n+"-series.yaml")); err == nil {
			readYAML(t, n+"-series.yaml", cms)
		}
		for i := range cms.Items {
			objs = append(objs, &cms.Items[i])
		}
	}
	return fake.NewClientBuilder().WithScheme(scheme()).WithObjects(objs...).Build(), bs
}

func readYAML(t *testing.T, name string, into any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatal(err)
	}
}

func testStreams(out, errOut *bytes.Buffer) genericiooptions.IOStreams {
	return genericiooptions.IOStreams{Out: out, ErrOut: errOut}
}

func run(t *testing.T, c client.Reader, ns string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(genericiooptions.IOStreams{Out: &out, ErrOut: &errb}, func() (client.Reader, string, error) { return c, ns, nil })
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

func TestReportCommandPrintsTheTable(t *testing.T) {
	c, bs := fakeCluster(t, "failed")
	out, _, err := run(t, c, "zns-demo", "report", "failed")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := report.Table(&want, bs["failed"]); err != nil {
		t.Fatal(err)
	}
	if out != want.String() || !strings.Contains(out, "FAILED (") {
		t.Errorf("report:\n%s\nwant:\n%s", out, want.String())
	}
	if _, _, err := run(t, c, "elsewhere", "report", "failed"); err == nil || !strings.Contains(err.Error(), "elsewhere/failed") {
		t.Errorf("another namespace: %v", err)
	}
}

func TestExportCommandReadsSeriesConfigMaps(t *testing.T) {
	c, bs := fakeCluster(t, "pair")
	out, stderr, err := run(t, c, "zns-demo", "export", "pair", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var e report.Export
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ts := range bs["pair"].Status.Targets {
		n += len(ts.Iterations)
	}
	if len(e.Runs) != n || stderr != "" {
		t.Fatalf("%d runs, want %d; stderr %q", len(e.Runs), n, stderr)
	}
	for _, r := range e.Runs {
		if r.Series == nil || r.Series.Len() == 0 {
			t.Errorf("run %s/%d has no series: the ConfigMaps were not read", r.Target, r.Iteration)
		}
	}
	csvOut, _, err := run(t, c, "zns-demo", "export", "pair", "--format", "csv", "--data", "series")
	if err != nil || !strings.HasPrefix(csvOut, "benchmark,target,threads,iteration,time_s,tps") {
		t.Errorf("csv series: %v\n%.200s", err, csvOut)
	}
	if _, _, err := run(t, c, "zns-demo", "export", "pair", "--format", "xml"); err == nil {
		t.Error("--format xml accepted")
	}
	file := filepath.Join(t.TempDir(), "pair.csv")
	if _, _, err := run(t, c, "zns-demo", "export", "pair", "--format", "csv", "-f", file); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(file); !strings.HasPrefix(string(raw), "benchmark,target,stack,state") {
		t.Errorf("file: %.100s", raw)
	}
}

// A fio Benchmark exports its device figures with --data fio, exactly what report.FioCSV writes; the database
// CSVs refuse it and --data fio refuses a sysbench Benchmark, each naming what to ask for instead.
func TestExportCommandFio(t *testing.T) {
	c, bs := fakeCluster(t, "fio", "pair")
	out, _, err := run(t, c, "zns-demo", "export", "raw", "--format", "csv", "--data", "fio")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := report.FioCSV(&want, report.Data{Benchmark: bs["fio"]}); err != nil {
		t.Fatal(err)
	}
	if out != want.String() || strings.Count(out, "\n") != 10 {
		t.Errorf("--data fio:\n%s\nwant (a header and 9 rows):\n%s", out, want.String())
	}
	for _, data := range []string{"summary", "series", "operations"} {
		out, _, err := run(t, c, "zns-demo", "export", "raw", "--format", "csv", "--data", data)
		if err == nil || !strings.Contains(err.Error(), "--data fio") || out != "" {
			t.Errorf("--data %s of a fio Benchmark: %v, wrote %q", data, err, out)
		}
	}
	if out, _, err := run(t, c, "zns-demo", "export", "pair", "--format", "csv", "--data", "fio"); err == nil ||
		!strings.Contains(err.Error(), "zns-demo/pair runs sysbench, not fio") || out != "" {
		t.Errorf("--data fio of a sysbench Benchmark: %v, wrote %q", err, out)
	}
	if _, _, err := run(t, c, "zns-demo", "export", "raw", "--format", "csv", "--data", "zones"); err == nil ||
		!strings.Contains(err.Error(), "want summary, series, operations or fio") {
		t.Errorf("--data zones: %v", err)
	}
}

func TestCompareAndWatchCommands(t *testing.T) {
	c, _ := fakeCluster(t, "pair", "failed")
	out, _, err := run(t, c, "zns-demo", "compare", "pair", "failed")
	if err != nil || strings.Count(out, "\npair ") != 2 || strings.Count(out, "\nfailed ") != 3 {
		t.Errorf("compare: %v\n%s", err, out)
	}
	if _, _, err := run(t, c, "zns-demo", "compare", "pair", "nosuch"); err == nil {
		t.Error("compare with a missing Benchmark succeeded")
	}
	out, _, err = run(t, c, "zns-demo", "watch", "pair")
	if err != nil || !strings.Contains(out, "phase Completed") || !strings.Contains(out, "result: ") {
		t.Errorf("watch of a completed Benchmark (it must return at once): %v\n%s", err, out)
	}
}

func TestPlotCommandWritesTheFormatOfTheExtension(t *testing.T) {
	c, _ := fakeCluster(t, "pair")
	dir := t.TempDir()
	for _, name := range []string{"pair.png", "pair.svg"} {
		path := filepath.Join(dir, name)
		_, stderr, err := run(t, c, "zns-demo", "plot", "pair", "-o", path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		if strings.HasSuffix(name, ".png") && !bytes.HasPrefix(raw, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG", name)
		}
		if strings.HasSuffix(name, ".svg") && !bytes.Contains(raw, []byte("<svg")) {
			t.Errorf("%s is not an SVG", name)
		}
		if !strings.Contains(stderr, "tps, latency, bars, distribution") {
			t.Errorf("stderr %q", stderr)
		}
	}
	if _, _, err := run(t, c, "zns-demo", "plot", "pair", "-o", filepath.Join(dir, "x.gif")); err == nil {
		t.Error(".gif accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.gif")); err == nil {
		t.Error("a refused format still created its file")
	}
	// The README's chart: ZNS_README_CHART=$PWD/docs/img/pair.png go test -run TestPlotCommand ./operator/cmd/kubectl-zns/
	if path := os.Getenv("ZNS_README_CHART"); path != "" {
		if _, _, err := run(t, c, "zns-demo", "plot", "pair", "-o", path); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := run(t, c, "zns-demo", "plot", "pair"); err == nil {
		t.Error("no -o accepted")
	}
}
