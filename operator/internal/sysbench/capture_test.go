//go:build capture

package sysbench

// TestCapture regenerates the real sysbench outputs under testdata/ (see
// testdata/README.md). It is behind the "capture" build tag because its
// output is new measurements each time, which the parser tests then pin:
//
//	go test -tags capture -run TestCapture -v ./operator/internal/sysbench/
//
// Needs Debian's sysbench, mariadb-server and mariadb-plugin-rocksdb.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

type capture struct {
	File   string   `json:"file"`
	Stderr string   `json:"stderr,omitempty"`
	Args   []string `json:"args"`
	Exit   int      `json:"exit"`
	Server string   `json:"server,omitempty"`
	Note   string   `json:"note"`
}

func TestCapture(t *testing.T) {
	mysqltest.Require(t)
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("needs sysbench (apt-get install sysbench)")
	}
	var caps []capture
	run := func(name, note, server string, during func(), args ...string) {
		t.Helper()
		cmd := exec.Command(sb, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if during != nil {
			during()
		}
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		c := capture{File: name + ".txt", Args: append([]string{"sysbench"}, args...), Exit: code, Server: server, Note: note}
		if err := os.WriteFile(filepath.Join("testdata", c.File), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if errb.Len() > 0 {
			c.Stderr = name + ".stderr"
			if err := os.WriteFile(filepath.Join("testdata", c.Stderr), errb.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: exit %d, %d bytes stdout, %d bytes stderr", name, code, out.Len(), errb.Len())
		caps = append(caps, c)
	}

	run("version", "sysbench --version", "", nil, "--version")

	for _, engine := range []mycnf.Engine{mycnf.EngineRocksDB, mycnf.EngineInnoDB} {
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
		db := s.Open("")
		var version string
		if err := db.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
			t.Fatal(err)
		}
		server := fmt.Sprintf("MariaDB %s, engine %s, mycnf flavor mariadb memory 1GiB", version, engine)
		for _, d := range []string{"sbtest", "sberr", "sbdrop", "sbsec"} {
			if _, err := db.Exec("CREATE DATABASE " + d); err != nil {
				t.Fatal(err)
			}
		}
		conn := func(dbname string) []string {
			return []string{"--db-driver=mysql", "--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", s.Port),
				"--mysql-user=root", "--mysql-db=" + dbname, "--mysql-storage-engine=" + string(engine), "--create_secondary=off"}
		}
		args := func(script, dbname string, extra ...string) []string {
			return append(append([]string{script}, conn(dbname)...), extra...)
		}
		e := string(engine)
		run("prepare-"+e, "prepare on the bulkload profile", server+" bulkload", nil,
			args("oltp_read_write", "sbtest", "--tables=2", "--table-size=2000", "--threads=2", "prepare")...)
		if engine == mycnf.EngineRocksDB {
			run("fatal-prepare-exists", "prepare again: tables exist, FATAL with a multi-line query", server+" bulkload", nil,
				args("oltp_read_write", "sbtest", "--tables=2", "--table-size=2000", "--threads=2", "prepare")...)
		}
		db.Close()
		s.Restart(gen(mycnf.ProfileWorkload))
		server += " workload"

		run("run-"+e+"-ri1", "run, report interval 1, default percentile", server, nil,
			args("oltp_read_write", "sbtest", "--tables=2", "--table-size=2000", "--threads=2", "--time=5", "--report-interval=1", "run")...)
		if engine == mycnf.EngineInnoDB {
			run("run-innodb-p99", "run with --percentile=99", server, nil,
				args("oltp_write_only", "sbtest", "--tables=2", "--table-size=2000", "--threads=2", "--time=5", "--report-interval=1", "--percentile=99", "run")...)
			continue
		}
		run("run-rocksdb-p99", "run with --percentile=99", server, nil,
			args("oltp_update_index", "sbtest", "--tables=2", "--table-size=2000", "--threads=2", "--time=5", "--report-interval=1", "--percentile=99", "run")...)
		run("run-rocksdb-noreport", "run without intermediate reports", server, nil,
			args("oltp_point_select", "sbtest", "--tables=2", "--table-size=2000", "--threads=2", "--time=2", "run")...)

		// Lock conflicts: 4 threads on a 10-row table; MyRocks reports lock
		// wait timeouts (1205), which sysbench ignores by default.
		run("prepare-rocksdb-tiny", "prepare a 10-row table for the error run", server, nil,
			args("oltp_read_write", "sberr", "--tables=1", "--table-size=10", "prepare")...)
		run("run-rocksdb-errors", "ignored lock errors (err/s > 0)", server, nil,
			args("oltp_read_write", "sberr", "--tables=1", "--table-size=10", "--threads=4", "--time=5", "--report-interval=1", "run")...)

		run("prepare-rocksdb-secondary", "prepare with --create_secondary=on", server, nil,
			"oltp_read_write", "--db-driver=mysql", "--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", s.Port),
			"--mysql-user=root", "--mysql-db=sbsec", "--mysql-storage-engine=rocksdb", "--create_secondary=on",
			"--tables=2", "--table-size=100", "prepare")

		run("fatal-wrong-db", "database does not exist", server, nil,
			args("oltp_read_write", "nosuchdb", "--tables=2", "--table-size=2000", "--threads=2", "--time=5", "--report-interval=1", "run")...)
		run("fatal-server-down", "nothing listens on the port", "none", nil,
			"oltp_read_write", "--db-driver=mysql", "--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", mysqltest.FreePort(t)),
			"--mysql-user=root", "--mysql-db=sbtest", "--tables=2", "--table-size=2000", "--time=5", "--report-interval=1", "run")
		run("bad-percentile", "sysbench 1.0 takes integer percentiles only", server, nil,
			args("oltp_read_write", "sbtest", "--tables=2", "--table-size=2000", "--time=5", "--percentile=99.9", "run")...)

		run("prepare-rocksdb-drop", "prepare the tables the mid-run failure drops", server, nil,
			args("oltp_read_only", "sbdrop", "--tables=2", "--table-size=100", "prepare")...)
		drop := func() {
			time.Sleep(2500 * time.Millisecond)
			if _, err := s.Open("").Exec("DROP TABLE sbdrop.sbtest2"); err != nil {
				t.Fatal(err)
			}
		}
		run("fatal-midrun", "a table dropped 2.5 s into the run: intervals, then FATAL, no summary", server, drop,
			args("oltp_read_only", "sbdrop", "--tables=2", "--table-size=100", "--threads=2", "--time=5", "--report-interval=1", "run")...)
	}

	b, err := json.MarshalIndent(map[string]any{
		"captured": time.Now().UTC().Format(time.RFC3339),
		"captures": caps,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "captures.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d captures:\n%s", len(caps), strings.Join(func() []string {
		var n []string
		for _, c := range caps {
			n = append(n, c.File)
		}
		return n
	}(), "\n"))
}
