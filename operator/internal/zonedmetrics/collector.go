package zonedmetrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// Source names a background refresh: the value of the source label.
type Source string

// Sources.
const (
	SourceZones Source = "zones"
	SourceZenFS Source = "zenfs"
)

var sources = [...]Source{SourceZones, SourceZenFS}

// Config says what to collect.
type Config struct {
	// Device is the kernel name of the zoned device ("nvme0n2"); empty for a
	// database on a conventional volume. When set, every metric carries it
	// as the device label.
	Device string
	// SysBlock is sysfs's block directory, normally /sys/block.
	SysBlock string
	// Datadir is the directory whose file system is measured; empty: none.
	Datadir string
	// Logf logs one line (failures, recoveries); nil: no log.
	Logf func(format string, args ...any)
	// Now is the clock of the refresh timestamps; nil: time.Now.
	Now func() time.Time
}

// Collector is a prometheus.Collector of one database's zoned figures. Its
// Collect reads the cached results of RunZones and RunZenFS and the cheap
// sysfs and statfs figures; it never starts a zone report or zenfs df.
type Collector struct {
	cfg Config

	mu    sync.Mutex
	zones *ZoneCounts
	df    *zenfs.Df
	state [len(sources)]sourceState

	// scrapeMu guards scrapeErr: the last error of each scrape-time read,
	// so that a lasting failure is logged once, not at every scrape.
	scrapeMu  sync.Mutex
	scrapeErr map[string]string

	desc descs
}

// sourceState is what the refresh metrics of one source show.
type sourceState struct {
	enabled     bool
	attempted   bool
	errors      uint64
	lastSuccess time.Time
	lastTook    time.Duration
	// failing counts the failures since the last success, to log the
	// recovery.
	failing int
}

type descs struct {
	zenfsFree, zenfsUsed, zenfsReclaimable *prometheus.Desc
	zones, zonesTotal, zoneSize, zoneCap   *prometheus.Desc
	readBytes, writtenBytes                *prometheus.Desc
	maxOpen, maxActive                     *prometheus.Desc
	datadirSize, datadirFree               *prometheus.Desc
	refreshTS, refreshErrors, refreshTook  *prometheus.Desc
}

// New returns a collector; start RunZones and RunZenFS beside it for the
// zone and ZenFS figures.
func New(cfg Config) *Collector {
	var constLabels prometheus.Labels
	if cfg.Device != "" {
		constLabels = prometheus.Labels{"device": cfg.Device}
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, constLabels)
	}
	return &Collector{
		cfg:       cfg,
		scrapeErr: map[string]string{},
		desc: descs{
			// The three lines zenfs_tool_df prints (util/zenfs.cc), parsed by
			// zenfs.ParseDf, each rounded down to whole MiB by zenfs. They sum
			// over ZenFS's data zones (ZonedBlockDevice in fs/zbd_zenfs.cc):
			// Free is GetFreeSpace, the capacity not yet written; Used is
			// GetUsedSpace, the bytes of live file data; Reclaimable is
			// GetReclaimableSpace, in full zones the capacity not holding live
			// data, which only a zone reset gives back.
			zenfsFree: d("znsdb_zenfs_free_bytes",
				"Capacity of ZenFS's data zones not yet written: the \"Free:\" line of zenfs df, rounded down to whole MiB."),
			zenfsUsed: d("znsdb_zenfs_used_bytes",
				"Live file data in ZenFS: the \"Used:\" line of zenfs df, rounded down to whole MiB."),
			zenfsReclaimable: d("znsdb_zenfs_reclaimable_bytes",
				"Capacity of full ZenFS zones that holds no live data, given back only by a zone reset: the \"Reclaimable:\" line of zenfs df, rounded down to whole MiB."),
			zones: d("znsdb_zones",
				"Zones of the device in each write-pointer condition, from the last zone report (BLKREPORTZONE). Conventional zones are in none of the states.",
				"state"),
			zonesTotal: d("znsdb_device_zones",
				"Zones of the device: sysfs queue/nr_zones."),
			zoneSize: d("znsdb_zone_size_bytes",
				"Size of one zone: sysfs queue/chunk_sectors x 512."),
			zoneCap: d("znsdb_zone_capacity_bytes",
				"Writable part of a sequential zone, from the last zone report (smaller than the zone size on NVMe ZNS)."),
			readBytes: d("znsdb_device_read_bytes_total",
				"Bytes read from the device: sysfs stat read sectors x 512."),
			writtenBytes: d("znsdb_device_written_bytes_total",
				"Bytes written to the device: sysfs stat write sectors x 512."),
			maxOpen: d("znsdb_device_max_open_zones",
				"Most zones the device keeps open at once: sysfs queue/max_open_zones (0: no limit)."),
			maxActive: d("znsdb_device_max_active_zones",
				"Most zones the device keeps active (open or closed) at once: sysfs queue/max_active_zones (0: no limit)."),
			datadirSize: d("znsdb_datadir_size_bytes",
				"Size of the file system that holds the MySQL datadir (statfs blocks x fragment size)."),
			datadirFree: d("znsdb_datadir_free_bytes",
				"Free space of the datadir's file system that mysqld (not root) can still use (statfs available blocks)."),
			refreshTS: d("znsdb_refresh_timestamp_seconds",
				"When the source was last refreshed successfully (Unix time); absent before the first success.",
				"source"),
			refreshErrors: d("znsdb_refresh_errors_total",
				"Failed refreshes of the source; a failing source keeps serving its last values.",
				"source"),
			refreshTook: d("znsdb_refresh_duration_seconds",
				"How long the last refresh of the source took, successful or not.",
				"source"),
		},
	}
}

