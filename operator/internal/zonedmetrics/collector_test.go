package zonedmetrics

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs/zenfscapture"
)

// logs collects what the collector logs.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logs) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// scrape gathers the collector's metrics through its private registry.
type scrape map[string][]*dto.Metric

func gather(t testing.TB, c *Collector) scrape {
	t.Helper()
	mfs, err := c.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	s := scrape{}
	for _, mf := range mfs {
		s[mf.GetName()] = mf.GetMetric()
	}
	return s
}

// value returns the sample of name whose labels include the given
// name=value pairs; ok is false when there is none.
func (s scrape) value(name string, labels ...string) (float64, bool) {
	for _, m := range s[name] {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		}
	}
	return 0, false
}

func (s scrape) want(t testing.TB, name string, want float64, labels ...string) {
	t.Helper()
	got, ok := s.value(name, labels...)
	if !ok {
		t.Errorf("%s%v: absent", name, labels)
	} else if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func (s scrape) absent(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if len(s[n]) > 0 {
			t.Errorf("%s present: %v", n, s[n])
		}
	}
}

// statSectors parses the read and write sector fields (3rd and 7th) of a
// captured stat file, independently of package blockstat.
func statSectors(t testing.TB, dev string) (read, written float64) {
	t.Helper()
	b, err := os.ReadFile(testSysBlock + "/" + dev + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if _, err := fmt.Sscan(f[2], &read); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(f[6], &written); err != nil {
		t.Fatal(err)
	}
	return read, written
}

func TestCollectSysfsAndDatadir(t *testing.T) {
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dev                        string
		zones, zoneSize            float64
		maxOpen, maxActive         float64
		readSectors, writtenSector float64
	}{
		// Sector counts as printed in the captured stat files (see
		// testdata/README.md); wa/nullb0-wa.devstat of the same run says
		// 1,992,368 sectors written.
		{dev: "nullb0", zones: 64, zoneSize: 64 << 20, readSectors: 1244352, writtenSector: 1992368},
		{dev: "nvme0n1", zones: 40, zoneSize: 64 << 20, maxOpen: 14, maxActive: 14,
			readSectors: 1234400, writtenSector: 1988656},
	} {
		t.Run(tc.dev, func(t *testing.T) {
			c := New(Config{Device: tc.dev, SysBlock: testSysBlock, Datadir: dir})
			s := gather(t, c)
			dev := []string{"device", tc.dev}
			read, written := statSectors(t, tc.dev)
			if read != tc.readSectors || written != tc.writtenSector {
				t.Fatalf("capture has %v/%v sectors, test expects %v/%v", read, written, tc.readSectors, tc.writtenSector)
			}
			s.want(t, "znsdb_device_read_bytes_total", read*512, dev...)
			s.want(t, "znsdb_device_written_bytes_total", written*512, dev...)
			s.want(t, "znsdb_device_zones", tc.zones, dev...)
			s.want(t, "znsdb_zone_size_bytes", tc.zoneSize, dev...)
			s.want(t, "znsdb_device_max_open_zones", tc.maxOpen, dev...)
			s.want(t, "znsdb_device_max_active_zones", tc.maxActive, dev...)
			s.want(t, "znsdb_datadir_size_bytes", float64(st.Blocks*uint64(st.Frsize)), dev...)
			if free, _ := s.value("znsdb_datadir_free_bytes"); free <= 0 || free > float64(st.Blocks*uint64(st.Frsize)) {
				t.Errorf("datadir free %v outside (0, size]", free)
			}
			// Nothing refreshed yet, and no refresh running: no cached
			// figures and no refresh metrics.
			s.absent(t, "znsdb_zones", "znsdb_zone_capacity_bytes", "znsdb_zenfs_free_bytes",
				"znsdb_refresh_errors_total", "znsdb_refresh_timestamp_seconds")
		})
	}
}

// A conventional database has no device: only the datadir, unlabelled.
func TestCollectConventional(t *testing.T) {
	c := New(Config{SysBlock: testSysBlock, Datadir: t.TempDir()})
	s := gather(t, c)
	if len(s) != 2 || len(s["znsdb_datadir_size_bytes"]) != 1 || len(s["znsdb_datadir_free_bytes"]) != 1 {
		t.Fatalf("got %v", s)
	}
	if l := s["znsdb_datadir_size_bytes"][0].GetLabel(); len(l) != 0 {
		t.Errorf("labels %v on a database without device", l)
	}
}

