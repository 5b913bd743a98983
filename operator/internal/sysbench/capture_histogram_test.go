//go:build capture

package sysbench

// TestCaptureHistogram records real sysbench runs with --histogram=on under testdata/histogram (see the README
// there). Apart from TestCapture so that re-recording one does not replace the outputs the other pins:
//
//	go test -tags capture -run TestCaptureHistogram -v ./operator/internal/sysbench/

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

func TestCaptureHistogram(t *testing.T) {
	mysqltest.Require(t)
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("needs sysbench (apt-get install sysbench)")
	}
	dir := filepath.Join("testdata", "histogram")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var caps []capture
	for _, engine := range []mycnf.Engine{mycnf.EngineRocksDB, mycnf.EngineInnoDB} {
		p := mysqltest.NewPaths(t)
		cnf, err := mycnf.Generate(mycnf.Input{Flavor: mycnf.FlavorMariaDB, Engine: engine, Profile: mycnf.ProfileWorkload,
			MemoryLimitBytes: 1 * mycnf.GiB, DataDir: p.DataDir, Socket: p.Socket, PidFile: p.PidFile, Port: int32(p.Port)})
		if err != nil {
			t.Fatal(err)
		}
		s := mysqltest.Start(t, cnf)
		db := s.Open("")
		var version string
		if err := db.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE DATABASE sbtest"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		server := fmt.Sprintf("MariaDB %s, engine %s, mycnf flavor mariadb memory 1GiB, workload profile", version, engine)
		conn := []string{"--db-driver=mysql", "--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", s.Port),
			"--mysql-user=root", "--mysql-db=sbtest", "--mysql-storage-engine=" + string(engine), "--create_secondary=off",
			"--tables=2", "--table-size=5000"}
		run := func(name, note string, args ...string) {
			t.Helper()
			all := append(append([]string{}, args[:1]...), append(conn, args[1:]...)...)
			cmd := exec.Command(sb, all...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			code := 0
			if err := cmd.Run(); err != nil {
				code = -1
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
			}
			c := capture{File: name + ".txt", Args: append([]string{"sysbench"}, all...), Exit: code, Server: server, Note: note}
			if err := os.WriteFile(filepath.Join(dir, c.File), out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if errb.Len() > 0 {
				c.Stderr = name + ".stderr"
				_ = os.WriteFile(filepath.Join(dir, c.Stderr), errb.Bytes(), 0o644)
			}
			t.Logf("%s: exit %d, %d bytes", name, code, out.Len())
			caps = append(caps, c)
		}
		e := string(engine)
		run("prepare-"+e, "prepare (not parsed for the histogram)", "oltp_update_index", "--threads=2", "prepare")
		run("run-"+e+"-histogram", "--histogram=on, report interval 1, default percentile (95)",
			"oltp_update_index", "--threads=4", "--time=8", "--report-interval=1", "--histogram=on", "run")
		if engine == mycnf.EngineRocksDB {
			run("run-rocksdb-histogram-p99", "--histogram=on --percentile=99, no report interval",
				"oltp_read_write", "--threads=2", "--time=5", "--percentile=99", "--histogram=on", "run")
		}
	}
	b, err := json.MarshalIndent(map[string]any{"captured": time.Now().UTC().Format(time.RFC3339), "captures": caps}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "captures.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
