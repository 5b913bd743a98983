//go:build capture

package sysbench

// TestCaptureFailures records real sysbench failures under testdata/failures/ (see its README.md): the
// outputs the runner classifies into failure reasons. It is separate from TestCapture so that re-recording
// failures leaves the pinned success captures alone:
//
//	go test -tags capture -run TestCaptureFailures -v ./operator/internal/sysbench/
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
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

type failureCapture struct {
	File   string   `json:"file"`
	Stderr string   `json:"stderr,omitempty"`
	Args   []string `json:"args"`
	Exit   int      `json:"exit"`
	// Signal is the signal that killed sysbench (the shell would report exit 128+Signal).
	Signal int    `json:"signal,omitempty"`
	Server string `json:"server"`
	Note   string `json:"note"`
}

func TestCaptureFailures(t *testing.T) {
	mysqltest.Require(t)
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("needs sysbench (apt-get install sysbench)")
	}
	dir := filepath.Join("testdata", "failures")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var caps []failureCapture
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
		c := failureCapture{File: name + ".txt", Args: append([]string{"sysbench"}, args...), Server: server, Note: note}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			c.Exit = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				c.Signal = int(ws.Signal())
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.File), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if errb.Len() > 0 {
			c.Stderr = name + ".stderr"
			if err := os.WriteFile(filepath.Join(dir, c.Stderr), errb.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: exit %d signal %d, %d bytes stdout, %d bytes stderr", name, c.Exit, c.Signal, out.Len(), errb.Len())
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
	s := mysqltest.Start(t, gen(mycnf.ProfileWorkload))
	admin := s.Open("")
	var version string
	if err := admin.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	server := fmt.Sprintf("MariaDB %s, engine rocksdb, mycnf flavor mariadb memory 1GiB, workload profile", version)
	for _, q := range []string{
		"CREATE DATABASE sbtest", "CREATE DATABASE sbempty",
		"CREATE USER bench@'%' IDENTIFIED BY 'right-password'", "GRANT ALL ON sbtest.* TO bench@'%'",
		"CREATE USER reader@'%' IDENTIFIED BY 'reader-password'", "GRANT SELECT ON sbtest.* TO reader@'%'",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	admin.Close()
	conn := func(user, password, db string, extra ...string) []string {
		return append([]string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", s.Port),
			"--mysql-user=" + user, "--mysql-password=" + password, "--mysql-db=" + db, "--mysql-storage-engine=rocksdb",
			"--create_secondary=off", "--tables=2", "--table-size=1000", "--threads=2", "--report-interval=1"}, extra...)
	}
	run("prepare", "prepare the tables the runs below use", server, nil, conn("bench", "right-password", "sbtest", "prepare")...)
	run("access-denied", "wrong password: FATAL error 1045 at connect", server, nil,
		conn("bench", "wrong-password", "sbtest", "--time=5", "run")...)
	run("no-privilege", "a user that may only SELECT runs read_write: FATAL error 1142 on the first write", server, nil,
		conn("reader", "reader-password", "sbtest", "--time=5", "run")...)
	run("database-not-granted", "run against a database the user has no privileges on: FATAL error 1044 at connect", server, nil,
		conn("bench", "right-password", "sbempty", "--time=5", "run")...)
	admin = s.Open("")
	if _, err := admin.Exec("GRANT ALL ON sbempty.* TO bench@'%'"); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	run("missing-tables", "run against a database without the sysbench tables: FATAL error 1146 when preparing statements", server, nil,
		conn("bench", "right-password", "sbempty", "--time=5", "run")...)

	stopAfter := func(d time.Duration) func() {
		return func() {
			time.Sleep(d)
			s.Stop()
		}
	}
	run("server-gone", "the server is shut down 2.5 s into the run (default --mysql-ignore-errors): FATAL, no summary", server,
		stopAfter(2500*time.Millisecond), conn("bench", "right-password", "sbtest", "--time=8", "run")...)
	s.Restart(gen(mycnf.ProfileWorkload))
	run("server-gone-reconnect", "the same with --mysql-ignore-errors=all: sysbench 1.0.20 with libmariadb tries to reconnect", server,
		stopAfter(2500*time.Millisecond), conn("bench", "right-password", "sbtest", "--time=8", "--mysql-ignore-errors=all", "run")...)
	s.Restart(gen(mycnf.ProfileWorkload))

	b, err := json.MarshalIndent(map[string]any{"captured": time.Now().UTC().Format(time.RFC3339), "captures": caps}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "captures.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
