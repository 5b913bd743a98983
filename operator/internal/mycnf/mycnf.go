// Package mycnf generates mysqld's option file for a ZNSDatabase: the seed's
// MyRocks tuning (bulk-load and workload profiles) or an InnoDB baseline,
// sized to the container's memory, for Percona Server 8.0 or 8.4 (the product)
// or MariaDB 10.11 with MyRocks (the stand-in the tests run for real).
package mycnf

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Flavor is the server product; option names and defaults differ.
type Flavor string

const (
	FlavorPercona Flavor = "percona" // Percona Server for MySQL: 8.0 with ZenFS-enabled MyRocks, or 8.4 (Version)
	FlavorMariaDB Flavor = "mariadb" // MariaDB 10.11 + mariadb-plugin-rocksdb (Debian), the test stand-in
)

// Engine is the storage engine the database runs on.
type Engine string

const (
	EngineRocksDB Engine = "rocksdb"
	EngineInnoDB  Engine = "innodb"
)

// Profile is the phase of the seed methodology the server is configured for.
type Profile string

const (
	// ProfileWorkload: bulk load off, binlog on (sysbench run).
	ProfileWorkload Profile = "workload"
	// ProfileBulkLoad: bulk load on, binlog off (sysbench prepare).
	ProfileBulkLoad Profile = "bulkload"
)

// BinlogBaseName is the log-bin name for the workload profile. MariaDB
// derives the default from the host name, which changes with every pod, and
// a changed name orphans the existing binlog index.
const BinlogBaseName = "binlog"

// Input describes one server.
type Input struct {
	Flavor  Flavor
	Engine  Engine
	Profile Profile
	// Version is the Percona Server series; "" means 8.0. MariaDB takes only "" or 8.0.
	Version Version
	// ZenFSDevice is the zoned device's kernel name (e.g. "nvme0n2"); "" means
	// a conventional filesystem. Only Percona's MyRocks can use it.
	ZenFSDevice string
	// MemoryLimitBytes is the container's memory limit; 0 = unknown, in which
	// case FallbackMemoryBytes is assumed.
	MemoryLimitBytes int64
	// Paths and port are the operator's (mount paths, Service port); they are
	// forced and cannot be overridden. All are required.
	DataDir, Socket, PidFile string
	Port                     int32
	// ServerID is needed once the binlog is on; 0 means 1, mysqld's default.
	ServerID int32
	// Overrides are user options, merged by NormalizeKey. Values are raw:
	// Generate quotes them. An empty value writes a bare flag line
	// ("skip-name-resolve"), so an empty string cannot be expressed.
	Overrides map[string]string
}

// Generate returns the [mysqld] option file for in. The output is sorted by
// normalised key and byte-identical for equal inputs, so the operator can
// compare it with what is deployed and restart only on real changes.
func Generate(in Input) (string, error) {
	if err := validateInput(in); err != nil {
		return "", err
	}
	sizes, err := ComputeSizes(in.MemoryLimitBytes)
	if err != nil {
		return "", err
	}
	opts := defaults(in, sizes)
	userSet, err := applyOverrides(opts, in)
	if err != nil {
		return "", err
	}
	if err := checkMemory(opts, in, sizes, userSet); err != nil {
		return "", err
	}
	return render(in, sizes, opts)
}

// NormalizeKey returns the form mysqld compares option names in: '-' and '_'
// are the same, and "loose-" only changes how unknown options are reported.
// It lowercases too, so that user keys differing only in case collide here
// rather than surprising the user at server start.
func NormalizeKey(k string) string {
	k = strings.ReplaceAll(strings.ToLower(k), "-", "_")
	return strings.TrimPrefix(k, "loose_")
}

// option is one line of the file. flag lines have no "=value".
type option struct {
	key   string // as written (seed spelling, or the user's)
	value string
	flag  bool
}

type options map[string]option // by NormalizeKey

func (o options) set(key, value string) { o[NormalizeKey(key)] = option{key: key, value: value} }
func (o options) flag(key string)       { o[NormalizeKey(key)] = option{key: key, flag: true} }

