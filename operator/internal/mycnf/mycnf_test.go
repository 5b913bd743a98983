package mycnf

import (
	"embed"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.cnf from the generator")

//go:embed testdata/*.cnf
var goldens embed.FS

// base is a typical production input: the seed's paths, a 16 GiB pod.
func base(f Flavor, e Engine, p Profile) Input {
	return Input{
		Flavor: f, Engine: e, Profile: p,
		MemoryLimitBytes: 16 * GiB,
		DataDir:          "/var/lib/mysql",
		Socket:           "/var/run/mysqld/mysqld.sock",
		PidFile:          "/var/run/mysqld/mysqld.pid",
		Port:             3306,
		ServerID:         7,
	}
}

func TestGolden(t *testing.T) {
	type gcase struct {
		name string
		in   Input
	}
	var cases []gcase
	for _, f := range []Flavor{FlavorPercona, FlavorMariaDB} {
		for _, e := range []Engine{EngineRocksDB, EngineInnoDB} {
			for _, p := range []Profile{ProfileBulkLoad, ProfileWorkload} {
				cases = append(cases, gcase{string(f) + "_" + string(e) + "_" + string(p), base(f, e, p)})
				// ZenFS exists only for Percona's MyRocks; other combinations
				// are rejected (TestInputErrors).
				if f == FlavorPercona && e == EngineRocksDB {
					in := base(f, e, p)
					in.ZenFSDevice = "nvme0n2"
					cases = append(cases, gcase{string(f) + "_" + string(e) + "_" + string(p) + "_zoned", in})
				}
			}
		}
	}
	// Percona Server 8.4 (no ZenFS there: TestVersionInputErrors), named percona84_<engine>_<profile>.
	for _, e := range []Engine{EngineRocksDB, EngineInnoDB} {
		for _, p := range []Profile{ProfileBulkLoad, ProfileWorkload} {
			in := base(FlavorPercona, e, p)
			in.Version = Version84
			cases = append(cases, gcase{"percona84_" + string(e) + "_" + string(p), in})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Generate(c.in)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			file := "testdata/" + c.name + ".cnf"
			if *update {
				if err := os.WriteFile(filepath.FromSlash(file), []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := goldens.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("%s mismatch (-want +got); rerun with -update if intended:\n%s", file, d)
			}
		})
	}
}

// TestGoldenSet catches stale goldens left behind by renamed cases.
func TestGoldenSet(t *testing.T) {
	entries, err := goldens.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 14 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("testdata holds %d goldens, want 14 (4 MariaDB, 4 Percona 8.0, 2 Percona 8.0 zoned, 4 Percona 8.4): %v", len(entries), names)
	}
}

// parse reads the generated [mysqld] lines back into key -> raw value.
func parse(t *testing.T, cnf string) map[string]string {
	t.Helper()
	m := map[string]string{}
	section := ""
	for _, line := range strings.Split(strings.TrimRight(cnf, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "["):
			section = line
			continue
		}
		if section != "[mysqld]" {
			t.Fatalf("option outside [mysqld]: %q", line)
		}
		k, v, _ := strings.Cut(line, "=")
		if _, dup := m[k]; dup {
			t.Fatalf("duplicate line for %q", k)
		}
		m[k] = v
	}
	return m
}

func mustGenerate(t *testing.T, in Input) string {
	t.Helper()
	out, err := Generate(in)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return out
}

