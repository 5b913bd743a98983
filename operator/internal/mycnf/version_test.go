package mycnf

import (
	"strings"
	"testing"
)

// every84Input is each Percona 8.4 input the operator can produce: both engines, both profiles, and memory
// limits from the smallest accepted to a large node (the sizing decides some values, never which options appear,
// but a new size-dependent option would show here).
func every84Input() []Input {
	var ins []Input
	for _, e := range []Engine{EngineRocksDB, EngineInnoDB} {
		for _, p := range []Profile{ProfileBulkLoad, ProfileWorkload} {
			for _, mem := range []int64{0, 512 * MiB, 2 * GiB, 16 * GiB, 512 * GiB} {
				in := base(FlavorPercona, e, p)
				in.Version, in.MemoryLimitBytes = Version84, mem
				ins = append(ins, in)
			}
		}
	}
	return ins
}

// removedKeys are the options of a generated file that MySQL 8.4 removed.
func removedKeys(t *testing.T, cnf string) []string {
	t.Helper()
	var found []string
	for k := range parse(t, cnf) {
		if _, ok := removedReason(NormalizeKey(k)); ok {
			found = append(found, k)
		}
	}
	return found
}

// TestNoRemovedOptionIn84: no file generated for Percona 8.4 names an option MySQL 8.4 removed (removedIn84),
// while the 8.0 file for the same input does name one (ssl), so the check sees what it looks for.
func TestNoRemovedOptionIn84(t *testing.T) {
	for _, in := range every84Input() {
		name := string(in.Engine) + "/" + string(in.Profile)
		if found := removedKeys(t, mustGenerate(t, in)); len(found) > 0 {
			t.Errorf("%s, memory %d: 8.4 file has options 8.4 removed: %v", name, in.MemoryLimitBytes, found)
		}
		in80 := in
		in80.Version = Version80
		if found := removedKeys(t, mustGenerate(t, in80)); len(found) == 0 {
			t.Errorf("%s, memory %d: the 8.0 file has no option 8.4 removed: the check would not notice one", name, in.MemoryLimitBytes)
		}
	}
}

// Test84Replacements: what 8.4 writes instead of what it removed keeps the 8.0 file's behaviour: TLS off, and
// the image's mysql_native_password accounts usable.
func Test84Replacements(t *testing.T) {
	for _, in := range every84Input() {
		got := parse(t, mustGenerate(t, in))
		if v, ok := got["tls_version"]; !ok || unquote(v) != "" {
			t.Errorf("%s/%s: tls_version = %q (present %v), want present and empty (no TLS protocol: encrypted connections off)",
				in.Engine, in.Profile, v, ok)
		}
		if got["mysql_native_password"] != "ON" {
			t.Errorf("%s/%s: mysql_native_password = %q, want ON (8.4 does not load the plugin by default)",
				in.Engine, in.Profile, got["mysql_native_password"])
		}
	}
	for _, v := range []Version{"", Version80} {
		in := base(FlavorPercona, EngineInnoDB, ProfileWorkload)
		in.Version = v
		got := parse(t, mustGenerate(t, in))
		if got["ssl"] != "0" {
			t.Errorf("version %q: ssl = %q, want 0", v, got["ssl"])
		}
		for _, k := range []string{"tls_version", "mysql_native_password"} {
			if _, ok := got[k]; ok {
				t.Errorf("version %q: has %s, which only 8.4 needs", v, k)
			}
		}
	}
}

