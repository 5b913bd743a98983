package mycnf

import (
	"fmt"
	"strings"
)

// Version is the Percona Server series the file is for. MariaDB has one (10.11, the stand-in) and takes only
// the zero value or Version80, which is what the API defaults every database to.
type Version string

const (
	// Version80 is Percona Server 8.0, the only series with ZenFS-enabled MyRocks. The zero Version means it.
	Version80 Version = "8.0"
	// Version84 is Percona Server 8.4 LTS: no ZenFS (Percona removed it in 8.1.0-1, 2023-11-27), and the server
	// options that MySQL 8.1 to 8.4 removed (removedIn84) are gone.
	Version84 Version = "8.4"
)

func (v Version) orDefault() Version {
	if v == "" {
		return Version80
	}
	return v
}

// removedIn84 are the mysqld options that MySQL 8.0 accepts and 8.4 does not, by NormalizeKey name, each with
// what to use instead. mysqld 8.4 refuses to start on any of them (unknown variable), so an override naming
// one is refused for an 8.4 database, and the generator never writes one for it (TestNoRemovedOptionIn84).
// Read-only variables (have_ssl, have_openssl) are left out: no option file can set them anyway.
//
// Sources: MySQL 8.4 Reference Manual, 1.5 "Server and Status Variables and Options Added, Deprecated, or
// Removed in MySQL 8.4 since 8.0", and the MySQL Server Version Reference's "Option and Variable Changes for
// MySQL 8.2, 8.3 and 8.4" (https://dev.mysql.com/doc/mysqld-version-reference/en/optvar-changes-8-4.html and the
// 8-2, 8-3 pages); Percona's "Compatibility and removed items in 8.4" (docs.percona.com/percona-server/8.4).
// innodb_log_file_size and innodb_log_files_in_group are deprecated (8.0.30, superseded by
// innodb_redo_log_capacity) but 8.4 still accepts them, so they are not here; binlog_format is deprecated too
// (8.0.34) and still accepted.
var removedIn84 = map[string]string{
	// 8.4.0
	"ssl":                                    "removed in 8.4.0: TLS is configured with tls_version (an empty value turns encrypted connections off)",
	"admin_ssl":                              "removed in 8.4.0: use admin_tls_version",
	"default_authentication_plugin":          "removed in 8.4.0: use authentication_policy",
	"binlog_transaction_dependency_tracking": "removed in 8.4.0: WRITESET dependency tracking is built in and always on",
	"avoid_temporal_upgrade":                 "removed in 8.4.0, with no replacement",
	"show_old_temporals":                     "removed in 8.4.0, with no replacement",
	"authentication_fido_rp_id":              "removed in 8.4.0: use authentication_webauthn_rp_id",
	"old":                                    "removed in 8.4.0, with no replacement",
	"new":                                    "removed in 8.4.0, with no replacement",
	"group_replication_recovery_complete_at": "removed in 8.4.0, with no replacement",
	// 8.3.0
	"character_set_client_handshake":   "removed in 8.3.0, with no replacement",
	"master_info_repository":           "removed in 8.3.0: replication metadata is always kept in tables",
	"relay_log_info_repository":        "removed in 8.3.0: replication metadata is always kept in tables",
	"log_bin_use_v1_row_events":        "removed in 8.3.0: version 2 row events are always written",
	"transaction_write_set_extraction": "removed in 8.3.0: write sets are always extracted with XXHASH64",
	"slave_rows_search_algorithms":     "removed in 8.3.0: INDEX_SCAN,HASH_SCAN is always used",
	"skip_host_cache":                  "removed in 8.3.0: use host_cache_size=0",
	"innodb":                           "removed in 8.3.0: InnoDB cannot be disabled",
	"group_replication_ip_whitelist":   "removed in 8.3.0: use group_replication_ip_allowlist",
	"group_replication_primary_member": "removed in 8.3.0, with no replacement",
	// 8.2.0
	"expire_logs_days":             "removed in 8.2.0: use binlog_expire_logs_seconds",
	"abort_slave_event_count":      "removed in 8.2.0, with no replacement",
	"disconnect_slave_event_count": "removed in 8.2.0, with no replacement",
}

// removedIn84Prefixes are families removed whole: InnoDB's memcached plugin and its options went in 8.3.0.
var removedIn84Prefixes = []struct{ prefix, reason string }{
	{"innodb_api_", "removed in 8.3.0 with InnoDB's memcached plugin, with no replacement"},
	{"daemon_memcached", "removed in 8.3.0 with InnoDB's memcached plugin, with no replacement"},
}

// removedReason says why an 8.4 server would not take the option a normalised key sets, looking through the
// modifier words as mysqld does ("skip-ssl" is ssl, "loose-expire-logs-days" expire_logs_days).
func removedReason(norm string) (string, bool) {
	for _, n := range optionStages(norm) {
		if r, ok := removedIn84[n]; ok {
			return r, true
		}
		for _, p := range removedIn84Prefixes {
			if strings.HasPrefix(n, p.prefix) {
				return p.reason, true
			}
		}
	}
	return "", false
}

// checkRemovedOverride refuses an override that Percona Server 8.4 does not know. A loose- prefix would only make
// mysqld skip it with a warning, leaving the user believing a setting applies that does not exist, so it is
// refused too.
func checkRemovedOverride(in Input, key string) error {
	if in.Flavor != FlavorPercona || in.Version.orDefault() != Version84 {
		return nil
	}
	if reason, ok := removedReason(NormalizeKey(key)); ok {
		return fmt.Errorf("mycnf: override %q is not allowed with MySQL 8.4: %s (MySQL 8.4 release notes)", key, reason)
	}
	return nil
}

// percona84 turns the 8.0 options into what Percona Server 8.4 accepts.
func percona84(o options) {
	// ssl=0 kept TLS off (the benchmark clients talk plain TCP inside the cluster, and TLS would add to every
	// transaction's cost); 8.4 removed the ssl option. An empty tls_version permits no TLS protocol: the MySQL
	// manual's way to start the server with encrypted connections disabled (tls_version='').
	delete(o, NormalizeKey("ssl"))
	o.set("tls_version", "")
	// The image's entrypoint creates root and the metrics account with mysql_native_password (sysbench's
	// libmariadb and the Go driver then need neither TLS nor an RSA key exchange); 8.4 no longer loads that
	// plugin unless this option, new in 8.4.0, is ON.
	o.set("mysql_native_password", "ON")
}