func TestStructure(t *testing.T) {
	for _, f := range []Flavor{FlavorPercona, FlavorMariaDB} {
		for _, e := range []Engine{EngineRocksDB, EngineInnoDB} {
			for _, p := range []Profile{ProfileBulkLoad, ProfileWorkload} {
				in := base(f, e, p)
				out := mustGenerate(t, in)
				lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
				if lines[0] != header {
					t.Errorf("%s/%s/%s: first line %q, want the generated header", f, e, p, lines[0])
				}
				if regexp.MustCompile(`\d{4}-\d\d-\d\d|\d\d:\d\d`).MatchString(out) {
					t.Errorf("%s/%s/%s: output looks timestamped", f, e, p)
				}
				if c := strings.Count(out, "[mysqld]"); c != 1 {
					t.Errorf("%s/%s/%s: %d [mysqld] sections", f, e, p, c)
				}
				var prev string
				for _, l := range lines[3:] {
					k, _, _ := strings.Cut(l, "=")
					if n := NormalizeKey(k); n <= prev {
						t.Errorf("%s/%s/%s: %q not sorted after %q", f, e, p, n, prev)
					} else {
						prev = n
					}
				}
				m := parse(t, out)
				for _, k := range []string{"log-error", "log_error"} {
					if _, ok := m[k]; ok {
						t.Errorf("%s/%s/%s: log-error present; containers log to stderr", f, e, p)
					}
				}
				if m["datadir"] != "/var/lib/mysql" || m["socket"] != "/var/run/mysqld/mysqld.sock" ||
					m["pid-file"] != "/var/run/mysqld/mysqld.pid" || m["port"] != "3306" || m["server-id"] != "7" {
					t.Errorf("%s/%s/%s: forced paths/port/id wrong: %v", f, e, p, m)
				}
			}
		}
	}
}

func TestEngineAndProfileSwitches(t *testing.T) {
	type want struct {
		present map[string]string // key -> raw value ("" for flag lines)
		absent  []string
	}
	tests := []struct {
		f    Flavor
		e    Engine
		p    Profile
		want want
	}{
		{FlavorPercona, EngineRocksDB, ProfileBulkLoad, want{
			present: map[string]string{"plugin-load-add": "rocksdb=ha_rocksdb.so", "default-storage-engine": "rocksdb",
				"default-tmp-storage-engine": "MyISAM", "rocksdb_bulk_load": "1", "disable-log-bin": ""},
			absent: []string{"log-bin", "skip-log-bin", "sync_binlog", "binlog_space_limit", "loose-rocksdb-fs-uri"},
		}},
		{FlavorPercona, EngineRocksDB, ProfileWorkload, want{
			present: map[string]string{"rocksdb_bulk_load": "0", "log-bin": "binlog", "binlog_format": "ROW",
				"sync_binlog": "1K", "binlog_space_limit": "4G"},
			absent: []string{"disable-log-bin", "skip-log-bin"},
		}},
		{FlavorMariaDB, EngineRocksDB, ProfileBulkLoad, want{
			present: map[string]string{"plugin-load-add": "ha_rocksdb", "rocksdb_bulk_load": "1", "skip-log-bin": ""},
			absent:  []string{"log-bin", "disable-log-bin", "binlog_space_limit"},
		}},
		{FlavorMariaDB, EngineRocksDB, ProfileWorkload, want{
			present: map[string]string{"rocksdb_bulk_load": "0", "log-bin": "binlog", "sync_binlog": "1K"},
			absent:  []string{"skip-log-bin", "binlog_space_limit"},
		}},
		{FlavorPercona, EngineInnoDB, ProfileWorkload, want{
			present: map[string]string{"default-storage-engine": "InnoDB", "innodb_flush_method": "O_DIRECT",
				"innodb_redo_log_capacity": "4G", "innodb_buffer_pool_instances": "8", "log-bin": "binlog"},
			absent: []string{"plugin-load-add", "rocksdb_bulk_load", "rocksdb_block_cache_size", "innodb_log_file_size",
				"default-tmp-storage-engine"},
		}},
		{FlavorMariaDB, EngineInnoDB, ProfileBulkLoad, want{
			present: map[string]string{"default-storage-engine": "InnoDB", "innodb_log_file_size": "4G", "skip-log-bin": ""},
			absent:  []string{"plugin-load-add", "rocksdb_bulk_load", "innodb_redo_log_capacity", "innodb_buffer_pool_instances"},
		}},
	}
	for _, tt := range tests {
		m := parse(t, mustGenerate(t, base(tt.f, tt.e, tt.p)))
		for k, v := range tt.want.present {
			got, ok := m[k]
			if !ok || got != v {
				t.Errorf("%s/%s/%s: %s = %q (present %v), want %q", tt.f, tt.e, tt.p, k, got, ok, v)
			}
		}
		for _, k := range tt.want.absent {
			if _, ok := m[k]; ok {
				t.Errorf("%s/%s/%s: %s present, want absent", tt.f, tt.e, tt.p, k)
			}
		}
	}
}

