// Package benchresult is the contract between the benchmark runner
// (cmd/znsbench) and the operator: the compact summary the runner writes as
// its container's termination message, and the per-interval series it
// prints as one line of its log. It is pure.
package benchresult

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// SchemaVersion is bumped on incompatible changes of Summary or Series.
const SchemaVersion = 1

// MaxBytes bounds the encoded Summary. The kubelet keeps at most 4096 bytes
// of a termination message (and 12 KiB over all containers of a pod); a
// quarter is left spare for fields added later.
const MaxBytes = 3072

// MaxErrorBytes bounds Summary.Error before the total is checked: room for
// about 15 sysbench lines, which is where the cause always is.
const MaxErrorBytes = 1536

// Phase values.
const (
	PhasePrepare = "prepare"
	PhaseVerify  = "verify"
	PhaseRun     = "run"
	PhaseCleanup = "cleanup"
	// PhasePrecondition fills a conventional volume with fio before the database is loaded.
	PhasePrecondition = "precondition"
)

// Usable capacity sources (Summary.UsableSource): the figures of the database pod's metrics sidecar (`znsdb
// metrics`) that the verify read.
const (
	// UsableStatfs is the size of the file system that holds the datadir (znsdb_datadir_size_bytes): for a
	// database on zoned btrfs or f2fs that is the zoned file system, for a database on a volume the volume's.
	UsableStatfs = "statfs"
	// UsableZenFS is ZenFS's free, used and reclaimable space (znsdb_zenfs_*_bytes, from zenfs df): a ZenFS
	// database's datadir is only its small aux volume.
	UsableZenFS = "zenfs"
)