// A read that fails at scrape time leaves its metrics out and is logged
// when it starts failing and when it reads again, not at every scrape.
func TestScrapeReadFailuresLoggedOnce(t *testing.T) {
	var l logs
	sys := t.TempDir()
	if err := os.CopyFS(sys, os.DirFS(testSysBlock)); err != nil {
		t.Fatal(err)
	}
	c := New(Config{Device: "nullb0", SysBlock: sys, Datadir: "/nonexistent-datadir", Logf: l.logf})
	if err := os.Remove(sys + "/nullb0/stat"); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		s := gather(t, c)
		s.absent(t, "znsdb_device_written_bytes_total", "znsdb_datadir_size_bytes")
		s.want(t, "znsdb_device_zones", 64)
	}
	if got := l.get(); len(got) != 2 || !strings.Contains(got[0], "device stat") || !strings.Contains(got[1], "datadir statfs") {
		t.Fatalf("logged %q, want one line for the stat file and one for the datadir", got)
	}
	if err := os.CopyFS(sys+"/restored", os.DirFS(testSysBlock+"/nullb0")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(sys+"/restored/stat", sys+"/nullb0/stat"); err != nil {
		t.Fatal(err)
	}
	gather(t, c).want(t, "znsdb_device_written_bytes_total", 1992368*512)
	gather(t, c)
	if got := l.get(); len(got) != 3 || !strings.Contains(got[2], "device stat: reads again") {
		t.Fatalf("logged %q, want a third line saying the stat file reads again", got)
	}
}

// dfCapture parses a real `zenfs df` capture as the runner would get it.
func dfCapture(t testing.TB, rel string) zenfs.Df {
	t.Helper()
	df, err := zenfs.ParseDf(zenfscapture.Read(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return df
}

// waitFor scrapes until cond holds; it fails the test after a generous
// deadline (a safety net against hanging, not a timing assertion).
func waitFor(t testing.TB, c *Collector, what string, cond func(scrape) bool) scrape {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := gather(t, c)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s; last scrape %v", what, s)
		}
		time.Sleep(time.Millisecond)
	}
}

func has(name string, want float64, labels ...string) func(scrape) bool {
	return func(s scrape) bool {
		v, ok := s.value(name, labels...)
		return ok && v == want
	}
}

// step is a fake background source that serves one scripted answer per
// call and counts calls and overlaps. Once the script is played, it repeats
// its last answer, or (hold) waits for the end of the run's context, as a
// command stopped at shutdown does: then nothing more happens to observe.
type step[T any] struct {
	mu       sync.Mutex
	answers  []func(ctx context.Context) (T, error)
	hold     bool
	calls    int
	running  int
	overlaps int
}

func (s *step[T]) call(ctx context.Context) (T, error) {
	s.mu.Lock()
	s.calls++
	s.running++
	if s.running > 1 {
		s.overlaps++
	}
	answer := s.answers[min(s.calls, len(s.answers))-1]
	if s.hold && s.calls > len(s.answers) {
		answer = func(ctx context.Context) (T, error) {
			<-ctx.Done()
			var zero T
			return zero, ctx.Err()
		}
	}
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.running--; s.mu.Unlock() }()
	return answer(ctx)
}

func (s *step[T]) count() (calls, overlaps int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls, s.overlaps
}

func ok[T any](v T) func(context.Context) (T, error) {
	return func(context.Context) (T, error) { return v, nil }
}

func fail[T any](err error) func(context.Context) (T, error) {
	return func(context.Context) (T, error) { var zero T; return zero, err }
}