func TestZenFSURI(t *testing.T) {
	in := base(FlavorPercona, EngineRocksDB, ProfileWorkload)
	in.ZenFSDevice = "nullb0"
	m := parse(t, mustGenerate(t, in))
	if got := m["loose-rocksdb-fs-uri"]; got != "zenfs://dev:nullb0" {
		t.Errorf("loose-rocksdb-fs-uri = %q, want zenfs://dev:nullb0", got)
	}
	in.ZenFSDevice = ""
	if out := mustGenerate(t, in); strings.Contains(out, "fs-uri") || strings.Contains(out, "fs_uri") {
		t.Errorf("conventional config carries an fs-uri:\n%s", out)
	}
}

func TestDeterministic(t *testing.T) {
	in := base(FlavorPercona, EngineRocksDB, ProfileWorkload)
	in.ZenFSDevice = "nvme0n2"
	in.Overrides = map[string]string{
		"skip-name-resolve": "", "innodb-buffer-pool-size": "1G", "binlog_expire_logs_seconds": "3600",
		"max-connections": "300", "rocksdb_max_background_jobs": "4", "transaction_isolation": "READ-COMMITTED",
	}
	first := mustGenerate(t, in)
	for i := 0; i < 50; i++ { // map iteration order differs between runs
		if got := mustGenerate(t, in); got != first {
			t.Fatalf("run %d differs:\n%s", i, cmp.Diff(first, got))
		}
	}
}

