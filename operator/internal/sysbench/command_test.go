package sysbench

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func seedSpec() Spec {
	return Spec{
		Workload: "oltp_update_index", Tables: 20, TableSize: 250000000, Threads: 64,
		TimeSec: 60, ReportIntervalSec: 5,
		Host: "10.0.0.7", Port: 3306, User: "root", DB: "sbtest", StorageEngine: "rocksdb",
	}
}

func TestArgsSeed(t *testing.T) {
	// The seed's run command, minus the password, which never goes on argv.
	got, err := seedSpec().Args(PhaseRun)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"oltp_update_index", "--db-driver=mysql", "--mysql-host=10.0.0.7", "--mysql-port=3306",
		"--mysql-user=root", "--mysql-db=sbtest", "--mysql-storage-engine=rocksdb", "--create_secondary=off",
		"--tables=20", "--table-size=250000000", "--threads=64", "--time=60", "--report-interval=5", "run"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("run args (-want +got):\n%s", d)
	}

	s := seedSpec()
	s.Workload = "oltp_write_only"
	s.ScriptDir = "/usr/local/share/sysbench"
	s.Percentile = 99
	s.PSMode = "disable"
	s.IgnoreErrors = "1213,1020,1205,1062"
	got, err = s.Args(PhasePrepare)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"/usr/local/share/sysbench/oltp_write_only.lua", "--db-driver=mysql", "--mysql-host=10.0.0.7", "--mysql-port=3306",
		"--mysql-user=root", "--mysql-db=sbtest", "--mysql-storage-engine=rocksdb", "--create_secondary=off",
		"--db-ps-mode=disable", "--mysql-ignore-errors=1213,1020,1205,1062",
		"--tables=20", "--table-size=250000000", "--threads=64", "prepare"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("prepare args (-want +got):\n%s", d)
	}
	got, _ = s.Args(PhaseRun)
	if !contains(got, "--percentile=99") {
		t.Errorf("run args lack the percentile: %q", got)
	}

	s = seedSpec()
	s.Socket = "/run/mysqld/mysqld.sock"
	s.Host, s.Port = "", 0
	s.CreateSecondary = true
	got, err = s.Args(PhaseCleanup)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"oltp_update_index", "--db-driver=mysql", "--mysql-socket=/run/mysqld/mysqld.sock",
		"--mysql-user=root", "--mysql-db=sbtest", "--mysql-storage-engine=rocksdb", "--create_secondary=on",
		"--tables=20", "cleanup"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("cleanup args (-want +got):\n%s", d)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		phase Phase
		edit  func(*Spec)
		want  string
	}{
		{"unknown workload", PhaseRun, func(s *Spec) { s.Workload = "bulk_insert" }, "unknown workload"},
		{"path as workload", PhaseRun, func(s *Spec) { s.Workload = "../x" }, "unknown workload"},
		{"phase", Phase("warmup"), func(s *Spec) {}, "unknown phase"},
		{"tables", PhaseRun, func(s *Spec) { s.Tables = 0 }, "tables must be"},
		{"size", PhasePrepare, func(s *Spec) { s.TableSize = 0 }, "table size"},
		{"threads", PhaseRun, func(s *Spec) { s.Threads = 0 }, "threads must be"},
		{"unbounded run", PhaseRun, func(s *Spec) { s.TimeSec = 0 }, "time must be > 0"},
		{"percentile", PhaseRun, func(s *Spec) { s.Percentile = 101 }, "percentile must be"},
		{"no host", PhaseRun, func(s *Spec) { s.Host = "" }, "need a host or a socket"},
		{"port", PhaseRun, func(s *Spec) { s.Port = 70000 }, "port 70000"},
		{"host list", PhaseRun, func(s *Spec) { s.Host = "a,b" }, "commas"},
		{"socket list", PhaseRun, func(s *Spec) { s.Socket = "/a,/b" }, "commas"},
		{"db", PhaseRun, func(s *Spec) { s.DB = "sb-test" }, "plain identifier"},
		{"engine", PhaseRun, func(s *Spec) { s.StorageEngine = "rocksdb;drop" }, "storage engine"},
		{"user", PhaseRun, func(s *Spec) { s.User = "" }, "user"},
		{"ps mode", PhaseRun, func(s *Spec) { s.PSMode = "on" }, "db-ps-mode"},
		{"ignore errors", PhaseRun, func(s *Spec) { s.IgnoreErrors = "1213 1205" }, "ignore errors"},
		{"script dir", PhaseRun, func(s *Spec) { s.ScriptDir = "lua" }, "absolute"},
	} {
		s := seedSpec()
		tc.edit(&s)
		_, err := s.Args(tc.phase)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want error containing %q", tc.name, err, tc.want)
		}
	}
	// Cleanup needs no size and prepare no time.
	s := seedSpec()
	s.TableSize, s.TimeSec = 0, 0
	if _, err := s.Args(PhaseCleanup); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	s.TableSize = 10
	if _, err := s.Args(PhasePrepare); err != nil {
		t.Errorf("prepare without time: %v", err)
	}
	for _, w := range Workloads {
		s := seedSpec()
		s.Workload = w
		if _, err := s.Args(PhaseRun); err != nil {
			t.Errorf("%s: %v", w, err)
		}
	}
}

func TestConfigFileLine(t *testing.T) {
	if got, err := ConfigFileLine(`a#b=c"'\x`); err != nil || got != "mysql-password=a#b=c\"'\\x\n" {
		t.Errorf("ConfigFileLine = %q, %v", got, err)
	}
	for _, pw := range []string{"a b", " lead", "trail ", "tab\there"} {
		if _, err := ConfigFileLine(pw); err == nil {
			t.Errorf("ConfigFileLine(%q) accepted a password sysbench would split", pw)
		}
	}
}
