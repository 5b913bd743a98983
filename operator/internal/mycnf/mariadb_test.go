package mycnf

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

// TestMariaDBAcceptsGeneratedConfig runs the MariaDB flavor's configs on a
// real mariadbd: for each engine it starts with the bulk-load profile, loads
// rows, then restarts on the same datadir with the workload profile, as the
// seed methodology does, and checks what the server reports.
func TestMariaDBAcceptsGeneratedConfig(t *testing.T) {
	mysqltest.Require(t)
	const memory = 1 * GiB
	sizes, err := ComputeSizes(memory)
	if err != nil {
		t.Fatal(err)
	}
	// A value that needs quoting and escaping, to prove the server reads it
	// back byte for byte (report_host is a free string mysqld only reports).
	const reportHost = `zns 'a b'; "x#y\z"`

	for _, engine := range []Engine{EngineRocksDB, EngineInnoDB} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			p := mysqltest.NewPaths(t)
			gen := func(profile Profile) string {
				cnf, err := Generate(Input{
					Flavor: FlavorMariaDB, Engine: engine, Profile: profile,
					MemoryLimitBytes: memory,
					DataDir:          p.DataDir, Socket: p.Socket, PidFile: p.PidFile,
					Port: int32(p.Port), ServerID: 42,
					Overrides: map[string]string{"report-host": reportHost, "skip-name-resolve": ""},
				})
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				return cnf
			}

			s := mysqltest.Start(t, gen(ProfileBulkLoad))
			db := s.Open("")
			v := globals(t, db)
			expect := map[string]string{
				"log_bin":           "OFF",
				"server_id":         "42",
				"report_host":       reportHost,
				"skip_name_resolve": "ON",
				"max_connections":   fmt.Sprint(sizes.MaxConnections),
				"table_open_cache":  fmt.Sprint(sizes.TableOpenCache),
				"connect_timeout":   "120",
				"back_log":          "4096",
			}
			if engine == EngineRocksDB {
				expect["rocksdb_bulk_load"] = "ON"
				expect["default_storage_engine"] = "ROCKSDB"
				expect["default_tmp_storage_engine"] = "MyISAM"
				expect["rocksdb_block_cache_size"] = fmt.Sprint(sizes.BlockCacheBytes)
				expect["rocksdb_max_total_wal_size"] = fmt.Sprint(sizes.MaxTotalWALBytes)
				expect["rocksdb_use_direct_reads"] = "ON"
				expect["rocksdb_use_direct_io_for_flush_and_compaction"] = "ON"
				expect["rocksdb_max_background_jobs"] = "8"
				expect["rocksdb_block_size"] = "16384"
				expect["rocksdb_max_subcompactions"] = "4"
				expect["rocksdb_compaction_sequential_deletes"] = "199999"
				expect["rocksdb_default_cf_options"] = defaultCFOptions(sizes)
			} else {
				expect["default_storage_engine"] = "InnoDB"
				expect["innodb_buffer_pool_size"] = fmt.Sprint(sizes.BufferPoolBytes)
				expect["innodb_log_file_size"] = fmt.Sprint(sizes.RedoLogBytes)
				expect["innodb_flush_method"] = "O_DIRECT"
				expect["innodb_io_capacity"] = "2000"
			}
			check(t, "bulkload", v, expect)
			if _, ok := v["rocksdb_bulk_load"]; engine == EngineInnoDB && ok {
				t.Errorf("innodb config loaded MyRocks")
			}
			rocks := engineSupport(t, db, "ROCKSDB")
			if engine == EngineRocksDB && rocks != "DEFAULT" {
				t.Errorf("SHOW ENGINES: ROCKSDB support %q, want DEFAULT", rocks)
			}
			if engine == EngineInnoDB && rocks != "" {
				t.Errorf("SHOW ENGINES lists ROCKSDB (%q) for the innodb config", rocks)
			}

			// Rows in key order, as sysbench's prepare writes them.
			exec(t, db, "CREATE DATABASE sbtest")
			exec(t, db, "CREATE TABLE sbtest.t (id INT PRIMARY KEY, k INT NOT NULL)")
			exec(t, db, "INSERT INTO sbtest.t VALUES (1,1),(2,2),(3,3)")
			wantEngine := map[Engine]string{EngineRocksDB: "ROCKSDB", EngineInnoDB: "InnoDB"}[engine]
			var got string
			if err := db.QueryRow("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest' AND TABLE_NAME='t'").Scan(&got); err != nil || got != wantEngine {
				t.Errorf("table engine %q, %v; want %s", got, err, wantEngine)
			}
			db.Close()

			s.Restart(gen(ProfileWorkload))
			db = s.Open("sbtest")
			v = globals(t, db)
			expect["log_bin"] = "ON"
			expect["log_bin_basename"] = p.DataDir + "/" + BinlogBaseName
			expect["binlog_format"] = "ROW"
			expect["sync_binlog"] = "1024"
			if engine == EngineRocksDB {
				expect["rocksdb_bulk_load"] = "OFF"
			}
			check(t, "workload", v, expect)
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 3 {
				t.Errorf("after the profile switch %d rows, %v; want 3", n, err)
			}
			exec(t, db, "UPDATE t SET k = k + 1 WHERE id = 2")
			var binlogs int
			rows, err := db.Query("SHOW BINARY LOGS")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				binlogs++
			}
			rows.Close()
			if binlogs == 0 {
				t.Errorf("workload profile: no binary logs")
			}
		})
	}
}

func globals(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SHOW GLOBAL VARIABLES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		m[strings.ToLower(k)] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func check(t *testing.T, phase string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %s = %q (present %v), want %q", phase, k, g, ok, w)
		}
	}
}

// engineSupport returns SHOW ENGINES' Support column for name, "" if absent.
func engineSupport(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	rows, err := db.Query("SHOW ENGINES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if strings.EqualFold(vals[0].String, name) {
			return vals[1].String
		}
	}
	return ""
}

func exec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
