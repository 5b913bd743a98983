package sysbench

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Bucket is one line of sysbench's --histogram output: the bucket's latency value in milliseconds and how many
// events fell into it. sysbench prints only non-empty buckets.
type Bucket struct {
	ValueMS float64 `json:"ms"`
	Count   int64   `json:"n"`
}

// Histogram is the latency distribution of a whole run, as sysbench 1.0 prints it with --histogram=on
// ("Latency histogram (values are in milliseconds)"), in ascending order of value.
type Histogram []Bucket

// Events is the number of events the histogram counts.
func (h Histogram) Events() int64 {
	var n int64
	for _, b := range h {
		n += b.Count
	}
	return n
}

// Percentile is the latency at percentile p (0 < p <= 100) as sysbench computes it from the same buckets: the
// value of the first bucket at which the cumulative count reaches p% of the events (rounded to the nearest
// event). ok is false for an empty histogram or a p out of range.
func (h Histogram) Percentile(p float64) (float64, bool) {
	total := h.Events()
	if total == 0 || p <= 0 || p > 100 {
		return 0, false
	}
	want := int64(math.Floor(float64(total)*p/100 + 0.5))
	var seen int64
	for _, b := range h {
		seen += b.Count
		if seen >= want {
			return b.ValueMS, true
		}
	}
	return h[len(h)-1].ValueMS, true
}

// histogramHeader starts the block; the next line is the column header, then one line per bucket, ended by a
// blank line.
const histogramHeader = "Latency histogram (values are in milliseconds)"

var bucketRE = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?) \|\**\s+(\d+)$`)

// histogramLine consumes the lines of the histogram block; it returns false for any other line.
func (p *Parser) histogramLine(line string) bool {
	trimmed := strings.TrimSpace(line)
	if trimmed == histogramHeader {
		p.inHistogram = true
		p.res.Histogram = nil
		return true
	}
	if !p.inHistogram {
		return false
	}
	if strings.HasPrefix(trimmed, "value") && strings.Contains(trimmed, "distribution") {
		return true
	}
	m := bucketRE.FindStringSubmatch(strings.TrimRight(line, "\r\n "))
	if m == nil {
		p.inHistogram = false // a blank line (or anything else) ends it
		return trimmed == ""
	}
	v, err1 := strconv.ParseFloat(m[1], 64)
	n, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil {
		p.badLines = append(p.badLines, line)
		return true
	}
	p.res.Histogram = append(p.res.Histogram, Bucket{ValueMS: v, Count: n})
	return true
}
