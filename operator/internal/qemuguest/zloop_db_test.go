//go:build !zns_guest

package qemuguest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/test/qemu"
)

// zloopDBScript is one boot of TestZloopDatabaseAcrossReboot, run from the share in the host's userland on the
// guest's kernel (run.sh --userland): `zloop-db.sh write` on the first boot, `zloop-db.sh read` on the second.
// Both make /dev/zloop0 over the zone files in ./zone-files (on the share, so they outlive the guest), run
// `znsdb preflight` and `znsdb format --filesystem btrfs` on it, mount it, start the host's MariaDB on a datadir
// there (configured by `znsdb mycnf`, MyRocks loaded), read both tables back, shut mysqld down, unmount and
// remove the device. write also copies in the empty datadir made on the host, creates an InnoDB and a MyRocks
// table and loads rows.tsv into both. "result NAME VALUE" lines and the files NAME-PHASE.* are what the test
// reads; "result t-STEP" is the guest's uptime when STEP starts.
const zloopDBScript = `#!/usr/bin/env bash
set -euo pipefail
phase=$1
trap 'echo "zloop-db ${phase}: failed at line ${LINENO}: ${BASH_COMMAND}" >&2' ERR
res() { printf 'result %s %s\n' "$1" "$2"; }
step() { res "t-$1" "$(cut -d' ' -f1 /proc/uptime)"; }
sock=/tmp/zdb.sock mnt=/mnt/zdb
sql() { mariadb --no-defaults --socket="$sock" -uroot -N -B "$@"; }
report() { blkzone report /dev/zloop0 >"$1"; res "$2" "$(grep -vc '(em)' "$1" || true)"; }

step create
dev=$(zloop-zoned.sh create --id 0 --capacity 2048 --zone-size 64 --base-dir "$PWD/zone-files" --buffered-io 2>"create-${phase}.log")
res device "$dev"
report "zones-${phase}-start.txt" zones-written-at-start

step preflight
rc=0
./znsdb preflight --device zloop0 --filesystem btrfs --termination-log "" >"preflight-${phase}.json" 2>"preflight-${phase}.err" || rc=$?
res preflight-exit "$rc"
step format
rc=0
./znsdb format --device zloop0 --filesystem btrfs --termination-log "" >"format-${phase}.json" 2>"format-${phase}.err" || rc=$?
res format-exit "$rc"
((rc == 0)) || exit 1

step mount
mkdir -p "$mnt"
mount -t btrfs "$dev" "$mnt"
res mounted "$(findmnt -no SOURCE,FSTYPE "$mnt" | tr -s ' ' ,)"
if [[ $phase == write ]]; then
  step copy-datadir
  cp -a template "$mnt/data"
fi
./znsdb mycnf --flavor mariadb --engine rocksdb --profile workload --memory 512Mi --datadir "$mnt/data" \
  --socket "$sock" --pid-file /tmp/zdb.pid --port 3306 >/tmp/my.cnf

step mysqld-start
mariadbd --defaults-file=/tmp/my.cnf --bind-address=127.0.0.1 --user=root >"mysqld-${phase}.log" 2>&1 &
pid=$!
for ((i = 0; i < 600; i++)); do
  sql -e 'SELECT 1' >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { tail -n 20 "mysqld-${phase}.log" >&2; exit 1; }
  sleep 0.5
done
sql -e 'SELECT 1' >/dev/null
res datadir "$(sql -e 'SELECT @@datadir')"
if [[ $phase == write ]]; then
  step load
  sql -e "CREATE DATABASE zl;
    CREATE TABLE zl.inno (id INT PRIMARY KEY, v VARCHAR(64) NOT NULL) ENGINE=InnoDB;
    CREATE TABLE zl.rocks (id INT PRIMARY KEY, v VARCHAR(64) NOT NULL) ENGINE=ROCKSDB;"
  sql --local-infile=1 -e "LOAD DATA LOCAL INFILE '${PWD}/rows.tsv' INTO TABLE zl.inno;
    LOAD DATA LOCAL INFILE '${PWD}/rows.tsv' INTO TABLE zl.rocks;"
fi
step select
res engines "$(sql -e "SELECT GROUP_CONCAT(TABLE_NAME, ':', ENGINE ORDER BY TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'zl'")"
for tbl in inno rocks; do sql -e "SELECT id, v FROM zl.${tbl} ORDER BY id" >"${tbl}-${phase}.tsv"; done

step mysqld-shutdown
mariadb-admin --no-defaults --socket="$sock" -uroot shutdown
rc=0
wait "$pid" || rc=$?
res mysqld-exit "$rc"
res shutdown-complete "$(grep -c 'Shutdown complete' "mysqld-${phase}.log" || true)"

step umount
umount "$mnt"
report "zones-${phase}-end.txt" zones-written-at-end
zloop-zoned.sh remove 0 2>>"create-${phase}.log"
step done
`

