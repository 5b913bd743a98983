package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
)

// TestMycnfMatchesGenerator: the command prints exactly what the operator's generator makes for the same input.
func TestMycnfMatchesGenerator(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"mycnf", "--flavor", "mariadb", "--engine", "rocksdb", "--profile", "bulkload",
		"--memory", "1Gi", "--datadir", "/d", "--socket", "/s.sock", "--pid-file", "/p.pid", "--port", "13306",
		"--set", "rocksdb-max-background-jobs=4"}, deps{stdout: &out, stderr: &errb})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want, err := mycnf.Generate(mycnf.Input{Flavor: mycnf.FlavorMariaDB, Engine: mycnf.EngineRocksDB, Profile: mycnf.ProfileBulkLoad,
		MemoryLimitBytes: 1 << 30, DataDir: "/d", Socket: "/s.sock", PidFile: "/p.pid", Port: 13306, ServerID: 1,
		Overrides: map[string]string{"rocksdb-max-background-jobs": "4"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("znsdb mycnf printed\n%s\nthe generator makes\n%s", out.String(), want)
	}
}

// TestMycnfVersion: --mysql-version reaches the generator (8.4 has no ssl option) and 8.4's refusals.
func TestMycnfVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"mycnf", "--mysql-version", "8.4", "--engine", "innodb"},
		deps{stdout: &out, stderr: &errb}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want, err := mycnf.Generate(mycnf.Input{Flavor: mycnf.FlavorPercona, Version: mycnf.Version84, Engine: mycnf.EngineInnoDB,
		Profile: mycnf.ProfileWorkload, MemoryLimitBytes: 2 << 30, DataDir: "/var/lib/mysql/data",
		Socket: "/var/run/mysqld/mysqld.sock", PidFile: "/var/run/mysqld/mysqld.pid", Port: 3306, ServerID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || strings.Contains(out.String(), "\nssl=") {
		t.Errorf("znsdb mycnf --mysql-version 8.4 printed\n%s\nthe generator makes\n%s", out.String(), want)
	}
	out.Reset()
	errb.Reset()
	code := run(context.Background(), []string{"mycnf", "--mysql-version", "8.4", "--zenfs-device", "nvme0n2"},
		deps{stdout: &out, stderr: &errb})
	if code != exitRefused || !strings.Contains(errb.String(), "8.1.0-1") {
		t.Errorf("ZenFS with 8.4: exit %d, stderr %q: want a refusal naming Percona's removal in 8.1.0-1", code, errb.String())
	}
}

func TestMycnfRefusesForcedKeys(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"mycnf", "--set", "rocksdb_bulk_load=1"}, deps{stdout: &out, stderr: &errb})
	if code != exitRefused || !strings.Contains(errb.String(), "bulk") {
		t.Errorf("exit %d, stderr %q: want a refusal naming the bulk load key", code, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("printed a config despite the error:\n%s", out.String())
	}
}