// defaults builds the generated options before user overrides.
func defaults(in Input, s Sizes) options {
	o := options{}

	// Forced: the operator owns the paths and the port.
	o.set("datadir", in.DataDir)
	o.set("socket", in.Socket)
	o.set("pid-file", in.PidFile)
	o.set("port", fmt.Sprint(in.Port))
	serverID := in.ServerID
	if serverID == 0 {
		serverID = 1
	}
	o.set("server-id", fmt.Sprint(serverID))
	if in.Flavor == FlavorMariaDB {
		// MariaDB takes any unambiguous prefix of an option name ("chroo" sets chroot). The overrides are
		// checked against its option list (mariadbAbbreviates); switching the matching off as well means an
		// abbreviation that list does not know (a later server, an option hidden from --help) is an unknown
		// option, not a way around the refused ones. It is read in an early pass over the whole file, so its
		// place in the file does not matter. MySQL 8.0 has no prefix matching, nor this option.
		o.flag("skip-getopt-prefix-matching")
	}
	// No log-error: in a container the server logs to stderr, which is what
	// kubectl logs and the operator read; a file would fill the data volume
	// unseen.

	// Connections, from the seed. ssl=0 because the benchmark clients talk
	// plain TCP inside the cluster and TLS would skew per-transaction cost.
	o.set("ssl", "0")
	o.set("connect_timeout", "120")
	o.set("back_log", "4K") // only the listen queue: no memory cost, kept from the seed
	o.set("max_connections", fmt.Sprint(s.MaxConnections))
	o.set("max_prepared_stmt_count", "4M")
	o.set("table_open_cache", fmt.Sprint(s.TableOpenCache))
	o.set("table_open_cache_instances", "64")

	switch in.Profile {
	case ProfileBulkLoad:
		// Loading into an empty database: the binlog would double the writes
		// and nothing replicates from a benchmark's prepare phase.
		if in.Flavor == FlavorPercona {
			o.flag("disable-log-bin") // binlog is on by default in 8.0
		} else {
			o.flag("skip-log-bin")
		}
	case ProfileWorkload:
		o.set("log-bin", BinlogBaseName)
		// MyRocks supports only row-based logging (no gap locks, so
		// statements do not replay identically; Percona lists statement and
		// mixed formats as unsupported). Set for InnoDB too, and explicitly
		// because MariaDB defaults to MIXED: binlog bytes per transaction
		// then compare across stacks and flavors.
		o.set("binlog_format", "ROW")
		o.set("sync_binlog", "1K")
		if in.Flavor == FlavorPercona {
			// Percona-only: MariaDB 10.11 aborts on binlog_space_limit
			// (11.4 adds it as max_binlog_total_size); a loose- prefix would
			// only hide that the limit is not there.
			o.set("binlog_space_limit", "4G")
		}
	}

	switch in.Engine {
	case EngineRocksDB:
		rocksdbDefaults(o, in, s)
	case EngineInnoDB:
		innodbDefaults(o, in, s)
	}
	if in.Flavor == FlavorPercona && in.Version.orDefault() == Version84 {
		percona84(o)
	}
	return o
}

func rocksdbDefaults(o options, in Input, s Sizes) {
	if in.Flavor == FlavorPercona {
		o.set("plugin-load-add", "rocksdb=ha_rocksdb.so")
	} else {
		// MariaDB names the plugin library and registers ROCKSDB plus its
		// information_schema tables from it.
		o.set("plugin-load-add", "ha_rocksdb")
	}
	if in.ZenFSDevice != "" {
		// loose- as in Percona's ZenFS instructions (seed). The operator must
		// not rely on it silently: verify rocksdb_fs_uri after start.
		o.set("loose-rocksdb-fs-uri", "zenfs://dev:"+in.ZenFSDevice)
	}
	o.set("default-storage-engine", "rocksdb")
	// MyRocks cannot hold temporary tables.
	o.set("default-tmp-storage-engine", "MyISAM")

	// rocksdb_bulk_load belongs to the profile only: set globally it makes
	// every session bulk-load, and ordinary sessions then silently lose rows
	// that arrive out of key order or overlap existing keys.
	if in.Profile == ProfileBulkLoad {
		o.set("rocksdb_bulk_load", "1")
	} else {
		o.set("rocksdb_bulk_load", "0")
	}

	o.set("rocksdb_block_cache_size", formatBytes(s.BlockCacheBytes))
	o.set("rocksdb_max_total_wal_size", formatBytes(s.MaxTotalWALBytes))
	o.set("rocksdb_max_open_files", "-1")
	o.set("rocksdb_max_background_jobs", "8")
	o.set("rocksdb_block_size", "16K")
	o.set("rocksdb_table_cache_numshardbits", "6")
	// Trigger compaction when an SST holds many sequential deletes (seed).
	o.set("rocksdb_compaction_sequential_deletes_count_sd", "1")
	o.set("rocksdb_compaction_sequential_deletes", "199999")
	o.set("rocksdb_compaction_sequential_deletes_window", "200000")
	o.set("rocksdb_default_cf_options", defaultCFOptions(s))
	o.set("rocksdb_max_subcompactions", "4")
	// Direct IO: ZenFS requires it, and on a conventional drive it keeps the
	// comparison free of page-cache effects.
	o.set("rocksdb_use_direct_reads", "ON")
	o.set("rocksdb_use_direct_io_for_flush_and_compaction", "ON")
}

