package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchstat"
)

// BenchmarkRunnerCPU measures what the runner itself costs, in figures that the neighbours' load cannot swamp:
//
//   - its own CPU time (getrusage RUSAGE_SELF, logged by the runner; sysbench's time is RUSAGE_CHILDREN and
//     not counted) per second of run, i.e. the share of one core it takes, for each run of the loop;
//   - its instruction count under valgrind's cachegrind (the runner's process only: --trace-children=no, so
//     sysbench runs natively), for a full run and for a short one; the difference over the difference in
//     seconds is what each further second of run costs (reading and parsing one interval line), the rest is
//     start-up and the summary.
//
// It runs a real sysbench against a private MariaDB/MyRocks server on loopback. Run it (not part of go test
// without -bench; make bench does):
//
//	go test ./operator/cmd/znsbench/ -run '^$' -bench BenchmarkRunnerCPU -benchtime 2x -timeout 30m -v
//
// ZNSBENCH_CPU_TIME (default 60) and ZNSBENCH_CPU_THREADS (default 64) set the run, ZNSBENCH_CPU_SHORT (default
// 10) the short run of the instruction count; ZNSBENCH_CPU_VALGRIND=0 leaves the instruction count out.
//
// callgrind, the call-graph tool, aborts on the Go runtime's signal handling (an assertion in
// vgCallgrind_post_signal when sysbench's SIGCHLD arrives); cachegrind counts the same instructions (Ir) and
// copes. The Go runtime under valgrind runs with GODEBUG=cpu.rdtscp=off: valgrind 3.19 raises SIGILL on RDTSCP.
func BenchmarkRunnerCPU(b *testing.B) {
	seconds := envInt(b, "ZNSBENCH_CPU_TIME", 60)
	short := envInt(b, "ZNSBENCH_CPU_SHORT", 10)
	e := newBenchEnv(b, "oltp_read_write", envInt(b, "ZNSBENCH_CPU_THREADS", 64), seconds)

	var pcts, selfMS []float64
	for i := 0; b.Loop(); i++ {
		rep := runRunnerCPU(b, e, seconds, nil)
		pct := float64(rep.Usage.Self()) / float64(rep.Wall) * 100
		pcts, selfMS = append(pcts, pct), append(selfMS, float64(rep.Usage.Self())/float64(time.Millisecond))
		b.Logf("run %d: %d s at %d threads: runner %.1f ms CPU (user %.1f, sys %.1f) over %.2f s = %.4f%% of one core; sysbench %.1f s CPU",
			i+1, seconds, e.spec.Threads, ms(rep.Usage.Self()), ms(rep.Usage.SelfUser), ms(rep.Usage.SelfSys),
			rep.Wall.Seconds(), pct, rep.Usage.Children().Seconds())
	}
	p, s := benchstat.Of(pcts), benchstat.Of(selfMS)
	b.ReportMetric(p.Mean, "runner-%core")
	b.ReportMetric(p.Max, "runner-%core-max")
	b.ReportMetric(s.Mean, "runner-cpu-ms")
	b.Logf("runner CPU: %.4f%% of one core on average over %d run(s) (min %.4f, max %.4f; goal <= 1%%), %.1f ms per %d s run",
		p.Mean, p.N, p.Min, p.Max, s.Mean, seconds)

	if os.Getenv("ZNSBENCH_CPU_VALGRIND") == "0" {
		return
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		b.Logf("instruction count skipped: needs valgrind (apt-get install valgrind)")
		return
	}
	long := cachegrindRun(b, e, seconds)
	b.ReportMetric(float64(long), "runner-instructions")
	b.Logf("runner instructions (cachegrind Ir) for a %d s run: %d", seconds, long)
	if short >= seconds {
		return
	}
	brief := cachegrindRun(b, e, short)
	perSec := float64(long-brief) / float64(seconds-short)
	b.ReportMetric(perSec, "runner-instructions/s")
	b.Logf("runner instructions for a %d s run: %d; each further second of run: %.0f instructions, fixed part %.0f",
		short, brief, perSec, float64(long)-perSec*float64(seconds))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runRunnerCPU runs znsbench run for seconds (through wrap, if any) and returns the cost it logged.
func runRunnerCPU(b *testing.B, e benchEnv, seconds int, wrap []string) cpuReport {
	b.Helper()
	spec := e.spec
	spec.TimeSec = seconds
	argv := append(append(wrap, e.runnerBin), runnerArgs(spec, filepath.Join(e.dir, "termination-log"))...)
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(wrap) > 0 {
		// valgrind 3.19 does not decode RDTSCP, which the Go runtime's cputicks uses when CPUID offers it.
		cmd.Env = append(os.Environ(), "GODEBUG=cpu.rdtscp=off")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\nstderr:\n%s\nstdout tail:\n%s", strings.Join(argv, " "), err, stderr.String(), tailOf(stdout.String(), 20))
	}
	rep, err := parseCPULine(stderr.String())
	if err != nil {
		b.Fatal(err)
	}
	return rep
}

// cachegrindRun counts the runner's own instructions over a run of seconds.
func cachegrindRun(b *testing.B, e benchEnv, seconds int) int64 {
	b.Helper()
	out := filepath.Join(e.dir, fmt.Sprintf("cachegrind.%d.out", seconds))
	runRunnerCPU(b, e, seconds, []string{"valgrind", "--tool=cachegrind", "--cache-sim=no", "--branch-sim=no",
		"--trace-children=no", "--cachegrind-out-file=" + out})
	ir, err := cachegrindTotal(out)
	if err != nil {
		b.Fatal(err)
	}
	if top, err := exec.Command("cg_annotate", out).Output(); err == nil && testing.Verbose() {
		b.Logf("cg_annotate, %d s run:\n%s", seconds, headOf(string(top), 40))
	}
	return ir
}

// cachegrindTotal reads the "summary:" line of a cachegrind output file.
func cachegrindTotal(path string) (int64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "summary:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no summary line", path)
}

func tailOf(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func headOf(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
