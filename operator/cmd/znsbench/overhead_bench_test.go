package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

// BenchmarkRunnerOverhead runs the same sysbench workload against the same
// private MariaDB/MyRocks server as a bare sysbench command and through the
// znsbench binary, one pair per iteration, alternating which goes first so
// that drift (compaction, cache warming, the neighbours' load) falls on both
// sides. It reports both mean TPS figures and the runner/bare ratio with its
// spread; the runner must not cost throughput, so the ratio should be 1 within
// the spread. Run it (not part of go test without -bench):
//
//	go test ./operator/cmd/znsbench/ -run '^$' -bench BenchmarkRunnerOverhead -benchtime 3x -timeout 15m -v
//
// ZNSBENCH_BENCH_TIME sets the seconds per sysbench run (default 10),
// ZNSBENCH_BENCH_WORKLOAD the OLTP script (default oltp_read_write),
// ZNSBENCH_BENCH_THREADS sysbench's threads (default 2). Noise on a shared
// machine is larger than the runner's cost (see BenchmarkRunnerCPU for the
// figure noise cannot swamp); the ratio is reported with its 95% confidence
// interval so that it says how much it can tell.
func BenchmarkRunnerOverhead(b *testing.B) {
	seconds := envInt(b, "ZNSBENCH_BENCH_TIME", 10)
	workload := "oltp_read_write"
	if v := os.Getenv("ZNSBENCH_BENCH_WORKLOAD"); v != "" {
		workload = v
	}
	e := newBenchEnv(b, workload, envInt(b, "ZNSBENCH_BENCH_THREADS", 2), seconds)
	sb, runnerBin, dir, spec := e.sysbench, e.runnerBin, e.dir, e.spec
	runArgs, err := spec.Args(sysbench.PhaseRun)
	if err != nil {
		b.Fatal(err)
	}
	// The bare command writes to a file, as "sysbench ... > out.txt" would.
	bare := func() float64 {
		out := filepath.Join(dir, "bare.txt")
		f, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(sb, runArgs...)
		cmd.Stdout, cmd.Stderr = f, f
		err = cmd.Run()
		f.Close()
		text, _ := os.ReadFile(out)
		if err != nil {
			b.Fatalf("bare sysbench: %v\n%s", err, text)
		}
		res, err := sysbench.ParseString(string(text))
		if err != nil {
			b.Fatalf("bare sysbench output: %v", err)
		}
		return res.Summary.TPS
	}
	runner := func() float64 {
		out := filepath.Join(dir, "runner.txt")
		term := filepath.Join(dir, "termination-log")
		f, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(runnerBin, runnerArgs(spec, term)...)
		cmd.Stdout, cmd.Stderr = f, f
		err = cmd.Run()
		f.Close()
		if err != nil {
			text, _ := os.ReadFile(out)
			b.Fatalf("runner: %v\n%s", err, text)
		}
		raw, err := os.ReadFile(term)
		if err != nil {
			b.Fatal(err)
		}
		sum, err := benchresult.Decode(raw)
		if err != nil {
			b.Fatal(err)
		}
		return sum.TPS
	}

	// One unmeasured run first: the freshly restarted server's caches and
	// memtables would otherwise favour whichever side runs second.
	bare()

	var bareTPS, runnerTPS, ratios []float64
	for i := 0; b.Loop(); i++ {
		var tb, tr float64
		if i%2 == 0 {
			tb, tr = bare(), runner()
		} else {
			tr, tb = runner(), bare()
		}
		bareTPS, runnerTPS, ratios = append(bareTPS, tb), append(runnerTPS, tr), append(ratios, tr/tb)
		first := "bare"
		if i%2 == 1 {
			first = "runner"
		}
		b.Logf("pair %d (%s first): bare %.2f tps, runner %.2f tps, ratio %.4f", i+1, first, tb, tr, tr/tb)
	}
	bs, rs, q := benchstat.Of(bareTPS), benchstat.Of(runnerTPS), benchstat.Of(ratios)
	b.ReportMetric(bs.Mean, "tps-bare")
	b.ReportMetric(rs.Mean, "tps-runner")
	b.ReportMetric(q.Mean, "ratio")
	b.ReportMetric(q.Min, "ratio-min")
	b.ReportMetric(q.Max, "ratio-max")
	mean, half, ok := benchstat.MeanCI95(ratios)
	ci := "no confidence interval from one pair"
	if ok {
		b.ReportMetric(half, "ratio-ci95")
		ci = fmt.Sprintf("95%% confidence interval %.4f..%.4f", mean-half, mean+half)
	}
	b.Logf("%d pairs of %d s %s, %d threads, MyRocks: bare %.2f tps (reldev %.1f%%), runner %.2f tps (reldev %.1f%%), "+
		"runner/bare %.4f (min %.4f, max %.4f; %s)", q.N, seconds, workload, spec.Threads, bs.Mean, bs.RelDevPct, rs.Mean,
		rs.RelDevPct, q.Mean, q.Min, q.Max, ci)
	if ok && (mean-half > 1 || mean+half < 1) {
		b.Logf("note: 1 is outside the ratio's 95%% confidence interval")
	}
}

