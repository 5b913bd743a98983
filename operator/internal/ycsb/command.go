// Package ycsb builds go-ycsb's command lines (YCSB's core workloads A-F against MySQL) and reads the summary it
// prints, per operation type. It is pure: the runner (cmd/znsbench) executes go-ycsb, the operator builds the
// runner's flags. What go-ycsb v1.0.3 printed for real against MariaDB is in testdata/ (README.md there).
package ycsb

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Phase is go-ycsb's command.
type Phase string

const (
	// PhaseLoad inserts recordcount records into a fresh table.
	PhaseLoad Phase = "load"
	// PhaseRun runs the workload's operation mix over the loaded records.
	PhaseRun Phase = "run"
)

// Workloads are YCSB's core workloads, by the letter YCSB names them with.
var Workloads = []string{"a", "b", "c", "d", "e", "f"}

// Distributions are the request distributions offered: YCSB's uniform, zipfian and latest (the others go-ycsb
// knows, hotspot, sequential and exponential, need parameters of their own and are left out).
var Distributions = []string{"uniform", "zipfian", "latest"}

// mixes are the operation shares of the core workloads (YCSB's workloads/workload[a-f]); the request
// distribution is the spec's, since the study this serves (seed 002) runs A with uniform keys, where YCSB's own
// file for A says zipfian.
var mixes = map[string][]string{
	"a": {"readproportion=0.5", "updateproportion=0.5", "scanproportion=0", "insertproportion=0"},
	"b": {"readproportion=0.95", "updateproportion=0.05", "scanproportion=0", "insertproportion=0"},
	"c": {"readproportion=1", "updateproportion=0", "scanproportion=0", "insertproportion=0"},
	"d": {"readproportion=0.95", "updateproportion=0", "scanproportion=0", "insertproportion=0.05"},
	// E's scans are 1 to 100 records long, uniformly, as in YCSB's workload E.
	"e": {"readproportion=0", "updateproportion=0", "scanproportion=0.95", "insertproportion=0.05",
		"maxscanlength=100", "scanlengthdistribution=uniform"},
	"f": {"readproportion=0.5", "updateproportion=0", "scanproportion=0", "insertproportion=0",
		"readmodifywriteproportion=0.5"},
}

// Describe says what a workload does, for help texts and docs.
func Describe(w string) string {
	return map[string]string{
		"a": "50% reads, 50% updates",
		"b": "95% reads, 5% updates",
		"c": "100% reads",
		"d": "95% reads, 5% inserts (reads favour recent records with distribution latest)",
		"e": "95% short scans (1-100 records), 5% inserts",
		"f": "50% reads, 50% read-modify-writes",
	}[w]
}

// PasswordEnv is the variable the runner hands the password to go-ycsb in. go-ycsb's properties (magiconair
// properties v1.8.0) expand ${NAME} from the environment when a value is read, and its start-up dump of the
// properties prints them unexpanded (testdata/run-a-4k.txt shows "${ZNS_YCSB_PASSWORD}"), so the password
// is on neither argv nor stdout.
const PasswordEnv = "ZNS_YCSB_PASSWORD"

// PasswordProperty is the value of mysql.password that refers to PasswordEnv.
const PasswordProperty = "mysql.password=${" + PasswordEnv + "}"

// CheckPassword refuses a password go-ycsb would mangle: the expansion of ${...} applies to the variable's value
// too, with no escape, so "${" inside a password is replaced or fails.
func CheckPassword(pw string) error {
	if strings.Contains(pw, "${") {
		return fmt.Errorf("go-ycsb expands ${...} inside property values, with no way to escape it: a password containing \"${\" cannot reach it intact")
	}
	return nil
}

// Record size limits. go-ycsb creates its table as YCSB_KEY VARCHAR(64) PRIMARY KEY and FIELDn VARCHAR(fieldlength)
// in the server's default character set (no engine, no charset named). MySQL and MariaDB refuse a table whose
// columns' maximum sizes add up to more than 65535 bytes, whatever the engine (InnoDB and MyRocks alike); with
// utf8mb4, the default of MySQL 8.0 and of Debian's MariaDB, a VARCHAR(n) takes up to 4n bytes plus a length of 1
// (4n <= 255) or 2 bytes. The limit enforced is that sum over the key and the fields, so a spec that passes
// creates its table on any of the servers the project runs (testdata/fail-row-too-large.txt is the refusal).
const (
	MaxRowBytes      = 65535
	maxBytesPerChar  = 4
	keyColumnChars   = 64
	MaxFieldCount    = 1000
	DefaultTable     = "usertable"
	maxTargetOpsRate = 10_000_000
)

