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
}

// mysqld's option reader treats these prefixes as modifiers of the option
// that follows (skip-X means X=0), so "skip-log-bin" is the log_bin switch.
// "maximum-" sets an upper bound, which on a forced option could veto the
// operator's value.
var modifierPrefixes = []string{"skip_", "disable_", "enable_", "maximum_"}

// Option names: letters, digits, '-' and '_'. Anything else ('!include',
// '[section]', '=' in the key, spaces) could change how the file parses.
var keyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

func applyOverrides(o options, in Input) error {
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
			return fmt.Errorf("mycnf: override key %q is not an option name (letters, digits, '-', '_')", key)
		}
		if err := checkValue(value); err != nil {
			return fmt.Errorf("mycnf: override %q: %w", key, err)
		}
		norm := NormalizeKey(key)
		if norm == "" {
			return fmt.Errorf("mycnf: override key %q is only a prefix", key)
		}
		if reason, ok := forcedReason(norm); ok {
			return fmt.Errorf("mycnf: override %q is not allowed: %s", key, reason)
		}
		if in.Engine != EngineRocksDB && strings.HasPrefix(norm, "rocksdb_") && !isLoose(key) {
			return fmt.Errorf("mycnf: override %q needs engine %q: the MyRocks plugin is not loaded for %q and mysqld would refuse to start",
				key, EngineRocksDB, in.Engine)
		}
		target := mergeKey(generated, known, norm)
		if prev, dup := seen[target]; dup {
			return fmt.Errorf("mycnf: overrides %q and %q set the same option", prev, key)
		}
		seen[target] = key
		if value == "" {
			o[target] = option{key: key, flag: true}
		} else {
			o[target] = option{key: key, value: value}
		}
	}
	return nil
}

func isLoose(key string) bool {
	return strings.HasPrefix(strings.ReplaceAll(strings.ToLower(key), "-", "_"), "loose_")
}

func forcedReason(norm string) (string, bool) {
	if r, ok := forcedKeys[norm]; ok {
		return r, true
	}
	for _, p := range modifierPrefixes {
		if base, ok := strings.CutPrefix(norm, p); ok {
			if r, ok := forcedKeys[base]; ok {
				return r, true
			}
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
