//go:build capture

package controller

// TestCaptureReportStatus records real Benchmark status objects for the report package's tests
// (operator/internal/report/testdata): the real runner (znsbench) and Debian's sysbench against private
// MariaDB servers (MyRocks and InnoDB) on loopback, following the methodology (prepare on the bulkload
// profile, restart on the workload profile, verify, runs from a common start), and the reconciler's own
// functions turning the runner's summaries and series into status. Only the API server and the Jobs are
// left out. Run it with:
//
//	go test -tags capture -run TestCaptureReportStatus -v -timeout 20m ./operator/internal/controller/

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

const capturePassword = "capture-pw-0123456789"

type captureTarget struct {
	name    string
	engine  mycnf.Engine
	storage string
	server  *mysqltest.Server // nil: nothing listens on port (a target that fails)
	port    int
	verify  benchresult.Summary
}

type captureRun struct {
	sum    benchresult.Summary
	series *benchresult.Series
}

func TestCaptureReportStatus(t *testing.T) {
	mysqltest.Require(t)
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("needs sysbench")
	}
	bin := filepath.Join(t.TempDir(), "znsbench")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/znsbench").CombinedOutput(); err != nil {
		t.Fatalf("go build znsbench: %v\n%s", err, out)
	}
	outDir := filepath.Join("..", "report", "testdata")
	spec := v1alpha1.BenchmarkSpec{Workload: "oltp_update_index", Tables: 2, TableSize: 5000, Threads: 4, PrepareThreads: 2,
		DurationSeconds: 10, ReportIntervalSeconds: 1, Percentile: 95, Iterations: 3, StartDelaySeconds: 3, TargetTimeoutSeconds: 600}
	targets := []*captureTarget{
		{name: "myrocks", engine: mycnf.EngineRocksDB, storage: "volume"},
		{name: "innodb", engine: mycnf.EngineInnoDB, storage: "volume"},
	}
	var wg sync.WaitGroup
	for _, tg := range targets {
		wg.Add(1)
		go func() { defer wg.Done(); startAndPrepare(t, bin, sb, tg, spec) }()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// pair: two targets, two iterations, baseline innodb; pair-running is its status while run 2 runs.
	pair := captureBenchmark("pair", spec, "innodb", targets)
	r := &BenchmarkReconciler{Recorder: record.NewFakeRecorder(1000), Now: time.Now}
	r.start(pair)
	setTargets(pair, targets)
	var cms []*corev1.ConfigMap
	for it := int32(1); it <= spec.Iterations; it++ {
		startAt := r.setRunning(pair, it)
		if it == spec.Iterations {
			r.timing(pair)
			writeYAML(t, filepath.Join(outDir, "pair-running.yaml"), pair)
		}
		runs := runAll(t, bin, sb, targets, spec, it, startAt, spec.Threads)
		cms = append(cms, r.record(pair, it, targets, runs)...)
	}
	benchplan.Summarize(&pair.Spec, &pair.Status)
	r.completed(pair)
	r.timing(pair)
	writeYAML(t, filepath.Join(outDir, "pair.yaml"), pair)
	writeYAML(t, filepath.Join(outDir, "pair-series.yaml"), configMapList(cms))

	// sweep: the same two at 1, 4 and 8 threads over the same data, one 6 s run each.
	sweepSpec := spec
	sweepSpec.ThreadSweep, sweepSpec.Iterations, sweepSpec.DurationSeconds = []int32{1, 4, 8}, 1, 6
	sweep := captureBenchmark("sweep", sweepSpec, "innodb", targets)
	r.start(sweep)
	setTargets(sweep, targets)
	cms = nil
	for it := int32(1); it <= sweepSpec.Runs(); it++ {
		startAt := r.setRunning(sweep, it)
		threads, _ := sweepSpec.RunThreads(it)
		runs := runAll(t, bin, sb, targets, sweepSpec, it, startAt, threads)
		cms = append(cms, r.record(sweep, it, targets, runs)...)
	}
	benchplan.Summarize(&sweep.Spec, &sweep.Status)
	r.completed(sweep)
	r.timing(sweep)
	writeYAML(t, filepath.Join(outDir, "sweep.yaml"), sweep)
	writeYAML(t, filepath.Join(outDir, "sweep-series.yaml"), configMapList(cms))

	// failed: the same two and a third target whose server is gone: it fails in run 1 (ConnectionFailed), and
	// the Benchmark stops after that run.
	spec1 := spec
	spec1.Iterations = 2 // it stops after run 1 anyway
	ghost := &captureTarget{name: "ghost", engine: mycnf.EngineRocksDB, storage: "volume", port: mysqltest.FreePort(t)}
	all := append(append([]*captureTarget{}, targets...), ghost)
	failed := captureBenchmark("failed", spec1, "innodb", all)
	r.start(failed)
	setTargets(failed, all)
	startAt := r.setRunning(failed, 1)
	runs := runAll(t, bin, sb, all, spec1, 1, startAt, spec1.Threads)
	cms = r.record(failed, 1, all, runs)
	benchplan.Summarize(&failed.Spec, &failed.Status)
	r.completed(failed)
	r.timing(failed)
	writeYAML(t, filepath.Join(outDir, "failed.yaml"), failed)
	writeYAML(t, filepath.Join(outDir, "failed-series.yaml"), configMapList(cms))
}

