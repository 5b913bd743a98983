package benchresult

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// maximal fills every field with the longest value it can take: names at
// Kubernetes' 253-character limit, the largest numbers, and an error of
// 200 long FATAL lines with multi-byte characters and characters JSON
// escapes (quotes, backslashes, control characters, '<' which Go escapes
// as \u003c).
func maximal() Summary {
	var lines []string
	for i := 0; i < 200; i++ {
		lines = append(lines, `FATAL: mysql_drv_query() returned error 1146 (Table 'sbtest.sbtest2' doesn't exist) for query "SELECT c FROM sbtest2 WHERE id=?" <\x> é 表`+"\t\x01")
	}
	big := math.MaxFloat64
	return Summary{
		Phase: PhaseRun, Target: strings.Repeat("t", 253), Iteration: math.MaxInt32, OK: false,
		Error:           "sysbench run failed: exit status 1\n" + strings.Join(lines, "\n"),
		SysbenchVersion: "1.1.0-df89d34" + strings.Repeat("x", 40), Workload: "oltp_update_non_index",
		Threads: math.MaxInt32, StartTime: "2026-11-21T21:47:00.123456789Z", EndTime: "2026-11-21T23:47:00.123456789Z",
		DurationSec: big, Transactions: math.MaxInt64, TPS: big, QPS: big,
		LatencyAvgMS: big, LatencyPctMS: big, LatencyMaxMS: big, Percentile: 99.999,
		IgnoredErrors: math.MaxInt64, ErrorsPerSec: big, Reconnects: math.MaxInt64, ReconnectsPerSec: big,
		Intervals: math.MaxInt32, TPSRelDevPct: big, LatencyRelDevPct: big, TPSMin: big, TPSMax: big,
		LatencyPctMinMS: big, LatencyPctMaxMS: big, ReportIntervalSec: math.MaxInt32,
		Device: strings.Repeat("d", 255), DeviceWrittenBytes: math.MaxInt64, BytesPerTransaction: big,
		DataBytes: math.MaxInt64, DataBytesSource: "innodb-tablespace", UsableBytes: math.MaxInt64, UsableSource: "statfs",
		RowsExpected: math.MaxInt64, RowsFound: math.MaxInt64,
	}
}

func TestEncodeMaximalFits(t *testing.T) {
	s := maximal()
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxBytes || len(b) >= 4096 {
		t.Fatalf("%d bytes, limit %d", len(b), MaxBytes)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	// Everything but the error survives unchanged.
	want := s
	want.Schema = SchemaVersion
	want.Error = got.Error
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(got.Error, "sysbench run failed: exit status 1\n...\n") {
		t.Errorf("error lost its first line: %.80q", got.Error)
	}
	if !strings.HasSuffix(got.Error, "表\t\x01") || !utf8.ValidString(got.Error) {
		t.Errorf("error lost its end or UTF-8: %q", got.Error[len(got.Error)-40:])
	}
	t.Logf("maximal summary: %d bytes, error kept %d of %d bytes", len(b), len(got.Error), len(s.Error))
}

func TestEncodeRoundTripAndOmission(t *testing.T) {
	s := Summary{Phase: PhaseRun, Target: "tenant-a", Iteration: 2, OK: true, SysbenchVersion: "1.0.20",
		Workload: "oltp_read_write", Threads: 2, DurationSec: 5.0051, Transactions: 963, TPS: 192.35, QPS: 4256.3,
		LatencyAvgMS: 10.39, LatencyPctMS: 19.65, LatencyMaxMS: 1032.4, Percentile: 95,
		IgnoredErrors: 128, ErrorsPerSec: 25.57, Intervals: 5, TPSRelDevPct: 52.1, LatencyRelDevPct: 31.9,
		Device: "nvme0n2", DeviceWrittenBytes: 0, BytesPerTransaction: 0}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	s.Schema = SchemaVersion
	if d := cmp.Diff(s, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// No device sampled: no device keys at all.
	var m map[string]any
	noDev := Summary{Phase: PhaseVerify, OK: true, RowsExpected: 4000, RowsFound: 4000}
	b, _ = noDev.Encode()
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"device", "deviceWrittenBytes", "bytesPerTransaction", "tps", "error"} {
		if _, ok := m[k]; ok {
			t.Errorf("key %q present in %s", k, b)
		}
	}
	if m["rowsFound"] != float64(4000) || m["ok"] != true || m["phase"] != "verify" || m["schema"] != float64(SchemaVersion) {
		t.Errorf("verify summary %s", b)
	}
}

func TestEncodeNonFinite(t *testing.T) {
	s := Summary{Phase: PhaseRun, TPS: math.NaN(), TPSRelDevPct: math.Inf(1), QPS: 3}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil || got.TPS != 0 || got.TPSRelDevPct != 0 || got.QPS != 3 {
		t.Errorf("%s: %+v, %v", b, got, err)
	}
}

func TestEncodeTooLarge(t *testing.T) {
	s := Summary{Phase: PhaseRun, Target: strings.Repeat("x", MaxBytes), Error: "boom"}
	if _, err := s.Encode(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err %v, want ErrTooLarge", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{``, `{`, `{"schema":2,"phase":"run"}`, `{"schema":1,"phase":"warmup"}`, `{"schema":1}`} {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) accepted", in)
		}
	}
}

