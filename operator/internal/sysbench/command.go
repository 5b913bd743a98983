package sysbench

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Phase is the sysbench command.
type Phase string

const (
	PhasePrepare Phase = "prepare"
	PhaseRun     Phase = "run"
	PhaseCleanup Phase = "cleanup"
)

// Workloads are the OLTP scripts the runner accepts. All of them share
// oltp_common.lua's prepare (tables x table-size rows in sbtest1..N), which
// is what the row-count verification relies on; bulk_insert and the
// select_random_* scripts do not, so they are left out.
var Workloads = []string{
	"oltp_read_write",
	"oltp_read_only",
	"oltp_write_only",
	"oltp_update_index",
	"oltp_update_non_index",
	"oltp_insert",
	"oltp_delete",
	"oltp_point_select",
}

// PasswordEnv is the variable the MySQL client library reads the password
// from. Measured with Debian's sysbench 1.0.20 on libmariadb 3.3 (MariaDB
// 10.11.19): sysbench passes "" (its --mysql-password default) rather than
// NULL, and libmariadb still takes MYSQL_PWD, for passwords with spaces,
// quotes, '#', '=' and backslashes alike. Oracle's libmysqlclient reads it
// only for a NULL password, so a sysbench linked with it needs the
// --config-file route instead (ConfigFileLine).
const PasswordEnv = "MYSQL_PWD"

// Spec describes one sysbench invocation against a MySQL server. The
// password is deliberately not part of it: it never goes on argv.
type Spec struct {
	// Workload is a name from Workloads.
	Workload string
	// ScriptDir, if set, is where the .lua scripts are; sysbench is then
	// given the script's path. Empty: sysbench resolves the bare name on its
	// own search path (/usr/share/sysbench for Debian's package).
	ScriptDir string

	Tables    int
	TableSize int64
	Threads   int
	// TimeSec is the run duration; 0 = unlimited, which the runner refuses
	// for "run" because nothing would stop it.
	TimeSec           int
	ReportIntervalSec int
	// Percentile of the latency statistics; 0 leaves sysbench's default (95).
	// Every released sysbench (1.0.x and 1.1) takes only integers; its option
	// parser rejects "99.9" with "Invalid value for the 'percentile' option".
	Percentile int
	// Histogram is --histogram=on for the run: sysbench then prints the latency distribution of the whole run
	// (Result.Histogram), from which p50/p95/p99/p99.9 are computed (1.0.x prints one percentile only).
	Histogram bool

	// Host and Port, or Socket (which wins in sysbench when both are set).
	Host   string
	Port   int
	Socket string
	User   string
	DB     string
	// StorageEngine is --mysql-storage-engine (rocksdb, innodb); "" leaves
	// sysbench's default, which creates InnoDB tables whatever the server's
	// default engine is.
	StorageEngine string
	// CreateSecondary: the seed prepares with --create_secondary=off, so
	// false (the zero value) writes that; true writes =on.
	CreateSecondary bool
	// PSMode is --db-ps-mode: "auto" or "disable"; "" leaves sysbench's
	// default (auto).
	PSMode string
	// IgnoreErrors is --mysql-ignore-errors ("all" or a comma list of error
	// numbers); "" keeps sysbench's default 1213,1020,1205.
	IgnoreErrors string
}

var (
	identRE       = regexp.MustCompile(`^[A-Za-z0-9_$]+$`)
	workloadRE    = regexp.MustCompile(`^[a-z0-9_]+$`)
	ignoreErrorRE = regexp.MustCompile(`^(all|\d+(,\d+)*)$`)
)