// defaultCFOptions is the seed's column family tuning with the memtable size
// scaled to the pod. target_file_size_base=1G stays: with ZenFS, SST files
// near the zone size are what keeps write amplification near 1.
func defaultCFOptions(s Sizes) string {
	return strings.Join([]string{
		"write_buffer_size=" + formatBytes(s.WriteBufferBytes),
		"target_file_size_base=1G",
		"max_bytes_for_level_base=512M",
		"level0_file_num_compaction_trigger=4",
		"level0_slowdown_writes_trigger=10",
		fmt.Sprintf("max_write_buffer_number=%d", s.MaxWriteBufferNumber),
		"compression=kLZ4Compression",
		"bottommost_compression=kLZ4Compression",
		"compression_opts=-14:4:0",
		"block_based_table_factory={cache_index_and_filter_blocks=1;filter_policy=bloomfilter:10:false;whole_key_filtering=0}",
		"level_compaction_dynamic_level_bytes=true",
		"optimize_filters_for_hits=true",
		"memtable_prefix_bloom_size_ratio=0.05",
		"prefix_extractor=capped:12",
		"compaction_pri=kMinOverlappingRatio",
	}, ";")
}

func innodbDefaults(o options, in Input, s Sizes) {
	o.set("default-storage-engine", "InnoDB")
	o.set("innodb_buffer_pool_size", formatBytes(s.BufferPoolBytes))
	if in.Flavor == FlavorPercona {
		// Set explicitly: 8.0 defaults to 8 instances from 1 GiB up and then
		// rounds the pool up to a multiple of 8 x 128 MiB, past our budget.
		o.set("innodb_buffer_pool_instances", fmt.Sprint(s.BufferPoolInstances))
		// 8.0.30+ sizes the redo log as one capacity and ignores
		// innodb_log_file_size once this is set.
		o.set("innodb_redo_log_capacity", formatBytes(s.RedoLogBytes))
	} else {
		// MariaDB 10.5+ has a single redo file and resizes it at start.
		o.set("innodb_log_file_size", formatBytes(s.RedoLogBytes))
	}
	// Same reasoning as MyRocks' direct IO: the buffer pool is the cache, the
	// page cache would only double it and blur the comparison.
	o.set("innodb_flush_method", "O_DIRECT")
	// The drives under test are SSDs; the HDD-era default of 200 IOPS throttles
	// background flushing and would make the InnoDB baseline look worse than
	// it is.
	o.set("innodb_io_capacity", "2000")
	o.set("innodb_io_capacity_max", "4000")
}

