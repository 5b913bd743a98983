package benchresult

import (
	"math"
	"strconv"
	"strings"
)

// A run's series is kept in a ConfigMap as series.json and series.csv, and the API server refuses a ConfigMap
// whose data passes 1 MiB: a day at 1 s intervals (86400 of them, which the Benchmark API admits) is several
// MB. Fit bounds what is kept by a number of points computed from the longest text a point can take, so that
// the bound holds for any figures, not only for sysbench's usual two decimals:
//
//   - a number is at most 25 bytes in either format: encoding/json writes 1e-6 <= |x| < 1e21 in plain
//     notation, the longest being a negative 17-digit value just above 1e-6 ("-0.0000012345678901234567");
//     %g switches to exponent notation sooner and stays at or below 24 ("-1.2345678901234567e+308");
//     a separator (a comma, or the CSV line's newline) makes it maxNumberBytes;
//   - a point as the runner printed it has rawColumns numbers, once in JSON and once in CSV:
//     2 x 6 x 26 = 312 bytes at most;
//   - a downsampled point has downsampledColumns numbers (t, the five means, their minimums and maximums):
//     2 x 16 x 26 = 832 bytes at most.
//
// seriesBudgetBytes, three quarters of the limit, leaves a quarter for the fixed text (keys, names, the CSV
// header: well under 1 KiB) and spare: MaxRawIntervals = 786432 / 312 = 2520 intervals are kept as they
// are (42 minutes at 1 s, 3.5 hours at sysbench's usual 5 s); a longer series becomes MaxBuckets = 786432 /
// 832 = 945 buckets, at most. With sysbench's two decimals a point takes a third of its bound, so the kept
// data of a day-long run is typically under 300 KB.
const (
	// ConfigMapLimitBytes is the API server's limit on a ConfigMap's data, keys and values together.
	ConfigMapLimitBytes = 1 << 20
	seriesBudgetBytes   = ConfigMapLimitBytes / 4 * 3
	maxNumberBytes      = 26
	rawColumns          = 6
	downsampledColumns  = 16
	// MaxRawIntervals is the longest series kept interval by interval.
	MaxRawIntervals = seriesBudgetBytes / (2 * rawColumns * maxNumberBytes)
	// MaxBuckets is the most points a longer series is downsampled to.
	MaxBuckets = seriesBudgetBytes / (2 * downsampledColumns * maxNumberBytes)
)

// Fit is the series as a ConfigMap keeps it: s itself up to MaxRawIntervals intervals, Downsample(s,
// MaxBuckets) beyond. The run's figures (status) never come from it: they are the runner's summary of the
// whole run.
func Fit(s Series) Series {
	if s.Len() <= MaxRawIntervals {
		return s
	}
	return Downsample(s, MaxBuckets)
}

// Downsample cuts s into at most buckets runs of equal length (the last may be shorter) of consecutive
// intervals: t is the end of each bucket, the other columns the bucket's mean, and the Min and Max columns its
// extremes. A series of at most buckets intervals, or one already downsampled, is returned as it is: a series
// is downsampled once, from the runner's own intervals.
func Downsample(s Series, buckets int) Series {
	n := s.Len()
	if buckets < 1 || n <= buckets || s.Downsampled || s.check() != nil {
		return s
	}
	per := (n + buckets - 1) / buckets
	out := Series{Schema: s.Schema, Target: s.Target, Iteration: s.Iteration, Percentile: s.Percentile,
		ReportIntervalSec: s.ReportIntervalSec, Downsampled: true, SourceIntervals: n, BucketIntervals: per}
	type column struct {
		src             []float64
		mean, low, high *[]float64
	}
	cols := []column{
		{s.TPS, &out.TPS, &out.TPSMin, &out.TPSMax},
		{s.QPS, &out.QPS, &out.QPSMin, &out.QPSMax},
		{s.LatencyMS, &out.LatencyMS, &out.LatencyMinMS, &out.LatencyMaxMS},
		{s.ErrorsPerSec, &out.ErrorsPerSec, &out.ErrorsPerSecMin, &out.ErrorsPerSecMax},
		{s.ReconnectsPerSec, &out.ReconnectsPerSec, &out.ReconnectsPerSecMin, &out.ReconnectsPerSecMax},
	}
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		out.Time = append(out.Time, s.Time[end-1])
		for _, c := range cols {
			sum, low, high := 0.0, math.Inf(1), math.Inf(-1)
			k := float64(end - start)
			for _, v := range c.src[start:end] {
				sum += v / k // divided first, so that no sum of huge figures overflows to +Inf (JSON has no Inf)
				low, high = min(low, v), max(high, v)
			}
			*c.mean = append(*c.mean, sum)
			*c.low = append(*c.low, low)
			*c.high = append(*c.high, high)
		}
	}
	return out
}

// extremes are the Min and Max columns by their JSON names.
func (s Series) extremes() map[string][]float64 {
	return map[string][]float64{
		"tpsMin": s.TPSMin, "tpsMax": s.TPSMax, "qpsMin": s.QPSMin, "qpsMax": s.QPSMax,
		"latMin": s.LatencyMinMS, "latMax": s.LatencyMaxMS, "errMin": s.ErrorsPerSecMin, "errMax": s.ErrorsPerSecMax,
		"reconnMin": s.ReconnectsPerSecMin, "reconnMax": s.ReconnectsPerSecMax,
	}
}

// CSVColumns name the columns of series.csv; a downsampled series adds DownsampledCSVColumns.
var (
	CSVColumns            = []string{"time_s", "tps", "qps", "latency_ms", "errors_per_s", "reconnects_per_s"}
	DownsampledCSVColumns = []string{"tps_min", "tps_max", "qps_min", "qps_max", "latency_min_ms", "latency_max_ms",
		"errors_per_s_min", "errors_per_s_max", "reconnects_per_s_min", "reconnects_per_s_max"}
)

// CSVHeader is the header line of series.csv for a series as the runner printed it.
var CSVHeader = strings.Join(CSVColumns, ",")

// CSV renders s with a header line, one line per point, numbers as %g writes them.
func (s Series) CSV() string {
	header := CSVColumns
	cols := [][]float64{s.TPS, s.QPS, s.LatencyMS, s.ErrorsPerSec, s.ReconnectsPerSec}
	if s.Downsampled {
		header = append(append([]string(nil), CSVColumns...), DownsampledCSVColumns...)
		cols = append(cols, s.TPSMin, s.TPSMax, s.QPSMin, s.QPSMax, s.LatencyMinMS, s.LatencyMaxMS,
			s.ErrorsPerSecMin, s.ErrorsPerSecMax, s.ReconnectsPerSecMin, s.ReconnectsPerSecMax)
	}
	var b strings.Builder
	b.WriteString(strings.Join(header, ",") + "\n")
	var buf []byte
	for i := range s.Time {
		buf = strconv.AppendFloat(buf[:0], s.Time[i], 'g', -1, 64)
		for _, c := range cols {
			buf = append(buf, ',')
			if i < len(c) {
				buf = strconv.AppendFloat(buf, c[i], 'g', -1, 64)
			}
		}
		b.Write(append(buf, '\n'))
	}
	return b.String()
}
