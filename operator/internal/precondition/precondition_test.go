package precondition

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/steadystate"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func TestArgsReadBack(t *testing.T) {
	for _, p := range []Plan{
		DefaultPlan(),
		{Enabled: true, Passes: 0, BlockSize: 1 << 20, Rounds: 4, RoundSeconds: 5,
			Rule: steadystate.Rule{Window: 3, RangePct: 12.5, ExcursionPct: 7}},
	} {
		var back Plan
		fs := flag.NewFlagSet("format", flag.ContinueOnError)
		back.RegisterFlags(fs)
		if err := fs.Parse(p.Args()); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, p) {
			t.Errorf("%q read back as %+v, want %+v", p.Args(), back, p)
		}
	}
	if args := (Plan{}).Args(); args != nil {
		t.Errorf("a plan not asked for has arguments %q", args)
	}
	// No flag at all: nothing asked for, whatever the defaults say.
	var none Plan
	fs := flag.NewFlagSet("format", flag.ContinueOnError)
	none.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil || none.Enabled || none.Validate() != nil {
		t.Errorf("no flags: %+v, %v", none, err)
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultPlan().Validate(); err != nil {
		t.Errorf("the default plan: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*Plan)
		says string
	}{
		{"nothing to write", func(p *Plan) { p.Passes = 0 }, "write nothing"},
		{"too many passes", func(p *Plan) { p.Passes = 11 }, "11 sequential passes"},
		{"block size below 4 KiB", func(p *Plan) { p.BlockSize = 2048 }, "block size 2048"},
		{"block size not a multiple of 4 KiB", func(p *Plan) { p.BlockSize = 6 << 10 }, "block size 6144"},
		{"block size above 16 MiB", func(p *Plan) { p.BlockSize = 32 << 20 }, "block size"},
		{"too many rounds", func(p *Plan) { p.Rounds = 21 }, "21 random rounds"},
		{"short rounds", func(p *Plan) { p.Rounds, p.RoundSeconds = 5, 1 }, "rounds of 1 s"},
		{"window longer than the rounds", func(p *Plan) { p.Rounds = 3 }, "window of 5 rounds is longer than the 3"},
		{"window of one round", func(p *Plan) { p.Rounds, p.Rule.Window = 5, 1 }, "Window is 1"},
	} {
		p := DefaultPlan()
		c.edit(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.says)
		}
	}
	// Rounds 0 with any window: the rule is never used, so it is not judged.
	p := DefaultPlan()
	p.Rule.Window = 50
	if err := p.Validate(); err != nil {
		t.Errorf("no rounds, window 50: %v", err)
	}
}

func report(t *testing.T, path string) *fio.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := fio.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeReport is a report of one job that wrote bytes in ms at iops, as fio's JSON has it.
func writeReport(bytes, ms int64, iops float64) *fio.Report {
	return &fio.Report{Version: "fio-3.33", Jobs: []fio.JobResult{{Name: "precondition-round",
		Write: fio.IOStats{IOBytes: bytes, RuntimeMs: ms, IOPS: iops}}}}
}

// TestPassesOfARealRun: fio's real output of writing a 64 MiB null_blk device (fio/testdata; that run wrote it
// twice in one job).
func TestPassesOfARealRun(t *testing.T) {
	rep := report(t, "../fio/testdata/precondition-nullb1.json")
	r := Start(DefaultPlan(), 64<<20, t0)
	f, err := r.AddPass(rep)
	if err != nil {
		t.Fatal(err)
	}
	if f.Bytes != 134217728 || f.Seconds != 0.475 || f.MBps != 282.6 {
		t.Errorf("pass figures %+v; want 134217728 bytes in 0.475 s, 282.6 MB/s", f)
	}
	// The same report for a device of 1 GiB did not write the whole device.
	if _, err := Start(DefaultPlan(), 1<<30, t0).AddPass(rep); err == nil || !strings.Contains(err.Error(), "134217728 bytes of the device's 1073741824") {
		t.Errorf("a pass short of the device: %v", err)
	}
	// The last partial block is what fio cannot write.
	if _, err := Start(DefaultPlan(), 134217728+4096, t0).AddPass(rep); err != nil {
		t.Errorf("a device with a partial last block: %v", err)
	}
	failed := *rep
	failed.Jobs = append([]fio.JobResult(nil), rep.Jobs...)
	failed.Jobs[0].Error = 5
	if _, err := Start(DefaultPlan(), 64<<20, t0).AddPass(&failed); err == nil || !strings.Contains(err.Error(), "errno 5") {
		t.Errorf("a failed fio job: %v", err)
	}
	if _, err := Start(DefaultPlan(), 64<<20, t0).AddPass(writeReport(0, 0, 0)); err == nil {
		t.Error("a pass that wrote nothing was recorded")
	}
}

