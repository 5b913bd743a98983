package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/ycsb"
)

// Data size sources, as recorded in the summary.
const (
	// SizeRocksDBSST is the sum of the data, index and filter blocks of every SST file of the RocksDB instance
	// (information_schema.ROCKSDB_SST_PROPS): MyRocks' data on disk, compressed, without what still sits in
	// memtables.
	SizeRocksDBSST = "rocksdb-sst"
	// SizeInnoDBTablespace is the size of the sysbench tables' tablespace files (FILE_SIZE of
	// information_schema.INNODB_TABLESPACES on MySQL 8 and Percona, INNODB_SYS_TABLESPACES on MariaDB).
	SizeInnoDBTablespace = "innodb-tablespace"
)

// measureSize records the size of the database on disk in the summary (after the rows were verified, and after
// a run). It never fails the phase: a size it cannot read is left out, with the reason in the log.
func (r *runner) measureSize(ctx context.Context) {
	engine := strings.ToLower(r.cfg.spec.StorageEngine)
	if engine != "rocksdb" && engine != "innodb" {
		r.logf("size not measured: --storage-engine %q is neither rocksdb nor innodb", r.cfg.spec.StorageEngine)
		return
	}
	if !identOK(r.cfg.spec.DB) {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := r.connect(cctx, r.cfg.spec.DB)
	if err != nil {
		r.logf("size not measured: %v", err)
		return
	}
	defer db.Close()
	tables := "sbtest%"
	if r.sum.Tool == benchresult.ToolYCSB {
		tables = ycsb.DefaultTable
	}
	n, source, err := dataSize(cctx, db, engine, r.cfg.spec.DB, tables)
	if err != nil {
		r.logf("size not measured: %v", err)
		return
	}
	r.sum.DataBytes, r.sum.DataBytesSource = n, source
	r.logf("%s: %d bytes (%s)", r.cfg.phase, n, source)
}

// dataSize is the engine's size of the benchmark's data; tables is the LIKE pattern of its tables' names
// (sysbench's sbtest%, go-ycsb's usertable), for InnoDB's per-table tablespaces.
func dataSize(ctx context.Context, db *sql.DB, engine, schema, tables string) (int64, string, error) {
	var n sql.NullInt64
	if engine == "rocksdb" {
		err := db.QueryRowContext(ctx, "SELECT SUM(DATA_BLOCK_SIZE + INDEX_BLOCK_SIZE + FILTER_BLOCK_SIZE) FROM information_schema.ROCKSDB_SST_PROPS").Scan(&n)
		if err != nil {
			return 0, "", fmt.Errorf("information_schema.ROCKSDB_SST_PROPS: %w", err)
		}
		return n.Int64, SizeRocksDBSST, nil
	}
	// Tablespace names are "<schema>/<table>".
	var errs []string
	for _, view := range []string{"INNODB_TABLESPACES", "INNODB_SYS_TABLESPACES"} {
		err := db.QueryRowContext(ctx, "SELECT SUM(FILE_SIZE) FROM information_schema."+view+" WHERE NAME LIKE ?", schema+"/"+tables).Scan(&n)
		if err == nil {
			if !n.Valid {
				return 0, "", fmt.Errorf("information_schema.%s lists no tablespace %s/%s", view, schema, tables)
			}
			return n.Int64, SizeInnoDBTablespace, nil
		}
		errs = append(errs, fmt.Sprintf("%s: %v", view, err))
	}
	return 0, "", fmt.Errorf("no tablespace sizes: %s", strings.Join(errs, "; "))
}
