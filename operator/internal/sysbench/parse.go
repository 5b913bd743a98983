// Package sysbench builds sysbench command lines and parses what sysbench
// prints: interval reports, the final summary (1.0.x and 1.1 layouts), FATAL
// lines and the prepare phase. It is pure: no processes, no files.
package sysbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Interval is one intermediate report line ("[ 5s ] thds: ... reconn/s: ...").
// Rates are per second over the interval.
type Interval struct {
	// Time is the end of the interval in seconds since the run started.
	Time    float64 `json:"t"`
	Threads int     `json:"thds"`
	TPS     float64 `json:"tps"`
	QPS     float64 `json:"qps"`
	Reads   float64 `json:"r"`
	Writes  float64 `json:"w"`
	Other   float64 `json:"o"`
	// LatencyMS is the Percentile latency of the events completed in the
	// interval; sysbench prints 0.00 when none completed.
	LatencyMS        float64 `json:"lat"`
	Percentile       float64 `json:"pct"`
	ErrorsPerSec     float64 `json:"err"`
	ReconnectsPerSec float64 `json:"reconn"`
}

// Summary is the final report. Fields a layout does not print stay zero:
// 1.0.x has no EventsPerSec line, and TPS is always the "transactions"
// rate, which equals events/s for the OLTP scripts.
type Summary struct {
	Reads, Writes, Other, Queries int64 // "queries performed" counts
	Transactions                  int64
	TPS                           float64
	QPS                           float64
	IgnoredErrors                 int64
	IgnoredErrorsPerSec           float64
	Reconnects                    int64
	ReconnectsPerSec              float64
	// EventsPerSec is 1.1's "events/s (eps)".
	EventsPerSec float64
	// TotalTimeSec is 1.0's "total time" or 1.1's "time elapsed".
	TotalTimeSec float64
	TotalEvents  int64

	LatencyMinMS, LatencyAvgMS, LatencyMaxMS, LatencySumMS float64
	// LatencyPctMS is the latency at Percentile; Percentile is 0 when
	// sysbench ran with --percentile=0 ("percentile stats: disabled").
	LatencyPctMS float64
	Percentile   float64

	FairnessEventsAvg, FairnessEventsStddev float64
	FairnessTimeAvg, FairnessTimeStddev     float64
}

// Result is everything parsed from one sysbench invocation's stdout.
type Result struct {
	// Version is the header's version ("1.0.20", "1.1.0-df89d34"); "" if the
	// header was not printed.
	Version string
	// Threads and ReportInterval are from the "Running the test" header.
	Threads           int
	ReportIntervalSec int
	Intervals         []Interval
	// Summary is nil when sysbench printed none (failure, or prepare/cleanup).
	Summary *Summary
	// Histogram is the latency distribution sysbench printed with --histogram=on; nil without it.
	Histogram Histogram
	// Fatal holds the FATAL lines and their continuation lines (a failed
	// query is printed over several lines), without the "FATAL: " prefix.
	Fatal []string
}

// FatalError reports that sysbench printed FATAL lines.
type FatalError struct{ Lines []string }

func (e *FatalError) Error() string {
	return "sysbench FATAL: " + strings.Join(e.Lines, " | ")
}

// ErrNoSummary: the output ended without a complete final summary, and
// without FATAL lines to say why (e.g. sysbench was killed).
var ErrNoSummary = errors.New("sysbench output has no complete final summary")

// Parser consumes sysbench stdout line by line, so that a runner can parse
// while it streams the output.
type Parser struct {
	res     Result
	sum     Summary
	seen    map[string]bool // summary lines found, by key
	section string
	inFatal bool
	// inHistogram: inside the --histogram block.
	inHistogram bool
	lineCount   int
	badLines    []string
}

// NewParser returns an empty parser.
func NewParser() *Parser { return &Parser{seen: map[string]bool{}} }

var (
	headerRE   = regexp.MustCompile(`^sysbench (\d+\.\d+\.\d+\S*)`)
	intervalRE = regexp.MustCompile(`^\[ *(\d+(?:\.\d+)?)s *\] (.*)$`)
	countRE    = regexp.MustCompile(`^(\d+)\s+\(([\d.]+) per sec\.\)$`)
	pctRE      = regexp.MustCompile(`^(\d+(?:\.\d+)?)th percentile$`)
	latKeyRE   = regexp.MustCompile(`^\(ms,(\d+(?:\.\d+)?)%\):$`)
)

