package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

// TestRealServerFailureReasons makes real sysbench and the runner's own SQL fail against a private MariaDB in
// each way the issue names, and checks the reason the summary carries: access denied, missing tables, no
// server, the server going away mid-run, and Debian's sysbench crashing when it reconnects.
func TestRealServerFailureReasons(t *testing.T) {
	mysqltest.Require(t)
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("needs sysbench (apt-get install sysbench)")
	}
	p := mysqltest.NewPaths(t)
	cnf, err := mycnf.Generate(mycnf.Input{Flavor: mycnf.FlavorMariaDB, Engine: mycnf.EngineRocksDB, Profile: mycnf.ProfileWorkload,
		MemoryLimitBytes: 1 * mycnf.GiB, DataDir: p.DataDir, Socket: p.Socket, PidFile: p.PidFile, Port: int32(p.Port)})
	if err != nil {
		t.Fatal(err)
	}
	s := mysqltest.Start(t, cnf)
	admin := s.Open("")
	for _, q := range []string{"CREATE DATABASE sbtest", "CREATE DATABASE sbempty",
		"CREATE USER bench@'%' IDENTIFIED BY 'right-password'", "GRANT ALL ON sbtest.* TO bench@'%'", "GRANT ALL ON sbempty.* TO bench@'%'"} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	admin.Close()

	invoke := func(port int, pw string, args ...string) benchresult.Summary {
		t.Helper()
		term := filepath.Join(t.TempDir(), "termination-log")
		common := []string{"--termination-log=" + term, "--sysbench=" + sb, "--workload=oltp_read_write", "--tables=2",
			"--table-size=1000", "--threads=2", "--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", port),
			"--mysql-user=bench", "--storage-engine=rocksdb", "--connect-timeout=2s"}
		getenv := func(k string) string {
			if k == PasswordVar {
				return pw
			}
			return os.Getenv(k)
		}
		var out, errb bytes.Buffer
		code := Main(context.Background(), append(append([]string{args[0]}, common...), args[1:]...), &out, &errb, getenv)
		b, err := os.ReadFile(term)
		if err != nil {
			t.Fatalf("%v: no termination log (exit %d): %v\n%s", args, code, err, errb.String())
		}
		sum, err := benchresult.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if (code == 0) != sum.OK {
			t.Errorf("%v: exit %d but ok=%v", args, code, sum.OK)
		}
		return sum
	}
	expect := func(sum benchresult.Summary, reason, cause string) {
		t.Helper()
		first, _, _ := strings.Cut(sum.Error, "\n")
		if sum.OK || sum.Reason != reason || !strings.Contains(first, cause) {
			t.Errorf("got ok=%v reason %q, first line %q; want %s and %q\nerror:\n%s", sum.OK, sum.Reason, first, reason, cause, sum.Error)
		}
	}

	if sum := invoke(s.Port, "right-password", "prepare", "--mysql-db=sbtest"); !sum.OK {
		t.Fatalf("prepare: %s", sum.Error)
	}
	expect(invoke(s.Port, "wrong-password", "run", "--mysql-db=sbtest", "--time=3"), "AccessDenied", "error 1045: Access denied for user 'bench'")
	expect(invoke(s.Port, "wrong-password", "verify", "--mysql-db=sbtest"), "AccessDenied", "Error 1045 (28000): Access denied for user 'bench'")
	expect(invoke(s.Port, "right-password", "run", "--mysql-db=sbempty", "--time=3"), "MissingTables", "1146 \"Table 'sbempty.sbtest1' doesn't exist\"")
	expect(invoke(s.Port, "right-password", "verify", "--mysql-db=sbempty"), "MissingTables", "Error 1146 (42S02): Table 'sbempty.sbtest1' doesn't exist")
	closed := mysqltest.FreePort(t)
	expect(invoke(closed, "right-password", "run", "--mysql-db=sbtest", "--time=3"), "ConnectionFailed", "error 2002: Can't connect to server")
	expect(invoke(closed, "right-password", "verify", "--mysql-db=sbtest"), "ConnectionFailed", "connection refused")

	// sysbench cannot reach a server the runner has just reached, as under QEMU's emulation: a wrapper sends the
	// first prepare's sysbench to the closed port. The runner drops, waits and prepares again, and says so.
	once := filepath.Join(t.TempDir(), "redirected")
	wrapper := filepath.Join(t.TempDir(), "sysbench")
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" != --version ] && [ ! -e %[1]q ]; then
	: >%[1]q
	for a; do
		shift
		case $a in --mysql-port=*) a=--mysql-port=%[2]d ;; esac
		set -- "$@" "$a"
	done
fi
exec %[3]q "$@"
`, once, closed, sb)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	retried := invoke(s.Port, "right-password", "prepare", "--mysql-db=sbtest", "--drop-existing", "--sysbench="+wrapper)
	if _, err := os.Stat(once); err != nil || !retried.OK || retried.PrepareAttempts != 2 {
		t.Errorf("prepare whose first sysbench could not connect: ok=%v after %d attempts (wrapper used: %v)\n%s",
			retried.OK, retried.PrepareAttempts, err == nil, retried.Error)
	}
	// without --drop-existing nothing is tried twice: a second attempt would meet the first one's tables
	if err := os.Remove(once); err != nil {
		t.Fatal(err)
	}
	expect(invoke(s.Port, "right-password", "prepare", "--mysql-db=sbempty", "--sysbench="+wrapper), "ConnectionFailed", "error 2002: Can't connect to server")

	// The server goes away 2 s into a run.
	goneDuring := func(extra ...string) benchresult.Summary {
		done := make(chan benchresult.Summary, 1)
		go func() {
			done <- invoke(s.Port, "right-password", append([]string{"run", "--mysql-db=sbtest", "--time=8"}, extra...)...)
		}()
		time.Sleep(2 * time.Second)
		s.Stop()
		sum := <-done
		s.Restart(cnf)
		return sum
	}
	expect(goneDuring(), "ConnectionLost", "error 2013 (Lost connection to server during query)")
	// With every error ignored, sysbench reconnects, which Debian's 1.0.20 with libmariadb does not survive.
	expect(goneDuring("--mysql-ignore-errors=all"), "Crashed", "killed by signal 11 (segmentation fault)")
}