func captureBenchmark(name string, spec v1alpha1.BenchmarkSpec, baseline string, targets []*captureTarget) *v1alpha1.Benchmark {
	b := &v1alpha1.Benchmark{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Benchmark"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "zns-demo", Name: name, Generation: 1}, Spec: spec}
	b.Spec.Baseline = baseline
	for _, tg := range targets {
		b.Spec.Targets = append(b.Spec.Targets, v1alpha1.BenchmarkTarget{Name: tg.name})
	}
	return b
}

func setTargets(b *v1alpha1.Benchmark, targets []*captureTarget) {
	for i, tg := range targets {
		ts := &b.Status.Targets[i]
		ts.Engine, ts.Storage, ts.ProfileSwitched, ts.Preconditioned = string(tg.engine), tg.storage, true, true
		ts.State = v1alpha1.TargetVerified
		if tg.server != nil {
			ts.Rows = tg.verify.RowsFound
			benchplan.RecordPrepareSize(ts, tg.verify)
		}
	}
	b.Status.ObservedGeneration = b.Generation
}

// setRunning is what run() writes before it creates the Jobs of an iteration.
func (r *BenchmarkReconciler) setRunning(b *v1alpha1.Benchmark, it int32) time.Time {
	benchplan.SetPhase(&b.Status, v1alpha1.BenchmarkRunning, benchplan.RunLabel(b, it), r.now())
	b.Status.Iteration = it
	at := metav1.NewTime(r.now().Add(time.Duration(b.Spec.StartDelaySeconds) * time.Second).Truncate(time.Second))
	b.Status.StartAt = &at
	b.Status.Progress = fmt.Sprintf("%s: %d target(s) running", benchplan.RunLabel(b, it), len(active(b)))
	return at.Time
}

// record is what run() does with finished Jobs; it returns the series ConfigMaps keepSeries would apply.
func (r *BenchmarkReconciler) record(b *v1alpha1.Benchmark, it int32, targets []*captureTarget, runs map[string]captureRun) []*corev1.ConfigMap {
	var cms []*corev1.ConfigMap
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		run := runs[ts.Name]
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		if !run.sum.OK {
			r.failTarget(b, ts, event.RunFailed, run.sum.Reason, fmt.Sprintf("run %d failed: %s", it, run.sum.Error))
			continue
		}
		cm := ""
		if run.series != nil {
			cm = resources.SeriesConfigMapName(b, it, ts.Name)
			cms = append(cms, seriesConfigMap(b, it, ts.Name, *run.series))
		}
		res := benchplan.IterationResult(it, run.sum, cm)
		res.Threads, _ = b.Spec.RunThreads(it)
		ts.Iterations = append(ts.Iterations, res)
		benchplan.RecordSize(ts, run.sum)
		if e, ok := benchplan.NoteIgnoredErrors(ts, it, run.sum); ok {
			e.Event.Emit(b, r.Recorder, e.Args...)
		}
	}
	return cms
}

func (r *BenchmarkReconciler) completed(b *v1alpha1.Benchmark) {
	t := metav1.NewTime(r.now())
	b.Status.CompletedAt = &t
	b.Status.StartAt = nil
	done := 0
	reason := "AllTargetsFinished"
	for _, ts := range b.Status.Targets {
		if ts.State == v1alpha1.TargetDone {
			done++
		} else {
			reason = "SomeTargetsFailed"
		}
	}
	benchplan.SetPhase(&b.Status, v1alpha1.BenchmarkCompleted, fmt.Sprintf("%d/%d targets", done, len(b.Status.Targets)), r.now())
	b.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionCompleted, Status: metav1.ConditionTrue, Reason: reason,
		Message: "captured", LastTransitionTime: t, ObservedGeneration: b.Generation}}
}

