package report

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// withZones gives the recorded pair's myrocks target the geometry of the QEMU tier's NVMe ZNS namespace (40 zones
// of 64 MiB with 60 MiB capacity; the recorded runs were on volumes, so the geometry is set here).
func withZones(t *testing.T) (*v1alpha1.Benchmark, *v1alpha1.ZoneGeometry) {
	b := load(t, "pair")
	size, capacity := resource.MustParse("64Mi"), resource.MustParse("60Mi")
	g := &v1alpha1.ZoneGeometry{Device: "node-1/nvme0n1", Count: 40, Size: &size, Capacity: &capacity, MaxOpen: 14}
	for i := range b.Status.Targets {
		if b.Status.Targets[i].Name == "myrocks" {
			b.Status.Targets[i].Zones = g
		}
	}
	return b, g
}

func TestReportStatesZoneGeometry(t *testing.T) {
	b, _ := withZones(t)
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	row := lineAfter(t, out.String(), "zone geometry of the zoned targets", "myrocks")
	if f := strings.Fields(row); strings.Join(f, " ") != "myrocks node-1/nvme0n1 40 64Mi 60Mi 14 none" {
		t.Errorf("geometry row %q", row)
	}
	_, section, _ := strings.Cut(out.String(), "zone geometry of the zoned targets")
	section, _, _ = strings.Cut(section, "across runs (")
	if strings.Contains(section, "\ninnodb ") {
		t.Errorf("the volume target has no zones to list:\n%s", section)
	}

	out.Reset()
	if err := Compare(&out, []*v1alpha1.Benchmark{b}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ZONES") || !strings.Contains(out.String(), "40x64Mi (cap 60Mi)") {
		t.Errorf("compare lacks the geometry:\n%s", out.String())
	}

	plain := load(t, "pair")
	out.Reset()
	if err := Table(&out, plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "zone geometry") {
		t.Errorf("a Benchmark without zoned targets gets no geometry table")
	}
}

func TestZoneLabel(t *testing.T) {
	size := resource.MustParse("9Gi")
	if got := ZoneLabel(&v1alpha1.ZoneGeometry{Count: 4, Size: &size, Capacity: &size}); got != "4x9Gi" {
		t.Errorf("full-capacity zones: %q", got)
	}
	if got := ZoneLabel(nil); got != "-" {
		t.Errorf("no zones: %q", got)
	}
}

func TestExportsCarryZoneGeometry(t *testing.T) {
	b, g := withZones(t)
	d, err := Collect(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, col := summaryCSV(t, d)
	for _, r := range recs[1:] {
		want := map[string]string{"zone_count": "40", "zone_size_bytes": "67108864", "zone_capacity_bytes": "62914560",
			"max_open_zones": "14", "max_active_zones": "0"}
		for k, v := range want {
			if r[col["target"]] == "innodb" {
				v = ""
			}
			if r[col[k]] != v {
				t.Errorf("%s row %s: %s = %q, want %q", r[col["target"]], r[col["iteration"]], k, r[col[k]], v)
			}
		}
	}
	for _, et := range exportJSON(t, d).Targets {
		if (et.Name == "myrocks") != (et.Zones != nil) || et.Zones != nil && et.Zones.Count != g.Count {
			t.Errorf("%s: exported zones %+v", et.Name, et.Zones)
		}
	}
}

// Two targets on namespaces of one NVMe controller are said to share its drive; a target alone on its drive is
// not mentioned.
func TestReportSaysWhichTargetsShareADrive(t *testing.T) {
	b := load(t, "pair")
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "share drive") {
		t.Fatalf("a drive shared without any target on one:\n%s", out.String())
	}
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		ts.Drive = "node-1/nvme0"
		for _, other := range b.Status.Targets {
			if other.Name != ts.Name {
				ts.SharesDriveWith = append(ts.SharesDriveWith, other.Name)
			}
		}
	}
	out.Reset()
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	if want := "targets myrocks, innodb share drive node-1/nvme0: each one's figures include the others' load\n"; !strings.Contains(out.String(), want) {
		t.Errorf("no line %q in\n%s", want, out.String())
	}
	// The exports carry them too.
	d, err := Collect(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, col := summaryCSV(t, d)
	for _, r := range recs[1:] {
		other := map[string]string{"myrocks": "innodb", "innodb": "myrocks"}[r[col["target"]]]
		if r[col["drive"]] != "node-1/nvme0" || r[col["shares_drive_with"]] != other {
			t.Errorf("%s row %s: drive %q shared with %q", r[col["target"]], r[col["iteration"]], r[col["drive"]], r[col["shares_drive_with"]])
		}
	}
	for _, et := range exportJSON(t, d).Targets {
		if et.Drive != "node-1/nvme0" || len(et.SharesDriveWith) != 1 {
			t.Errorf("%s: exported drive %q shared with %v", et.Name, et.Drive, et.SharesDriveWith)
		}
	}
}

// The report says where clients ran: away from their databases, or sharing their nodes; nothing without a record.
func TestReportSaysWhereClientsRan(t *testing.T) {
	b := load(t, "pair")
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "clients ") {
		t.Fatalf("client placement reported without any record:\n%s", out.String())
	}
	b.Spec.Clients = &v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsBySelector}
	b.Status.Targets[0].Client = &v1alpha1.ClientNodes{Placement: v1alpha1.ClientsBySelector, Nodes: []string{"c1", "c2"}, DatabaseNode: "db1"}
	b.Status.Targets[1].Client = &v1alpha1.ClientNodes{Placement: v1alpha1.ClientsBySelector, Nodes: []string{"db2"}, DatabaseNode: "db2", SharedNode: true}
	out.Reset()
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"clients away from their databases (spec.clients Selector): myrocks (on c1, c2, its database on db1)\n",
		"clients on their databases' nodes (spec.clients Selector), competing with mysqld for its CPUs: innodb (on db2)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line %q in\n%s", want, out.String())
		}
	}
	d, err := Collect(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := ToExport(d).Targets[1].Client; c == nil || !c.SharedNode {
		t.Errorf("the export's client record of innodb: %+v", c)
	}
}
