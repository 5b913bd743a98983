package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/operator/internal/ycsb"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

// goYCSBPath finds go-ycsb: $GO_YCSB, else go-ycsb on PATH (the bench image's).
func goYCSBPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GO_YCSB"); p != "" {
		return p
	}
	p, err := exec.LookPath("go-ycsb")
	if err != nil {
		t.Skip("needs go-ycsb (GO_YCSB=path or on PATH; operator/internal/ycsb/testdata/README.md says how to build it)")
	}
	return p
}

// TestYCSBRealServer is the YCSB path for real: go-ycsb through the runner against a private MariaDB with
// MyRocks and with InnoDB, as a Benchmark runs it: load on the bulk-load profile, restart on the workload
// profile, verify the records, run for a time; then the summary is checked against what go-ycsb printed.
func TestYCSBRealServer(t *testing.T) {
	mysqltest.Require(t)
	bin := goYCSBPath(t)
	for _, engine := range []mycnf.Engine{mycnf.EngineRocksDB, mycnf.EngineInnoDB} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			ycsbRealServer(t, bin, engine)
		})
	}
}

func ycsbRealServer(t *testing.T, bin string, engine mycnf.Engine) {
	p := mysqltest.NewPaths(t)
	gen := func(profile mycnf.Profile) string {
		cnf, err := mycnf.Generate(mycnf.Input{Flavor: mycnf.FlavorMariaDB, Engine: engine, Profile: profile,
			MemoryLimitBytes: 1 * mycnf.GiB, DataDir: p.DataDir, Socket: p.Socket, PidFile: p.PidFile, Port: int32(p.Port)})
		if err != nil {
			t.Fatal(err)
		}
		return cnf
	}
	s := mysqltest.Start(t, gen(mycnf.ProfileBulkLoad))
	// Quotes, '#', '@', '/', ':', a space, a lone '$' and a backslash: what a DSN or a properties file could
	// break on. The password reaches go-ycsb only through its environment.
	const pw = `p w#'"@/:x\y$z`
	admin := s.Open("")
	for _, q := range []string{"CREATE USER bench@'%' IDENTIFIED BY " + sqlString(pw), "GRANT ALL ON ycsb.* TO bench@'%'",
		"GRANT PROCESS ON *.* TO bench@'%'"} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	admin.Close()

	const records = 600
	common := []string{"--go-ycsb=" + bin, "--workload=a", fmt.Sprintf("--record-count=%d", records),
		"--field-count=1", "--field-length=4096", "--distribution=uniform",
		"--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", s.Port), "--mysql-user=bench",
		"--storage-engine=" + string(engine), "--target=" + string(engine)}
	invoke := func(password, sub string, args ...string) invocation {
		t.Helper()
		term := filepath.Join(t.TempDir(), "termination-log")
		var out, errb bytes.Buffer
		getenv := func(k string) string {
			if k == PasswordVar {
				return password
			}
			return os.Getenv(k)
		}
		all := append(append([]string{sub, "--termination-log=" + term}, common...), args...)
		code := Main(context.Background(), all, &out, &errb, getenv)
		inv := invocation{code: code, stdout: out.String(), stderr: errb.String()}
		b, err := os.ReadFile(term)
		if err != nil {
			t.Fatalf("%s: no termination log: %v\n%s", sub, err, inv.stderr)
		}
		if inv.summary, err = benchresult.Decode(b); err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		if strings.Contains(inv.stdout+inv.stderr+string(b), pw) {
			t.Errorf("%s: password printed", sub)
		}
		if inv.summary.Tool != benchresult.ToolYCSB {
			t.Errorf("%s: summary tool %q", sub, inv.summary.Tool)
		}
		return inv
	}
	mustOK := func(inv invocation, what string) {
		t.Helper()
		if inv.code != 0 || !inv.summary.OK {
			t.Fatalf("%s: exit %d, %s: %s\nstdout:\n%s\nstderr:\n%s", what, inv.code, inv.summary.Reason, inv.summary.Error, inv.stdout, inv.stderr)
		}
	}

	load := invoke(pw, "ycsb-load", fmt.Sprintf("--threads=%d", ycsb.LoadThreads(string(engine), 4)))
	mustOK(load, "ycsb-load")
	if load.summary.Phase != benchresult.PhasePrepare || len(load.summary.Ops) != 1 || load.summary.Ops[0].Op != ycsb.OpInsert ||
		load.summary.Ops[0].Count != records {
		t.Errorf("load summary: phase %s, ops %+v; want %d INSERTs", load.summary.Phase, load.summary.Ops, records)
	}
	if !strings.Contains(load.stdout, `"mysql.password"="${`+ycsb.PasswordEnv+`}"`) {
		t.Errorf("go-ycsb's output not streamed, or the password reference missing:\n%s", load.stdout)
	}

	s.Restart(gen(mycnf.ProfileWorkload))
	ver := invoke(pw, "ycsb-verify")
	mustOK(ver, "ycsb-verify")
	if ver.summary.Phase != benchresult.PhaseVerify || ver.summary.RowsFound != records || ver.summary.RowsExpected != records {
		t.Errorf("verify: phase %s, %d of %d records", ver.summary.Phase, ver.summary.RowsFound, ver.summary.RowsExpected)
	}
	db := s.Open("ycsb")
	var gotEngine string
	if err := db.QueryRow("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA='ycsb' AND TABLE_NAME='usertable'").Scan(&gotEngine); err != nil ||
		!strings.EqualFold(gotEngine, string(engine)) {
		t.Errorf("usertable engine %q, %v; want %s (the server's default)", gotEngine, err, engine)
	}
	if ver.summary.DataBytes <= 0 {
		t.Errorf("verify measured no data size (%s)", ver.summary.DataBytesSource)
	}

	run := invoke(pw, "ycsb-run", "--threads=2", "--time=4", "--report-interval=1", "--iteration=1")
	mustOK(run, "ycsb-run")
	if b, err := run.summary.Encode(); err == nil {
		t.Logf("run summary: %s", b)
	}
	checkYCSBRunAgainstOutput(t, run)

	// Rows gone behind go-ycsb's back: the verify says so.
	if _, err := db.Exec("DELETE FROM usertable LIMIT 7"); err != nil {
		t.Fatal(err)
	}
	lost := invoke(pw, "ycsb-verify")
	if lost.code != 1 || lost.summary.Reason != failreason.RowCountMismatch ||
		!strings.Contains(lost.summary.Error, fmt.Sprintf("found %d records", records-7)) {
		t.Errorf("verify after deleting rows: exit %d, %s: %q", lost.code, lost.summary.Reason, lost.summary.Error)
	}
	db.Close()

	// A wrong password: go-ycsb exits 1 with MySQL's 1045, which names the reason.
	denied := invoke("wrong-password", "ycsb-run", "--threads=1", "--time=2")
	if denied.code != 1 || denied.summary.Reason != failreason.AccessDenied {
		t.Errorf("wrong password: exit %d, reason %s: %s", denied.code, denied.summary.Reason, denied.summary.Error)
	}

	// The server gone: nothing to connect to.
	s.Stop()
	gone := invoke(pw, "ycsb-run", "--threads=1", "--time=2")
	if gone.code != 1 || gone.summary.Reason != failreason.ConnectionFailed {
		t.Errorf("server stopped: exit %d, reason %s: %s", gone.code, gone.summary.Reason, gone.summary.Error)
	}
}

