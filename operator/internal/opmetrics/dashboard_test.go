package opmetrics

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zns-mysql/zns-mysql/operator/internal/zonedmetrics"
)

// The chart ships this file as it is (charts/zns-mysql/templates/grafana-dashboard.yaml).
const dashboardFile = "../../../charts/zns-mysql/files/dashboard.json"

// exporterFamilies are the series a real prometheus-mysqld-exporter 0.14 (Debian's, as in the images) served for a
// MariaDB 10.11 server: testdata/mysqld-exporter-0.14.txt, recorded by TestExporterAccountOnHost (test/images) with
// ZNS_RECORD_EXPORTER set to that file's absolute path.
func exporterFamilies(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "mysqld-exporter-0.14.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	sample := regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*`)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			names[sample.FindString(line)] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !names["mysql_up"] {
		t.Fatal("the exporter capture has no mysql_up")
	}
	return names
}

var seriesName = regexp.MustCompile(`\b(zns_mysql_[a-z0-9_]+|znsdb_[a-z0-9_]+|mysql_[a-z0-9_]+)\b`)

// TestDashboardQueriesExist: every series the Grafana dashboard queries is one that something in this project (or the
// exporter in its images) really serves, and it has the panels the observability issue asks for.
func TestDashboardQueriesExist(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title       string `json:"title"`
			Description string `json:"description"`
			Targets     []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	known := exporterFamilies(t)
	for _, n := range FamilyNames() {
		known[n] = true
	}
	zoned := zonedFamilies()
	if len(zoned) < 10 {
		t.Fatalf("znsdb metrics describes %d families: %v", len(zoned), zoned)
	}
	for _, n := range zoned {
		known[n] = true
	}
	var unknown []string
	queried := 0
	titles := map[string]bool{}
	for _, p := range dash.Panels {
		titles[p.Title] = true
		// A fio panel next to database panels invites comparing them; emulated devices' figures invite reading
		// them as a drive's.
		if strings.HasPrefix(p.Title, "fio ") && (!strings.Contains(p.Description, "Empty for sysbench and YCSB Benchmarks") ||
			!strings.Contains(p.Description, "(null_blk, QEMU NVMe) have no FTL")) {
			t.Errorf("panel %q does not say it is empty for database Benchmarks and what emulated devices' figures are: %q", p.Title, p.Description)
		}
		for _, tg := range p.Targets {
			for _, name := range seriesName.FindAllString(tg.Expr, -1) {
				queried++
				if !known[name] {
					unknown = append(unknown, p.Title+": "+name)
				}
			}
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("the dashboard queries series nothing serves:\n%s", strings.Join(unknown, "\n"))
	}
	if queried < 15 {
		t.Errorf("only %d series queried: the panels were not read", queried)
	}
	for _, title := range []string{"Phase", "TPS per tenant (live)", "Latency per tenant (live, spec percentile)",
		"Device write rate", "ZenFS space", "Zones by state", "Drive write amplification (measured and modelled)",
		"fio bandwidth per run (profile, grid point, direction)", "fio p99 completion latency per run"} {
		if !titles[title] {
			t.Errorf("no panel %q", title)
		}
	}
}

// zonedFamilies are the series of `znsdb metrics`, as its collector describes them.
func zonedFamilies() []string {
	ch := make(chan *prometheus.Desc, 64)
	zonedmetrics.New(zonedmetrics.Config{Device: "nullb0"}).Describe(ch)
	close(ch)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for d := range ch {
		if m := fq.FindStringSubmatch(d.String()); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}
