package zonedmetrics

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs/zenfscapture"
)

const testSysBlock = "testdata/sys/block"

// blkzoneReport reads a real `blkzone report` capture: rel is relative to
// zenfscapture.Dir() (operator/internal/zenfs/testdata/real), or a path
// under this package's testdata.
func blkzoneReport(t testing.TB, rel string) []zbd.Zone {
	t.Helper()
	if strings.HasPrefix(rel, "testdata/") {
		abs, err := filepath.Abs(rel)
		if err != nil {
			t.Fatal(err)
		}
		if rel, err = filepath.Rel(zenfscapture.Dir(), abs); err != nil {
			t.Fatal(err)
		}
	}
	return zenfscapture.BlkzoneReport(t, rel)
}

// sysfsInt reads one number of a captured sysfs tree.
func sysfsInt(t testing.TB, dev, attr string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testSysBlock, dev, attr))
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCountZonesOnRealReports(t *testing.T) {
	const mib = 1 << 20
	// The expected counts are those of the zcond column of each capture
	// (`grep -o 'zcond:[ 0-9]*(..)' | sort | uniq -c`).
	for _, tc := range []struct {
		report string
		// sysfsDev is a captured sysfs tree of a device made the same way,
		// whose nr_zones the report must match.
		sysfsDev             string
		empty, iopen, closed int64
		full, conventional   int64
		reported             int64
		capacity             int64
	}{
		// ZenFS on null_blk after a RocksDB session of 20,000 puts.
		{report: "capture/nullb0/25-blkzone-report-populated.stdout", sysfsDev: "nullb0",
			empty: 58, iopen: 1, closed: 5, reported: 64, capacity: 64 * mib},
		// The same on QEMU's NVMe ZNS namespace: capacity below the size.
		{report: "capture/nvme0n1/25-blkzone-report-populated.stdout", sysfsDev: "nvme0n1",
			empty: 34, iopen: 1, closed: 5, reported: 40, capacity: 60 * mib},
		// Freshly formatted: only the first meta zone is written.
		{report: "capture/nullb0/16-blkzone-report-formatted.stdout", sysfsDev: "nullb0",
			empty: 63, iopen: 1, reported: 64, capacity: 64 * mib},
		// null_blk with 4 conventional zones: they are in no state.
		{report: "capture/nullb4/25-blkzone-report-populated.stdout",
			empty: 22, iopen: 1, closed: 5, conventional: 4, reported: 32, capacity: 64 * mib},
		// First 16 zones of a namespace stalled at max open/active 6.
		{report: "testdata/zones/limits2-nvme1n1-blkzone-after.txt",
			empty: 10, iopen: 4, closed: 1, full: 1, reported: 16, capacity: 60 * mib},
	} {
		t.Run(tc.report, func(t *testing.T) {
			c := CountZones(blkzoneReport(t, tc.report))
			want := ZoneCounts{Reported: tc.reported, NotWritePointer: tc.conventional, CapacityBytes: tc.capacity}
			want.ByState[0], want.ByState[1], want.ByState[3], want.ByState[4] = tc.empty, tc.iopen, tc.closed, tc.full
			if c != want {
				t.Errorf("CountZones = %+v, want %+v", c, want)
			}
			var sum int64
			for _, n := range c.ByState {
				sum += n
			}
			if sum+c.NotWritePointer != c.Reported {
				t.Errorf("states %d + conventional %d != %d zones reported", sum, c.NotWritePointer, c.Reported)
			}
			if tc.sysfsDev != "" {
				if nr := sysfsInt(t, tc.sysfsDev, "queue/nr_zones"); sum != nr {
					t.Errorf("zones by state sum to %d, sysfs nr_zones of %s is %d", sum, tc.sysfsDev, nr)
				}
			}
		})
	}
}

// The stalled namespace of limits2 had max open and active 6: the report
// must show no more active zones than that.
func TestActiveZonesWithinLimit(t *testing.T) {
	c := CountZones(blkzoneReport(t, "testdata/zones/limits2-nvme1n1-blkzone-after.txt"))
	if c.Open() != 4 || c.Active() != 5 {
		t.Errorf("open %d, active %d; want 4 and 5", c.Open(), c.Active())
	}
	// serial, max_open_zones, max_active_zones as the guest's sysfs said.
	b, err := os.ReadFile("testdata/zones/limits2-nvme1n1-limits.txt")
	if err != nil {
		t.Fatal(err)
	}
	if limits := strings.Fields(string(b)); len(limits) != 3 || limits[1] != "6" || limits[2] != "6" {
		t.Fatalf("limits file says %q, want serial 6 6", limits)
	}
	if c.Active() > 6 {
		t.Errorf("%d active zones above the limit 6", c.Active())
	}
}

func TestCountZonesConditions(t *testing.T) {
	// Every condition of linux/blkzoned.h lands in its state; a
	// conventional zone and an unknown code land in none.
	seq := zbd.ZoneTypeSeqWriteReq
	zones := []zbd.Zone{
		{Type: seq, Cond: zbd.ZoneCondEmpty, Capacity: 7},
		{Type: seq, Cond: zbd.ZoneCondImpOpen},
		{Type: seq, Cond: zbd.ZoneCondExpOpen},
		{Type: seq, Cond: zbd.ZoneCondClosed},
		{Type: seq, Cond: zbd.ZoneCondFull},
		{Type: seq, Cond: zbd.ZoneCondReadOnly},
		{Type: zbd.ZoneTypeSeqWritePref, Cond: zbd.ZoneCondOffline},
		{Type: zbd.ZoneTypeConventional, Cond: zbd.ZoneCondNotWP},
		{Type: seq, Cond: zbd.ZoneCond(0x9)},
	}
	c := CountZones(zones)
	for i, s := range States {
		if c.ByState[i] != 1 {
			t.Errorf("%s: %d zones, want 1", s, c.ByState[i])
		}
	}
	if c.NotWritePointer != 2 || c.Reported != 9 || c.CapacityBytes != 7 {
		t.Errorf("got %+v", c)
	}
	if c := CountZones(nil); c != (ZoneCounts{}) {
		t.Errorf("empty report: %+v", c)
	}
}
