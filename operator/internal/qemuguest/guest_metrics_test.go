//go:build zns_guest

package qemuguest

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// blkzone runs `blkzone <op>` on one zone of dev (util-linux's blkzone
// counts in 512-byte sectors).
func blkzone(t *testing.T, op, dev string, zone, zoneSize int64) {
	t.Helper()
	off := strconv.FormatInt(zone*zoneSize/512, 10)
	if out, err := exec.Command("blkzone", op, "-o", off, "-c", "1", dev).CombinedOutput(); err != nil {
		t.Fatalf("blkzone %s zone %d of %s: %v\n%s", op, zone, dev, err, out)
	}
}

// TestZnsdbMetrics runs `znsdb metrics` as the sidecar of a database on a
// zoned null_blk device would run, and checks what it serves against the
// kernel: the zones put in each condition here with real writes and
// blkzone open/close/finish, sysfs nr_zones, the open/active limits and the
// stat counters.
func TestZnsdbMetrics(t *testing.T) {
	// Only its own device, like TestZnsdbFormatGarbage: the shared fixture
	// must not exist yet when TestNullblkScript ends with `destroy --all`.
	inGuest(t)
	const name = "nullb11"
	const zoneSize = 16 * mib
	dev := "/dev/" + name
	mustScript(t, "create", "--first", "11", "--size", "1024", "--zone-size", "16", "--max-open", "6", "--max-active", "8")
	t.Cleanup(func() { script("destroy", name) })

	writeDirect(t, dev, 0, make([]byte, 4096)) // zone 0: implicitly open
	blkzone(t, "open", dev, 1, zoneSize)       // zone 1: explicitly open
	writeDirect(t, dev, 2*zoneSize, make([]byte, 8192))
	blkzone(t, "close", dev, 2, zoneSize)  // zone 2: closed
	blkzone(t, "finish", dev, 3, zoneSize) // zone 3: full
	want := map[string]float64{"empty": 60, "implicit_open": 1, "explicit_open": 1, "closed": 1, "full": 1,
		"read_only": 0, "offline": 0}
	zones, err := zbd.ReportZones(dev, 0)
	if err != nil {
		t.Fatal(err)
	}
	if conds := []zbd.ZoneCond{zones[0].Cond, zones[1].Cond, zones[2].Cond, zones[3].Cond, zones[4].Cond}; conds[0] != zbd.ZoneCondImpOpen ||
		conds[1] != zbd.ZoneCondExpOpen || conds[2] != zbd.ZoneCondClosed || conds[3] != zbd.ZoneCondFull || conds[4] != zbd.ZoneCondEmpty {
		t.Fatalf("zones 0-4 are %v after the writes and blkzone", conds)
	}

	// The guest's loopback starts down.
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v\n%s", err, out)
	}
	bin := os.Getenv(envZnsdb)
	if bin == "" {
		t.Fatalf("%s is not set: TestGuestSuite passes the znsdb binary", envZnsdb)
	}
	cmd := exec.Command(bin, "metrics", "--listen", "127.0.0.1:0", "--device", name, "--datadir", t.TempDir(),
		"--zones-interval", "1h")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "listening on ") {
		t.Fatalf("first line %q", sc.Text())
	}
	url := "http://" + strings.TrimPrefix(sc.Text(), "listening on ") + "/metrics"
	go io.Copy(io.Discard, stdout)

	labels := func(m *dto.Metric) map[string]string {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		return l
	}
	var mfs map[string]*dto.MetricFamily
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		p := expfmt.NewTextParser(model.LegacyValidation)
		if mfs, err = p.TextToMetricFamilies(strings.NewReader(string(body))); err != nil {
			t.Fatal(err)
		}
		if _, ok := mfs["znsdb_zones"]; ok {
			t.Logf("GET /metrics:\n%s", body)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no zone report served within a minute; stderr %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	one := func(name string) float64 {
		t.Helper()
		mf := mfs[name]
		if mf == nil || len(mf.GetMetric()) != 1 {
			t.Fatalf("%s: %v", name, mf)
		}
		m := mf.GetMetric()[0]
		if labels(m)["device"] != "nullb11" {
			t.Errorf("%s labels %v", name, labels(m))
		}
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}

	nrZones, err := strconv.ParseFloat(readSysfs(t, name, "queue/nr_zones"), 64)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, m := range mfs["znsdb_zones"].GetMetric() {
		st := labels(m)["state"]
		if m.GetGauge().GetValue() != want[st] {
			t.Errorf("znsdb_zones{state=%q} = %v, want %v", st, m.GetGauge().GetValue(), want[st])
		}
		sum += m.GetGauge().GetValue()
	}
	if n := len(mfs["znsdb_zones"].GetMetric()); n != len(want) {
		t.Errorf("%d states served, want %d", n, len(want))
	}
	if sum != nrZones || one("znsdb_device_zones") != nrZones || nrZones != 64 {
		t.Errorf("zones by state sum to %v, znsdb_device_zones %v, sysfs nr_zones %v; want 64", sum, one("znsdb_device_zones"), nrZones)
	}
	if got := one("znsdb_zone_size_bytes"); got != float64(zoneSize) {
		t.Errorf("zone size %v", got)
	}
	if got := one("znsdb_zone_capacity_bytes"); got != float64(zoneSize) {
		t.Errorf("zone capacity %v", got)
	}
	if open, active := one("znsdb_device_max_open_zones"), one("znsdb_device_max_active_zones"); open != 6 || active != 8 {
		t.Errorf("limits %v/%v, want 6/8", open, active)
	}
	// Nothing wrote to the device since the writes above: the counter is
	// the kernel's stat, in sectors of 512 bytes.
	stat := strings.Fields(readSysfs(t, name, "stat"))
	written, _ := strconv.ParseFloat(stat[6], 64)
	if got := one("znsdb_device_written_bytes_total"); got != written*512 || written < (4096+8192)/512 {
		t.Errorf("written bytes %v, stat says %v sectors", got, written)
	}
	if one("znsdb_datadir_size_bytes") <= 0 {
		t.Error("no datadir size")
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
	if s := stderr.String(); s != "" {
		t.Errorf("stderr: %s", s)
	}
}