var (
	// Kernel block device names: nvme0n2, nullb0, sdb. No '/', so that a path
	// ("/dev/nvme0n2") is caught rather than producing zenfs://dev:/dev/...
	deviceNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

func validateInput(in Input) error {
	switch in.Flavor {
	case FlavorPercona, FlavorMariaDB:
	default:
		return fmt.Errorf("mycnf: unknown flavor %q (want %q or %q)", in.Flavor, FlavorPercona, FlavorMariaDB)
	}
	switch in.Version {
	case "", Version80:
	case Version84:
		if in.Flavor != FlavorPercona {
			return fmt.Errorf("mycnf: MySQL version %q needs flavor %q: %s is the MariaDB 10.11 stand-in whatever the version says", in.Version, FlavorPercona, in.Flavor)
		}
	default:
		return fmt.Errorf("mycnf: unknown MySQL version %q (want %q or %q)", in.Version, Version80, Version84)
	}
	switch in.Engine {
	case EngineRocksDB, EngineInnoDB:
	default:
		return fmt.Errorf("mycnf: unknown engine %q (want %q or %q)", in.Engine, EngineRocksDB, EngineInnoDB)
	}
	switch in.Profile {
	case ProfileWorkload, ProfileBulkLoad:
	default:
		return fmt.Errorf("mycnf: unknown profile %q (want %q or %q)", in.Profile, ProfileWorkload, ProfileBulkLoad)
	}
	if in.ZenFSDevice != "" {
		if !deviceNameRE.MatchString(in.ZenFSDevice) {
			return fmt.Errorf("mycnf: ZenFS device %q is not a kernel device name (want e.g. \"nvme0n2\", not a path)", in.ZenFSDevice)
		}
		if in.Engine != EngineRocksDB {
			return fmt.Errorf("mycnf: ZenFS device %q needs engine %q: only MyRocks can place data on a zoned device", in.ZenFSDevice, EngineRocksDB)
		}
		if in.Flavor != FlavorPercona {
			// MariaDB would accept loose-rocksdb-fs-uri and ignore it, putting
			// the data on the filesystem while the benchmark claims ZNS.
			return fmt.Errorf("mycnf: ZenFS device %q needs flavor %q: %s's MyRocks has no ZenFS", in.ZenFSDevice, FlavorPercona, in.Flavor)
		}
		if in.Version.orDefault() != Version80 {
			return fmt.Errorf("mycnf: ZenFS device %q needs MySQL 8.0: Percona removed ZenFS in 8.1.0-1 (2023-11-27) and %s has none", in.ZenFSDevice, in.Version)
		}
	}
	for _, p := range []struct{ name, v string }{{"DataDir", in.DataDir}, {"Socket", in.Socket}, {"PidFile", in.PidFile}} {
		if !strings.HasPrefix(p.v, "/") {
			return fmt.Errorf("mycnf: %s %q must be an absolute path", p.name, p.v)
		}
		if err := checkValue(p.v); err != nil {
			return fmt.Errorf("mycnf: %s: %w", p.name, err)
		}
	}
	if in.Port < 1 || in.Port > 65535 {
		return fmt.Errorf("mycnf: port %d out of range 1-65535", in.Port)
	}
	if in.ServerID < 0 {
		return fmt.Errorf("mycnf: negative server-id %d", in.ServerID)
	}
	return nil
}

// header is the first line. No timestamp: the output must be reproducible.
const header = "# Generated by zns-mysql (operator/internal/mycnf). Do not edit: the operator rewrites it."

// maxLineBytes keeps lines inside mysqld's 4096-byte option file line buffer;
// a longer line is split by the reader and the tail parsed as another option.
const maxLineBytes = 4000

func render(in Input, s Sizes, o options) (string, error) {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	var b strings.Builder
	b.WriteString(header + "\n")
	mem := formatBytes(s.MemoryBytes)
	if s.FallbackUsed {
		mem += " (no limit set: fallback)"
	}
	zenfs := in.ZenFSDevice
	if zenfs == "" {
		zenfs = "none"
	}
	// The series is named only for 8.4: the header of an 8.0 file stays what it was before there was a choice,
	// so that the operator's upgrade does not change every 8.0 database's file and restart its mysqld.
	version := ""
	if in.Version.orDefault() != Version80 {
		version = " mysql=" + string(in.Version)
	}
	fmt.Fprintf(&b, "# flavor=%s%s engine=%s profile=%s zenfs=%s memory=%s\n", in.Flavor, version, in.Engine, in.Profile, zenfs, mem)
	b.WriteString("[mysqld]\n")
	for _, k := range keys {
		opt := o[k]
		line := opt.key
		if !opt.flag {
			line += "=" + quoteValue(opt.value)
		}
		if len(line) > maxLineBytes {
			return "", fmt.Errorf("mycnf: option %q: line of %d bytes exceeds mysqld's limit of %d", opt.key, len(line), maxLineBytes)
		}
		b.WriteString(line + "\n")
	}
	return b.String(), nil
}

// quoteValue quotes the way mysqld's option file reader unquotes: a value
// whose first and last characters are the same quote loses them, and
// backslash escapes (\\ \" ...) are decoded, quoted or not. Values with a
// space, '#' (starts a comment outside quotes), ';' (the seed quotes those),
// quotes or backslashes are therefore double-quoted with '\' and '"' escaped.
//
// The empty value is written as a pair of single quotes, as the MySQL manual writes an empty tls_version, so
// that it reads as meant rather than as a line cut short.
func quoteValue(v string) string {
	if v == "" {
		return "''"
	}
	if !strings.ContainsAny(v, " #;\"'\\") {
		return v
	}
	v = strings.ReplaceAll(v, `\`, `\\`)
	v = strings.ReplaceAll(v, `"`, `\"`)
	return `"` + v + `"`
}

// checkValue rejects what cannot be written into one option line: control
// characters (a newline would inject options or a [section]).
func checkValue(v string) error {
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("value %q contains control character %U", v, r)
		}
	}
	return nil
}