// checkYCSBRunAgainstOutput: the run's summary says what go-ycsb printed in its final summary, read back from
// the streamed stdout by the parser.
func checkYCSBRunAgainstOutput(t *testing.T, run invocation) {
	t.Helper()
	p := ycsb.NewParser()
	sc := bufio.NewScanner(strings.NewReader(run.stdout))
	for sc.Scan() {
		p.Line(sc.Text())
	}
	res, err := p.Result()
	if err != nil {
		t.Fatalf("run stdout: %v\n%s", err, run.stdout)
	}
	if !strings.Contains(run.stdout, "Got signal [interrupt] to exit.") || !strings.Contains(run.stderr, "run stopped after --time 4s") {
		t.Errorf("the run was not ended by the runner's SIGINT:\nstdout:\n%s\nstderr:\n%s", run.stdout, run.stderr)
	}
	sum := run.summary
	names := map[string]benchresult.OpFigures{}
	for _, o := range sum.Ops {
		names[o.Op] = o
	}
	for _, want := range []string{ycsb.OpRead, ycsb.OpUpdate} {
		o, ok := names[want]
		got, _ := res.Op(want)
		if !ok || o.Count != got.Count || o.Count <= 0 || o.OPS != got.OPS || o.P99MS != got.Percentiles[99] || o.AvgMS != got.AvgMS {
			t.Errorf("%s in the summary %+v, go-ycsb printed %+v", want, o, got)
		}
	}
	if res.Total == nil || sum.Transactions != res.Total.Count || sum.TPS != res.Total.OPS || sum.LatencyP99MS != res.Total.Percentiles[99] {
		t.Errorf("summary totals %d ops, %v/s, p99 %v; go-ycsb's TOTAL %+v", sum.Transactions, sum.TPS, sum.LatencyP99MS, res.Total)
	}
	if sum.Transactions != names[ycsb.OpRead].Count+names[ycsb.OpUpdate].Count {
		t.Errorf("workload A: %d operations, but %d reads and %d updates", sum.Transactions, names[ycsb.OpRead].Count, names[ycsb.OpUpdate].Count)
	}
	if sum.DurationSec < 3 || sum.StartTime == "" || sum.EndTime == "" || res.Intervals < 2 {
		t.Errorf("duration %v s, %d intervals, start %q end %q", sum.DurationSec, res.Intervals, sum.StartTime, sum.EndTime)
	}
	if sum.DataBytes <= 0 {
		t.Errorf("run measured no data size (%s)", sum.DataBytesSource)
	}
}
