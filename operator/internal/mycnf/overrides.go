package mycnf

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// forcedKeys are options users cannot override, by normalised name, with the
// reason given in the error.
var forcedKeys = map[string]string{
	"datadir":                "the data volume's mount path is set by the operator",
	"socket":                 "the socket path is set by the operator",
	"pid_file":               "the pid file path is set by the operator",
	"port":                   "the port is set by the operator (it matches the Service)",
	"server_id":              "the server id is set by the operator",
	"rocksdb_fs_uri":         "the ZenFS URI is derived from the database's zoned device",
	"plugin_load":            "the engine decides which plugins load",
	"plugin_load_add":        "the engine decides which plugins load",
	"rocksdb":                "the engine decides whether MyRocks loads",
	"default_storage_engine": "the engine is chosen by the database's engine field",
	"rocksdb_bulk_load": "bulk load belongs to the profile: set globally outside the load phase, " +
		"ordinary sessions silently lose rows",
	"log_bin":   "the binlog is switched by the profile (off for bulk load, on for the workload)",
	"log_error": "the server logs to stderr, which the operator and kubectl logs read",
	"getopt_prefix_matching": "the operator turns MariaDB's option prefix matching off, so that an abbreviated name " +
		"cannot reach an option refused here",
	"mysql_native_password": "the image's entrypoint creates root and the metrics account with mysql_native_password, " +
		"which Percona Server 8.4 loads only when the operator sets this ON",
}

// deniedKeys are options no user may set, by normalised name, because they
// run SQL, load code, change who the server trusts, or name files and
// directories (docs/config-overrides.md). A benchmark database needs none of
// them, and each could turn write access to a ZNSDatabase into running
// arbitrary code as mysqld or reading and writing files it can reach.
var deniedKeys = map[string]string{
	"grant_tables":      "skip-grant-tables turns off authentication",
	"user":              "mysqld runs as the image's mysql user",
	"chroot":            "it moves mysqld's root directory",
	"secure_file_priv":  "it decides which files LOAD DATA and SELECT INTO OUTFILE may read and write",
	"early_plugin_load": "it loads code",
	"debug":             "it writes a trace file and slows the server",
	"core_file":         "it writes core dumps of the server into the datadir",
	"relay_log":         "it names files",
	"relay_log_index":   "it names a file",
	"log_bin_index":     "it names a file",
	"log_tc":            "it names a file",
	"language":          "it names a directory",
	"rocksdb_datadir":   "it moves the MyRocks data",
	"ssl_ca":            "it names a file",
	"ssl_cert":          "it names a file",
	"ssl_key":           "it names a file",
	"ssl_crl":           "it names a file",
}

// deniedPrefixes and deniedSuffixes catch the families of deniedKeys: every
// init_* option runs SQL (init_file as root at each start, init_connect at
// each connection), every plugin_* option loads code or says where it comes
// from, keyring_* options load keys from files, and an option whose name ends
// in dir, _directory, _file, _filename or _path names a place on disk.
var (
	deniedPrefixes = map[string]string{
		"init_":    "it runs SQL (init_file as root at every start, init_connect at every connection)",
		"plugin_":  "it loads code or says where code is loaded from",
		"keyring_": "it loads encryption keys from files",
	}
	deniedSuffixes = []string{"dir", "_directory", "_file", "_filename", "_path"}
)