// zloopDBRows is what the test writes into both tables: ids 1 to n in order (how ORDER BY id reads them
// back), each with a random alphanumeric value, as `mariadb -N -B` prints them.
func zloopDBRows(n int) []byte {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewSource(2804))
	var b bytes.Buffer
	for id := 1; id <= n; id++ {
		v := make([]byte, 8+r.Intn(57))
		for i := range v {
			v[i] = letters[r.Intn(len(letters))]
		}
		fmt.Fprintf(&b, "%d\t%s\n", id, v)
	}
	return b.Bytes()
}

// zloopDBBoot is what one boot of zloopDBScript printed: its results, its exit status and output, and the wall
// time of the boot.
type zloopDBBoot struct {
	phase, share string
	results      map[string]string
	code         int
	out          string
	wall         time.Duration
}

// succeeded fails t, with the boot's output and mysqld's log, when the script did not run to its end.
func (b zloopDBBoot) succeeded(t *testing.T) {
	t.Helper()
	if b.code == 0 {
		return
	}
	tail := ""
	if log, err := os.ReadFile(filepath.Join(b.share, "mysqld-"+b.phase+".log")); err == nil {
		tail = "\nmysqld log:\n" + lastLinesOf(string(log), 20)
	}
	t.Fatalf("%s boot: exit %d\n%s%s", b.phase, b.code, b.out, tail)
}

func (b zloopDBBoot) get(t *testing.T, name string) string {
	t.Helper()
	v, ok := b.results[name]
	if !ok {
		t.Fatalf("%s boot: no result %q in %v", b.phase, name, b.results)
	}
	return v
}

// steps says how long each step of the boot took in the guest, from the t-STEP results.
func (b zloopDBBoot) steps() string {
	order := []string{"create", "preflight", "format", "mount", "copy-datadir", "mysqld-start", "load", "select", "mysqld-shutdown", "umount", "done"}
	var parts []string
	prev, prevName := -1.0, ""
	for _, s := range order {
		v, ok := b.results["t-"+s]
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		if prev >= 0 {
			parts = append(parts, fmt.Sprintf("%s %.1fs", prevName, f-prev))
		} else {
			parts = append(parts, fmt.Sprintf("boot to the script %.1fs", f))
		}
		prev, prevName = f, s
	}
	return strings.Join(parts, ", ")
}

// runZloopDBBoot boots the guest once with zloopDBScript; the caller checks what it needs, then succeeded.
func runZloopDBBoot(t *testing.T, opts qemu.Options, phase string) zloopDBBoot {
	t.Helper()
	start := time.Now()
	out, code := qemu.Run(t, opts, "bash", "./zloop-db.sh", phase)
	b := zloopDBBoot{phase: phase, share: opts.Share, results: map[string]string{}, code: code, out: out, wall: time.Since(start)}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if f := strings.SplitN(sc.Text(), " ", 3); len(f) == 3 && f[0] == "result" {
			b.results[f[1]] = f[2]
		}
	}
	t.Logf("%s boot: exit %d, %s wall; in the guest: %s", phase, code, b.wall.Round(100*time.Millisecond), b.steps())
	return b
}

