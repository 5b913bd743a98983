package fio

import "fmt"

// Direction is what one fio run did in one direction (read or write):
// throughput, IOPS and completion latency percentiles.
type Direction struct {
	Bytes int64 `json:"bytes"`
	// BWBytes is bytes per second, IOPS I/Os per second.
	BWBytes int64   `json:"bwBytes"`
	IOPS    float64 `json:"iops"`
	// P50Ns, P99Ns and P999Ns are completion latency percentiles (clat) in
	// ns: the device's answer time, without fio's own submission. 0 where fio
	// reported none.
	P50Ns  int64 `json:"p50Ns,omitempty"`
	P99Ns  int64 `json:"p99Ns,omitempty"`
	P999Ns int64 `json:"p999Ns,omitempty"`
}

// Result is one step's figures; Read or Write is nil when the run did no I/O
// in that direction.
type Result struct {
	Profile Profile    `json:"profile"`
	Point   string     `json:"point,omitempty"`
	Read    *Direction `json:"read,omitempty"`
	Write   *Direction `json:"write,omitempty"`
}

// Summarize reduces one fio report to its figures per direction. Rates add up
// over the jobs that did I/O in a direction (they ran side by side); a
// percentile is the highest of those jobs' (a job's percentiles cannot be
// merged with another's without their histograms, and the worse one is the
// one a reader of the tail wants). A job with clones is one entry already
// (group_reporting).
func Summarize(r *Report) (read, write *Direction) {
	return summarize(r, Read), summarize(r, Write)
}

func summarize(r *Report, dir func(JobResult) IOStats) *Direction {
	var d *Direction
	for _, j := range r.Jobs {
		s := dir(j)
		if s.TotalIOs == 0 {
			continue
		}
		if d == nil {
			d = &Direction{}
		}
		d.Bytes += s.IOBytes
		d.BWBytes += s.BWBytes
		d.IOPS += s.IOPS
		for _, p := range []struct {
			pct float64
			to  *int64
		}{{50, &d.P50Ns}, {99, &d.P99Ns}, {99.9, &d.P999Ns}} {
			if v, ok := s.CompletionLat.Percentile(p.pct); ok && v > *p.to {
				*p.to = v
			}
		}
	}
	return d
}

// ResultOf parses one step's fio output into its Result; a job that stopped
// on an error is an error.
func ResultOf(s Step, out []byte) (Result, error) {
	r, err := Parse(out)
	if err != nil {
		return Result{}, err
	}
	if err := r.Err(); err != nil {
		return Result{}, err
	}
	read, write := Summarize(r)
	if read == nil && write == nil {
		return Result{}, fmt.Errorf("fio did no I/O in %s %s (on a zoned device, reads find nothing below the write pointers of empty zones)", s.Profile, s.Point)
	}
	return Result{Profile: s.Profile, Point: s.Point, Read: read, Write: write}, nil
}