// columnBytes is the most a utf8mb4 VARCHAR(chars) takes in a row.
func columnBytes(chars int64) int64 {
	b := chars * maxBytesPerChar
	if b <= 255 {
		return b + 1
	}
	return b + 2
}

// RowBytes is the row size the server checks for fieldCount fields of fieldLength characters.
func RowBytes(fieldCount, fieldLength int64) int64 {
	return columnBytes(keyColumnChars) + fieldCount*columnBytes(fieldLength)
}

// MaxFieldLength is the longest field fieldCount fields may have.
func MaxFieldLength(fieldCount int64) int64 {
	if fieldCount < 1 {
		return 0
	}
	room := (MaxRowBytes - columnBytes(keyColumnChars)) / fieldCount
	// Largest n with columnBytes(n) <= room.
	n := (room - 2) / maxBytesPerChar
	if n*maxBytesPerChar <= 255 {
		n = (room - 1) / maxBytesPerChar
	}
	return max(n, 0)
}

// keyDigits is the zero padding of the record numbers in the keys: enough for any int64.
const keyDigits = 20

// LoadThreads is how many go-ycsb threads load a target of engine: one for MyRocks, whose bulk load takes rows in
// primary key order per session and refused them from several sessions at once (error 4054, with interleaved
// keys and with disjoint key ranges alike; measured on MariaDB 10.11's MyRocks, testdata/README.md), asked for
// the others.
func LoadThreads(engine string, asked int) int {
	if strings.EqualFold(engine, "rocksdb") {
		return 1
	}
	return asked
}

// Spec is one go-ycsb invocation against a MySQL server. The password is not part of it: it never goes on argv.
type Spec struct {
	// Workload is a letter of Workloads.
	Workload string
	// RecordCount is how many records the load inserts and the run picks keys from.
	RecordCount int64
	// OperationCount bounds a run; 0 runs until the runner stops go-ycsb (go-ycsb v1.0.3 declares
	// maxexecutiontime but never reads it, so a run's length is the runner's to enforce).
	OperationCount int64
	FieldCount     int64
	FieldLength    int64
	// Distribution is a name of Distributions.
	Distribution string
	Threads      int
	// TargetOpsPerSec throttles the client to this many operations per second over all threads; 0 = unthrottled.
	TargetOpsPerSec int
	// ReportIntervalSec is go-ycsb's --interval (its periodic per-operation lines).
	ReportIntervalSec int

	Host string
	Port int
	User string
	DB   string
	// Password says whether mysql.password refers to PasswordEnv; false connects without one.
	Password bool
}

var identRE = regexp.MustCompile(`^[A-Za-z0-9_$]+$`)

// unboundedOperations stands for "until stopped": go-ycsb splits operationcount over the threads and needs at
// least one per thread; 0 would also run unbounded, but only because of how its loop is written.
const unboundedOperations = int64(1) << 50