// Summary is one runner invocation's result. Times are RFC 3339 UTC
// strings, latencies milliseconds, rates per second, deviations percent.
type Summary struct {
	Schema    int    `json:"schema"`
	Phase     string `json:"phase"`
	Target    string `json:"target,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
	OK        bool   `json:"ok"`
	// Reason names why !OK, from the fixed set of package failreason
	// (AccessDenied, ConnectionLost, MissingTables, Crashed, ...).
	Reason string `json:"reason,omitempty"`
	// Error is the detail for !OK: its first line is the cause in a
	// sentence, and for a sysbench failure it ends with the last lines
	// sysbench printed (FATAL lines included), password redacted.
	Error string `json:"error,omitempty"`

	// Tool is ToolYCSB for a go-ycsb phase, empty for sysbench.
	Tool string `json:"tool,omitempty"`
	// Ops are a YCSB run's figures per operation type; TPS, Transactions and the latencies are then over all of
	// them (see package ycsb's Totals).
	Ops []OpFigures `json:"ops,omitempty"`

	SysbenchVersion string `json:"sysbenchVersion,omitempty"`
	Workload        string `json:"workload,omitempty"`
	Threads         int    `json:"threads,omitempty"`
	StartTime       string `json:"startTime,omitempty"`
	EndTime         string `json:"endTime,omitempty"`

	// Run figures, from sysbench's final summary.
	DurationSec      float64 `json:"durationSec,omitempty"`
	Transactions     int64   `json:"transactions,omitempty"`
	TPS              float64 `json:"tps,omitempty"`
	QPS              float64 `json:"qps,omitempty"`
	LatencyAvgMS     float64 `json:"latencyAvgMs,omitempty"`
	LatencyPctMS     float64 `json:"latencyPctMs,omitempty"`
	LatencyMaxMS     float64 `json:"latencyMaxMs,omitempty"`
	Percentile       float64 `json:"percentile,omitempty"`
	IgnoredErrors    int64   `json:"ignoredErrors,omitempty"`
	ErrorsPerSec     float64 `json:"errorsPerSec,omitempty"`
	Reconnects       int64   `json:"reconnects,omitempty"`
	ReconnectsPerSec float64 `json:"reconnectsPerSec,omitempty"`

	// The latency distribution of the whole run, from sysbench's --histogram output; zero without it.
	LatencyP50MS  float64 `json:"latencyP50Ms,omitempty"`
	LatencyP95MS  float64 `json:"latencyP95Ms,omitempty"`
	LatencyP99MS  float64 `json:"latencyP99Ms,omitempty"`
	LatencyP999MS float64 `json:"latencyP999Ms,omitempty"`

	// From the interval lines (benchstat): population stddev / mean in
	// percent, TPS over all intervals, latency over the intervals in which a
	// transaction completed.
	Intervals         int     `json:"intervals,omitempty"`
	TPSRelDevPct      float64 `json:"tpsRelDevPct,omitempty"`
	LatencyRelDevPct  float64 `json:"latencyRelDevPct,omitempty"`
	TPSMin            float64 `json:"tpsMin,omitempty"`
	TPSMax            float64 `json:"tpsMax,omitempty"`
	LatencyPctMinMS   float64 `json:"latencyPctMinMs,omitempty"`
	LatencyPctMaxMS   float64 `json:"latencyPctMaxMs,omitempty"`
	ReportIntervalSec int     `json:"reportIntervalSec,omitempty"`

	// Device is set only when the device was sampled before and after;
	// the byte figures are meaningful (even if 0) exactly then.
	Device              string  `json:"device,omitempty"`
	DeviceWrittenBytes  int64   `json:"deviceWrittenBytes,omitempty"`
	BytesPerTransaction float64 `json:"bytesPerTransaction,omitempty"`

	// DataBytes is the size of the database on disk after the verify (the prepared data) or after the run:
	// SST bytes for MyRocks, tablespace bytes for InnoDB, as DataBytesSource says; absent when unreadable.
	DataBytes       int64  `json:"dataBytes,omitempty"`
	DataBytesSource string `json:"dataBytesSource,omitempty"`

	// UsableBytes is, after the verify, how much the database's storage leaves for data, read from the database
	// pod's metrics sidecar (`znsdb metrics`): the size of the datadir's file system (UsableSource "statfs") or
	// ZenFS's free, used and reclaimable space ("zenfs"); absent when it could not be read.
	UsableBytes  int64  `json:"usableBytes,omitempty"`
	UsableSource string `json:"usableSource,omitempty"`

	// PrepareAttempts is how many prepares it took when sysbench could not connect at first (absent: one).
	PrepareAttempts int `json:"prepareAttempts,omitempty"`

	// Verify: rows counted over sbtest1..N against tables x table size.
	RowsExpected int64 `json:"rowsExpected,omitempty"`
	RowsFound    int64 `json:"rowsFound,omitempty"`
}

// ManyIgnoredErrors is the share of transaction attempts that sysbench
// rolled back on an error it ignores (lock conflicts MyRocks reports: 1213,
// 1020, 1205) above which a run is flagged: TPS counts only what committed,
// and beyond a few percent the comparison measures lock contention as much
// as storage.
const ManyIgnoredErrors = 0.01

// IgnoredErrorShare is ignored errors over transaction attempts (committed
// plus rolled back); ok is false when the run has no such figures.
func (s Summary) IgnoredErrorShare() (share float64, ok bool) {
	if s.ErrorsPerSec <= 0 || s.TPS+s.ErrorsPerSec <= 0 {
		return 0, s.TPS > 0
	}
	return s.ErrorsPerSec / (s.TPS + s.ErrorsPerSec), true
}

// ErrTooLarge: the summary does not fit MaxBytes even with its error text
// cut to nothing (only possible with absurd identifiers).
var ErrTooLarge = errors.New("benchresult: summary exceeds the termination message budget")

// Encode returns the JSON of s within MaxBytes. It sets Schema, replaces
// non-finite floats by 0 (JSON cannot carry them), and cuts Error from the
// front, keeping its first line (what failed) and its end (sysbench's last
// lines), until the whole fits.
func (s Summary) Encode() ([]byte, error) {
	s.Schema = SchemaVersion
	s.Ops = append([]OpFigures(nil), s.Ops...) // sanitize must not touch the caller's slice
	s.sanitize()
	s.Error = TrimError(s.Error, MaxErrorBytes)
	for {
		b, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		if len(b) <= MaxBytes {
			return b, nil
		}
		if s.Error == "" {
			return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(b))
		}
		// JSON escaping can grow the text; shrink by the overflow and retry.
		over := len(b) - MaxBytes
		s.Error = TrimError(s.Error, max(0, len(s.Error)-over-16))
	}
}

// Decode parses a termination message.
func Decode(b []byte) (Summary, error) {
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("benchresult: %w", err)
	}
	if s.Schema != SchemaVersion {
		return s, fmt.Errorf("benchresult: schema %d, this operator reads %d", s.Schema, SchemaVersion)
	}
	switch s.Phase {
	case PhasePrepare, PhaseVerify, PhaseRun, PhaseCleanup, PhasePrecondition:
	default:
		return s, fmt.Errorf("benchresult: unknown phase %q", s.Phase)
	}
	return s, nil
}

func (s *Summary) sanitize() {
	for _, f := range []*float64{&s.DurationSec, &s.TPS, &s.QPS, &s.LatencyAvgMS, &s.LatencyPctMS,
		&s.LatencyMaxMS, &s.Percentile, &s.ErrorsPerSec, &s.ReconnectsPerSec, &s.TPSRelDevPct,
		&s.LatencyRelDevPct, &s.TPSMin, &s.TPSMax, &s.LatencyPctMinMS, &s.LatencyPctMaxMS,
		&s.BytesPerTransaction, &s.LatencyP50MS, &s.LatencyP95MS, &s.LatencyP99MS, &s.LatencyP999MS} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
	for i := range s.Ops {
		s.Ops[i].sanitize()
	}
}

// TrimError fits msg into n bytes: the first line (the runner's own
// statement of what failed) and as much of the end as fits, joined by
// " ... ". It cuts on UTF-8 boundaries.
func TrimError(msg string, n int) string {
	if len(msg) <= n {
		return msg
	}
	const sep = "\n...\n"
	head, _, _ := strings.Cut(msg, "\n")
	if len(head) > n/2 {
		head = truncUTF8(head, n/2)
	}
	room := n - len(head) - len(sep)
	if room <= 0 {
		return truncUTF8(head, n)
	}
	tail := msg[len(msg)-room:]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return head + sep + tail
}

func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// SummaryPrefix starts the log line on which the runner repeats its summary,
// for when the termination message is unavailable.
const SummaryPrefix = "ZNSBENCH-SUMMARY "

// SeriesPrefix starts the one log line that carries the interval series.
const SeriesPrefix = "ZNSBENCH-SERIES "

// Series is the per-interval data of one run, column-wise to stay compact:
// every slice has one entry per interval.
type Series struct {
	Schema            int       `json:"schema"`
	Target            string    `json:"target,omitempty"`
	Iteration         int       `json:"iteration,omitempty"`
	Percentile        float64   `json:"percentile"`
	ReportIntervalSec int       `json:"reportIntervalSec"`
	Time              []float64 `json:"t"`
	TPS               []float64 `json:"tps"`
	QPS               []float64 `json:"qps"`
	LatencyMS         []float64 `json:"lat"`
	ErrorsPerSec      []float64 `json:"err"`
	ReconnectsPerSec  []float64 `json:"reconn"`

	// The rest is set only on a series the operator downsampled to fit its ConfigMap (Fit): each entry of the
	// columns above is then one bucket of BucketIntervals consecutive intervals (the last bucket may hold fewer),
	// t the end of the bucket's last interval and the others the bucket's mean; SourceIntervals is how many
	// intervals the run had. The Min and Max columns keep each bucket's extremes, so that a dip or a spike
	// shorter than a bucket still shows.
	Downsampled         bool      `json:"downsampled,omitempty"`
	SourceIntervals     int       `json:"sourceIntervals,omitempty"`
	BucketIntervals     int       `json:"bucketIntervals,omitempty"`
	TPSMin              []float64 `json:"tpsMin,omitempty"`
	TPSMax              []float64 `json:"tpsMax,omitempty"`
	QPSMin              []float64 `json:"qpsMin,omitempty"`
	QPSMax              []float64 `json:"qpsMax,omitempty"`
	LatencyMinMS        []float64 `json:"latMin,omitempty"`
	LatencyMaxMS        []float64 `json:"latMax,omitempty"`
	ErrorsPerSecMin     []float64 `json:"errMin,omitempty"`
	ErrorsPerSecMax     []float64 `json:"errMax,omitempty"`
	ReconnectsPerSecMin []float64 `json:"reconnMin,omitempty"`
	ReconnectsPerSecMax []float64 `json:"reconnMax,omitempty"`
}

// Len is the number of intervals.
func (s Series) Len() int { return len(s.Time) }

func (s Series) check() error {
	n := len(s.Time)
	for name, col := range map[string][]float64{"tps": s.TPS, "qps": s.QPS, "lat": s.LatencyMS, "err": s.ErrorsPerSec, "reconn": s.ReconnectsPerSec} {
		if len(col) != n {
			return fmt.Errorf("benchresult: series column %s has %d entries, t has %d", name, len(col), n)
		}
	}
	for name, col := range s.extremes() {
		// A series as the runner printed it has no extremes; a downsampled one has them all.
		if len(col) != n && (s.Downsampled || len(col) != 0) {
			return fmt.Errorf("benchresult: series column %s has %d entries, t has %d", name, len(col), n)
		}
	}
	return nil
}

// Line returns the series as one log line (prefix, JSON, no newline).
func (s Series) Line() (string, error) {
	s.Schema = SchemaVersion
	if err := s.check(); err != nil {
		return "", err
	}
	for _, col := range [][]float64{s.Time, s.TPS, s.QPS, s.LatencyMS, s.ErrorsPerSec, s.ReconnectsPerSec} {
		for i, v := range col {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				col[i] = 0
			}
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	return SeriesPrefix + string(b), nil
}

// ParseSeriesLine reads one line produced by Series.Line. Leading text
// before the prefix is allowed (a log collector's timestamp).
func ParseSeriesLine(line string) (Series, error) {
	var s Series
	i := strings.Index(line, SeriesPrefix)
	if i < 0 {
		return s, fmt.Errorf("benchresult: no %q in line", strings.TrimSpace(SeriesPrefix))
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(line[i+len(SeriesPrefix):])), &s); err != nil {
		return s, fmt.Errorf("benchresult: series: %w", err)
	}
	if s.Schema != SchemaVersion {
		return s, fmt.Errorf("benchresult: series schema %d, this operator reads %d", s.Schema, SchemaVersion)
	}
	return s, s.check()
}

// FindSeries returns the last series line of a pod log. ok is false when
// there is none (the run failed before it, or the log was cut).
func FindSeries(logText string) (s Series, ok bool, err error) {
	line, found := lastLineWith(logText, SeriesPrefix)
	if !found {
		return s, false, nil
	}
	s, err = ParseSeriesLine(line)
	return s, err == nil, err
}

// FindSummary returns the summary the runner printed to its log, for when
// the termination message is missing.
func FindSummary(logText string) (s Summary, ok bool, err error) {
	line, found := lastLineWith(logText, SummaryPrefix)
	if !found {
		return s, false, nil
	}
	i := strings.Index(line, SummaryPrefix)
	s, err = Decode([]byte(strings.TrimSpace(line[i+len(SummaryPrefix):])))
	return s, err == nil, err
}

// lastLineWith scans every line: the series line can be long (a 3-hour run
// at 1 s intervals is ~600 KB), so the scanner's buffer grows to 64 MiB.
func lastLineWith(text, prefix string) (string, bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	var last string
	found := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), prefix) {
			last, found = sc.Text(), true
		}
	}
	return last, found
}