func TestZenFSFiguresFromRealDf(t *testing.T) {
	const mib = 1 << 20
	var l logs
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	c := New(Config{Device: "nullb0", SysBlock: testSysBlock, Logf: l.logf, Now: func() time.Time { return at }})
	// wa/nullb0-df: zenfs df after 600,000 puts with the WAL on
	// ("Free: 3659 MB / Used: 124 MB / Reclaimable: 35 MB"); then a df
	// that fails as the captured one on an unformatted device does.
	unformatted := zenfs.Classify("nullb0", zenfscapture.Read(t, "capture/nullb0/02-df-unformatted.stderr"),
		errors.New("exit status 1"))
	src := &step[zenfs.Df]{hold: true, answers: []func(context.Context) (zenfs.Df, error){
		ok(dfCapture(t, "wa/nullb0-df.stdout")), fail[zenfs.Df](unformatted),
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.RunZenFS(ctx, time.Millisecond, time.Minute, src.call) }()
	defer func() { cancel(); <-done }()

	s := waitFor(t, c, "a failed df after a good one", has("znsdb_refresh_errors_total", 1, "source", "zenfs"))
	s.want(t, "znsdb_zenfs_free_bytes", 3659*mib, "device", "nullb0")
	s.want(t, "znsdb_zenfs_used_bytes", 124*mib)
	s.want(t, "znsdb_zenfs_reclaimable_bytes", 35*mib)
	s.want(t, "znsdb_refresh_timestamp_seconds", float64(at.Unix()), "source", "zenfs")
	if _, ok := s.value("znsdb_refresh_duration_seconds", "source", "zenfs"); !ok {
		t.Error("no refresh duration")
	}
	// Only the zenfs source runs: no zone figures, no zones refresh.
	if _, ok := s.value("znsdb_refresh_errors_total", "source", "zones"); ok {
		t.Error("zones source reported without RunZones")
	}
	s.absent(t, "znsdb_zones")

	cancel()
	<-done
	calls, overlaps := src.count()
	if overlaps != 0 {
		t.Errorf("%d overlapping df runs", overlaps)
	}
	got := l.get()
	// The third run, if it started before the cancel, ended at shutdown.
	if calls < 2 || calls > 3 || len(got) != 1 {
		t.Errorf("%d df runs (want 2, and maybe one stopped at shutdown), logged %d lines (want 1): %q", calls, len(got), got)
	}
	if len(got) == 0 || !strings.Contains(got[0], "zenfs: refresh failed") || !strings.Contains(got[0], "holds no ZenFS") ||
		!strings.Contains(got[0], "still serving the figures of 2026-11-22T09:00:00Z") {
		t.Errorf("log %q", got)
	}
}

func TestZenFSTimeout(t *testing.T) {
	var l logs
	c := New(Config{Device: "nullb0", SysBlock: testSysBlock, Logf: l.logf})
	deadlines := make(chan time.Duration, 1)
	// A zenfs df that never finishes by itself: the runner stops it when
	// its context ends, as exec.CommandContext kills the process.
	hang := func(ctx context.Context) (zenfs.Df, error) {
		dl, ok := ctx.Deadline()
		if !ok {
			t.Error("df runs without a deadline")
		}
		select {
		case deadlines <- time.Until(dl):
		default:
		}
		<-ctx.Done()
		return zenfs.Df{}, errors.New("signal: killed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.RunZenFS(ctx, time.Hour, 20*time.Millisecond, hang) }()
	defer func() { cancel(); <-done }()
	if d := <-deadlines; d > 20*time.Millisecond {
		t.Errorf("df got %s to run, want at most the 20ms timeout", d)
	}
	waitFor(t, c, "the timeout counted", has("znsdb_refresh_errors_total", 1, "source", "zenfs")).
		absent(t, "znsdb_zenfs_free_bytes", "znsdb_refresh_timestamp_seconds")
	if got := l.get(); len(got) != 1 || !strings.Contains(got[0], "zenfs df did not finish within 20ms: signal: killed") {
		t.Errorf("logged %q", got)
	}
}

func TestZonesFromRealReport(t *testing.T) {
	var l logs
	c := New(Config{Device: "nullb0", SysBlock: testSysBlock, Logf: l.logf})
	eio := &fs.PathError{Op: "ioctl", Path: "/dev/nullb0", Err: syscall.EIO}
	src := &step[[]zbd.Zone]{hold: true, answers: []func(context.Context) ([]zbd.Zone, error){
		ok(blkzoneReport(t, "capture/nullb0/25-blkzone-report-populated.stdout")),
		fail[[]zbd.Zone](fmt.Errorf("BLKREPORTZONE on /dev/nullb0 at sector 0: %w", eio)),
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.RunZones(ctx, time.Millisecond, src.call) }()
	defer func() { cancel(); <-done }()

	s := waitFor(t, c, "a failed report after a good one", has("znsdb_refresh_errors_total", 1, "source", "zones"))
	dev := []string{"device", "nullb0"}
	want := map[string]float64{"empty": 58, "implicit_open": 1, "explicit_open": 0, "closed": 5, "full": 0,
		"read_only": 0, "offline": 0}
	var sum float64
	for _, st := range States {
		s.want(t, "znsdb_zones", want[st], append(dev, "state", st)...)
		v, _ := s.value("znsdb_zones", "state", st)
		sum += v
	}
	if len(s["znsdb_zones"]) != len(States) {
		t.Errorf("%d znsdb_zones samples, want one per state", len(s["znsdb_zones"]))
	}
	// nr_zones comes from sysfs, the states from the report: they agree.
	s.want(t, "znsdb_device_zones", sum)
	s.want(t, "znsdb_zone_capacity_bytes", 64<<20)
	if _, ok := s.value("znsdb_refresh_timestamp_seconds", "source", "zones"); !ok {
		t.Error("no timestamp of the good report")
	}
	cancel()
	<-done
	if got := l.get(); len(got) != 1 || !strings.Contains(got[0], "zones: refresh failed") ||
		!strings.Contains(got[0], "input/output error") {
		t.Errorf("logged %q", got)
	}
}

// Without a readable device node (a btrfs/f2fs pod has only sysfs), no
// zone report is read and no zone-report metric is served; the sysfs
// figures stay.
func TestZonesOffWithoutDeviceNode(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOENT, syscall.EACCES} {
		t.Run(errno.Error(), func(t *testing.T) {
			var l logs
			c := New(Config{Device: "nullb0", SysBlock: testSysBlock, Logf: l.logf})
			src := &step[[]zbd.Zone]{answers: []func(context.Context) ([]zbd.Zone, error){
				fail[[]zbd.Zone](&fs.PathError{Op: "open", Path: "/dev/nullb0", Err: errno}),
			}}
			c.RunZones(context.Background(), time.Millisecond, src.call) // returns: the source is off
			if calls, _ := src.count(); calls != 1 {
				t.Errorf("%d reports, want 1", calls)
			}
			s := gather(t, c)
			s.absent(t, "znsdb_zones", "znsdb_zone_capacity_bytes", "znsdb_refresh_errors_total",
				"znsdb_refresh_duration_seconds")
			s.want(t, "znsdb_device_zones", 64)
			if got := l.get(); len(got) != 1 || !strings.Contains(got[0], "cannot be opened read-only") {
				t.Errorf("logged %q", got)
			}
		})
	}
}

// Starts of a source stay at least an interval apart, even when a run
// takes longer than the interval, and runs never overlap.
func TestRefreshStartsAnIntervalApart(t *testing.T) {
	const interval = 10 * time.Millisecond
	c := New(Config{})
	var mu sync.Mutex
	var starts []time.Time
	slowEvery := 0
	src := &step[zenfs.Df]{answers: []func(context.Context) (zenfs.Df, error){func(context.Context) (zenfs.Df, error) {
		mu.Lock()
		starts = append(starts, time.Now())
		slowEvery++
		slow := slowEvery%3 == 0
		mu.Unlock()
		if slow {
			time.Sleep(2 * interval)
		}
		return zenfs.Df{}, nil
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.RunZenFS(ctx, interval, time.Minute, src.call) }()
	for {
		if calls, _ := src.count(); calls >= 12 {
			break
		}
		gather(t, c) // scrapes in between start nothing
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	// The loop reads the clock just before it calls the source, which reads
	// it again: allow for the work in between (a context, a lock).
	const slack = time.Millisecond
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < interval-slack {
			t.Errorf("run %d started %s after run %d, less than the %s interval", i, gap, i-1, interval)
		}
	}
	if _, overlaps := src.count(); overlaps != 0 {
		t.Errorf("%d overlapping runs", overlaps)
	}
}

// The handler serves the text format from the private registry.
func TestHandlerText(t *testing.T) {
	c := New(Config{Device: "nvme0n1", SysBlock: testSysBlock})
	rec := httptest.NewRecorder()
	c.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	body := rec.Body.String()
	for _, line := range []string{
		"# TYPE znsdb_device_written_bytes_total counter",
		`znsdb_device_written_bytes_total{device="nvme0n1"} 1.018191872e+09`,
		`znsdb_device_max_active_zones{device="nvme0n1"} 14`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("no line %q in\n%s", line, body)
		}
	}
	// Nothing of the global registry (go_*, process_*) leaks in.
	if strings.Contains(body, "go_goroutines") || strings.Contains(body, "process_") {
		t.Errorf("global collectors in the output:\n%s", body)
	}
}

// A sample of the sector arithmetic against package blockstat, so that the
// two never drift apart.
func TestWrittenBytesMatchBlockstat(t *testing.T) {
	st, err := blockstat.Sample(testSysBlock, "nullb0")
	if err != nil {
		t.Fatal(err)
	}
	c := New(Config{Device: "nullb0", SysBlock: testSysBlock})
	gather(t, c).want(t, "znsdb_device_written_bytes_total", float64(st.WrittenBytes()))
}
