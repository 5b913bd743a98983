package opmetrics

import (
	"strconv"
	"testing"
)

// TestDriveSeries: the drive's figures over the runs are exported as status has them, measured and modelled in
// separate families, and a figure status lacks is absent rather than 0. drive.yaml is assembled, not recorded
// (operator/internal/report/testdata/README.md says how).
func TestDriveSeries(t *testing.T) {
	b := readBenchmark(t, "drive.yaml")
	fams := gather(t, b, readBenchmark(t, "pair.yaml"))
	f := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("status figure %q: %v", s, err)
		}
		return v
	}
	for _, ts := range b.Status.Targets {
		at := map[string]string{"namespace": b.Namespace, "benchmark": b.Name, "target": ts.Name}
		d := ts.DriveMean
		host, hostOK := Lookup(fams, "zns_mysql_benchmark_result_drive_host_bytes_per_transaction", at)
		media, mediaOK := Lookup(fams, "zns_mysql_benchmark_result_drive_media_bytes_per_transaction", at)
		wa, waOK := Lookup(fams, "zns_mysql_benchmark_result_drive_write_amplification", at)
		switch c := d.Counters; {
		case c == nil:
			if hostOK || mediaOK || waOK {
				t.Errorf("%s: measured series without counters", ts.Name)
			}
		case c.MediaWrittenBytes == "":
			if !hostOK || host != f(c.HostBytesPerTransaction) || mediaOK || waOK {
				t.Errorf("%s: host %v (%v), media present %v, WA present %v", ts.Name, host, hostOK, mediaOK, waOK)
			}
		default:
			if host != f(c.HostBytesPerTransaction) || media != f(c.MediaBytesPerTransaction) || wa != f(c.WriteAmplification) {
				t.Errorf("%s: host %v media %v WA %v, status %+v", ts.Name, host, media, wa, c)
			}
			if _, ok := Lookup(fams, "zns_mysql_benchmark_result_drive_write_amplification", merge(at, "source", c.MediaSource)); !ok {
				t.Errorf("%s: WA without its source %s", ts.Name, c.MediaSource)
			}
		}
		n := 0
		for _, m := range fams["zns_mysql_benchmark_result_modelled_write_amplification"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "target" && l.GetValue() == ts.Name {
					n++
				}
			}
		}
		if n != len(d.Modelled) {
			t.Errorf("%s: %d modelled series, status has %d", ts.Name, n, len(d.Modelled))
		}
		for _, m := range d.Modelled {
			got, ok := Lookup(fams, "zns_mysql_benchmark_result_modelled_write_amplification",
				merge(at, "over_provisioning_percent", strconv.Itoa(int(m.OverProvisioningPercent))))
			if !ok || got != f(m.WriteAmplification) {
				t.Errorf("%s OP %d: %v (%v), status %s", ts.Name, m.OverProvisioningPercent, got, ok, m.WriteAmplification)
			}
		}
	}
	// pair has no drive figures: none of its targets has a drive series.
	for _, name := range []string{"zns_mysql_benchmark_result_drive_host_bytes_per_transaction", "zns_mysql_benchmark_result_modelled_write_amplification"} {
		if _, ok := Lookup(fams, name, map[string]string{"benchmark": "pair"}); ok {
			t.Errorf("%s for a Benchmark without drive figures", name)
		}
	}
}
