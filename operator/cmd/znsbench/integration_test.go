package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/operator/internal/sysbench"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedmetrics"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

// TestRealServer is the benchmark path for real: Debian's sysbench against
// a private MariaDB with MyRocks and with InnoDB, following the seed
// methodology (prepare on the bulk-load profile, restart on the workload
// profile, verify the rows, run), then checks that the runner's summary is
// what sysbench printed.
func TestRealServer(t *testing.T) {
	mysqltest.Require(t)
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("needs sysbench (apt-get install sysbench)")
	}
	for _, engine := range []mycnf.Engine{mycnf.EngineRocksDB, mycnf.EngineInnoDB} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			realServer(t, sb, engine)
		})
	}
}

type invocation struct {
	code           int
	stdout, stderr string
	summary        benchresult.Summary
}

func realServer(t *testing.T, sb string, engine mycnf.Engine) {
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
	admin := s.Open("")
	// Two users: the password of the first has what breaks naive quoting
	// and sysbench's --config-file reader (spaces); the second goes the
	// config-file way.
	const pwEnv = `p w#'"x\y`
	const pwFile = `q#r=s'"t`
	// No CREATE DATABASE: prepare --create-database makes it, as in a fresh pod.
	for _, q := range []string{
		"CREATE USER bench@'%' IDENTIFIED BY " + sqlString(pwEnv),
		"GRANT ALL ON sbtest.* TO bench@'%'",
		// InnoDB's tablespace sizes are in information_schema views that need PROCESS (the operator runs as root).
		"GRANT PROCESS ON *.* TO bench@'%'",
		"CREATE USER bench2@'%' IDENTIFIED BY " + sqlString(pwFile),
		"GRANT ALL ON sbtest.* TO bench2@'%'",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	admin.Close()

	common := []string{"--sysbench=" + sb, "--workload=oltp_read_write", "--tables=2", "--table-size=2000", "--threads=2",
		"--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", s.Port), "--mysql-user=bench", "--mysql-db=sbtest",
		"--storage-engine=" + string(engine), "--target=" + string(engine)}
	invoke := func(pw string, args ...string) invocation {
		t.Helper()
		term := filepath.Join(t.TempDir(), "termination-log")
		var out, errb bytes.Buffer
		getenv := func(k string) string {
			if k == PasswordVar {
				return pw
			}
			return os.Getenv(k)
		}
		code := Main(context.Background(), append(append([]string{args[0], "--termination-log=" + term}, common...), args[1:]...), &out, &errb, getenv)
		inv := invocation{code: code, stdout: out.String(), stderr: errb.String()}
		b, err := os.ReadFile(term)
		if err != nil {
			t.Fatalf("%s: no termination log: %v", args[0], err)
		}
		if inv.summary, err = benchresult.Decode(b); err != nil {
			t.Fatalf("%s: %v", args[0], err)
		}
		if strings.Contains(inv.stdout+inv.stderr+string(b), pwEnv) {
			t.Errorf("%s: password printed", args[0])
		}
		return inv
	}
	mustOK := func(inv invocation, what string) {
		t.Helper()
		if inv.code != 0 || !inv.summary.OK {
			t.Fatalf("%s: exit %d, error %s\nstdout:\n%s\nstderr:\n%s", what, inv.code, inv.summary.Error, inv.stdout, inv.stderr)
		}
	}

	prep := invoke(pwEnv, "prepare", "--create-database")
	mustOK(prep, "prepare")
	if !strings.Contains(prep.stdout, "Inserting 2000 records into 'sbtest2'") {
		t.Errorf("prepare output not streamed:\n%s", prep.stdout)
	}
	db := s.Open("sbtest")
	wantEngine := map[mycnf.Engine]string{mycnf.EngineRocksDB: "ROCKSDB", mycnf.EngineInnoDB: "InnoDB"}[engine]
	var got string
	if err := db.QueryRow("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest' AND TABLE_NAME='sbtest2'").Scan(&got); err != nil || got != wantEngine {
		t.Errorf("sbtest2 engine %q, %v; want %s", got, err, wantEngine)
	}
	db.Close()

	// A second prepare on the same database: sysbench alone refuses (the tables exist), with --drop-existing
	// the earlier tables go first and the data is fresh.
	again := invoke(pwEnv, "prepare")
	if again.code == 0 && again.summary.OK {
		t.Errorf("a second prepare over existing tables succeeded without --drop-existing:\n%s", again.stdout)
	}
	db = s.Open("sbtest")
	if _, err := db.Exec("DELETE FROM sbtest1 WHERE id <= 10"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	again = invoke(pwEnv, "prepare", "--create-database", "--drop-existing")
	mustOK(again, "prepare --drop-existing")
	if !strings.Contains(again.stderr, "dropped 2 table(s) an earlier prepare left in sbtest: sbtest1, sbtest2") {
		t.Errorf("prepare --drop-existing does not say what it dropped:\n%s", again.stderr)
	}

	s.Restart(gen(mycnf.ProfileWorkload))
	// The database pod's metrics sidecar as `znsdb metrics --datadir` serves it, on this server's datadir.
	sidecar := httptest.NewServer(zonedmetrics.New(zonedmetrics.Config{Datadir: p.DataDir}).Handler())
	defer sidecar.Close()
	ver := invoke(pwEnv, "verify", "--metrics-url="+sidecar.URL+"/metrics", "--usable-source="+UsableStatfs)
	mustOK(ver, "verify")
	if ver.summary.RowsFound != 4000 || ver.summary.RowsExpected != 4000 {
		t.Errorf("verify: %d of %d rows", ver.summary.RowsFound, ver.summary.RowsExpected)
	}
	checkSizeAgainstDatadir(t, ver.summary, engine, p.DataDir)
	var st syscall.Statfs_t
	if err := syscall.Statfs(p.DataDir, &st); err != nil {
		t.Fatal(err)
	}
	unit := st.Frsize
	if unit == 0 {
		unit = st.Bsize
	}
	if want := int64(st.Blocks) * unit; ver.summary.UsableBytes != want || ver.summary.UsableSource != UsableStatfs {
		t.Errorf("verify: usable %d (%s), statfs of the datadir says %d", ver.summary.UsableBytes, ver.summary.UsableSource, want)
	}

	dev := deviceOf(t, p.DataDir)
	runArgs := []string{"run", "--time=5", "--report-interval=1"}
	if dev != "" {
		runArgs = append(runArgs, "--device="+dev, "--sys-block=/sys/block")
	}
	run := invoke(pwEnv, runArgs...)
	mustOK(run, "run")
	checkRunAgainstSysbench(t, run, dev)
	if run.summary.DataBytes <= 0 || run.summary.DataBytesSource != ver.summary.DataBytesSource {
		t.Errorf("run: size %d (%s), after verify %d (%s)", run.summary.DataBytes, run.summary.DataBytesSource, ver.summary.DataBytes, ver.summary.DataBytesSource)
	}

	// The same run from "another node": the runner asks a real observer to read the device, as a client away
	// from its database does; the figures are the observer's.
	if dev != "" {
		obs := startObserve(t, "--device="+dev, "--sys-block=/sys/block", "--target=real", "--phase=run")
		away := invoke(pwEnv, "run", "--time=5", "--report-interval=1", "--observer="+obs.url)
		mustOK(away, "run with --observer")
		checkRunAgainstSysbench(t, away, dev)
		if code := obs.exit(t); code != 0 {
			t.Errorf("the observer exited %d after the run: %s", code, obs.stderr)
		}
		if sum := obs.summary(t); !sum.Sampled || sum.WrittenBytes == nil || *sum.WrittenBytes != away.summary.DeviceWrittenBytes {
			t.Errorf("the observer's summary %+v, the runner's %d bytes", sum, away.summary.DeviceWrittenBytes)
		}
	} else {
		t.Logf("the datadir is on no whole-disk device (overlay, tmpfs): the run with an observer needs one")
	}

	// Rows lost behind sysbench's back: verify fails and says where.
	db = s.Open("sbtest")
	if _, err := db.Exec("DELETE FROM sbtest2 WHERE id <= 37"); err != nil {
		t.Fatal(err)
	}
	var n2 int64
	if err := db.QueryRow("SELECT COUNT(*) FROM sbtest2").Scan(&n2); err != nil {
		t.Fatal(err)
	}
	lost := invoke(pwEnv, "verify")
	if lost.code != 1 || lost.summary.OK || !strings.Contains(lost.summary.Error, "row count mismatch") ||
		!strings.Contains(lost.summary.Error, fmt.Sprintf("sbtest2 has %d rows", n2)) {
		t.Errorf("verify after deleting rows: exit %d, %q", lost.code, lost.summary.Error)
	}

	// cleanup, the config-file way.
	clean := invoke(pwFile, "cleanup", "--password-mode=config-file", "--mysql-user=bench2")
	mustOK(clean, "cleanup")
	var tables int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest'").Scan(&tables); err != nil || tables != 0 {
		t.Errorf("after cleanup %d tables, %v", tables, err)
	}
	if strings.Contains(clean.stdout+clean.stderr, pwFile) {
		t.Error("config-file password printed")
	}
}