// Option names: letters, digits, '-' and '_'. Anything else ('!include',
// '[section]', '=' in the key, spaces) could change how the file parses.
var keyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// applyOverrides merges the user's options into o and returns which options
// they set: the normalised option name to the user's key.
func applyOverrides(o options, in Input) (map[string]string, error) {
	users := make([]string, 0, len(in.Overrides))
	for k := range in.Overrides {
		users = append(users, k)
	}
	sort.Strings(users) // deterministic error messages

	// Modifier-prefixed keys ("skip-foo") must find "foo" whether it is
	// generated or another override, whatever order the keys come in.
	known := map[string]bool{}
	for k := range o {
		known[k] = true
	}
	for _, k := range users {
		known[NormalizeKey(k)] = true
	}
	generated := map[string]bool{}
	for k := range o {
		generated[k] = true
	}

	seen := map[string]string{}
	for _, key := range users {
		value := in.Overrides[key]
		if !keyRE.MatchString(key) {
			return nil, fmt.Errorf("mycnf: override key %q is not an option name (letters, digits, '-', '_')", key)
		}
		if err := checkValue(value); err != nil {
			return nil, fmt.Errorf("mycnf: override %q: %w", key, err)
		}
		norm := NormalizeKey(key)
		if norm == "" {
			return nil, fmt.Errorf("mycnf: override key %q is only a prefix", key)
		}
		if reason, ok := forcedReason(norm); ok {
			return nil, fmt.Errorf("mycnf: override %q is not allowed: %s", key, reason)
		}
		if err := checkRemovedOverride(in, key); err != nil {
			return nil, err
		}
		// MySQL 8.0 (Percona) matches option names exactly: prefix matching was removed in 5.7, so an
		// abbreviation is an unknown option there (mysqld refuses to start, or ignores it with loose-) and
		// cannot reach anything; only MariaDB's names need the server's list.
		if in.Flavor == FlavorMariaDB {
			if full := mariadbAbbreviates(norm); full != nil {
				return nil, abbreviationError(key, full)
			}
		}
		if in.Engine != EngineRocksDB && strings.HasPrefix(norm, "rocksdb_") && !isLoose(key) {
			return nil, fmt.Errorf("mycnf: override %q needs engine %q: the MyRocks plugin is not loaded for %q and mysqld would refuse to start",
				key, EngineRocksDB, in.Engine)
		}
		target := mergeKey(generated, known, norm)
		if prev, dup := seen[target]; dup {
			return nil, fmt.Errorf("mycnf: overrides %q and %q set the same option", prev, key)
		}
		seen[target] = key
		if value == "" {
			o[target] = option{key: key, flag: true}
		} else {
			o[target] = option{key: key, value: value}
		}
	}
	return seen, nil
}

func isLoose(key string) bool {
	return strings.HasPrefix(strings.ReplaceAll(strings.ToLower(key), "-", "_"), "loose_")
}

// forcedReason says why the option a normalised key sets is the operator's or refused, looking through the
// modifier words mysqld strips ("skip-loose-chroot" sets chroot; "maximum-" sets an upper bound, which on a
// forced option could veto the operator's value).
func forcedReason(norm string) (string, bool) {
	names := optionStages(norm)
	for _, n := range names {
		if r, ok := forcedKeys[n]; ok {
			return r, true
		}
	}
	for _, n := range names {
		if r, ok := deniedReason(n); ok {
			return r + " (see docs/config-overrides.md)", true
		}
	}
	return "", false
}

// abbreviationError refuses a MariaDB key that abbreviates full option names, naming what it would set.
func abbreviationError(key string, full []string) error {
	for _, name := range full {
		reason, ok := forcedReason(name)
		if !ok {
			continue
		}
		if len(full) == 1 {
			return fmt.Errorf("mycnf: override %q is not allowed: mariadbd reads it as an abbreviation of %q, and %s: %s",
				key, name, name, reason)
		}
		// Ambiguous today (mariadbd would refuse to start), but a server without the other options would take it.
		return fmt.Errorf("mycnf: override %q is not allowed: it abbreviates %q and %d other option(s), and %s: %s",
			key, name, len(full)-1, name, reason)
	}
	if len(full) > 1 {
		shown := full
		if len(shown) > 5 {
			shown = shown[:5]
		}
		more := ""
		if len(full) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(full)-len(shown))
		}
		return fmt.Errorf("mycnf: override %q is ambiguous: it abbreviates %s%s, and mariadbd refuses to start on it; write the full option name",
			key, strings.Join(shown, ", "), more)
	}
	return fmt.Errorf("mycnf: override %q is an abbreviation of %q: write the full option name (the operator turns mariadbd's prefix matching off, and MySQL 8.0 has none)",
		key, full[0])
}

func deniedReason(norm string) (string, bool) {
	if r, ok := deniedKeys[norm]; ok {
		return r, true
	}
	for p, r := range deniedPrefixes {
		if strings.HasPrefix(norm, p) {
			return r, true
		}
	}
	for _, suf := range deniedSuffixes {
		if strings.HasSuffix(norm, suf) {
			return "it names a file or directory", true
		}
	}
	return "", false
}

// mergeKey maps a user key onto the option it sets. A modifier prefix is
// stripped only when that names a known option ("skip-ssl" replaces "ssl=0"):
// real options like skip_name_resolve also start with "skip_", and mysqld
// matches full names before prefixes.
func mergeKey(generated, known map[string]bool, norm string) string {
	if generated[norm] {
		return norm
	}
	for _, p := range []string{"skip_", "disable_", "enable_"} {
		if base, ok := strings.CutPrefix(norm, p); ok && known[base] {
			return base
		}
	}
	return norm
}
