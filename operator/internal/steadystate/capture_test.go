//go:build capture

package steadystate

// TestCapture records the real series under testdata/ (see
// testdata/README.md): rounds of fio random writes on a file, and rounds of
// sysbench oltp_write_only against a private MariaDB with MyRocks. It is
// behind the "capture" build tag because every run is a new measurement,
// which real_test.go then pins:
//
//	go test -tags capture -run TestCapture -v -timeout 30m ./operator/internal/steadystate/
//
// Needs fio, sysbench, mariadb-server and mariadb-plugin-rocksdb, and a
// disk-backed temp dir (fio's direct I/O and MyRocks' O_DIRECT fail on tmpfs).

import (
	"bytes"
	"encoding/json"
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

const (
	fioRounds      = 20
	sysbenchRounds = 15
)

// round is one recorded run, listed in testdata/<series>/captures.json.
type round struct {
	File    string   `json:"file"`
	Args    []string `json:"args"`
	Started string   `json:"started"`
	// LoadAvg is /proc/loadavg when the round started: the machine is shared.
	LoadAvg string `json:"loadavg"`
}

type series struct {
	Captured string            `json:"captured"`
	Versions map[string]string `json:"versions"`
	Note     string            `json:"note"`
	Rounds   []round           `json:"rounds"`
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

func output(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// record runs argv and writes its stdout to testdata/dir/file.
func record(t *testing.T, s *series, dir, file string, argv ...string) {
	t.Helper()
	r := round{File: file, Args: argv, Started: time.Now().UTC().Format(time.RFC3339), LoadAvg: loadAvg()}
	cmd := exec.Command(argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s%s", argv, err, out.Bytes(), errb.Bytes())
	}
	if err := os.WriteFile(filepath.Join("testdata", dir, file), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s/%s: %d bytes, load %s", dir, file, out.Len(), r.LoadAvg)
	s.Rounds = append(s.Rounds, r)
}

func save(t *testing.T, dir string, s *series) {
	t.Helper()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", dir, "captures.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func freshDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join("testdata", dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join("testdata", dir), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestCaptureFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("needs fio")
	}
	work, err := os.MkdirTemp("/var/tmp", "steadystate-fio-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	const dir = "fio-randwrite"
	freshDir(t, dir)
	s := &series{
		Captured: time.Now().UTC().Format(time.RFC3339),
		Versions: map[string]string{"fio": output(t, "fio", "--version"), "kernel": output(t, "uname", "-r")},
		Note:     "one 1 GiB file, created by round 1 and kept across rounds (a preconditioning run)",
	}
	for i := 1; i <= fioRounds; i++ {
		record(t, s, dir, fmt.Sprintf("round-%02d.json", i), "fio",
			"--name=randwrite", "--filename="+filepath.Join(work, "file"), "--size=1g",
			"--rw=randwrite", "--bs=4k", "--ioengine=libaio", "--iodepth=16", "--direct=1",
			"--time_based", "--runtime=5", "--randrepeat=0", "--output-format=json")
	}
	save(t, dir, s)
}

func TestCaptureSysbench(t *testing.T) {
	mysqltest.Require(t)
	if _, err := exec.LookPath("sysbench"); err != nil {
		t.Skip("needs sysbench")
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
	srv := mysqltest.Start(t, gen(mycnf.ProfileBulkLoad))
	db := srv.Open("")
	var version string
	if err := db.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE DATABASE sbtest"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	const dir = "sysbench-write-only"
	freshDir(t, dir)
	s := &series{
		Captured: time.Now().UTC().Format(time.RFC3339),
		Versions: map[string]string{"sysbench": output(t, "sysbench", "--version"), "server": "MariaDB " + version,
			"kernel": output(t, "uname", "-r")},
		Note: "MyRocks; prepare on mycnf's bulkload profile (prepare.txt), then the server restarted on the " +
			"workload profile (flavor mariadb, memory limit 1 GiB) and the rounds run back to back",
	}
	conn := []string{"--db-driver=mysql", "--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", srv.Port),
		"--mysql-user=root", "--mysql-db=sbtest", "--mysql-storage-engine=rocksdb", "--tables=4", "--table-size=100000"}
	argv := func(extra ...string) []string {
		return append(append([]string{"sysbench", "oltp_write_only"}, conn...), extra...)
	}
	record(t, s, dir, "prepare.txt", argv("--threads=4", "prepare")...)
	srv.Restart(gen(mycnf.ProfileWorkload))
	for i := 1; i <= sysbenchRounds; i++ {
		record(t, s, dir, fmt.Sprintf("round-%02d.txt", i), argv("--threads=4", "--time=10", "--report-interval=1", "run")...)
	}
	save(t, dir, s)
}