func TestNormalizeKey(t *testing.T) {
	for in, want := range map[string]string{
		"innodb-buffer-pool-size":       "innodb_buffer_pool_size",
		"innodb_buffer_pool_size":       "innodb_buffer_pool_size",
		"loose-rocksdb-fs-uri":          "rocksdb_fs_uri",
		"loose_rocksdb_fs_uri":          "rocksdb_fs_uri",
		"LOOSE-Rocksdb-FS-URI":          "rocksdb_fs_uri",
		"Max_Connections":               "max_connections",
		"skip-name-resolve":             "skip_name_resolve", // modifiers are not stripped here
		"rocksdb_loose_option":          "rocksdb_loose_option",
		"loose-loose-x":                 "loose_x", // one prefix here; the deny check strips the rest (optionStages)
		"":                              "",
		"pid-file":                      "pid_file",
		"rocksdb_default_cf_options":    "rocksdb_default_cf_options",
		"default-tmp-storage-engine":    "default_tmp_storage_engine",
		"table_open_cache_instances":    "table_open_cache_instances",
		"rocksdb-use-direct-reads":      "rocksdb_use_direct_reads",
		"performance-schema-instrument": "performance_schema_instrument",
	} {
		if got := NormalizeKey(in); got != want {
			t.Errorf("NormalizeKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOverrides(t *testing.T) {
	tests := []struct {
		name    string
		engine  Engine
		ov      map[string]string
		present map[string]string // raw lines key -> value
		absent  []string
	}{
		{
			name:    "dashed user key replaces underscored default",
			engine:  EngineInnoDB,
			ov:      map[string]string{"innodb-buffer-pool-size": "3G"},
			present: map[string]string{"innodb-buffer-pool-size": "3G"},
			absent:  []string{"innodb_buffer_pool_size"},
		},
		{
			name:    "loose user key replaces default",
			engine:  EngineRocksDB,
			ov:      map[string]string{"loose-rocksdb-block-cache-size": "2G"},
			present: map[string]string{"loose-rocksdb-block-cache-size": "2G"},
			absent:  []string{"rocksdb_block_cache_size"},
		},
		{
			name:    "skip- form replaces the option it switches",
			engine:  EngineRocksDB,
			ov:      map[string]string{"skip-ssl": ""},
			present: map[string]string{"skip-ssl": ""},
			absent:  []string{"ssl"},
		},
		{
			name:    "real skip_ option is kept as a new flag",
			engine:  EngineRocksDB,
			ov:      map[string]string{"skip-name-resolve": ""},
			present: map[string]string{"skip-name-resolve": "", "ssl": "0"},
		},
		{
			name:    "new option added",
			engine:  EngineRocksDB,
			ov:      map[string]string{"binlog_expire_logs_seconds": "86400"},
			present: map[string]string{"binlog_expire_logs_seconds": "86400"},
		},
		{
			name:    "value with semicolons is quoted like the seed",
			engine:  EngineRocksDB,
			ov:      map[string]string{"rocksdb_override_cf_options": "cf1={write_buffer_size=8M};cf2={write_buffer_size=16M}"},
			present: map[string]string{"rocksdb_override_cf_options": `"cf1={write_buffer_size=8M};cf2={write_buffer_size=16M}"`},
		},
		{
			name:    "spaces, hash, quotes and backslashes are quoted and escaped",
			engine:  EngineRocksDB,
			ov:      map[string]string{"optimizer_switch": `SET @a='x y'; SET @b="#\n"`},
			present: map[string]string{"optimizer_switch": `"SET @a='x y'; SET @b=\"#\\n\""`},
		},
		{
			name:    "loose rocksdb option tolerated with innodb",
			engine:  EngineInnoDB,
			ov:      map[string]string{"loose-rocksdb-block-cache-size": "1G"},
			present: map[string]string{"loose-rocksdb-block-cache-size": "1G"},
		},
		{
			name:    "plain value stays unquoted",
			engine:  EngineRocksDB,
			ov:      map[string]string{"transaction-isolation": "READ-COMMITTED"},
			present: map[string]string{"transaction-isolation": "READ-COMMITTED"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base(FlavorMariaDB, tt.engine, ProfileWorkload)
			in.Overrides = tt.ov
			m := parse(t, mustGenerate(t, in))
			for k, v := range tt.present {
				if got, ok := m[k]; !ok || got != v {
					t.Errorf("%s = %q (present %v), want %q", k, got, ok, v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := m[k]; ok {
					t.Errorf("%s still present", k)
				}
			}
		})
	}
}

// unquote is mysqld's reading of a value (mysys/my_default.c): strip one
// pair of matching outer quotes, decode backslash escapes.
func unquote(v string) string {
	if len(v) > 1 && (v[0] == '"' || v[0] == '\'') && v[0] == v[len(v)-1] {
		v = v[1 : len(v)-1]
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i != len(v)-1 {
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 's':
				b.WriteByte(' ')
			case '"', '\'', '\\':
				b.WriteByte(v[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(v[i])
			}
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, v := range []string{
		"plain", "a b", "x;y", "#comment", `'single'`, `"double"`, `back\slash`, `trailing\`,
		`\n literal`, `mixed 'q' "d" \ #`, "  padded  ", "ä ö",
	} {
		q := quoteValue(v)
		if got := unquote(q); got != v {
			t.Errorf("quoteValue(%q) = %s, which mysqld reads as %q", v, q, got)
		}
		// An unquoted '#' would start a comment.
		if strings.Contains(v, "#") && !strings.HasPrefix(q, `"`) {
			t.Errorf("quoteValue(%q) = %s leaves '#' unquoted", v, q)
		}
	}
}

func TestOverrideErrors(t *testing.T) {
	tests := []struct {
		name   string
		engine Engine
		ov     map[string]string
		want   string // substring of the error
	}{
		{"datadir", EngineRocksDB, map[string]string{"datadir": "/x"}, `"datadir" is not allowed: the data volume`},
		{"socket", EngineRocksDB, map[string]string{"socket": "/x"}, `"socket" is not allowed`},
		{"pid file dashed", EngineRocksDB, map[string]string{"pid-file": "/x"}, `"pid-file" is not allowed`},
		{"port", EngineRocksDB, map[string]string{"port": "3307"}, `"port" is not allowed`},
		{"server id", EngineRocksDB, map[string]string{"server_id": "2"}, `"server_id" is not allowed`},
		{"fs uri loose", EngineRocksDB, map[string]string{"loose-rocksdb-fs-uri": "zenfs://dev:x"}, "ZenFS URI"},
		{"fs uri plain", EngineRocksDB, map[string]string{"rocksdb_fs_uri": "zenfs://dev:x"}, "ZenFS URI"},
		{"plugin load", EngineRocksDB, map[string]string{"plugin-load": "x.so"}, "plugins"},
		{"plugin load add", EngineInnoDB, map[string]string{"plugin_load_add": "ha_rocksdb"}, "plugins"},
		{"skip rocksdb", EngineRocksDB, map[string]string{"skip-rocksdb": ""}, "MyRocks loads"},
		{"storage engine", EngineRocksDB, map[string]string{"default_storage_engine": "InnoDB"}, "engine field"},
		{"bulk load", EngineRocksDB, map[string]string{"rocksdb_bulk_load": "0"}, "silently lose rows"},
		{"bulk load loose", EngineRocksDB, map[string]string{"loose-rocksdb-bulk-load": "1"}, "silently lose rows"},
		{"bulk load enable", EngineRocksDB, map[string]string{"enable-rocksdb-bulk-load": ""}, "silently lose rows"},
		{"bulk load maximum", EngineRocksDB, map[string]string{"maximum-rocksdb-bulk-load": "0"}, "silently lose rows"},
		{"log bin", EngineRocksDB, map[string]string{"log-bin": "mysql-bin"}, "binlog is switched by the profile"},
		{"skip log bin", EngineInnoDB, map[string]string{"skip-log-bin": ""}, "binlog is switched"},
		{"disable log bin", EngineRocksDB, map[string]string{"disable_log_bin": ""}, "binlog is switched"},
		{"log error", EngineRocksDB, map[string]string{"log-error": "/var/log/mysql/error.log"}, "stderr"},
		{"newline in value", EngineRocksDB, map[string]string{"optimizer_switch": "x\ndatadir=/evil"}, "control character"},
		{"CR in value", EngineRocksDB, map[string]string{"optimizer_switch": "x\r"}, "control character"},
		{"NUL in value", EngineRocksDB, map[string]string{"optimizer_switch": "x\x00"}, "control character"},
		{"newline in key", EngineRocksDB, map[string]string{"a\n[client]": "1"}, "not an option name"},
		{"include directive", EngineRocksDB, map[string]string{"!include /etc/passwd": ""}, "not an option name"},
		{"equals in key", EngineRocksDB, map[string]string{"datadir=/x#": "1"}, "not an option name"},
		{"space in key", EngineRocksDB, map[string]string{"max connections": "1"}, "not an option name"},
		{"empty key", EngineRocksDB, map[string]string{"": "1"}, "not an option name"},
		{"only loose", EngineRocksDB, map[string]string{"loose-": "1"}, "only a prefix"},
		{"rocksdb option with innodb", EngineInnoDB, map[string]string{"rocksdb_block_cache_size": "1G"}, "needs engine"},
		{"same option twice", EngineRocksDB, map[string]string{"max-connections": "1", "max_connections": "2"}, "set the same option"},
		{"flag and skip form", EngineRocksDB, map[string]string{"ssl": "1", "skip-ssl": ""}, "set the same option"},
		{"too long", EngineRocksDB, map[string]string{"optimizer_switch": strings.Repeat("x", 5000)}, "exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base(FlavorMariaDB, tt.engine, ProfileWorkload)
			in.Overrides = tt.ov
			out, err := Generate(in)
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if out != "" {
				t.Errorf("output alongside an error")
			}
		})
	}
}

func TestInputErrors(t *testing.T) {
	ok := base(FlavorPercona, EngineRocksDB, ProfileWorkload)
	tests := []struct {
		name string
		mod  func(*Input)
		want string
	}{
		{"unknown flavor", func(in *Input) { in.Flavor = "mysql" }, "unknown flavor"},
		{"empty engine", func(in *Input) { in.Engine = "" }, "unknown engine"},
		{"unknown profile", func(in *Input) { in.Profile = "prepare" }, "unknown profile"},
		{"device path", func(in *Input) { in.ZenFSDevice = "/dev/nvme0n2" }, "not a kernel device name"},
		{"device injection", func(in *Input) { in.ZenFSDevice = "nvme0n2\ndatadir=/x" }, "not a kernel device name"},
		{"zenfs on innodb", func(in *Input) { in.ZenFSDevice = "nvme0n2"; in.Engine = EngineInnoDB }, "only MyRocks"},
		{"zenfs on mariadb", func(in *Input) { in.ZenFSDevice = "nullb0"; in.Flavor = FlavorMariaDB }, "has no ZenFS"},
		{"relative datadir", func(in *Input) { in.DataDir = "data" }, "absolute"},
		{"empty socket", func(in *Input) { in.Socket = "" }, "Socket"},
		{"empty pid file", func(in *Input) { in.PidFile = "" }, "PidFile"},
		{"newline in datadir", func(in *Input) { in.DataDir = "/d\n[client]" }, "control character"},
		{"zero port", func(in *Input) { in.Port = 0 }, "port 0"},
		{"big port", func(in *Input) { in.Port = 70000 }, "port 70000"},
		{"negative server id", func(in *Input) { in.ServerID = -1 }, "server-id"},
		{"tiny memory", func(in *Input) { in.MemoryLimitBytes = 256 * MiB }, "below the minimum"},
		{"negative memory", func(in *Input) { in.MemoryLimitBytes = -1 }, "negative memory"},
	}
	if _, err := Generate(ok); err != nil {
		t.Fatalf("base input fails: %v", err)
	}
	for _, tt := range tests {
		in := ok
		tt.mod(&in)
		_, err := Generate(in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestServerIDDefault(t *testing.T) {
	in := base(FlavorMariaDB, EngineRocksDB, ProfileWorkload)
	in.ServerID = 0
	if got := parse(t, mustGenerate(t, in))["server-id"]; got != "1" {
		t.Errorf("server-id = %q, want 1 for ServerID 0", got)
	}
}

func TestPathsWithSpacesAreQuoted(t *testing.T) {
	in := base(FlavorMariaDB, EngineInnoDB, ProfileWorkload)
	in.DataDir = "/mnt/my data"
	if got := parse(t, mustGenerate(t, in))["datadir"]; got != `"/mnt/my data"` {
		t.Errorf("datadir = %s, want it quoted", got)
	}
}

// TestOverrideDenylist: options that run SQL, load code, switch off authentication or name files and
// directories are refused, in every spelling mysqld accepts; tuning options that merely look alike are not.
func TestOverrideDenylist(t *testing.T) {
	denied := map[string]string{
		"init_file":                     "runs SQL",
		"init-file":                     "runs SQL",
		"loose-init-file":               "runs SQL",
		"init_connect":                  "runs SQL",
		"init_slave":                    "runs SQL",
		"plugin_dir":                    "loads code",
		"plugin-maturity":               "loads code",
		"early-plugin-load":             "loads code",
		"skip-grant-tables":             "authentication",
		"disable_grant_tables":          "authentication",
		"user":                          "mysql user",
		"chroot":                        "root directory",
		"secure_file_priv":              "LOAD DATA",
		"tmpdir":                        "file or directory",
		"basedir":                       "file or directory",
		"innodb_data_home_dir":          "file or directory",
		"innodb_log_group_home_dir":     "file or directory",
		"innodb_undo_directory":         "file or directory",
		"innodb_data_file_path":         "file or directory",
		"innodb_buffer_pool_filename":   "file or directory",
		"rocksdb_wal_dir":               "file or directory",
		"rocksdb_tmpdir":                "file or directory",
		"rocksdb_datadir":               "MyRocks data",
		"general_log_file":              "file or directory",
		"slow_query_log_file":           "file or directory",
		"log_bin_index":                 "names a file",
		"relay_log":                     "names files",
		"ssl_key":                       "names a file",
		"keyring_file_data":             "encryption keys",
		"lc_messages_dir":               "file or directory",
		"rocksdb_persistent_cache_path": "file or directory",
		"core-file":                     "core dumps",
	}
	for key, want := range denied {
		in := base(FlavorPercona, EngineRocksDB, ProfileWorkload)
		in.Overrides = map[string]string{key: "/tmp/x"}
		_, err := Generate(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "docs/config-overrides.md") {
			t.Errorf("%s: got %v, want a refusal saying %q and pointing at the rule", key, err, want)
		}
	}
	for key, value := range map[string]string{
		"innodb_adaptive_hash_index": "OFF", "innodb_file_per_table": "ON", "innodb_log_file_size": "1G",
		"rocksdb_max_manifest_file_size": "64M", "open_files_limit": "65535", "skip-name-resolve": "",
		"rocksdb_max_background_jobs": "4", "binlog_expire_logs_seconds": "3600",
	} {
		in := base(FlavorPercona, EngineRocksDB, ProfileWorkload)
		in.Overrides = map[string]string{key: value}
		if _, err := Generate(in); err != nil {
			t.Errorf("%s=%s: %v", key, value, err)
		}
	}
}

// TestMemoryOverrides: overridden caches must fit the memory limit with the generated caches beside them.
func TestMemoryOverrides(t *testing.T) {
	type tc struct {
		engine Engine
		mem    int64
		ov     map[string]string
		want   string // "" = accepted; else a substring of the error
	}
	for name, c := range map[string]tc{
		// 4Gi: 3.6G for caches (4G less 384M); generated: memtables 8 x 96M = 768M, block cache 2.25G.
		"block cache 100G in 4Gi":        {EngineRocksDB, 4 * GiB, map[string]string{"rocksdb_block_cache_size": "100G"}, "need 100.8G (rocksdb_block_cache_size=100G (override) + memtables 8 x 96M), more than the 3.6G that the memory limit of 4G leaves after 384M for mysqld itself"},
		"block cache that fits":          {EngineRocksDB, 4 * GiB, map[string]string{"rocksdb-block-cache-size": "2G"}, ""},
		"block cache exactly the budget": {EngineRocksDB, 4 * GiB, map[string]string{"rocksdb_block_cache_size": "2944M"}, ""},
		"one MiB over":                   {EngineRocksDB, 4 * GiB, map[string]string{"rocksdb_block_cache_size": "2945m"}, "more than the 3.6G"},
		"memtables from cf options":      {EngineRocksDB, 4 * GiB, map[string]string{"rocksdb_default_cf_options": "write_buffer_size=1G;max_write_buffer_number=8"}, "memtables 8 x 1G"},
		"buffer pool beside MyRocks":     {EngineRocksDB, 4 * GiB, map[string]string{"innodb_buffer_pool_size": "1G"}, "innodb_buffer_pool_size=1G (override)"},
		"small pool beside MyRocks":      {EngineRocksDB, 4 * GiB, map[string]string{"innodb_buffer_pool_size": "256M"}, ""},
		"innodb pool 8G in 4Gi":          {EngineInnoDB, 4 * GiB, map[string]string{"innodb_buffer_pool_size": "8G"}, "innodb_buffer_pool_size=8G (override)"},
		"key buffer adds to the pool":    {EngineInnoDB, 4 * GiB, map[string]string{"key_buffer_size": "1G"}, "innodb_buffer_pool_size=3G (generated) + key_buffer_size=1G (override)"},
		"loose rocksdb cache on innodb":  {EngineInnoDB, 4 * GiB, map[string]string{"loose-rocksdb-block-cache-size": "64G"}, ""},
		"not a size":                     {EngineRocksDB, 4 * GiB, map[string]string{"rocksdb_block_cache_size": "lots"}, "not a size"},
		"overflowing size":               {EngineRocksDB, 4 * GiB, map[string]string{"rocksdb_block_cache_size": "9999999999999E"}, "larger than any memory"},
		"no limit uses the fallback":     {EngineRocksDB, 0, map[string]string{"rocksdb_block_cache_size": "4G"}, "memory limit of 2G"},
	} {
		t.Run(name, func(t *testing.T) {
			in := base(FlavorPercona, c.engine, ProfileWorkload)
			in.MemoryLimitBytes, in.Overrides = c.mem, c.ov
			_, err := Generate(in)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestMemoryLimitBounds: absurd limits are refused instead of sizing caches from them (8Ei once gave
// rocksdb_block_cache_size=6442450940G).
func TestMemoryLimitBounds(t *testing.T) {
	// math.MaxInt64 is what resource.MustParse("8Ei").Value() gives.
	for _, mem := range []int64{math.MaxInt64, MaxMemoryBytes + 1} {
		in := base(FlavorPercona, EngineRocksDB, ProfileWorkload)
		in.MemoryLimitBytes = mem
		if out, err := Generate(in); err == nil || !strings.Contains(err.Error(), "above the maximum of 16T") {
			t.Errorf("%d: got %v\n%s", mem, err, out)
		}
	}
	in := base(FlavorPercona, EngineRocksDB, ProfileWorkload)
	in.MemoryLimitBytes = MaxMemoryBytes
	if _, err := Generate(in); err != nil {
		t.Errorf("the maximum itself: %v", err)
	}
}