// Line feeds one line (with or without its newline).
func (p *Parser) Line(line string) {
	p.lineCount++
	line = strings.TrimRight(line, "\r\n")
	trimmed := strings.TrimSpace(line)

	// Anywhere in the line: threads share stdout, and a message can be
	// glued to another thread's unterminated one (see prepare.go).
	if i := strings.Index(line, "FATAL: "); i >= 0 {
		p.res.Fatal = append(p.res.Fatal, line[i+len("FATAL: "):])
		p.inFatal = true
		return
	}
	if p.inFatal {
		// A FATAL message may span lines (the query text of a failed
		// statement); it ends at the next line sysbench itself starts.
		if trimmed != "" && !intervalRE.MatchString(line) && !isKnownLine(trimmed) {
			p.res.Fatal = append(p.res.Fatal, trimmed)
			return
		}
		p.inFatal = false
	}

	if p.histogramLine(line) {
		return
	}
	if m := headerRE.FindStringSubmatch(line); m != nil && p.res.Version == "" {
		p.res.Version = m[1]
		return
	}
	if m := intervalRE.FindStringSubmatch(line); m != nil {
		if iv, err := parseInterval(m[1], m[2]); err == nil {
			p.res.Intervals = append(p.res.Intervals, iv)
		} else {
			p.badLines = append(p.badLines, line)
		}
		return
	}
	if v, ok := strings.CutPrefix(trimmed, "Number of threads:"); ok {
		p.res.Threads, _ = strconv.Atoi(strings.TrimSpace(v))
		return
	}
	if v, ok := strings.CutPrefix(trimmed, "Report intermediate results every "); ok {
		n, _, _ := strings.Cut(v, " ")
		p.res.ReportIntervalSec, _ = strconv.Atoi(n)
		return
	}
	p.summaryLine(trimmed)
}

// isKnownLine: lines that sysbench prints on its own, which end a FATAL
// continuation.
func isKnownLine(s string) bool {
	for _, pfx := range []string{"SQL statistics:", "General statistics:", "Throughput:", "Latency (ms):",
		"Threads fairness:", "Creating table", "Inserting ", "Creating a secondary", "Dropping table",
		"Initializing", "Threads started!", "Running the test", "sysbench ", histogramHeader} {
		if strings.HasPrefix(s, pfx) {
			return true
		}
	}
	return false
}

// parseInterval reads the key/value pairs after the timestamp. Keys it does
// not know (rate mode's "queue length", "concurrency") are skipped.
func parseInterval(ts, rest string) (Interval, error) {
	var iv Interval
	t, err := strconv.ParseFloat(ts, 64)
	if err != nil {
		return iv, err
	}
	iv.Time = t
	f := strings.Fields(rest)
	have := map[string]bool{}
	for i := 0; i+1 < len(f); i++ {
		key, val := f[i], f[i+1]
		var err error
		switch {
		case key == "thds:":
			iv.Threads, err = strconv.Atoi(val)
		case key == "tps:":
			iv.TPS, err = strconv.ParseFloat(val, 64)
		case key == "qps:":
			iv.QPS, err = strconv.ParseFloat(val, 64)
		case key == "(r/w/o:":
			parts := strings.Split(strings.TrimSuffix(val, ")"), "/")
			if len(parts) != 3 {
				return iv, fmt.Errorf("r/w/o %q", val)
			}
			if iv.Reads, err = strconv.ParseFloat(parts[0], 64); err == nil {
				if iv.Writes, err = strconv.ParseFloat(parts[1], 64); err == nil {
					iv.Other, err = strconv.ParseFloat(parts[2], 64)
				}
			}
		case key == "err/s:":
			iv.ErrorsPerSec, err = strconv.ParseFloat(val, 64)
		case key == "reconn/s:":
			iv.ReconnectsPerSec, err = strconv.ParseFloat(val, 64)
		case key == "lat":
			m := latKeyRE.FindStringSubmatch(val)
			if m == nil || i+2 >= len(f) {
				return iv, fmt.Errorf("latency field %q", val)
			}
			if iv.Percentile, err = strconv.ParseFloat(m[1], 64); err == nil {
				iv.LatencyMS, err = strconv.ParseFloat(f[i+2], 64)
			}
			key = "lat:"
			i++
		default:
			continue
		}
		if err != nil {
			return iv, fmt.Errorf("%s %q: %v", key, val, err)
		}
		have[key] = true
		i++
	}
	// The database scripts always print these; a line without them is
	// another test's format, which this package does not claim to read.
	for _, k := range []string{"thds:", "tps:", "qps:", "lat:", "err/s:", "reconn/s:"} {
		if !have[k] {
			return iv, fmt.Errorf("interval line lacks %q", k)
		}
	}
	return iv, nil
}