func TestTrimError(t *testing.T) {
	msg := "headline\nline 1\nline 2\nthe last line"
	if got := TrimError(msg, len(msg)); got != msg {
		t.Errorf("fitting message changed: %q", got)
	}
	got := TrimError(msg, 30)
	if len(got) > 30 || !strings.HasPrefix(got, "headline\n...\n") || !strings.HasSuffix(got, "the last line") {
		t.Errorf("TrimError = %q (%d bytes)", got, len(got))
	}
	long := strings.Repeat("ü", 100) + "\n" + strings.Repeat("é", 100)
	for n := 0; n < 60; n++ {
		if got := TrimError(long, n); len(got) > n || !utf8.ValidString(got) {
			t.Errorf("TrimError(_, %d) = %q", n, got)
		}
	}
}

func TestSeriesLine(t *testing.T) {
	s := Series{Target: "zns-a", Iteration: 1, Percentile: 95, ReportIntervalSec: 5,
		Time: []float64{5, 10}, TPS: []float64{11740.2, 11771.37}, QPS: []float64{70494.16, 70609},
		LatencyMS: []float64{9.73, 9.39}, ErrorsPerSec: []float64{0, 0.2}, ReconnectsPerSec: []float64{0, 0}}
	line, err := s.Line()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(line, SeriesPrefix+"{") || strings.Contains(line, "\n") {
		t.Fatalf("line %q", line)
	}
	log := "sysbench 1.0.20\n[ 5s ] thds: 64 ...\n" + SeriesPrefix + `{"schema":1,"t":[1],"tps":[1],"qps":[1],"lat":[1],"err":[1],"reconn":[1]}` + "\n" +
		summaryLogLine + "\n2026-11-21T21:47:00.1Z stdout F " + line + "\n"
	got, ok, err := FindSeries(log)
	if err != nil || !ok {
		t.Fatalf("FindSeries: %v %v", ok, err)
	}
	s.Schema = SchemaVersion
	if d := cmp.Diff(s, got); d != "" {
		t.Errorf("the last series line (-want +got):\n%s", d)
	}
	sum, ok, err := FindSummary(log)
	if err != nil || !ok || sum.TPS != 12.5 || sum.Phase != PhaseRun {
		t.Errorf("FindSummary: %+v %v %v", sum, ok, err)
	}
	if _, ok, err := FindSeries("no series here\n"); ok || err != nil {
		t.Errorf("no line: %v %v", ok, err)
	}

	bad := s
	bad.TPS = bad.TPS[:1]
	if _, err := bad.Line(); err == nil {
		t.Error("ragged series encoded")
	}
	if _, err := ParseSeriesLine(SeriesPrefix + `{"schema":1,"t":[1,2],"tps":[1],"qps":[1,2],"lat":[1,2],"err":[1,2],"reconn":[1,2]}`); err == nil {
		t.Error("ragged series parsed")
	}
	if _, err := ParseSeriesLine(SeriesPrefix + `{"schema":9,"t":[]}`); err == nil {
		t.Error("foreign schema parsed")
	}
	if _, err := ParseSeriesLine("[ 5s ] thds: 64"); err == nil {
		t.Error("a sysbench line parsed as series")
	}
}

var summaryLogLine = SummaryPrefix + `{"schema":1,"phase":"run","ok":true,"tps":12.5}`

func TestSeriesLineLong(t *testing.T) {
	// Three hours at 1 s: one line of a few hundred KB, still found.
	n := 3 * 3600
	s := Series{Percentile: 95, ReportIntervalSec: 1}
	for i := 1; i <= n; i++ {
		s.Time = append(s.Time, float64(i))
		s.TPS = append(s.TPS, 13782.32)
		s.QPS = append(s.QPS, 82694.12)
		s.LatencyMS = append(s.LatencyMS, 7.98)
		s.ErrorsPerSec = append(s.ErrorsPerSec, 0.08)
		s.ReconnectsPerSec = append(s.ReconnectsPerSec, 0)
	}
	line, err := s.Line()
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := FindSeries("before\n" + line + "\nafter\n")
	if err != nil || !ok || got.Len() != n {
		t.Fatalf("FindSeries: %d points, %v, %v", got.Len(), ok, err)
	}
	t.Logf("3 h at 1 s: %d bytes", len(line))
}
