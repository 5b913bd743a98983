package sysbench

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseFile(t *testing.T, name string) (*Result, error) {
	t.Helper()
	res, err := ParseString(readTestdata(t, name))
	if res == nil {
		t.Fatalf("%s: nil result (%v)", name, err)
	}
	return res, err
}

// The values below are read off the capture files by eye; the files are
// real sysbench output (testdata/README.md).

func TestParse1020ReadWrite(t *testing.T) {
	res, err := parseFile(t, "run-rocksdb-ri1.txt")
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "1.0.20" || res.Threads != 2 || res.ReportIntervalSec != 1 {
		t.Errorf("header: version %q threads %d interval %d", res.Version, res.Threads, res.ReportIntervalSec)
	}
	if len(res.Intervals) != 5 {
		t.Fatalf("%d intervals, want 5", len(res.Intervals))
	}
	want0 := Interval{Time: 1, Threads: 2, TPS: 49.85, QPS: 1159.48, Reads: 837.46, Writes: 212.36, Other: 109.67,
		LatencyMS: 19.29, Percentile: 95, ErrorsPerSec: 7.98, ReconnectsPerSec: 0}
	if d := cmp.Diff(want0, res.Intervals[0]); d != "" {
		t.Errorf("first interval (-want +got):\n%s", d)
	}
	if got := res.Intervals[4]; got.Time != 5 || got.TPS != 213.12 || got.LatencyMS != 18.61 || got.ErrorsPerSec != 26.01 {
		t.Errorf("last interval %+v", got)
	}
	want := Summary{
		Reads: 15274, Writes: 3981, Other: 2054, Queries: 21309,
		Transactions: 963, TPS: 192.35, QPS: 4256.30,
		IgnoredErrors: 128, IgnoredErrorsPerSec: 25.57,
		TotalTimeSec: 5.0051, TotalEvents: 963,
		LatencyMinMS: 3.19, LatencyAvgMS: 10.39, LatencyMaxMS: 1032.40, LatencySumMS: 10001.35,
		LatencyPctMS: 19.65, Percentile: 95,
		FairnessEventsAvg: 481.5, FairnessEventsStddev: 30.5, FairnessTimeAvg: 5.0007, FairnessTimeStddev: 0,
	}
	if d := cmp.Diff(&want, res.Summary); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	if len(res.Fatal) != 0 {
		t.Errorf("fatal %q", res.Fatal)
	}
}

