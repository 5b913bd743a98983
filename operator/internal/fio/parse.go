// Package fio builds fio command lines for the Benchmark (preconditioning a
// conventional drive, zoned measurement jobs, the named profiles of a raw
// device benchmark: profiles.go) and parses fio's JSON output into figures
// (results.go).
//
// It is pure: nothing here runs fio. The QEMU test tier (test/qemu) runs the
// commands built here against real null_blk and NVMe ZNS devices and parses
// the output with Parse; testdata/ keeps what those runs printed.
package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Report is fio's --output-format=json document, reduced to what the
// project reads.
type Report struct {
	// Version is fio's own, e.g. "fio-3.33".
	Version string `json:"fio version"`
	// Timestamp is the Unix time at which fio wrote the report.
	Timestamp int64       `json:"timestamp"`
	Jobs      []JobResult `json:"jobs"`
	DiskUtil  []DiskUtil  `json:"disk_util"`
}

// JobResult is one entry of jobs[]: one job, or a whole group under
// group_reporting.
type JobResult struct {
	Name    string `json:"jobname"`
	GroupID int    `json:"groupid"`
	// Error is the errno that stopped the job; 0 when it ran to its end.
	Error int     `json:"error"`
	Read  IOStats `json:"read"`
	Write IOStats `json:"write"`
	Trim  IOStats `json:"trim"`
	// RuntimeMs is job_runtime: how long the job ran, in milliseconds.
	RuntimeMs int64 `json:"job_runtime"`
	// Options are the job's options as fio echoes them ("job options").
	Options map[string]string `json:"job options"`
}

// IOStats is one direction (read, write or trim) of a job.
type IOStats struct {
	IOBytes int64 `json:"io_bytes"`
	// BWBytes is the average bandwidth in bytes per second.
	BWBytes  int64   `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	TotalIOs int64   `json:"total_ios"`
	// RuntimeMs is how long this direction ran, in milliseconds.
	RuntimeMs int64 `json:"runtime"`
	// SubmitLat, CompletionLat and TotalLat are slat_ns, clat_ns and lat_ns.
	SubmitLat     Latency `json:"slat_ns"`
	CompletionLat Latency `json:"clat_ns"`
	TotalLat      Latency `json:"lat_ns"`
}

// Latency is a latency distribution in nanoseconds. Percentiles are present
// only where fio computed them (by default for clat_ns, when any I/O ran).
type Latency struct {
	MinNs    int64   `json:"min"`
	MaxNs    int64   `json:"max"`
	MeanNs   float64 `json:"mean"`
	StddevNs float64 `json:"stddev"`
	N        int64   `json:"N"`
	// Percentiles maps a percentile (99.9) to its latency in ns.
	Percentiles map[float64]int64 `json:"-"`
}

// DiskUtil is one entry of disk_util: what the kernel counted for a device
// while the jobs ran.
type DiskUtil struct {
	Name     string  `json:"name"`
	ReadIOs  int64   `json:"read_ios"`
	WriteIOs int64   `json:"write_ios"`
	Util     float64 `json:"util"`
}

// UnmarshalJSON reads the percentile map, whose keys are fio's
// "%f"-formatted percentiles ("99.900000").
func (l *Latency) UnmarshalJSON(b []byte) error {
	type plain Latency
	var raw struct {
		plain
		Percentile map[string]int64 `json:"percentile"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*l = Latency(raw.plain)
	if len(raw.Percentile) > 0 {
		l.Percentiles = make(map[float64]int64, len(raw.Percentile))
		for k, v := range raw.Percentile {
			p, err := strconv.ParseFloat(k, 64)
			if err != nil || p < 0 || p > 100 {
				return fmt.Errorf("latency percentile key %q is not a percentage", k)
			}
			l.Percentiles[p] = v
		}
	}
	return nil
}

// Percentile returns the latency at percentile p (e.g. 99 or 99.9) in ns.
// ok is false when fio did not report that percentile.
func (l Latency) Percentile(p float64) (ns int64, ok bool) {
	for k, v := range l.Percentiles {
		// keys went through "%f": compare at that precision
		if math.Abs(k-p) < 5e-7 {
			return v, true
		}
	}
	return 0, false
}

// PercentileKeys lists the reported percentiles in increasing order.
func (l Latency) PercentileKeys() []float64 {
	ks := make([]float64, 0, len(l.Percentiles))
	for k := range l.Percentiles {
		ks = append(ks, k)
	}
	sort.Float64s(ks)
	return ks
}

// ErrNoReport means the input holds no fio JSON report.
var ErrNoReport = errors.New("no fio JSON report in the output")

// Parse reads fio's --output-format=json output. fio may print notes on
// stdout before the document (e.g. "note: both iodepth >= 1 and synchronous
// I/O engine are selected"), so parsing starts at the first line that opens
// a JSON object; whatever follows the document is ignored.
func Parse(out []byte) (*Report, error) {
	start := -1
	for i := 0; i < len(out); {
		if out[i] == '{' {
			start = i
			break
		}
		nl := bytes.IndexByte(out[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	if start < 0 {
		return nil, ErrNoReport
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(out[start:]))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("fio JSON report: %w", err)
	}
	if r.Version == "" || r.Jobs == nil {
		return nil, fmt.Errorf("%w: the JSON object has no \"fio version\" or \"jobs\"", ErrNoReport)
	}
	return &r, nil
}

// Err reports the first job that stopped on an error, nil when all ran.
func (r *Report) Err() error {
	for _, j := range r.Jobs {
		if j.Error != 0 {
			return fmt.Errorf("fio job %q failed with errno %d", j.Name, j.Error)
		}
	}
	return nil
}

// Job returns the result of the job named name.
func (r *Report) Job(name string) (JobResult, bool) {
	for _, j := range r.Jobs {
		if j.Name == name {
			return j, true
		}
	}
	return JobResult{}, false
}

// Totals sums bytes, I/Os, bandwidth and IOPS of one direction over all jobs
// (jobs run side by side in a group, so their rates add up). Latencies are
// not summed: read them per job.
func (r *Report) Totals(dir func(JobResult) IOStats) IOStats {
	var t IOStats
	for _, j := range r.Jobs {
		s := dir(j)
		t.IOBytes += s.IOBytes
		t.BWBytes += s.BWBytes
		t.IOPS += s.IOPS
		t.TotalIOs += s.TotalIOs
		t.RuntimeMs = max(t.RuntimeMs, s.RuntimeMs)
	}
	return t
}

// Read, Write and Trim select a direction for Totals.
func Read(j JobResult) IOStats  { return j.Read }
func Write(j JobResult) IOStats { return j.Write }
func Trim(j JobResult) IOStats  { return j.Trim }
