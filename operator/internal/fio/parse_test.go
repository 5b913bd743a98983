package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

const mib = int64(1) << 20

func load(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseFile(t *testing.T, name string) *Report {
	t.Helper()
	r, err := Parse(load(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// The captures are fio 3.33's output in the QEMU guest (testdata/README.md).
func TestParseCaptures(t *testing.T) {
	tests := []struct {
		file, job, device string
		// direction that did the I/O and how much of it
		dir        func(JobResult) IOStats
		other      func(JobResult) IOStats
		bytes, ios int64
	}{
		// 2 zones of 64 MiB, all writable
		{"zbd-seqwrite-nullb0.json", "zoned-seqwrite", "nullb0", Write, Read, 128 * mib, 1024},
		// 2 zones of 64 MiB, 60 MiB writable each: fio stopped at zone capacity
		{"zbd-seqwrite-nvme0n1.json", "zoned-seqwrite", "nvme0n1", Write, Read, 120 * mib, 960},
		// the 64 MiB conventional device, twice
		{"precondition-nullb1.json", "precondition", "nullb1", Write, Read, 2 * 64 * mib, 1024},
		// time-based: whatever 1 s of 4 KiB reads gave
		{"zbd-randread-nullb0.json", "zoned-randread", "nullb0", Read, Write, -1, -1},
		// a device precondition's pass: the whole 512 MiB conventional device once, in 128 KiB writes
		{"precondition-pass-nullb20.json", "precondition-pass", "nullb20", Write, Read, 512 * mib, 4096},
		// and a round: whatever 5 s of random 4 KiB writes over it gave
		{"precondition-round-nullb20.json", "precondition-round", "nullb20", Write, Read, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := parseFile(t, tt.file)
			if r.Version != "fio-3.33" || r.Timestamp < 1.7e9 || len(r.Jobs) != 1 {
				t.Fatalf("version %q, timestamp %d, %d jobs", r.Version, r.Timestamp, len(r.Jobs))
			}
			j, ok := r.Job(tt.job)
			if !ok || j.Name != tt.job || j.Error != 0 || j.RuntimeMs <= 0 {
				t.Fatalf("job %q: %+v", tt.job, j)
			}
			s := tt.dir(j)
			if tt.bytes >= 0 && (s.IOBytes != tt.bytes || s.TotalIOs != tt.ios) {
				t.Errorf("%d bytes in %d I/Os, want %d in %d", s.IOBytes, s.TotalIOs, tt.bytes, tt.ios)
			}
			if s.IOBytes <= 0 || s.TotalIOs <= 0 || s.RuntimeMs <= 0 || s.IOPS <= 0 || s.BWBytes <= 0 {
				t.Fatalf("stats %+v", s)
			}
			// fio's bandwidth and IOPS are bytes and I/Os over the runtime
			if bw := float64(s.IOBytes) * 1000 / float64(s.RuntimeMs); math.Abs(bw-float64(s.BWBytes)) > bw/100 {
				t.Errorf("bw_bytes %d, io_bytes/runtime %.0f", s.BWBytes, bw)
			}
			if iops := float64(s.TotalIOs) * 1000 / float64(s.RuntimeMs); math.Abs(iops-s.IOPS) > iops/100 {
				t.Errorf("iops %.1f, total_ios/runtime %.1f", s.IOPS, iops)
			}
			c := s.CompletionLat
			if c.N != s.TotalIOs || c.MinNs <= 0 || c.MinNs > c.MaxNs || c.MeanNs < float64(c.MinNs) || c.MeanNs > float64(c.MaxNs) {
				t.Errorf("clat %+v", c)
			}
			keys := c.PercentileKeys()
			if len(keys) != 17 || keys[0] != 1 || keys[16] != 99.99 {
				t.Errorf("percentiles %v", keys)
			}
			prev := int64(0)
			for _, k := range keys {
				v, ok := c.Percentile(k)
				if !ok || v < prev || v < c.MinNs/2 {
					t.Errorf("p%v = %d (%v) after %d", k, v, ok, prev)
				}
				prev = v
			}
			if _, ok := c.Percentile(99.9); !ok {
				t.Error("no p99.9")
			}
			if _, ok := c.Percentile(42); ok {
				t.Error("p42 reported though fio did not compute it")
			}
			if s.TotalLat.MeanNs < c.MeanNs || s.TotalLat.N != c.N {
				t.Errorf("lat %+v shorter than clat %+v", s.TotalLat, c)
			}
			if o := tt.other(j); o.IOBytes != 0 || o.TotalIOs != 0 || o.CompletionLat.Percentiles != nil {
				t.Errorf("the other direction did I/O: %+v", o)
			}
			if len(r.DiskUtil) != 1 || r.DiskUtil[0].Name != tt.device || r.DiskUtil[0].ReadIOs+r.DiskUtil[0].WriteIOs <= 0 {
				t.Errorf("disk_util %+v", r.DiskUtil)
			}
			if j.Options["filename"] != "/dev/"+tt.device {
				t.Errorf("job options %v", j.Options)
			}
		})
	}
}

// fio can print notes on stdout before the JSON document.
func TestParseSkipsLeadingNotes(t *testing.T) {
	b := load(t, "zbd-seqwrite-nullb0.json")
	noted := append([]byte("note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n"), b...)
	noted = append(noted, "\nfio: some trailing line\n"...)
	r, err := Parse(noted)
	if err != nil {
		t.Fatal(err)
	}
	want := parseFile(t, "zbd-seqwrite-nullb0.json")
	if r.Jobs[0].Write.IOBytes != want.Jobs[0].Write.IOBytes {
		t.Errorf("parsed %+v", r.Jobs[0].Write)
	}
}

func TestParseRejects(t *testing.T) {
	b := load(t, "zbd-seqwrite-nullb0.json")
	for name, in := range map[string][]byte{
		"empty":     nil,
		"text":      []byte("fio: failed to open /dev/nullb0: No such file or directory\n"),
		"truncated": b[:len(b)/2],
		"not fio":   []byte(`{"jobs": []}`),
		"bad key":   bytes.Replace(b, []byte(`"99.000000"`), []byte(`"ninety-nine"`), 1),
	} {
		t.Run(name, func(t *testing.T) {
			r, err := Parse(in)
			if err == nil {
				t.Fatalf("parsed %+v", r)
			}
			noReport := name == "empty" || name == "text" || name == "not fio"
			if errors.Is(err, ErrNoReport) != noReport {
				t.Errorf("err %v: ErrNoReport = %v, want %v", err, errors.Is(err, ErrNoReport), noReport)
			}
		})
	}
}

// jobsEdited decodes a capture generically, lets edit change its jobs and
// returns the re-encoded document: real output with one thing changed.
func jobsEdited(t *testing.T, name string, edit func(jobs []any) []any) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(load(t, name), &doc); err != nil {
		t.Fatal(err)
	}
	doc["jobs"] = edit(doc["jobs"].([]any))
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReportErr(t *testing.T) {
	b := jobsEdited(t, "zbd-seqwrite-nvme0n1.json", func(jobs []any) []any {
		jobs[0].(map[string]any)["error"] = 5 // EIO
		return jobs
	})
	r, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), `"zoned-seqwrite" failed with errno 5`) {
		t.Errorf("Err() = %v", err)
	}
}

func TestTotals(t *testing.T) {
	b := jobsEdited(t, "zbd-seqwrite-nullb0.json", func(jobs []any) []any {
		var second map[string]any
		raw, _ := json.Marshal(jobs[0])
		_ = json.Unmarshal(raw, &second)
		second["jobname"] = "second"
		w := second["write"].(map[string]any)
		w["runtime"] = w["runtime"].(float64) + 100
		return append(jobs, second)
	})
	r, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	one := r.Jobs[0].Write
	tot := r.Totals(Write)
	if tot.IOBytes != 2*one.IOBytes || tot.TotalIOs != 2*one.TotalIOs || tot.BWBytes != 2*one.BWBytes ||
		tot.IOPS != 2*one.IOPS || tot.RuntimeMs != one.RuntimeMs+100 {
		t.Errorf("totals %+v of two jobs like %+v", tot, one)
	}
	if rt := r.Totals(Read); rt.IOBytes != 0 {
		t.Errorf("read totals %+v", rt)
	}
	if _, ok := r.Job("second"); !ok {
		t.Error("Job(second) not found")
	}
	if _, ok := r.Job("third"); ok {
		t.Error("Job(third) found")
	}
}

// The job options fio echoes in each capture are the arguments this
// package built for that run: the builder and the real runs agree.
func TestCapturedOptionsMatchBuilder(t *testing.T) {
	for file, job := range map[string]Job{
		"zbd-seqwrite-nullb0.json":        ZonedSeqWrite("/dev/nullb0", 0, 128*mib),
		"zbd-seqwrite-nvme0n1.json":       ZonedSeqWrite("/dev/nvme0n1", 0, 128*mib),
		"zbd-randread-nullb0.json":        ZonedRandRead("/dev/nullb0", 0, 128*mib, 1e9),
		"precondition-nullb1.json":        Precondition("/dev/nullb1"),
		"precondition-pass-nullb20.json":  WholeDevicePass("/dev/nullb20", DefaultBlockSize),
		"precondition-round-nullb20.json": RandomRound("/dev/nullb20", 5e9),
	} {
		t.Run(file, func(t *testing.T) {
			args, err := job.Args()
			if err != nil {
				t.Fatal(err)
			}
			opts := parseFile(t, file).Jobs[0].Options
			var flags []string
			for _, a := range args {
				k, v, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if k == "output-format" {
					continue // a command-line option, not the job's
				}
				if !hasValue {
					flags = append(flags, k) // fio does not echo flags
					continue
				}
				if opts[k] != v {
					t.Errorf("%s: fio ran with %q, the builder says %q", k, opts[k], v)
				}
				delete(opts, k)
			}
			if len(opts) != 0 {
				t.Errorf("fio ran with options the builder does not set: %v", opts)
			}
			if slices.Contains(flags, "time_based") != job.TimeBased {
				t.Errorf("flags %v", flags)
			}
		})
	}
}
