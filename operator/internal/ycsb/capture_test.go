//go:build capture

package ycsb

// TestCapture regenerates the real go-ycsb outputs under testdata/ (see testdata/README.md). It is behind the
// "capture" build tag because each run is a new measurement, which the parser tests then pin:
//
//	GO_YCSB=/tmp/ycsb-bin/go-ycsb go test -tags capture -run TestCapture -v ./operator/internal/ycsb/
//
// Needs go-ycsb (GO_YCSB, or go-ycsb on PATH), Debian's mariadb-server and mariadb-plugin-rocksdb.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

type capture struct {
	File   string   `json:"file"`
	Stderr string   `json:"stderr,omitempty"`
	Args   []string `json:"args"`
	Env    []string `json:"env,omitempty"`
	Exit   int      `json:"exit"`
	Signal string   `json:"signal,omitempty"`
	Server string   `json:"server,omitempty"`
	Note   string   `json:"note"`
}

// capturePassword is a throwaway password of the capture's private server; it is in the captures on purpose, to
// show where go-ycsb would print it.
const capturePassword = "ycsb-capture-pw"

func goYCSB(t *testing.T) string {
	if p := os.Getenv("GO_YCSB"); p != "" {
		return p
	}
	p, err := exec.LookPath("go-ycsb")
	if err != nil {
		t.Skip("needs go-ycsb (GO_YCSB=path, or on PATH)")
	}
	return p
}