func readJSONReport(t *testing.T, path string) dbinit.Report {
	t.Helper()
	var r dbinit.Report
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, raw)
	}
	return r
}

// TestZloopDatabaseAcrossReboot: a database on a zloop device keeps its data across a guest reboot, the
// persistence null_blk lacks. The first boot formats /dev/zloop0 (zone files on the share) with btrfs through
// znsdb, runs the host's MariaDB on it, loads the same rows into an InnoDB and a MyRocks table, shuts mysqld
// down and powers off; the second boot, a new QEMU, re-creates the device over the same files, where
// `znsdb format` must keep the file system (action keep, same UUID: the operator's data-safety rule), and
// MariaDB started on the datadir it finds there reads back exactly the rows written.
func TestZloopDatabaseAcrossReboot(t *testing.T) {
	guestDir := qemu.Require(t)
	if why := zloopUnavailable(t, guestDir); why != "" {
		t.Skip(why)
	}
	for _, tool := range []string{"mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin", "mkfs.btrfs", "blkid", "findmnt"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, "a database on zloop in the QEMU guest runs the host's "+tool+" (hack/install-deps.sh)")
		}
	}
	root, err := qemu.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	share := t.TempDir()
	start := time.Now()
	buildStatic(t, goTool(t), root, "build", "-o", share+"/znsdb", "./operator/cmd/znsdb")
	// an empty datadir made here: mariadb-install-db takes minutes under emulation. Its own tmpdir: a mariadbd
	// that starts deletes every #sql file of its tmpdir, so another test's server starting beside it with /tmp
	// would delete this one's temporary tables (seen: "Unknown table 'mysql.tmp_user_sys'").
	install := []string{"--no-defaults", "--auth-root-authentication-method=socket", "--skip-test-db", "--datadir=" + share + "/template",
		"--tmpdir=" + t.TempDir()}
	if os.Geteuid() == 0 {
		install = append(install, "--user=root")
	}
	if out, err := exec.Command("mariadb-install-db", install...).CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	t.Logf("built znsdb and the empty datadir in %.1fs", time.Since(start).Seconds())
	rows := zloopDBRows(2000)
	for name, b := range map[string][]byte{"rows.tsv": rows, "zloop-db.sh": []byte(zloopDBScript)} {
		if err := os.WriteFile(filepath.Join(share, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := qemu.Options{Share: share, Env: zloopGuestEnv(t, share), MemoryMiB: 2048, Timeout: 15 * time.Minute, Userland: true}
	sameRows := func(phase string) {
		t.Helper()
		for _, tbl := range []string{"inno", "rocks"} {
			got, err := os.ReadFile(filepath.Join(share, tbl+"-"+phase+".tsv"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, rows) {
				t.Errorf("%s boot: table zl.%s holds %d lines, %d bytes; want the %d rows written (%d bytes), exactly",
					phase, tbl, bytes.Count(got, []byte("\n")), len(got), bytes.Count(rows, []byte("\n")), len(rows))
			}
		}
	}
	commonChecks := func(b zloopDBBoot) {
		t.Helper()
		if dev := b.get(t, "device"); dev != "/dev/zloop0" {
			t.Errorf("%s boot: zloop-zoned.sh create printed %q, want /dev/zloop0", b.phase, dev)
		}
		pre := readJSONReport(t, filepath.Join(share, "preflight-"+b.phase+".json"))
		if b.get(t, "preflight-exit") != "0" || len(pre.Problems) != 0 || pre.Device == nil ||
			pre.Device.Model != zbd.ModelHostManaged || pre.Device.NrZones != 32 || pre.Device.Scheduler != "mq-deadline" {
			t.Errorf("%s boot: znsdb preflight of zloop0: exit %s, %+v; want fit, host-managed, 32 zones, mq-deadline",
				b.phase, b.get(t, "preflight-exit"), pre)
		}
		if got := b.get(t, "mounted"); got != "/dev/zloop0,btrfs" {
			t.Errorf("%s boot: mounted %q, want /dev/zloop0,btrfs", b.phase, got)
		}
		if got := b.get(t, "datadir"); got != "/mnt/zdb/data/" {
			t.Errorf("%s boot: mysqld's datadir %q, want /mnt/zdb/data/ (on the zloop device)", b.phase, got)
		}
		if got := b.get(t, "engines"); got != "inno:InnoDB,rocks:ROCKSDB" {
			t.Errorf("%s boot: tables %q, want inno:InnoDB,rocks:ROCKSDB", b.phase, got)
		}
		if b.get(t, "mysqld-exit") != "0" || b.get(t, "shutdown-complete") == "0" {
			t.Errorf("%s boot: mysqld exited %s, 'Shutdown complete' logged %s times: want a clean shutdown",
				b.phase, b.get(t, "mysqld-exit"), b.get(t, "shutdown-complete"))
		}
		sameRows(b.phase)
	}

	first := runZloopDBBoot(t, opts, "write")
	first.succeeded(t)
	commonChecks(first)
	f1 := readJSONReport(t, filepath.Join(share, "format-write.json")).Filesystem
	if f1 == nil || f1.Type != "btrfs" || f1.Action != fsformat.ActionFormat || f1.Found != "" || f1.UUID == "" {
		t.Fatalf("first boot: znsdb format on the empty zloop0: %+v; want a new btrfs with its UUID", f1)
	}
	if got := first.get(t, "zones-written-at-start"); got != "0" {
		t.Errorf("first boot: %s zones written before the format, want 0", got)
	}
	written, err := strconv.Atoi(first.get(t, "zones-written-at-end"))
	if err != nil || written == 0 {
		t.Fatalf("first boot: zones written after the database ran: %q, want some", first.get(t, "zones-written-at-end"))
	}
	// the device's data is in the zone files on the host now: a sequential zone's file is as long as its write pointer
	var inFiles int64
	files, _ := filepath.Glob(filepath.Join(share, "zone-files", "0", "seq-*"))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			inFiles += st.Size()
		}
	}
	if len(files) != 32 || inFiles == 0 {
		t.Fatalf("zone files after the first boot: %d seq-* holding %d bytes; want 32 holding the data", len(files), inFiles)
	}
	t.Logf("first boot: btrfs %s made, %d of 32 zones written, %.1f MiB in the zone files on the host",
		f1.UUID, written, float64(inFiles)/(1<<20))

	// what the device and the format step did is checked before the boot's own end: when the file system was not
	// kept, mysqld has no datadir to start on, and that is the failure to report
	second := runZloopDBBoot(t, opts, "read")
	if log, _ := os.ReadFile(filepath.Join(share, "create-read.log")); !bytes.Contains(log, []byte("re-added")) {
		t.Errorf("second boot: zloop-zoned.sh create did not re-add the device over its zone files:\n%s", log)
	}
	end1, _ := os.ReadFile(filepath.Join(share, "zones-write-end.txt"))
	start2, _ := os.ReadFile(filepath.Join(share, "zones-read-start.txt"))
	if w1, w2 := wptrs(t, string(end1)), wptrs(t, string(start2)); strings.Join(w1, " ") != strings.Join(w2, " ") {
		t.Errorf("write pointers at the first boot's end %v, at the second's start %v", w1, w2)
	}
	f2 := readJSONReport(t, filepath.Join(share, "format-read.json")).Filesystem
	if f2 == nil || f2.Action != fsformat.ActionKeep || f2.Found != "btrfs" || f2.UUID != f1.UUID {
		t.Fatalf("second boot: znsdb format over the re-created zloop0: %+v; want keep, found btrfs, UUID %s (data-safety rule)", f2, f1.UUID)
	}
	second.succeeded(t)
	commonChecks(second)
	t.Logf("second boot: btrfs %s kept, the %d rows read back from InnoDB and MyRocks", f2.UUID, bytes.Count(rows, []byte("\n")))
}