// Validate checks the spec for phase; every problem is named, with what is accepted.
func (s Spec) Validate(phase Phase) error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	switch phase {
	case PhaseLoad, PhaseRun:
	default:
		bad("unknown phase %q (want load or run)", phase)
	}
	if _, ok := mixes[s.Workload]; !ok {
		bad("unknown YCSB workload %q (want one of %s)", s.Workload, strings.Join(Workloads, ", "))
	}
	known := false
	for _, d := range Distributions {
		known = known || d == s.Distribution
	}
	if !known {
		bad("unknown request distribution %q (want one of %s)", s.Distribution, strings.Join(Distributions, ", "))
	}
	if s.Threads < 1 {
		bad("threads must be >= 1, got %d", s.Threads)
	}
	if s.RecordCount < 1 {
		bad("record count must be >= 1, got %d", s.RecordCount)
	} else if phase == PhaseLoad && s.RecordCount < int64(s.Threads) {
		// go-ycsb exits with status 255 otherwise ("totalOpCount ... should be bigger than threadCount").
		bad("record count %d must be at least the threads (%d): go-ycsb gives every thread one record or more", s.RecordCount, s.Threads)
	}
	if s.OperationCount < 0 || (phase == PhaseRun && s.OperationCount > 0 && s.OperationCount < int64(s.Threads)) {
		bad("operation count %d must be 0 (until stopped) or at least the threads (%d)", s.OperationCount, s.Threads)
	}
	if s.FieldCount < 1 || s.FieldCount > MaxFieldCount {
		bad("field count must be 1-%d, got %d", MaxFieldCount, s.FieldCount)
	} else if s.FieldLength < 1 {
		bad("field length must be >= 1 byte, got %d (a record of 0 bytes)", s.FieldLength)
	} else if rb := RowBytes(s.FieldCount, s.FieldLength); rb > MaxRowBytes {
		bad("%d fields x %d bytes need a row of up to %d bytes in utf8mb4, above the %d MySQL and MariaDB accept for any engine; at most %d bytes per field with %d fields",
			s.FieldCount, s.FieldLength, rb, MaxRowBytes, MaxFieldLength(s.FieldCount), s.FieldCount)
	}
	if s.TargetOpsPerSec < 0 || s.TargetOpsPerSec > maxTargetOpsRate {
		bad("target rate must be 0 (unthrottled) to %d operations per second, got %d", maxTargetOpsRate, s.TargetOpsPerSec)
	}
	if s.ReportIntervalSec < 0 {
		bad("report interval must be >= 0, got %d", s.ReportIntervalSec)
	}
	if s.Host == "" || strings.ContainsAny(s.Host, ",=") || hasControl(s.Host) {
		bad("host %q must be non-empty, without commas, '=' or control characters", s.Host)
	}
	if s.Port < 1 || s.Port > 65535 {
		bad("port %d out of range 1-65535", s.Port)
	}
	// The user goes into go-sql-driver's DSN "user:password@tcp(...)": ':' and '@' would change its meaning.
	if s.User == "" || strings.ContainsAny(s.User, ":@/$") || hasControl(s.User) {
		bad("user %q must be non-empty, without ':', '@', '/', '$' or control characters", s.User)
	}
	if !identRE.MatchString(s.DB) || strings.Contains(s.DB, "$") {
		bad("database %q must be a plain identifier [A-Za-z0-9_]", s.DB)
	}
	if len(errs) > 0 {
		return fmt.Errorf("ycsb spec: %s", strings.Join(errs, "; "))
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// Args returns go-ycsb's arguments (without the program name). They hold no password: with Password set,
// mysql.password names PasswordEnv, which the runner puts into go-ycsb's environment.
func (s Spec) Args(phase Phase) ([]string, error) {
	if err := s.Validate(phase); err != nil {
		return nil, err
	}
	a := []string{string(phase), "mysql"}
	p := func(kv ...string) {
		for _, x := range kv {
			a = append(a, "-p", x)
		}
	}
	p("mysql.host="+s.Host, "mysql.port="+strconv.Itoa(s.Port), "mysql.user="+s.User, "mysql.db="+s.DB)
	if s.Password {
		p(PasswordProperty)
	}
	// go-ycsb serves pprof on :6060 (every interface) by default; a benchmark pod has no use for it.
	p("debug.pprof=127.0.0.1:0")
	// Keys in insertion order, zero-padded so that their text sorts as their number: MyRocks' bulk load (the
	// bulkload profile of the load) takes rows only in primary key order and refused go-ycsb's default hashed
	// keys with error 4054 (testdata/load-a-hashed-bulkload.txt). The run must name keys the same way.
	p("insertorder=ordered", "zeropadding="+strconv.Itoa(keyDigits))
	p("workload=core", "table="+DefaultTable,
		"recordcount="+strconv.FormatInt(s.RecordCount, 10),
		"fieldcount="+strconv.FormatInt(s.FieldCount, 10),
		"fieldlength="+strconv.FormatInt(s.FieldLength, 10),
		"readallfields=true",
		"requestdistribution="+s.Distribution)
	p(mixes[s.Workload]...)
	switch phase {
	case PhaseLoad:
		// A fresh table: one an earlier load left would hold other records (or other columns).
		p("dropdata=true")
	case PhaseRun:
		ops := s.OperationCount
		if ops == 0 {
			ops = unboundedOperations
		}
		p("operationcount=" + strconv.FormatInt(ops, 10))
	}
	a = append(a, "--threads", strconv.Itoa(s.Threads))
	if s.TargetOpsPerSec > 0 {
		a = append(a, "--target", strconv.Itoa(s.TargetOpsPerSec))
	}
	if s.ReportIntervalSec > 0 {
		a = append(a, "--interval", strconv.Itoa(s.ReportIntervalSec))
	}
	return a, nil
}