func TestCapture(t *testing.T) {
	mysqltest.Require(t)
	bin := goYCSB(t)
	var caps []capture
	run := func(name, note, server string, env []string, during func(*exec.Cmd), args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if during != nil {
			during(cmd)
		}
		err := cmd.Wait()
		c := capture{File: name + ".txt", Args: append([]string{"go-ycsb"}, args...), Env: env, Server: server, Note: note}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			c.Exit = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				c.Signal = ws.Signal().String()
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", c.File), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if errb.Len() > 0 {
			c.Stderr = name + ".stderr"
			if err := os.WriteFile(filepath.Join("testdata", c.Stderr), errb.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: exit %d %s, %d bytes stdout, %d bytes stderr", name, c.Exit, c.Signal, out.Len(), errb.Len())
		caps = append(caps, c)
	}

	p := mysqltest.NewPaths(t)
	gen := func(profile mycnf.Profile) string {
		cnf, err := mycnf.Generate(mycnf.Input{Flavor: mycnf.FlavorMariaDB, Engine: mycnf.EngineRocksDB, Profile: profile,
			MemoryLimitBytes: 1 * mycnf.GiB, DataDir: p.DataDir, Socket: p.Socket, PidFile: p.PidFile, Port: int32(p.Port)})
		if err != nil {
			t.Fatal(err)
		}
		return cnf
	}
	s := mysqltest.Start(t, gen(mycnf.ProfileBulkLoad))
	db := s.Open("")
	var version string
	if err := db.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE DATABASE ycsb", "CREATE DATABASE ycsbinno", "CREATE DATABASE ycsbwide",
		"CREATE USER bench@'%' IDENTIFIED BY '" + capturePassword + "'", "GRANT ALL ON *.* TO bench@'%'"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(dbname string) string {
		var n int64
		if err := db.QueryRow("SELECT COUNT(*) FROM " + dbname + ".usertable").Scan(&n); err != nil {
			return fmt.Sprintf("counting the rows: %v", err)
		}
		return fmt.Sprintf("%d rows in %s.usertable afterwards", n, dbname)
	}
	server := fmt.Sprintf("MariaDB %s, default engine rocksdb, mycnf flavor mariadb memory 1GiB", version)
	pwEnv := []string{PasswordEnv + "=" + capturePassword}
	spec := func(w string, fc, fl, records int64, dbname string, threads int) Spec {
		return Spec{Workload: w, RecordCount: records, FieldCount: fc, FieldLength: fl, Distribution: "uniform",
			Threads: threads, Host: "127.0.0.1", Port: s.Port, User: "bench", DB: dbname, Password: true}
	}
	args := func(sp Spec, phase Phase, extra ...string) []string {
		a, err := sp.Args(phase)
		if err != nil {
			t.Fatal(err)
		}
		return append(a, extra...)
	}

	// On the bulkload profile, as the Benchmark loads: go-ycsb's default (hashed keys, 2 threads), refused by
	// MyRocks' bulk load; ordered keys from 4 threads, refused too; then the builder's load (ordered, 1 thread).
	srvBulk := server + " bulkload"
	a := spec("a", 1, 4096, 1000, "ycsb", 2)
	run("load-a-hashed-bulkload", "go-ycsb's own key order (hashed), 2 threads, silence=false: MyRocks bulk load refuses with 4054, exit 0", srvBulk, pwEnv, nil,
		"load", "mysql", "-p", "mysql.host=127.0.0.1", "-p", fmt.Sprintf("mysql.port=%d", s.Port), "-p", "mysql.user=bench",
		"-p", PasswordProperty, "-p", "mysql.db=ycsb", "-p", "debug.pprof=127.0.0.1:0", "-p", "workload=core",
		"-p", "recordcount=1000", "-p", "fieldcount=1", "-p", "fieldlength=4096", "-p", "dropdata=true", "-p", "silence=false",
		"--threads", "2")
	caps[len(caps)-1].Note += "; " + count("ycsb")
	a.Threads = 4
	run("load-a-ordered-4threads-bulkload", "the builder's load (ordered keys) with 4 threads: refused with 4054 too (silence=false)", srvBulk, pwEnv, nil,
		args(a, PhaseLoad, "-p", "silence=false")...)
	caps[len(caps)-1].Note += "; " + count("ycsb")
	a.Threads = LoadThreads("rocksdb", 4)
	run("load-a-4k", "the builder's load: workload A, 1000 records of 1 field x 4096 bytes, ordered keys, 1 thread", srvBulk, pwEnv, nil,
		args(a, PhaseLoad)...)
	caps[len(caps)-1].Note += "; " + count("ycsb")
	db.Close()
	s.Restart(gen(mycnf.ProfileWorkload))
	srv := server + " workload"
	db = s.Open("")
	caps[len(caps)-1].Note += "; after the restart on the workload profile: " + count("ycsb")

	a.Threads, a.OperationCount = 2, 4000
	run("run-a-4k", "run workload A (50/50 read/update, uniform), 1 x 4096, 2 threads, 4000 operations", srv, pwEnv, nil,
		args(a, PhaseRun)...)
	a.OperationCount, a.TargetOpsPerSec = 1500, 500
	run("run-a-4k-target", "run workload A throttled to 500 ops/s, 2 threads, 1500 operations", srv, pwEnv, nil,
		args(a, PhaseRun)...)
	for _, w := range []string{"b", "c", "d", "e", "f"} {
		sp := spec(w, 10, 100, 1000, "ycsb", 2)
		if w == "d" {
			sp.Distribution = "latest"
		}
		if w == "e" {
			sp.Distribution = "zipfian"
		}
		run("load-"+w, "load workload "+strings.ToUpper(w)+", 1000 records of 10 fields x 100 bytes, 2 threads, workload profile (no bulk load)", srv, pwEnv, nil,
			args(sp, PhaseLoad)...)
		sp.OperationCount = 3000
		run("run-"+w, "run workload "+strings.ToUpper(w)+" ("+sp.Distribution+"), 10 x 100, 2 threads, 3000 operations", srv, pwEnv, nil,
			args(sp, PhaseRun)...)
	}
	// A run without an operation bound, stopped by SIGINT as the runner stops it: go-ycsb v1.0.3 declares
	// maxexecutiontime but never reads it.
	a = spec("a", 10, 100, 1000, "ycsb", 2)
	a.ReportIntervalSec = 2
	run("run-a-interrupted", "run workload A until stopped, SIGINT after 6 s, --interval 2", srv, pwEnv,
		func(c *exec.Cmd) {
			time.Sleep(6 * time.Second)
			_ = c.Process.Signal(syscall.SIGINT)
		}, args(a, PhaseRun)...)

	// go-ycsb's CREATE TABLE names no engine and no character set: the server's defaults decide.
	if _, err := db.Exec("SET GLOBAL default_storage_engine=InnoDB"); err != nil {
		t.Fatal(err)
	}
	inno := spec("a", 10, 400, 500, "ycsbinno", 2)
	run("load-a-innodb", "load 500 records of 10 x 400 with InnoDB as the server's default engine, 2 threads", srv+", default engine set to InnoDB", pwEnv, nil,
		args(inno, PhaseLoad)...)
	caps[len(caps)-1].Note += "; " + count("ycsbinno")
	if _, err := db.Exec("SET GLOBAL default_storage_engine=ROCKSDB"); err != nil {
		t.Fatal(err)
	}
	var charset string
	if err := db.QueryRow("SELECT @@character_set_server").Scan(&charset); err != nil {
		t.Fatal(err)
	}
	// 20 x 1000 passes latin1's row limit (1 byte a character) and not utf8mb4's, which the builder enforces.
	run("load-20x1000-latin1", "load 20 fields x 1000 with go-ycsb's own arguments: the server's character set is "+charset+", so the table is accepted", srv, pwEnv, nil,
		"load", "mysql", "-p", "mysql.host=127.0.0.1", "-p", fmt.Sprintf("mysql.port=%d", s.Port), "-p", "mysql.user=bench",
		"-p", PasswordProperty, "-p", "mysql.db=ycsbwide", "-p", "debug.pprof=127.0.0.1:0", "-p", "workload=core",
		"-p", "recordcount=10", "-p", "fieldcount=20", "-p", "fieldlength=1000")
	if _, err := db.Exec("CREATE TABLE ycsbwide.utf8mb4probe (YCSB_KEY VARCHAR(64) PRIMARY KEY, FIELD0 VARCHAR(16319)) DEFAULT CHARSET=utf8mb4"); err != nil {
		caps[len(caps)-1].Note += "; CREATE TABLE with one utf8mb4 VARCHAR(16319) beside the key: " + err.Error()
	}
	if _, err := db.Exec("CREATE TABLE ycsbwide.utf8mb4fits (YCSB_KEY VARCHAR(64) PRIMARY KEY, FIELD0 VARCHAR(16318)) DEFAULT CHARSET=utf8mb4"); err != nil {
		caps[len(caps)-1].Note += "; CREATE TABLE with one utf8mb4 VARCHAR(16318): " + err.Error()
	} else {
		caps[len(caps)-1].Note += "; CREATE TABLE with one utf8mb4 VARCHAR(16318) beside the key: accepted"
	}

	// Failures.
	small := spec("a", 1, 4096, 100, "ycsb", 1)
	small.OperationCount = 100
	run("fail-wrong-password", "load with a wrong password", srv, []string{PasswordEnv + "=wrong-password"}, nil,
		args(small, PhaseLoad)...)
	nodb := small
	nodb.DB = "nosuchdb"
	run("fail-no-database", "run against a database that does not exist", srv, pwEnv, nil, args(nodb, PhaseRun)...)
	run("fail-bad-workload", "-p workload=nosuch after the builder's (not a registered workload): go-ycsb panics", srv, pwEnv, nil,
		args(small, PhaseRun, "-p", "workload=nosuch")...)
	run("fail-bad-distribution", "-p requestdistribution=nosuch after the builder's", srv, pwEnv, nil,
		args(small, PhaseRun, "-p", "requestdistribution=nosuch")...)
	down := small
	down.Port = mysqltest.FreePort(t)
	run("fail-server-down", "nothing listens on the port", "none", pwEnv, nil, args(down, PhaseRun)...)
	gone := spec("a", 10, 100, 1000, "ycsb", 2)
	gone.ReportIntervalSec = 1
	run("fail-server-gone", "run workload A until stopped; the server is shut down 3 s in", srv, pwEnv, func(*exec.Cmd) {
		time.Sleep(3 * time.Second)
		db.Close()
		s.Stop()
	}, args(gone, PhaseRun)...)

	b, err := json.MarshalIndent(map[string]any{"captured": time.Now().UTC().Format(time.RFC3339), "captures": caps}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "captures.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