// checkSizeAgainstDatadir compares the size the runner read from the server with the files in its datadir:
// InnoDB's sysbench tablespaces exactly; MyRocks' SST blocks (data, index, filter) are most of its .sst files,
// the rest being each file's footer and meta blocks.
func checkSizeAgainstDatadir(t *testing.T, s benchresult.Summary, engine mycnf.Engine, dataDir string) {
	t.Helper()
	var files int64
	err := filepath.WalkDir(dataDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		switch {
		case engine == mycnf.EngineRocksDB && strings.HasSuffix(name, ".sst"),
			engine == mycnf.EngineInnoDB && filepath.Base(filepath.Dir(path)) == "sbtest" && strings.HasPrefix(name, "sbtest") && strings.HasSuffix(name, ".ibd"):
			info, err := d.Info()
			if err != nil {
				return err
			}
			files += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: the runner read %d bytes (%s), the datadir's files hold %d", engine, s.DataBytes, s.DataBytesSource, files)
	if files == 0 {
		t.Fatalf("no data files found in %s", dataDir)
	}
	switch engine {
	case mycnf.EngineInnoDB:
		if s.DataBytesSource != SizeInnoDBTablespace || s.DataBytes != files {
			t.Errorf("InnoDB size %d (%s), the .ibd files hold %d", s.DataBytes, s.DataBytesSource, files)
		}
	case mycnf.EngineRocksDB:
		if s.DataBytesSource != SizeRocksDBSST || s.DataBytes > files || s.DataBytes < files/2 {
			t.Errorf("MyRocks size %d (%s), the .sst files hold %d", s.DataBytes, s.DataBytesSource, files)
		}
	}
}

// checkRunAgainstSysbench parses the streamed sysbench output on its own
// and compares it with the runner's summary and series.
func checkRunAgainstSysbench(t *testing.T, run invocation, dev string) {
	t.Helper()
	var raw []string
	for _, l := range strings.Split(run.stdout, "\n") {
		if !strings.HasPrefix(l, "ZNSBENCH-") {
			raw = append(raw, l)
		}
	}
	res, err := sysbench.ParseString(strings.Join(raw, "\n"))
	if err != nil {
		t.Fatalf("sysbench's own output: %v\n%s", err, run.stdout)
	}
	s, sb := run.summary, res.Summary
	if s.Transactions != sb.Transactions || s.TPS != sb.TPS || s.QPS != sb.QPS || s.LatencyAvgMS != sb.LatencyAvgMS ||
		s.LatencyPctMS != sb.LatencyPctMS || s.LatencyMaxMS != sb.LatencyMaxMS || s.Percentile != sb.Percentile ||
		s.DurationSec != sb.TotalTimeSec || s.IgnoredErrors != sb.IgnoredErrors || s.ErrorsPerSec != sb.IgnoredErrorsPerSec ||
		s.Intervals != len(res.Intervals) || s.SysbenchVersion != res.Version {
		t.Errorf("runner summary %+v\ndisagrees with sysbench's %+v (%d intervals)", s, *sb, len(res.Intervals))
	}
	// Plausible: it ran, for about the time asked, one interval a second.
	if s.TPS <= 0 || s.Transactions <= 0 || s.Percentile != 95 || s.LatencyPctMS <= 0 {
		t.Errorf("implausible run %+v", s)
	}
	if s.DurationSec < 4.9 || s.DurationSec > 8 || s.Intervals < 4 || s.Intervals > 6 {
		t.Errorf("%d intervals over %vs for --time=5 --report-interval=1", s.Intervals, s.DurationSec)
	}
	series, ok, err := benchresult.FindSeries(run.stdout)
	if !ok || err != nil || series.Len() != len(res.Intervals) {
		t.Fatalf("series: %v %v, %d points for %d intervals", ok, err, series.Len(), len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		if series.Time[i] != iv.Time || series.TPS[i] != iv.TPS || series.LatencyMS[i] != iv.LatencyMS || series.ErrorsPerSec[i] != iv.ErrorsPerSec {
			t.Errorf("series point %d differs from interval %+v", i, iv)
		}
	}
	if dev != "" {
		if s.Device != dev || math.Abs(s.BytesPerTransaction-float64(s.DeviceWrittenBytes)/float64(s.Transactions)) > 1e-6 {
			t.Errorf("device %q: %d bytes written, %v per transaction", s.Device, s.DeviceWrittenBytes, s.BytesPerTransaction)
		}
		t.Logf("%s: %.2f tps, p95 %.2f ms, tps reldev %.1f%%, %d bytes written to %s (shared with everything else on it)",
			s.Target, s.TPS, s.LatencyPctMS, s.TPSRelDevPct, s.DeviceWrittenBytes, dev)
	}
}

// deviceOf names the whole-disk block device under /sys/block that holds
// path, or "" when there is none (overlay, tmpfs, a device mapper stack).
func deviceOf(t *testing.T, path string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)
	minor := dev&0xff | (dev>>12)&^uint64(0xff)
	link, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor))
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(link, "partition")); err == nil {
		link = filepath.Dir(link)
	}
	name := filepath.Base(link)
	if _, err := os.Stat(filepath.Join("/sys/block", name, "stat")); err != nil {
		return ""
	}
	return name
}

func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