// Validate checks the spec for phase.
func (s Spec) Validate(phase Phase) error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }

	switch phase {
	case PhasePrepare, PhaseRun, PhaseCleanup:
	default:
		bad("unknown phase %q (want prepare, run or cleanup)", phase)
	}
	known := false
	for _, w := range Workloads {
		known = known || w == s.Workload
	}
	if !known {
		bad("unknown workload %q (want one of %s)", s.Workload, strings.Join(Workloads, ", "))
	}
	if s.Tables < 1 {
		bad("tables must be >= 1, got %d", s.Tables)
	}
	if phase != PhaseCleanup && s.TableSize < 1 {
		bad("table size must be >= 1, got %d", s.TableSize)
	}
	if s.Threads < 1 {
		bad("threads must be >= 1, got %d", s.Threads)
	}
	if s.TimeSec < 0 || (phase == PhaseRun && s.TimeSec == 0) {
		bad("time must be > 0 seconds for a run, got %d", s.TimeSec)
	}
	if s.ReportIntervalSec < 0 {
		bad("report interval must be >= 0, got %d", s.ReportIntervalSec)
	}
	if s.Percentile < 0 || s.Percentile > 100 {
		bad("percentile must be an integer 1-100 (0 = sysbench's 95), got %d", s.Percentile)
	}
	if s.Socket == "" {
		if s.Host == "" {
			bad("need a host or a socket")
		}
		if s.Port < 1 || s.Port > 65535 {
			bad("port %d out of range 1-65535", s.Port)
		}
	}
	// sysbench splits --mysql-host and --mysql-socket on commas (they are
	// lists, for round-robin over servers).
	for name, v := range map[string]string{"host": s.Host, "socket": s.Socket} {
		if strings.ContainsAny(v, ",") || hasControl(v) {
			bad("%s %q: commas and control characters are not allowed", name, v)
		}
	}
	if s.User == "" || hasControl(s.User) {
		bad("user %q must be non-empty without control characters", s.User)
	}
	if !identRE.MatchString(s.DB) {
		bad("database %q must be a plain identifier [A-Za-z0-9_$]", s.DB)
	}
	if s.StorageEngine != "" && !identRE.MatchString(s.StorageEngine) {
		bad("storage engine %q must be a plain identifier", s.StorageEngine)
	}
	switch s.PSMode {
	case "", "auto", "disable":
	default:
		bad("db-ps-mode %q (want auto or disable)", s.PSMode)
	}
	if s.IgnoreErrors != "" && !ignoreErrorRE.MatchString(s.IgnoreErrors) {
		bad("ignore errors %q (want \"all\" or error numbers separated by commas)", s.IgnoreErrors)
	}
	if s.ScriptDir != "" && !filepath.IsAbs(s.ScriptDir) {
		bad("script dir %q must be absolute", s.ScriptDir)
	}
	if !workloadRE.MatchString(s.Workload) && s.Workload != "" {
		bad("workload %q has unexpected characters", s.Workload)
	}
	if len(errs) > 0 {
		return fmt.Errorf("sysbench spec: %s", strings.Join(errs, "; "))
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

// Args returns sysbench's arguments (without the program name) in the
// seed's order: script, options, command. It contains no password.
func (s Spec) Args(phase Phase) ([]string, error) {
	if err := s.Validate(phase); err != nil {
		return nil, err
	}
	script := s.Workload
	if s.ScriptDir != "" {
		script = filepath.Join(s.ScriptDir, s.Workload+".lua")
	}
	a := []string{script, "--db-driver=mysql"}
	if s.Socket != "" {
		a = append(a, "--mysql-socket="+s.Socket)
	} else {
		a = append(a, "--mysql-host="+s.Host, "--mysql-port="+strconv.Itoa(s.Port))
	}
	a = append(a, "--mysql-user="+s.User, "--mysql-db="+s.DB)
	if s.StorageEngine != "" {
		a = append(a, "--mysql-storage-engine="+s.StorageEngine)
	}
	if s.CreateSecondary {
		a = append(a, "--create_secondary=on")
	} else {
		a = append(a, "--create_secondary=off")
	}
	if s.PSMode != "" {
		a = append(a, "--db-ps-mode="+s.PSMode)
	}
	if s.IgnoreErrors != "" {
		a = append(a, "--mysql-ignore-errors="+s.IgnoreErrors)
	}
	a = append(a, "--tables="+strconv.Itoa(s.Tables))
	switch phase {
	case PhasePrepare:
		a = append(a, "--table-size="+strconv.FormatInt(s.TableSize, 10), "--threads="+strconv.Itoa(s.Threads))
	case PhaseRun:
		a = append(a, "--table-size="+strconv.FormatInt(s.TableSize, 10), "--threads="+strconv.Itoa(s.Threads),
			"--time="+strconv.Itoa(s.TimeSec), "--report-interval="+strconv.Itoa(s.ReportIntervalSec))
		if s.Percentile > 0 {
			a = append(a, "--percentile="+strconv.Itoa(s.Percentile))
		}
		if s.Histogram {
			a = append(a, "--histogram=on")
		}
	}
	return append(a, string(phase)), nil
}

// ConfigFileLine is the --config-file line that carries a password for a
// sysbench whose client library ignores MYSQL_PWD. sysbench's config-file
// reader splits on whitespace (measured: 1.0.20 fails to log in with a
// password containing a space, or starting or ending with one), so such
// passwords are refused rather than silently mangled.
func ConfigFileLine(password string) (string, error) {
	if strings.IndexFunc(password, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' }) >= 0 {
		return "", fmt.Errorf("sysbench --config-file cannot carry a password containing whitespace; use %s", PasswordEnv)
	}
	return "mysql-password=" + password + "\n", nil
}

// Version is a sysbench version as "sysbench --version" prints it.
type Version struct {
	Major, Minor, Patch int
	// Raw is the full version token, e.g. "1.1.0-df89d34".
	Raw string
}

func (v Version) String() string { return v.Raw }

// ParseVersion reads "sysbench 1.0.20" or a header line such as
// "sysbench 1.1.0-df89d34 (using bundled LuaJIT 2.1.0-beta3)".
func ParseVersion(s string) (Version, error) {
	for _, line := range strings.Split(s, "\n") {
		m := headerRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		v := Version{Raw: m[1]}
		core, _, _ := strings.Cut(m[1], "-")
		parts := strings.SplitN(core, ".", 3)
		var err error
		if v.Major, err = strconv.Atoi(parts[0]); err == nil {
			if v.Minor, err = strconv.Atoi(parts[1]); err == nil {
				v.Patch, err = strconv.Atoi(leadingDigits(parts[2]))
			}
		}
		if err != nil {
			return Version{}, fmt.Errorf("sysbench version %q: %v", m[1], err)
		}
		return v, nil
	}
	return Version{}, fmt.Errorf("no \"sysbench X.Y.Z\" in %q", strings.TrimSpace(s))
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
