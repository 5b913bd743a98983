package fio

import (
	"strings"
	"testing"
	"time"
)

// captureSteps rebuilds the steps TestCaptureProfiles ran (capture_test.go), on the device name the captures
// were made on, so that the captures are checked against the builder of today.
func captureSteps(t *testing.T) map[string]Step {
	t.Helper()
	g := Grid{RW: RandRead, BlockSizes: []int64{4 << 10}, NumJobs: []int{1, 2}, IODepths: []int{8}}
	steps, err := Plan(Device{Path: "/dev/loop1", SizeBytes: 256 * mib}, Profiles,
		Bounds{Runtime: 2 * time.Second, SpanBytes: 128 * mib, WriteRateBytes: 16 * mib}, g)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Step{}
	for _, s := range steps {
		name := "profile-" + string(s.Profile)
		if s.Point != "" {
			name += "-" + strings.ReplaceAll(strings.ReplaceAll(s.Point, "=", ""), " ", "-")
		}
		out[name+".json"] = s
	}
	return out
}

// Every profile's real output (fio 3.33 on a loop device, testdata/README.md) gives figures in the direction
// it did I/O in, and none in the other.
func TestResultsOfCaptures(t *testing.T) {
	steps := captureSteps(t)
	if len(steps) != 6 {
		t.Fatalf("%d capture steps", len(steps))
	}
	for file, s := range steps {
		t.Run(file, func(t *testing.T) {
			res, err := ResultOf(s, load(t, file))
			if err != nil {
				t.Fatal(err)
			}
			if res.Profile != s.Profile || res.Point != s.Point {
				t.Errorf("result of %s %s", res.Profile, res.Point)
			}
			wantRead := s.Profile != ProfileSeqWriteOpenZones
			wantWrite := s.Writes
			if (res.Read != nil) != wantRead || (res.Write != nil) != wantWrite {
				t.Fatalf("read %+v, write %+v", res.Read, res.Write)
			}
			for _, d := range []*Direction{res.Read, res.Write} {
				if d == nil {
					continue
				}
				if d.Bytes <= 0 || d.BWBytes <= 0 || d.IOPS <= 0 {
					t.Errorf("rates %+v", d)
				}
				// percentiles are in order: p50 <= p99 <= p99.9, all reported
				if d.P50Ns <= 0 || d.P50Ns > d.P99Ns || d.P99Ns > d.P999Ns {
					t.Errorf("percentiles %+v", d)
				}
			}
		})
	}
}

// The write profile's 8 writers wrote their 16 MiB shares exactly (the span, in 128 KiB writes) and are one entry.
func TestSeqWriteCapture(t *testing.T) {
	r := parseFile(t, "profile-seqwrite-open-zones.json")
	if len(r.Jobs) != 1 || r.Jobs[0].Options["numjobs"] != "8" {
		t.Fatalf("%d jobs, options %v", len(r.Jobs), r.Jobs[0].Options)
	}
	_, w := Summarize(r)
	if w.Bytes != 128*mib {
		t.Errorf("wrote %d bytes, want the 128 MiB span", w.Bytes)
	}
}

// The reader and the writer of the mixed profile are reported apart (new_group), and the writer kept to its
// rate: what it wrote over its runtime is at most the cap (fio's rate limit is an average over the run).
func TestReadUnderWritesCapture(t *testing.T) {
	r := parseFile(t, "profile-randread-rate-limited-writes.json")
	rd, okR := r.Job("reader")
	wr, okW := r.Job("writer")
	if !okR || !okW || len(r.Jobs) != 2 || rd.GroupID == wr.GroupID {
		t.Fatalf("jobs %d, reader %v group %d, writer %v group %d", len(r.Jobs), okR, rd.GroupID, okW, wr.GroupID)
	}
	if rd.Write.TotalIOs != 0 || wr.Read.TotalIOs != 0 {
		t.Errorf("the reader wrote or the writer read: %+v %+v", rd.Write, wr.Read)
	}
	rate := float64(16 * mib)
	if got := float64(wr.Write.IOBytes) * 1000 / float64(wr.Write.RuntimeMs); got > rate*1.05 {
		t.Errorf("writer at %.0f B/s, above its cap of %.0f", got, rate)
	}
	read, write := Summarize(r)
	if read.Bytes != rd.Read.IOBytes || write.Bytes != wr.Write.IOBytes {
		t.Errorf("summary %+v %+v", read, write)
	}
	p999, _ := rd.Read.CompletionLat.Percentile(99.9)
	if read.P999Ns != p999 {
		t.Errorf("read p99.9 %d, the reader's %d", read.P999Ns, p999)
	}
}

// What fio echoed under "job options" is what the builder asked for, job by job.
func TestProfileCapturesMatchBuilder(t *testing.T) {
	for file, s := range captureSteps(t) {
		t.Run(file, func(t *testing.T) {
			r := parseFile(t, file)
			// split the argv at each --name: one job each
			var jobs [][]string
			for _, a := range s.Args {
				if strings.HasPrefix(a, "--name=") {
					jobs = append(jobs, nil)
				}
				if len(jobs) > 0 {
					jobs[len(jobs)-1] = append(jobs[len(jobs)-1], a)
				}
			}
			if len(jobs) != len(r.Jobs) {
				t.Fatalf("%d jobs built, %d reported", len(jobs), len(r.Jobs))
			}
			for i, args := range jobs {
				opts := map[string]string{}
				for k, v := range r.Jobs[i].Options {
					opts[k] = v
				}
				for _, a := range args {
					k, v, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
					if !hasValue {
						continue // fio does not echo flags
					}
					if k == "name" {
						if r.Jobs[i].Name != v {
							t.Errorf("job %d is %q, built %q", i, r.Jobs[i].Name, v)
						}
					} else if opts[k] != v {
						t.Errorf("job %d %s: fio ran with %q, the builder says %q", i, k, opts[k], v)
					}
					delete(opts, k)
				}
				if len(opts) != 0 {
					t.Errorf("job %d ran with options the builder does not set: %v", i, opts)
				}
			}
		})
	}
}

// A zoned read of empty zones does no I/O: ResultOf says so rather than reporting zeros.
func TestResultOfNoIO(t *testing.T) {
	b := load(t, "profile-randread-4k.json")
	// the same real report with its I/O counts zeroed, as fio prints for a read of empty zones
	s := strings.ReplaceAll(string(b), `"total_ios" : `, `"total_ios" : 0, "x" : `)
	if _, err := ResultOf(Step{Profile: ProfileRandRead4K}, []byte(s)); err == nil || !strings.Contains(err.Error(), "did no I/O") {
		t.Errorf("ResultOf = %v", err)
	}
	if _, err := ResultOf(Step{}, []byte("fio: pid=1, err=16/file:filesetup.c:805, func=open(/dev/nullb0), error=Device or resource busy\n")); err == nil {
		t.Error("an error with no report parsed")
	}
}
