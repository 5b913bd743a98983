package main

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/zns-mysql/zns-mysql/operator/internal/ycsb"
)

// verify counts the rows of sbtest1..N. A prepare can lose rows while
// sysbench reports success (measured on MariaDB 10.11: rocksdb_bulk_load=1
// left on for a normal workload lost 237 of 1000 rows with sysbench exiting
// 0), so the benchmark checks the data itself before running on it.
func (r *runner) verify(ctx context.Context) error {
	s := r.cfg.spec
	if s.Tables < 1 || s.TableSize < 1 {
		return fmt.Errorf("verify needs --tables >= 1 and --table-size >= 1 (got %d, %d)", s.Tables, s.TableSize)
	}
	if !identOK(s.DB) {
		return fmt.Errorf("database %q must be a plain identifier [A-Za-z0-9_$]", s.DB)
	}
	// The operator's admission bounds the product; by hand anything can be typed, and a wrapped product
	// would compare a row count with a negative expectation.
	if s.TableSize > math.MaxInt64/int64(s.Tables) {
		return fmt.Errorf("verify: --tables %d x --table-size %d is more rows than a 64-bit count holds", s.Tables, s.TableSize)
	}
	r.sum.RowsExpected = int64(s.Tables) * s.TableSize
	r.sum.StartTime = r.now().UTC().Format(time.RFC3339Nano)
	defer func() { r.sum.EndTime = r.now().UTC().Format(time.RFC3339Nano) }()

	db, err := r.connect(ctx, s.DB)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer db.Close()

	var found int64
	var problems []string
	for i := 1; i <= s.Tables; i++ {
		table := fmt.Sprintf("sbtest%d", i)
		var n int64
		// The name is generated, never user input: no injection.
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+table+"`").Scan(&n); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", table, err))
			continue
		}
		found += n
		if n != s.TableSize {
			problems = append(problems, fmt.Sprintf("%s has %d rows", table, n))
		}
	}
	r.sum.RowsFound = found
	r.logf("verify: %d rows in sbtest1..sbtest%d of %s, expected %d", found, s.Tables, s.DB, r.sum.RowsExpected)
	if len(problems) > 0 {
		const maxListed = 10
		more := ""
		if len(problems) > maxListed {
			more = fmt.Sprintf("; and %d more tables", len(problems)-maxListed)
			problems = problems[:maxListed]
		}
		return fmt.Errorf("row count mismatch: found %d rows, expected %d (%d tables x %d): %s%s",
			found, r.sum.RowsExpected, s.Tables, s.TableSize, strings.Join(problems, "; "), more)
	}
	return nil
}

func identOK(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// pingUntil retries: verify runs right after the server restarted on its
// workload profile, when it may still be starting.
func pingUntil(ctx context.Context, db *sql.DB, timeout time.Duration, sleep func(context.Context, time.Duration) error) error {
	deadline := time.Now().Add(timeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := db.PingContext(pctx)
		cancel()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		if serr := sleep(ctx, 500*time.Millisecond); serr != nil {
			return err
		}
	}
}

// connect opens a connection pool to the server (to database dbName, or none when empty) and waits until the
// server answers.
func (r *runner) connect(ctx context.Context, dbName string) (*sql.DB, error) {
	s := r.cfg.spec
	mc := mysql.NewConfig()
	mc.User = s.User
	mc.Passwd = r.cfg.password
	mc.DBName = dbName
	mc.Timeout = 10 * time.Second
	if s.Socket != "" {
		mc.Net, mc.Addr = "unix", s.Socket
	} else {
		mc.Net, mc.Addr = "tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	}
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	if err := pingUntil(ctx, db, r.cfg.connectTimeout, r.sleep); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot connect to %s as %s: %v", mc.Addr, s.User, err)
	}
	return db, nil
}

// connectServer connects without selecting a database, for statements that name the benchmark's database
// themselves; that name is checked first, since it goes into them quoted, not as a parameter.
func (r *runner) connectServer(ctx context.Context) (*sql.DB, error) {
	if !identOK(r.cfg.spec.DB) {
		return nil, fmt.Errorf("database %q must be a plain identifier [A-Za-z0-9_$]", r.cfg.spec.DB)
	}
	return r.connect(ctx, "")
}

// ensureDatabase creates the benchmark's database if it is missing: sysbench's prepare creates tables, not the
// database, and a fresh server has none.
func (r *runner) ensureDatabase(ctx context.Context) error {
	db, err := r.connectServer(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	// The name passed identOK: it cannot break out of the quotes.
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+r.cfg.spec.DB+"`"); err != nil {
		return fmt.Errorf("creating database %s: %w", r.cfg.spec.DB, err)
	}
	return nil
}

// dropSysbenchTables drops the tables an earlier prepare left in the benchmark's database (sbtest1, sbtest2,
// ... as sysbench names them), so that a new Benchmark prepares fresh data instead of failing on "table
// already exists". Nothing else in the database is touched, and a database that does not exist is fine.
func (r *runner) dropSysbenchTables(ctx context.Context) error {
	db, err := r.connectServer(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME REGEXP '^sbtest[0-9]+$' ORDER BY TABLE_NAME", r.cfg.spec.DB)
	if err != nil {
		return fmt.Errorf("listing the sysbench tables in %s: %w", r.cfg.spec.DB, err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, n := range names {
		// Both names passed identOK or the REGEXP above: they cannot break out of the quotes.
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS `"+r.cfg.spec.DB+"`.`"+n+"`"); err != nil {
			return fmt.Errorf("dropping %s.%s: %w", r.cfg.spec.DB, n, err)
		}
	}
	if len(names) > 0 {
		r.logf("dropped %d table(s) an earlier prepare left in %s: %s", len(names), r.cfg.spec.DB, strings.Join(names, ", "))
	}
	return nil
}

// verifyRecords counts the records of go-ycsb's table against what the load was to insert: the same check of
// the data itself as the sysbench verify, for the same reason.
func (r *runner) verifyRecords(ctx context.Context, want int64) error {
	s := r.cfg.spec
	if !identOK(s.DB) {
		return fmt.Errorf("database %q must be a plain identifier [A-Za-z0-9_$]", s.DB)
	}
	r.sum.RowsExpected = want
	r.sum.StartTime = r.now().UTC().Format(time.RFC3339Nano)
	defer func() { r.sum.EndTime = r.now().UTC().Format(time.RFC3339Nano) }()
	db, err := r.connect(ctx, s.DB)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer db.Close()
	var n int64
	// The table name is a constant, never user input.
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+ycsb.DefaultTable+"`").Scan(&n); err != nil {
		return fmt.Errorf("verify: counting %s.%s: %w", s.DB, ycsb.DefaultTable, err)
	}
	r.sum.RowsFound = n
	r.logf("verify: %d records in %s.%s, expected %d", n, s.DB, ycsb.DefaultTable, want)
	if n != want {
		return fmt.Errorf("row count mismatch: found %d records in %s.%s, expected %d", n, s.DB, ycsb.DefaultTable, want)
	}
	return nil
}