// TestOverridesRemovedIn84: an override naming an option 8.4 removed is refused for 8.4 with the reason and the
// replacement, in every spelling mysqld would read as that option; 8.0 takes the same override.
func TestOverridesRemovedIn84(t *testing.T) {
	tests := []struct {
		key, value string
		want       string // in the 8.4 error
		in80       bool   // 8.0 takes it too (it is an 8.0 option)
	}{
		{"default_authentication_plugin", "mysql_native_password", "authentication_policy", true},
		{"default-authentication-plugin", "caching_sha2_password", "authentication_policy", true},
		{"expire_logs_days", "7", "binlog_expire_logs_seconds", true},
		{"loose-expire-logs-days", "7", "binlog_expire_logs_seconds", true},
		{"binlog_transaction_dependency_tracking", "WRITESET", "always on", true},
		{"master_info_repository", "TABLE", "removed in 8.3.0", true},
		{"relay-log-info-repository", "TABLE", "removed in 8.3.0", true},
		{"transaction_write_set_extraction", "XXHASH64", "removed in 8.3.0", true},
		{"log_bin_use_v1_row_events", "OFF", "removed in 8.3.0", true},
		{"skip-host-cache", "", "host_cache_size=0", true},
		{"avoid_temporal_upgrade", "ON", "removed in 8.4.0", true},
		{"ssl", "1", "tls_version", true},
		{"skip-ssl", "", "tls_version", true},
		{"innodb_api_enable_binlog", "1", "memcached", false},
		{"SKIP-INNODB", "", "InnoDB cannot be disabled", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			in := base(FlavorPercona, EngineInnoDB, ProfileWorkload)
			in.Overrides = map[string]string{tt.key: tt.value}
			in.Version = Version84
			out, err := Generate(in)
			if err == nil {
				t.Fatalf("8.4 took it; output:\n%s", out)
			}
			for _, w := range []string{tt.key, "MySQL 8.4", tt.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("8.4 error %q does not contain %q", err, w)
				}
			}
			if !tt.in80 {
				return
			}
			in.Version = Version80
			if _, err := Generate(in); err != nil {
				t.Errorf("8.0 refused it: %v", err)
			}
		})
	}
}

// TestOverridesKeptIn84: what 8.4 still accepts (the replacements, and options only deprecated) stays an
// ordinary override there.
func TestOverridesKeptIn84(t *testing.T) {
	for key, value := range map[string]string{
		"authentication_policy":      "caching_sha2_password",
		"binlog_expire_logs_seconds": "86400",
		"host_cache_size":            "0",
		"innodb_log_file_size":       "1G", // deprecated in 8.0.30, still read by 8.4
		"tls_version":                "TLSv1.3",
		"binlog_format":              "ROW", // deprecated in 8.0.34, still read by 8.4
	} {
		in := base(FlavorPercona, EngineInnoDB, ProfileWorkload)
		in.Version = Version84
		in.Overrides = map[string]string{key: value}
		got, err := Generate(in)
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if v := unquote(parse(t, got)[key]); v != value {
			t.Errorf("%s = %q in the file, want %q", key, v, value)
		}
	}
	in := base(FlavorPercona, EngineInnoDB, ProfileWorkload)
	in.Version = Version84
	in.Overrides = map[string]string{"mysql_native_password": "OFF"}
	if _, err := Generate(in); err == nil || !strings.Contains(err.Error(), "entrypoint") {
		t.Errorf("mysql_native_password=OFF: error %v, want a refusal naming the entrypoint's accounts", err)
	}
}

func TestVersionInputErrors(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want []string
	}{
		{"zenfs on 8.4", func() Input {
			in := base(FlavorPercona, EngineRocksDB, ProfileWorkload)
			in.Version, in.ZenFSDevice = Version84, "nvme0n2"
			return in
		}(), []string{"needs MySQL 8.0", "8.1.0-1", "2023-11-27"}},
		{"mariadb 8.4", func() Input {
			in := base(FlavorMariaDB, EngineRocksDB, ProfileWorkload)
			in.Version = Version84
			return in
		}(), []string{"needs flavor \"percona\"", "MariaDB 10.11"}},
		{"unknown version", func() Input {
			in := base(FlavorPercona, EngineInnoDB, ProfileWorkload)
			in.Version = "9.0"
			return in
		}(), []string{"unknown MySQL version \"9.0\""}},
	}
	for _, tt := range tests {
		_, err := Generate(tt.in)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, w)
			}
		}
	}
	// The zero version is 8.0, and MariaDB takes 8.0: the API defaults every database to it.
	for _, f := range []Flavor{FlavorPercona, FlavorMariaDB} {
		in := base(f, EngineRocksDB, ProfileWorkload)
		in.Version = Version80
		a := mustGenerate(t, in)
		in.Version = ""
		if b := mustGenerate(t, in); a != b {
			t.Errorf("%s: version 8.0 and the zero version generate different files", f)
		}
	}
}