// TestRoundsOfARealSeries: the real, never steady series of fio random-write rounds that package steadystate
// keeps (its testdata/README.md): all 20 rounds run, and the verdict says the rule never held.
func TestRoundsOfARealSeries(t *testing.T) {
	p := DefaultPlan()
	p.Rounds = 20
	r := Start(p, 1<<30, t0)
	for i := 1; i <= 20; i++ {
		f, done, err := r.AddRound(report(t, filepath.Join("../steadystate/testdata/fio-randwrite", fmt.Sprintf("round-%02d.json", i))))
		if err != nil {
			t.Fatal(err)
		}
		if done != (i == 20) {
			t.Fatalf("round %d: done %v", i, done)
		}
		if i == 1 && (f.WriteIOPS != 32851.9 || f.Bytes != 673210368 || f.Seconds != 5.003) {
			t.Errorf("round 1 figures %+v; the README has 32852 write IOPS over 5 s", f)
		}
	}
	s := r.Finish(t0.Add(110 * time.Second))
	if !s.Complete || s.SteadyState || !strings.HasPrefix(s.SteadyReason, "not steady after 20 rounds: rounds 16-20: range 47.6%") {
		t.Errorf("state %+v", s)
	}
	if len(s.Rounds) != 20 || s.RoundsAsked != 20 || len(s.Passes) != 0 {
		t.Errorf("rounds %d of %d, passes %d", len(s.Rounds), s.RoundsAsked, len(s.Passes))
	}
}

// TestRoundsStopAtSteadyState: the rounds end with the first window the rule accepts.
func TestRoundsStopAtSteadyState(t *testing.T) {
	p := DefaultPlan()
	p.Rounds, p.Rule.Window = 6, 3
	r := Start(p, 1<<30, t0)
	var got []bool
	for _, iops := range []float64{400, 1000, 1010, 990} {
		_, done, err := r.AddRound(writeReport(int64(iops*4096*5), 5000, iops))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, done)
	}
	if !reflect.DeepEqual(got, []bool{false, false, false, true}) {
		t.Errorf("done after each round %v; want only after the 4th (1000, 1010, 990)", got)
	}
	s := r.Finish(t0.Add(time.Minute))
	if !s.SteadyState || s.SteadyReason != "steady over rounds 2-4: range 2.0% (limit 20%), excursion 1.0% (limit 10%) of the average, 1000 write IOPS" {
		t.Errorf("state %+v", s)
	}
	sum := Summary(s)
	for _, want := range []string{"wrote 69.63 MB in 1m0s", "4 random round(s)", "the last at 990 write IOPS", "steady state reached"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q does not say %q", sum, want)
		}
	}
}

func TestSummaryAndFailure(t *testing.T) {
	r := Start(DefaultPlan(), 3840e9, t0)
	for _, s := range []int64{1280, 1290} {
		if _, err := r.AddPass(writeReport(3840e9, s*1000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	done := r.Finish(t0.Add(43 * time.Minute))
	if got := Summary(done); got != "wrote 7.68 TB in 43m0s; 2 sequential pass(es) over the whole device at 3000.0, "+
		"2976.7 MB/s; no random rounds asked for, so no steady-state verdict" {
		t.Errorf("summary %q", got)
	}
	if WrittenBytes(done) != 7680e9 {
		t.Errorf("written %d", WrittenBytes(done))
	}
	failed := Start(DefaultPlan(), 3840e9, t0)
	if _, err := failed.AddPass(writeReport(3840e9, 1280000, 0)); err != nil {
		t.Fatal(err)
	}
	s := failed.Fail(t0.Add(30*time.Minute), fmt.Errorf("pass 2: fio: signal: killed"))
	if s.Complete || len(s.Passes) != 1 || !strings.Contains(s.Note, "stopped: pass 2: fio: signal: killed") {
		t.Errorf("a failed precondition: %+v", s)
	}
}

// TestRealDevicePassAndRound: fio's output of this package's own jobs on the 512 MiB conventional null_blk device
// of the QEMU guest (fio/testdata/README.md): a pass covers the device, a round gives its write IOPS.
func TestRealDevicePassAndRound(t *testing.T) {
	p := DefaultPlan()
	p.Rounds, p.RoundSeconds, p.Rule.Window = 2, 5, 2
	r := Start(p, 512<<20, t0)
	pass, err := r.AddPass(report(t, "../fio/testdata/precondition-pass-nullb20.json"))
	if err != nil {
		t.Fatal(err)
	}
	if pass.Bytes != 512<<20 || pass.Seconds != 1.865 || pass.MBps != 287.9 {
		t.Errorf("pass %+v", pass)
	}
	round, done, err := r.AddRound(report(t, "../fio/testdata/precondition-round-nullb20.json"))
	if err != nil || done {
		t.Fatalf("round %+v, done %v, %v", round, done, err)
	}
	if round.WriteIOPS != 15414.9 || round.Bytes != 315760640 || round.Seconds != 5.001 {
		t.Errorf("round %+v", round)
	}
	if !strings.HasPrefix(r.State(t0).SteadyReason, "fewer than 2 rounds") {
		t.Errorf("one round judged: %q", r.State(t0).SteadyReason)
	}
}