func (p *Parser) summaryLine(s string) {
	switch s {
	case "SQL statistics:", "General statistics:", "Throughput:", "Latency (ms):", "Threads fairness:":
		p.section = s
		return
	case "":
		return
	}
	key, val, ok := strings.Cut(s, ":")
	if !ok {
		return
	}
	val = strings.TrimSpace(val)
	var err error
	set := func(k string) { p.seen[k] = err == nil }
	switch p.section {
	case "SQL statistics:":
		switch key {
		case "read":
			p.sum.Reads, err = strconv.ParseInt(val, 10, 64)
		case "write":
			p.sum.Writes, err = strconv.ParseInt(val, 10, 64)
		case "other":
			p.sum.Other, err = strconv.ParseInt(val, 10, 64)
		case "total":
			p.sum.Queries, err = strconv.ParseInt(val, 10, 64)
		case "transactions":
			p.sum.Transactions, p.sum.TPS, err = countRate(val)
		case "queries":
			var n int64
			n, p.sum.QPS, err = countRate(val)
			if err == nil && p.sum.Queries == 0 {
				p.sum.Queries = n
			}
		case "ignored errors":
			p.sum.IgnoredErrors, p.sum.IgnoredErrorsPerSec, err = countRate(val)
		case "reconnects":
			p.sum.Reconnects, p.sum.ReconnectsPerSec, err = countRate(val)
		default:
			return
		}
		set(key)
	case "General statistics:", "Throughput:":
		switch key {
		case "total time", "time elapsed":
			p.sum.TotalTimeSec, err = strconv.ParseFloat(strings.TrimSuffix(val, "s"), 64)
			key = "time"
		case "total number of events":
			p.sum.TotalEvents, err = strconv.ParseInt(val, 10, 64)
		case "events/s (eps)":
			p.sum.EventsPerSec, err = strconv.ParseFloat(val, 64)
		default:
			return
		}
		set(key)
	case "Latency (ms):":
		var v float64
		if key != "percentile stats" {
			v, err = strconv.ParseFloat(val, 64)
		}
		switch key {
		case "min":
			p.sum.LatencyMinMS = v
		case "avg":
			p.sum.LatencyAvgMS = v
		case "max":
			p.sum.LatencyMaxMS = v
		case "sum":
			p.sum.LatencySumMS = v
		case "percentile stats": // "disabled"
			p.sum.Percentile, p.sum.LatencyPctMS = 0, 0
			key = "pct"
		default:
			m := pctRE.FindStringSubmatch(key)
			if m == nil {
				return
			}
			p.sum.LatencyPctMS = v
			if err == nil {
				p.sum.Percentile, err = strconv.ParseFloat(m[1], 64)
			}
			key = "pct"
		}
		set("lat " + key)
	case "Threads fairness:":
		var a, b float64
		if err = parseSlashPair(val, &a, &b); err != nil {
			return
		}
		switch key {
		case "events (avg/stddev)":
			p.sum.FairnessEventsAvg, p.sum.FairnessEventsStddev = a, b
		case "execution time (avg/stddev)":
			p.sum.FairnessTimeAvg, p.sum.FairnessTimeStddev = a, b
		}
	}
}

func countRate(v string) (int64, float64, error) {
	m := countRE.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, fmt.Errorf("not \"N (X per sec.)\": %q", v)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, 0, err
	}
	r, err := strconv.ParseFloat(m[2], 64)
	return n, r, err
}

func parseSlashPair(v string, a, b *float64) error {
	x, y, ok := strings.Cut(v, "/")
	if !ok {
		return fmt.Errorf("not a/b: %q", v)
	}
	var err error
	if *a, err = strconv.ParseFloat(x, 64); err != nil {
		return err
	}
	*b, err = strconv.ParseFloat(y, 64)
	return err
}

// summaryKeys must all have been read for a summary to count as complete.
var summaryKeys = []string{"transactions", "queries", "ignored errors", "reconnects", "time",
	"total number of events", "lat min", "lat avg", "lat max", "lat pct"}

// Result returns what was parsed. err is a *FatalError when sysbench printed
// FATAL lines, or ErrNoSummary when the summary is missing or incomplete;
// the Result is returned either way, with the intervals that were printed.
func (p *Parser) Result() (*Result, error) {
	res := p.res
	res.Intervals = append([]Interval(nil), p.res.Intervals...)
	res.Fatal = append([]string(nil), p.res.Fatal...)
	res.Histogram = append(Histogram(nil), p.res.Histogram...)
	complete := true
	for _, k := range summaryKeys {
		if !p.seen[k] {
			complete = false
		}
	}
	if complete {
		s := p.sum
		res.Summary = &s
	}
	switch {
	case len(res.Fatal) > 0:
		return &res, &FatalError{Lines: res.Fatal}
	case !complete:
		return &res, ErrNoSummary
	case len(p.badLines) > 0:
		return &res, fmt.Errorf("sysbench: unreadable interval line %q", p.badLines[0])
	}
	return &res, nil
}

// Parse reads a whole sysbench stdout.
func Parse(r io.Reader) (*Result, error) {
	p := NewParser()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		p.Line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return p.Result()
}

// ParseString is Parse on a string.
func ParseString(s string) (*Result, error) { return Parse(strings.NewReader(s)) }