// benchEnv is a private MariaDB/MyRocks server with sysbench's tables prepared (bulk-load profile, then restarted
// in the workload profile, as the operator does), the znsbench binary built as the image builds it, and the spec.
type benchEnv struct {
	sysbench, runnerBin, dir string
	spec                     sysbench.Spec
	server                   *mysqltest.Server
}

func newBenchEnv(b *testing.B, workload string, threads, seconds int) benchEnv {
	b.Helper()
	mysqltest.Require(b)
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		b.Skip("needs sysbench (apt-get install sysbench)")
	}
	dir := b.TempDir()
	runnerBin := filepath.Join(dir, "znsbench")
	gobin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("needs the go command on PATH to build the runner")
	}
	build := exec.Command(gobin, "build", "-o", runnerBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as hack/images/go-binaries.sh builds it
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}

	p := mysqltest.NewPaths(b)
	gen := func(profile mycnf.Profile) string {
		cnf, err := mycnf.Generate(mycnf.Input{Flavor: mycnf.FlavorMariaDB, Engine: mycnf.EngineRocksDB, Profile: profile,
			MemoryLimitBytes: 1 * mycnf.GiB, DataDir: p.DataDir, Socket: p.Socket, PidFile: p.PidFile, Port: int32(p.Port)})
		if err != nil {
			b.Fatal(err)
		}
		return cnf
	}
	s := mysqltest.Start(b, gen(mycnf.ProfileBulkLoad))
	admin := s.Open("")
	if _, err := admin.Exec("CREATE DATABASE sbtest"); err != nil {
		b.Fatal(err)
	}
	admin.Close() // its connection would not survive the restart
	spec := sysbench.Spec{Workload: workload, Tables: 4, TableSize: 10000, Threads: threads,
		TimeSec: seconds, ReportIntervalSec: 1, Percentile: 95, Host: "127.0.0.1", Port: s.Port, User: "root", DB: "sbtest",
		StorageEngine: "rocksdb"}
	prep, err := spec.Args(sysbench.PhasePrepare)
	if err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command(sb, prep...).CombinedOutput(); err != nil {
		b.Fatalf("prepare: %v\n%s", err, out)
	}
	s.Restart(gen(mycnf.ProfileWorkload))
	return benchEnv{sysbench: sb, runnerBin: runnerBin, dir: dir, spec: spec, server: s}
}

// runnerArgs is the znsbench run command line for spec.
func runnerArgs(spec sysbench.Spec, term string) []string {
	sb, _ := exec.LookPath("sysbench")
	return []string{"run", "--sysbench=" + sb, "--termination-log=" + term,
		"--workload=" + spec.Workload, fmt.Sprintf("--tables=%d", spec.Tables), fmt.Sprintf("--table-size=%d", spec.TableSize),
		fmt.Sprintf("--threads=%d", spec.Threads), fmt.Sprintf("--time=%d", spec.TimeSec),
		fmt.Sprintf("--report-interval=%d", spec.ReportIntervalSec), fmt.Sprintf("--percentile=%d", spec.Percentile),
		"--mysql-host=" + spec.Host, fmt.Sprintf("--mysql-port=%d", spec.Port), "--mysql-user=" + spec.User, "--mysql-db=" + spec.DB,
		"--storage-engine=" + spec.StorageEngine}
}

// envInt reads a positive integer setting of the benchmarks.
func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