func TestParseCustomPercentile(t *testing.T) {
	for file, want := range map[string]struct {
		intervals int
		pct       float64
		first     float64 // first interval's latency
		summary   float64
	}{
		"run-rocksdb-p99.txt": {4, 99, 9.06, 8.28},
		"run-innodb-p99.txt":  {5, 99, 8.58, 9.39},
	} {
		res, err := parseFile(t, file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(res.Intervals) != want.intervals {
			t.Errorf("%s: %d intervals, want %d", file, len(res.Intervals), want.intervals)
		}
		for _, iv := range res.Intervals {
			if iv.Percentile != want.pct {
				t.Errorf("%s: interval at %vs has percentile %v", file, iv.Time, iv.Percentile)
			}
		}
		if res.Intervals[0].LatencyMS != want.first {
			t.Errorf("%s: first latency %v, want %v", file, res.Intervals[0].LatencyMS, want.first)
		}
		if res.Summary.Percentile != want.pct || res.Summary.LatencyPctMS != want.summary {
			t.Errorf("%s: summary p%v = %v, want p%v = %v", file, res.Summary.Percentile, res.Summary.LatencyPctMS, want.pct, want.summary)
		}
	}
}

func TestParseIgnoredErrors(t *testing.T) {
	res, err := parseFile(t, "run-rocksdb-errors.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.IgnoredErrors != 122 || s.IgnoredErrorsPerSec != 16.53 || s.Reconnects != 0 || s.ReconnectsPerSec != 0 {
		t.Errorf("errors %d (%v/s) reconnects %d (%v/s)", s.IgnoredErrors, s.IgnoredErrorsPerSec, s.Reconnects, s.ReconnectsPerSec)
	}
	if s.Transactions != 27 || s.TotalTimeSec != 7.3798 {
		t.Errorf("transactions %d in %vs", s.Transactions, s.TotalTimeSec)
	}
	// Threads stuck in lock waits kept sysbench past --time=5: 7 intervals,
	// the last one a stall in which nothing completed.
	if len(res.Intervals) != 7 {
		t.Fatalf("%d intervals, want 7", len(res.Intervals))
	}
	var errSum float64
	for _, iv := range res.Intervals {
		if iv.ErrorsPerSec <= 0 {
			t.Errorf("interval %vs: err/s %v, want > 0 in this capture", iv.Time, iv.ErrorsPerSec)
		}
		errSum += iv.ErrorsPerSec
	}
	if last := res.Intervals[6]; last.TPS != 0 || last.LatencyMS != 0 || last.ErrorsPerSec != 5 {
		t.Errorf("stall interval %+v", last)
	}
	// The 1 s rates add up to at most the summary's count: the tail after
	// the last interval (7 s to 7.38 s) is in the summary only.
	if errSum > float64(s.IgnoredErrors)+1 || errSum < float64(s.IgnoredErrors)/2 {
		t.Errorf("sum of err/s over 1 s intervals %v, summary %d", errSum, s.IgnoredErrors)
	}
}

func TestParseNoIntervals(t *testing.T) {
	res, err := parseFile(t, "run-rocksdb-noreport.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intervals) != 0 || res.ReportIntervalSec != 0 {
		t.Errorf("intervals %d, report interval %d", len(res.Intervals), res.ReportIntervalSec)
	}
	if res.Summary.Transactions != 24789 || res.Summary.TPS != 12379.48 || res.Summary.LatencyPctMS != 0.22 {
		t.Errorf("summary %+v", res.Summary)
	}
}

func TestParseSysbench11Seed(t *testing.T) {
	res, err := parseFile(t, "seed003-sysbench-1.1.txt")
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "1.1.0-df89d34" || res.Threads != 64 || res.ReportIntervalSec != 5 {
		t.Errorf("header: version %q threads %d interval %d", res.Version, res.Threads, res.ReportIntervalSec)
	}
	if len(res.Intervals) != 12 {
		t.Fatalf("%d intervals, want 12", len(res.Intervals))
	}
	want2 := Interval{Time: 15, Threads: 64, TPS: 12180.41, QPS: 73105.84, Reads: 0, Writes: 48744.63, Other: 24361.21,
		LatencyMS: 8.90, Percentile: 95, ErrorsPerSec: 0.20}
	if d := cmp.Diff(want2, res.Intervals[2]); d != "" {
		t.Errorf("third interval (-want +got):\n%s", d)
	}
	if res.Intervals[11].Time != 60 || res.Intervals[11].LatencyMS != 6.09 {
		t.Errorf("last interval %+v", res.Intervals[11])
	}
	want := Summary{
		Reads: 0, Writes: 3308279, Other: 1654141, Queries: 4962420,
		Transactions: 827068, TPS: 13782.32, QPS: 82694.12,
		IgnoredErrors: 5, IgnoredErrorsPerSec: 0.08,
		EventsPerSec: 13782.3199, TotalTimeSec: 60.0093, TotalEvents: 827068,
		LatencyMinMS: 0.49, LatencyAvgMS: 4.64, LatencyMaxMS: 33.85, LatencySumMS: 3838911.90,
		LatencyPctMS: 7.98, Percentile: 95,
		FairnessEventsAvg: 12922.9375, FairnessEventsStddev: 27.80, FairnessTimeAvg: 59.9830,
	}
	if d := cmp.Diff(&want, res.Summary); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
}

// Invariants every complete run capture must satisfy, whatever its numbers.
func TestParseRunInvariants(t *testing.T) {
	files := []string{"run-rocksdb-ri1.txt", "run-rocksdb-p99.txt", "run-rocksdb-errors.txt", "run-rocksdb-noreport.txt",
		"run-innodb-ri1.txt", "run-innodb-p99.txt", "seed003-sysbench-1.1.txt"}
	for _, f := range files {
		text := readTestdata(t, f)
		res, err := ParseString(text)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		lines := 0
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "[ ") {
				lines++
			}
		}
		if len(res.Intervals) != lines {
			t.Errorf("%s: %d intervals parsed from %d interval lines", f, len(res.Intervals), lines)
		}
		s := res.Summary
		if s.Reads+s.Writes+s.Other != s.Queries {
			t.Errorf("%s: r+w+o = %d, total %d", f, s.Reads+s.Writes+s.Other, s.Queries)
		}
		if s.Transactions != s.TotalEvents {
			t.Errorf("%s: transactions %d, events %d", f, s.Transactions, s.TotalEvents)
		}
		// sysbench prints the rate with 2 decimals and the time with 4.
		if rate := float64(s.Transactions) / s.TotalTimeSec; math.Abs(rate-s.TPS) > 0.01*s.TPS+0.01 {
			t.Errorf("%s: transactions/time = %v, tps %v", f, rate, s.TPS)
		}
		if !(s.LatencyMinMS <= s.LatencyAvgMS && s.LatencyAvgMS <= s.LatencyMaxMS && s.LatencyPctMS <= s.LatencyMaxMS) {
			t.Errorf("%s: latency min %v avg %v pct %v max %v", f, s.LatencyMinMS, s.LatencyAvgMS, s.LatencyPctMS, s.LatencyMaxMS)
		}
		for i, iv := range res.Intervals {
			if iv.Percentile != s.Percentile {
				t.Errorf("%s: interval %d percentile %v, summary %v", f, i, iv.Percentile, s.Percentile)
			}
			if iv.Threads != res.Threads {
				t.Errorf("%s: interval %d threads %d, header %d", f, i, iv.Threads, res.Threads)
			}
			if i > 0 && iv.Time-res.Intervals[i-1].Time != float64(res.ReportIntervalSec) {
				t.Errorf("%s: interval %d at %vs after %vs", f, i, iv.Time, res.Intervals[i-1].Time)
			}
			if d := iv.Reads + iv.Writes + iv.Other - iv.QPS; math.Abs(d) > 0.05 {
				t.Errorf("%s: interval %d r+w+o - qps = %v", f, i, d)
			}
		}
	}
}

