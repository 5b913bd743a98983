//go:build capture

package ycsb

// TestCaptureSweep records a small thread and rate sweep of workload A under testdata/sweep/ (README.md there):
//
//	GO_YCSB=/tmp/ycsb-bin/go-ycsb go test -tags capture -run TestCaptureSweep -v ./operator/internal/ycsb/

import (
	"bytes"
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

func TestCaptureSweep(t *testing.T) {
	mysqltest.Require(t)
	bin := goYCSB(t)
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
	if _, err := db.Exec("CREATE DATABASE ycsb"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	spec := Spec{Workload: "a", RecordCount: 20000, FieldCount: 1, FieldLength: 4096, Distribution: "uniform",
		Threads: LoadThreads("rocksdb", 4), Host: "127.0.0.1", Port: s.Port, User: "root", DB: "ycsb"}
	exec1 := func(name string, args []string, stopAfter time.Duration) {
		cmd := exec.Command(bin, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if stopAfter > 0 {
			time.Sleep(stopAfter)
			_ = cmd.Process.Signal(syscall.SIGINT)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out.String())
		}
		if err := os.WriteFile(filepath.Join("testdata", "sweep", name+".txt"), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join("testdata", "sweep"), 0o755); err != nil {
		t.Fatal(err)
	}
	args, err := spec.Args(PhaseLoad)
	if err != nil {
		t.Fatal(err)
	}
	exec1("load", args, 0)
	s.Restart(gen(mycnf.ProfileWorkload))
	for _, tc := range []struct {
		threads, rate int
	}{{1, 0}, {4, 0}, {16, 0}, {16, 1000}, {16, 3000}} {
		spec.Threads, spec.TargetOpsPerSec = tc.threads, tc.rate
		args, err := spec.Args(PhaseRun)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("run-threads%d", tc.threads)
		if tc.rate > 0 {
			name += fmt.Sprintf("-rate%d", tc.rate)
		}
		exec1(name, args, 8*time.Second)
	}
}
