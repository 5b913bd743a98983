// Package zonedmetrics collects the zoned-storage figures of one database and
// exposes them in Prometheus's text format, at a bounded cost:
//
//   - what is expensive (a zone report of the whole device, `zenfs df`, which
//     reads ZenFS's whole metadata log) runs in the background, at most once
//     per interval, one run of each at a time (RunZones, RunZenFS), and a
//     scrape only reads the values the last runs left;
//   - what is cheap (the device's I/O counters and zone limits in sysfs, a
//     statfs of the datadir) is read at scrape time.
//
// A source that fails keeps serving its last values; its error counter
// rises and each failure is logged once (not at every scrape).
//
// The metric names are a contract with the project's Grafana dashboard.
// The package runs no process and needs no cluster: the caller hands it the
// functions that read zones and run zenfs df.
package zonedmetrics

import "github.com/zns-mysql/zns-mysql/operator/internal/zbd"

// States are the values of znsdb_zones' state label, in the order of
// ZoneCounts.ByState: the write-pointer zone conditions of
// linux/blkzoned.h (BLK_ZONE_COND_*).
var States = [...]string{"empty", "implicit_open", "explicit_open", "closed", "full", "read_only", "offline"}

// stateIndex is the index in States of a zone condition; ok is false for a
// conventional zone (BLK_ZONE_COND_NOT_WP) and for codes the kernel does
// not define.
func stateIndex(c zbd.ZoneCond) (i int, ok bool) {
	switch c {
	case zbd.ZoneCondEmpty:
		return 0, true
	case zbd.ZoneCondImpOpen:
		return 1, true
	case zbd.ZoneCondExpOpen:
		return 2, true
	case zbd.ZoneCondClosed:
		return 3, true
	case zbd.ZoneCondFull:
		return 4, true
	case zbd.ZoneCondReadOnly:
		return 5, true
	case zbd.ZoneCondOffline:
		return 6, true
	}
	return 0, false
}

// ZoneCounts summarises one zone report.
type ZoneCounts struct {
	// ByState counts the zones in each condition of States.
	ByState [len(States)]int64
	// NotWritePointer counts the zones in none of States: conventional
	// zones (condition NOT_WP, as null_blk's zone_nr_conv makes) and any
	// condition code the kernel does not define. ByState plus
	// NotWritePointer is the number of zones reported.
	NotWritePointer int64
	// Reported is the number of zone descriptors.
	Reported int64
	// CapacityBytes is the writable part of a sequential zone (smaller than
	// the zone size on NVMe ZNS namespaces); 0 without sequential zones.
	CapacityBytes int64
}

// CountZones counts the zones of a report by condition.
func CountZones(zones []zbd.Zone) ZoneCounts {
	var c ZoneCounts
	for _, z := range zones {
		if i, ok := stateIndex(z.Cond); ok && z.Type.Sequential() {
			c.ByState[i]++
		} else {
			c.NotWritePointer++
		}
	}
	c.Reported = int64(len(zones))
	c.CapacityBytes = zbd.ZoneCapacity(zones)
	return c
}

// Open is the number of open zones (implicitly or explicitly), which the
// device's max_open_zones bounds.
func (c ZoneCounts) Open() int64 { return c.ByState[1] + c.ByState[2] }

// Active is the number of active zones (open or closed), which the device's
// max_active_zones bounds.
func (c ZoneCounts) Active() int64 { return c.Open() + c.ByState[3] }