func TestParseFatal(t *testing.T) {
	for _, tc := range []struct {
		file      string
		intervals int
		first     string // start of the first FATAL message
		contains  string // somewhere in the FATAL lines
	}{
		{"fatal-wrong-db.txt", 0, "unable to connect to MySQL server on host '127.0.0.1'", "error 1049: Unknown database 'nosuchdb'"},
		{"fatal-server-down.txt", 0, "unable to connect to MySQL server", "error 2002: Can't connect to server on '127.0.0.1'"},
		{"fatal-midrun.txt", 2, "mysql_stmt_execute() returned error 1146", "(last message repeated 1 times)"},
		// The failed CREATE TABLE spans lines; they belong to the message.
		{"fatal-prepare-exists.txt", 0, "mysql_drv_query() returned error 1050 (Table 'sbtest", "PRIMARY KEY (id)"},
	} {
		res, err := parseFile(t, tc.file)
		var fe *FatalError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want *FatalError", tc.file, err)
			continue
		}
		if res.Summary != nil {
			t.Errorf("%s: summary %+v from a failed run", tc.file, res.Summary)
		}
		if len(res.Intervals) != tc.intervals {
			t.Errorf("%s: %d intervals, want %d", tc.file, len(res.Intervals), tc.intervals)
		}
		if len(fe.Lines) == 0 || !strings.HasPrefix(fe.Lines[0], tc.first) {
			t.Errorf("%s: first FATAL %q, want prefix %q", tc.file, fe.Lines, tc.first)
		}
		if !strings.Contains(strings.Join(fe.Lines, "\n"), tc.contains) {
			t.Errorf("%s: FATAL lines lack %q:\n%s", tc.file, tc.contains, strings.Join(fe.Lines, "\n"))
		}
		// Every "FATAL: " line of the file is in the error.
		for _, l := range strings.Split(readTestdata(t, tc.file), "\n") {
			if rest, ok := strings.CutPrefix(l, "FATAL: "); ok && !contains(fe.Lines, rest) {
				t.Errorf("%s: FATAL line %q missing", tc.file, rest)
			}
		}
	}
	// A FATAL glued to another thread's message still counts.
	glued, err := ParseString("sysbench 1.0.20\nCreating table 'sbtest1'...FATAL: error 1045: Access denied\n")
	var fe *FatalError
	if !errors.As(err, &fe) || len(glued.Fatal) != 1 || glued.Fatal[0] != "error 1045: Access denied" {
		t.Errorf("glued FATAL: %q, %v", glued.Fatal, err)
	}
	// Continuation lines stop at the next line sysbench starts itself.
	res, _ := parseFile(t, "fatal-prepare-exists.txt")
	for _, l := range res.Fatal {
		if strings.HasPrefix(l, "Creating table") {
			t.Errorf("prepare progress line taken as FATAL continuation: %q", l)
		}
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func TestParseNoSummary(t *testing.T) {
	// sysbench killed mid-summary: a real capture cut after "ignored errors".
	text := readTestdata(t, "run-innodb-ri1.txt")
	cut := strings.Index(text, "    reconnects:")
	res, err := ParseString(text[:cut])
	if !errors.Is(err, ErrNoSummary) {
		t.Fatalf("error %v, want ErrNoSummary", err)
	}
	if res.Summary != nil || len(res.Intervals) != 4 {
		t.Errorf("summary %v, %d intervals", res.Summary, len(res.Intervals))
	}
	// The option error goes to stderr; stdout is empty.
	if _, err := parseFile(t, "bad-percentile.txt"); !errors.Is(err, ErrNoSummary) {
		t.Errorf("empty stdout: %v, want ErrNoSummary", err)
	}
	if !strings.Contains(readTestdata(t, "bad-percentile.stderr"), "Invalid value for the 'percentile' option: '99.9'") {
		t.Errorf("bad-percentile.stderr does not show sysbench 1.0's refusal")
	}
}

func TestParseUnreadableInterval(t *testing.T) {
	text := strings.Replace(readTestdata(t, "run-innodb-ri1.txt"), "tps: 363.39", "tps: x", 1)
	res, err := ParseString(text)
	if err == nil || !strings.Contains(err.Error(), "unreadable interval") {
		t.Fatalf("error %v, want unreadable interval", err)
	}
	if len(res.Intervals) != 3 || res.Summary == nil {
		t.Errorf("%d intervals, summary %v", len(res.Intervals), res.Summary)
	}
}

func TestParserStreamingMatchesWhole(t *testing.T) {
	for _, f := range []string{"run-rocksdb-errors.txt", "fatal-midrun.txt", "seed003-sysbench-1.1.txt"} {
		text := readTestdata(t, f)
		whole, werr := ParseString(text)
		p := NewParser()
		fed := 0
		for _, l := range strings.SplitAfter(text, "\n") {
			p.Line(l)
			if strings.HasPrefix(l, "[ ") {
				fed++
			}
			// Intervals become visible as their lines arrive.
			if r, _ := p.Result(); len(r.Intervals) != fed {
				t.Fatalf("%s: %d intervals after %d interval lines", f, len(r.Intervals), fed)
			}
		}
		got, gerr := p.Result()
		if d := cmp.Diff(whole, got); d != "" || (werr == nil) != (gerr == nil) {
			t.Errorf("%s: streaming differs (%v vs %v):\n%s", f, werr, gerr, d)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{
		readTestdata(t, "version.txt"):                                {1, 0, 20, "1.0.20"},
		"sysbench 1.1.0-df89d34 (using bundled LuaJIT 2.1.0-beta3)\n": {1, 1, 0, "1.1.0-df89d34"},
		"WARNING: something\nsysbench 1.0.18+ds1\n":                   {1, 0, 18, "1.0.18+ds1"},
	} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "sysbench", "bash: sysbench: command not found"} {
		if v, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) = %+v, want error", in, v)
		}
	}
}
