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
