package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// quantity prints a size as Kubernetes writes it ("64Mi"), "-" when unknown.
func quantity(q *resource.Quantity) string {
	if q == nil {
		return "-"
	}
	return q.String()
}

// limit prints an open or active zone limit, where 0 means none.
func limit(n int64) string {
	if n == 0 {
		return "none"
	}
	return strconv.FormatInt(n, 10)
}

// ZoneLabel names a zone geometry briefly, for a column: "40x64Mi", with the capacity when it is smaller than
// the zone ("40x64Mi (cap 60Mi)"); "-" for a target without zones.
func ZoneLabel(g *v1alpha1.ZoneGeometry) string {
	if g == nil {
		return "-"
	}
	s := fmt.Sprintf("%dx%s", g.Count, quantity(g.Size))
	if g.Capacity != nil && g.Size != nil && g.Capacity.Cmp(*g.Size) < 0 {
		s += " (cap " + quantity(g.Capacity) + ")"
	}
	return s
}

// geometryTable writes the zone geometry of each zoned target: zone size and count are variables of the
// comparison (the seeds compare 144 MiB with 9 GiB zones), so the report states them.
func geometryTable(w io.Writer, b *v1alpha1.Benchmark) error {
	zoned := false
	for _, ts := range b.Status.Targets {
		zoned = zoned || ts.Zones != nil
	}
	if !zoned {
		return nil
	}
	fmt.Fprintln(w, "zone geometry of the zoned targets (from each database's status.device):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tDEVICE\tZONES\tZONE SIZE\tZONE CAPACITY\tMAX OPEN\tMAX ACTIVE")
	for _, ts := range b.Status.Targets {
		g := ts.Zones
		if g == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", ts.Name, dash(g.Device), g.Count, quantity(g.Size), quantity(g.Capacity),
			limit(g.MaxOpen), limit(g.MaxActive))
	}
	return tw.Flush()
}

// sharedDrives says which targets share a drive (namespaces of one NVMe controller): their figures include each
// other's load, which a multitenant comparison is about and any other must know.
func sharedDrives(w io.Writer, b *v1alpha1.Benchmark) {
	var drives []string
	on := map[string][]string{}
	for _, ts := range b.Status.Targets {
		if ts.Drive == "" || len(ts.SharesDriveWith) == 0 {
			continue
		}
		if _, seen := on[ts.Drive]; !seen {
			drives = append(drives, ts.Drive)
		}
		on[ts.Drive] = append(on[ts.Drive], ts.Name)
	}
	for _, d := range drives {
		fmt.Fprintf(w, "targets %s share drive %s: each one's figures include the others' load\n", strings.Join(on[d], ", "), d)
	}
}

// clientsPlacement says where the run clients ran (spec.clients): which ran away from their databases, and which
// shared their database's node, where the clients' threads took CPU from mysqld (on purpose with the default
// placement, DatabaseNode; by the selector's choice otherwise).
func clientsPlacement(w io.Writer, b *v1alpha1.Benchmark) {
	var shared, away []string
	for _, ts := range b.Status.Targets {
		c := ts.Client
		switch {
		case c == nil:
		case c.SharedNode:
			shared = append(shared, ts.Name+" (on "+c.DatabaseNode+")")
		case len(c.Nodes) > 0:
			away = append(away, ts.Name+" (on "+strings.Join(c.Nodes, ", ")+", its database on "+dash(c.DatabaseNode)+")")
		}
	}
	placement := b.Spec.ClientPlacement()
	if len(away) > 0 {
		fmt.Fprintf(w, "clients away from their databases (spec.clients %s): %s\n", placement, strings.Join(away, "; "))
	}
	if len(shared) > 0 {
		fmt.Fprintf(w, "clients on their databases' nodes (spec.clients %s), competing with mysqld for its CPUs: %s\n", placement, strings.Join(shared, "; "))
	}
}