// Describe sends every descriptor the collector may use.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	d := c.desc
	for _, x := range []*prometheus.Desc{d.zenfsFree, d.zenfsUsed, d.zenfsReclaimable, d.zones, d.zonesTotal,
		d.zoneSize, d.zoneCap, d.readBytes, d.writtenBytes, d.maxOpen, d.maxActive, d.datadirSize, d.datadirFree,
		d.refreshTS, d.refreshErrors, d.refreshTook} {
		ch <- x
	}
}

// Collect sends the cached figures and reads the cheap ones. A read that
// fails leaves its metrics out of this scrape (and is logged when it starts
// failing, not at every scrape).
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}

	if dev := c.cfg.Device; dev != "" {
		st, err := blockstat.Sample(c.cfg.SysBlock, dev)
		if c.scrapeResult("device stat", err) {
			counter(c.desc.readBytes, float64(st.ReadBytes()))
			counter(c.desc.writtenBytes, float64(st.WrittenBytes()))
		}
		info, err := zbd.Inspect(c.cfg.SysBlock, dev)
		if c.scrapeResult("device sysfs", err) && info.NrZones > 0 {
			gauge(c.desc.zonesTotal, float64(info.NrZones))
			gauge(c.desc.zoneSize, float64(info.ZoneSizeBytes))
			gauge(c.desc.maxOpen, float64(info.MaxOpenZones))
			gauge(c.desc.maxActive, float64(info.MaxActiveZones))
		}
	}
	if c.cfg.Datadir != "" {
		fs, err := statFS(c.cfg.Datadir)
		if c.scrapeResult("datadir statfs", err) {
			gauge(c.desc.datadirSize, float64(fs.sizeBytes))
			gauge(c.desc.datadirFree, float64(fs.availBytes))
		}
	}

	c.mu.Lock()
	zones, df, state := c.zones, c.df, c.state
	c.mu.Unlock()
	if zones != nil {
		for i, s := range States {
			gauge(c.desc.zones, float64(zones.ByState[i]), s)
		}
		gauge(c.desc.zoneCap, float64(zones.CapacityBytes))
	}
	if df != nil {
		gauge(c.desc.zenfsFree, float64(df.FreeBytes))
		gauge(c.desc.zenfsUsed, float64(df.UsedBytes))
		gauge(c.desc.zenfsReclaimable, float64(df.ReclaimableBytes))
	}
	for i, s := range state {
		if !s.enabled {
			continue
		}
		src := string(sources[i])
		counter(c.desc.refreshErrors, float64(s.errors), src)
		if s.attempted {
			gauge(c.desc.refreshTook, s.lastTook.Seconds(), src)
		}
		if !s.lastSuccess.IsZero() {
			gauge(c.desc.refreshTS, float64(s.lastSuccess.UnixNano())/1e9, src)
		}
	}
}

// scrapeResult reports whether a scrape-time read succeeded, and logs a
// change: the first failure, a different failure, the recovery.
func (c *Collector) scrapeResult(what string, err error) bool {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	c.scrapeMu.Lock()
	last, seen := c.scrapeErr[what]
	c.scrapeErr[what] = msg
	c.scrapeMu.Unlock()
	switch {
	case err != nil && msg != last:
		c.logf("%s: %v (left out of /metrics until it reads again)", what, err)
	case err == nil && seen && last != "":
		c.logf("%s: reads again", what)
	}
	return err == nil
}

func (c *Collector) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf(format, args...)
	}
}

func (c *Collector) now() time.Time {
	if c.cfg.Now != nil {
		return c.cfg.Now()
	}
	return time.Now()
}

// Registry returns a private registry (not Prometheus's global one) holding
// only this collector.
func (c *Collector) Registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return reg
}

// Handler serves the collector's metrics in the Prometheus exposition
// formats (text by default).
func (c *Collector) Handler() http.Handler {
	return promhttp.HandlerFor(c.Registry(), promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
	})
}