// seriesConfigMap is the ConfigMap keepSeries applies.
func seriesConfigMap(b *v1alpha1.Benchmark, it int32, target string, s benchresult.Series) *corev1.ConfigMap {
	raw, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	ac := resources.SeriesConfigMap(b, it, target, string(raw), s.CSV())
	j, err := json.Marshal(ac)
	if err != nil {
		panic(err)
	}
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal(j, cm); err != nil {
		panic(err)
	}
	return cm
}

func configMapList(cms []*corev1.ConfigMap) *corev1.ConfigMapList {
	l := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, cm := range cms {
		l.Items = append(l.Items, *cm)
	}
	return l
}

func writeYAML(t *testing.T, path string, obj any) {
	t.Helper()
	raw, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

func startAndPrepare(t *testing.T, bin, sb string, tg *captureTarget, spec v1alpha1.BenchmarkSpec) {
	p := mysqltest.NewPaths(t)
	gen := func(profile mycnf.Profile) string {
		cnf, err := mycnf.Generate(mycnf.Input{Flavor: mycnf.FlavorMariaDB, Engine: tg.engine, Profile: profile,
			MemoryLimitBytes: 1 * mycnf.GiB, DataDir: p.DataDir, Socket: p.Socket, PidFile: p.PidFile, Port: int32(p.Port)})
		if err != nil {
			t.Error(err)
		}
		return cnf
	}
	tg.server = mysqltest.Start(t, gen(mycnf.ProfileBulkLoad))
	tg.port = tg.server.Port
	admin := tg.server.Open("")
	for _, q := range []string{"CREATE USER bench@'%' IDENTIFIED BY '" + capturePassword + "'", "GRANT ALL ON sbtest.* TO bench@'%'",
		"GRANT PROCESS ON *.* TO bench@'%'"} {
		if _, err := admin.Exec(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	admin.Close()
	if run := runner(t, bin, sb, tg, spec, "prepare", spec.PrepareThreads, "--create-database", "--drop-existing"); !run.sum.OK {
		t.Errorf("%s prepare: %s", tg.name, run.sum.Error)
		return
	}
	tg.server.Restart(gen(mycnf.ProfileWorkload))
	run := runner(t, bin, sb, tg, spec, "verify", 1)
	if !run.sum.OK {
		t.Errorf("%s verify: %s", tg.name, run.sum.Error)
	}
	tg.verify = run.sum
}

func runAll(t *testing.T, bin, sb string, targets []*captureTarget, spec v1alpha1.BenchmarkSpec, it int32, startAt time.Time, threads int32) map[string]captureRun {
	out := map[string]captureRun{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, tg := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := runner(t, bin, sb, tg, spec, "run", threads, "--iteration", fmt.Sprint(it), "--time", fmt.Sprint(spec.DurationSeconds),
				"--report-interval", fmt.Sprint(spec.ReportIntervalSeconds), "--percentile", fmt.Sprint(spec.Percentile),
				"--start-at", startAt.UTC().Format(time.RFC3339))
			mu.Lock()
			out[tg.name] = run
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// runner runs the real znsbench as the operator's Job does, with the summary from its termination log and the
// series from its stdout (the pod log).
func runner(t *testing.T, bin, sb string, tg *captureTarget, spec v1alpha1.BenchmarkSpec, phase string, threads int32, extra ...string) captureRun {
	term := filepath.Join(t.TempDir(), "termination-log")
	args := append([]string{phase, "--termination-log=" + term, "--sysbench=" + sb, "--target=" + tg.name,
		"--workload=" + spec.Workload, fmt.Sprintf("--tables=%d", spec.Tables), fmt.Sprintf("--table-size=%d", spec.TableSize),
		fmt.Sprintf("--threads=%d", threads), "--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", tg.port),
		"--mysql-user=bench", "--storage-engine=" + string(tg.engine), "--connect-timeout=2s"}, extra...)
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Env = append(os.Environ(), "MYSQL_PASSWORD="+capturePassword)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	_ = cmd.Run()
	raw, err := os.ReadFile(term)
	if err != nil {
		t.Errorf("%s %s: no summary: %v\n%s", tg.name, phase, err, stdout.String())
		return captureRun{}
	}
	var run captureRun
	if run.sum, err = benchresult.Decode(raw); err != nil {
		t.Errorf("%s %s: %v", tg.name, phase, err)
	}
	if s, ok, err := benchresult.FindSeries(stdout.String()); err == nil && ok {
		run.series = &s
	}
	if strings.Contains(stdout.String()+string(raw), capturePassword) {
		t.Errorf("%s %s: password printed", tg.name, phase)
	}
	return run
}
