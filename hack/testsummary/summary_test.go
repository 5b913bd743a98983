package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSummaryOfARealRun(t *testing.T) {
	in, err := os.Open("testdata/go-test.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	ok := newSummary(&out, time.Now).run(in, nil)
	got := out.String()
	if ok {
		t.Errorf("a run with a failed test reported success:\n%s", got)
	}
	for _, want := range []string{
		"FAIL example.com/fx (",
		"PASS example.com/fx2 (",
		"--- FAIL example.com/fx TestFails",
		"expected 3 zones, got 2",
		"example.com/fx TestSkips: fx_test.go:9: needs a zoned kernel (CONFIG_BLK_DEV_ZONED)",
		"example.com/fx TestSubtests/skipped: fx_test.go:13: needs Docker",
		"3 passed, 1 failed, 1 skipped",
		"failed packages: example.com/fx",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

// A test that hangs until go test's -timeout never reports a result: it must count as failed, with what it
// said it waited for.
func TestTimedOutTestIsAFailureWithItsOutput(t *testing.T) {
	in, err := os.Open("testdata/go-test-timeout.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	s := newSummary(&out, time.Now)
	if s.run(in, nil) {
		t.Errorf("a run whose test timed out passed:\n%s", out.String())
	}
	got := out.String()
	for _, want := range []string{
		"--- FAIL example.com/hang TestHangs (did not finish",
		"still waiting for db Available after 1m0s",
		"panic: test timed out after 2s",
		"1 passed, 1 failed, 0 skipped",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if len(s.running) != 0 {
		t.Errorf("still counted as running after the package ended: %v", s.running)
	}
}

func TestSkippedOnlyIsNotAPass(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestX"}
{"Action":"output","Package":"p","Test":"TestX","Output":"    x_test.go:9: needs a cluster\n"}
{"Action":"skip","Package":"p","Test":"TestX"}
{"Action":"pass","Package":"p"}
`
	var out bytes.Buffer
	if newSummary(&out, time.Now).run(strings.NewReader(in), nil) {
		t.Errorf("a run where everything skipped passed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "0 passed, 0 failed, 1 skipped") {
		t.Errorf("summary:\n%s", out.String())
	}
}

// A long test prints nothing for minutes; the summary must say what runs instead of staying silent.
func TestProgressWhileQuiet(t *testing.T) {
	var mu sync.Mutex
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) time.Time { mu.Lock(); defer mu.Unlock(); clock = clock.Add(d); return clock }
	r, w := io.Pipe()
	tick := make(chan time.Time)
	var out syncBuffer
	s := newSummary(&out, now)
	done := make(chan bool)
	go func() { done <- s.run(r, tick) }()

	send := func(line string) {
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"Time":"2026-11-23T12:00:00Z","Action":"start","Package":"github.com/zns-mysql/zns-mysql/test/e2e"}`)
	send(`{"Time":"2026-11-23T12:00:01Z","Action":"run","Package":"github.com/zns-mysql/zns-mysql/test/e2e","Test":"TestBenchmark"}`)
	send(`{"Time":"2026-11-23T12:00:05Z","Action":"run","Package":"github.com/zns-mysql/zns-mysql/test/e2e","Test":"TestBenchmark/second"}`)
	send(`{"Time":"2026-11-23T12:00:06Z","Action":"output","Package":"github.com/zns-mysql/zns-mysql/test/e2e","Test":"TestBenchmark","Output":"    e2e_test.go:170: still waiting for db Available after 1m0s: Starting\n"}`)
	send(`{"Time":"2026-11-23T12:00:06Z","Action":"output","Package":"github.com/zns-mysql/zns-mysql/test/e2e","Test":"TestBenchmark","Output":"\n"}`)
	send(`{"Time":"2026-11-23T12:00:00Z","Action":"start","Package":"github.com/zns-mysql/zns-mysql/operator/internal/controller"}`)
	send("stage banner") // printed once every line before it is handled
	waitFor(t, &out, "stage banner")
	tick <- advance(10 * time.Second) // not quiet for long enough: nothing
	tick <- advance(95 * time.Second)
	waitFor(t, &out, "running: operator/internal/controller (setting up) 1m45s, "+
		"test/e2e TestBenchmark (e2e_test.go:170: still waiting for db Available after 1m0s: Starting) 1m44s")
	if strings.Contains(out.String(), "TestBenchmark/second") {
		t.Errorf("subtests are part of their parent's line:\n%s", out.String())
	}
	before := strings.Count(out.String(), "running:")
	tick <- advance(0) // nothing new, but not quiet for long enough since the last line
	send(`{"Action":"pass","Package":"github.com/zns-mysql/zns-mysql/test/e2e","Test":"TestBenchmark"}`)
	send(`{"Action":"pass","Package":"github.com/zns-mysql/zns-mysql/test/e2e"}`)
	w.Close()
	if ok := <-done; !ok {
		t.Errorf("one passing test and nothing failed, yet the summary failed:\n%s", out.String())
	}
	if n := strings.Count(out.String(), "running:"); n != before {
		t.Errorf("a progress line right after another one:\n%s", out.String())
	}
}

func TestLastLineIsCutAndSkipsFraming(t *testing.T) {
	var b strings.Builder
	b.WriteString("=== RUN   TestX\n    x_test.go:1: first\n" + strings.Repeat("y", 300) + "\n--- FAIL: TestX (1.00s)\n\n")
	got := lastLine(&b)
	if want := strings.Repeat("y", lastLineMax-1) + "…"; got != want {
		t.Errorf("lastLine = %q, want the long line cut to %d runes", got, lastLineMax)
	}
	if got := lastLine(nil); got != "" {
		t.Errorf("lastLine of no output = %q", got)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitFor(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(b.String(), want) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("output never contained %q:\n%s", want, b.String())
}

// CI's log is often seen by its tail alone, after a namespace dump hundreds of lines long: the recap gives
// each failed test's last entries before the dump, the failure among them, and none of the dump.
func TestRecapSaysWhyBeforeTheDump(t *testing.T) {
	in, err := os.Open("testdata/go-test-dump.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	s := newSummary(io.Discard, time.Now)
	if s.run(in, nil) {
		t.Fatal("a run with a failed test passed")
	}
	var out bytes.Buffer
	if err := s.writeRecap(&out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"Why the failed tests failed",
		"  example.com/dump TestFlowFails\n",
		"dump_test.go:22: target zxfs: {Name:zxfs State:Failed Reason:StartMissed Message:start barrier missed by 12s}",
		"dump_test.go:23: ZONED-NODE target conv (InnoDB, volume ext4): 3.03 tps",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("recap lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"operator log", "resourceVersion", "TestPasses"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("recap has %q (the dump or a passing test):\n%s", unwanted, got)
		}
	}
}

func TestRecapKeepsTheLastEntriesCut(t *testing.T) {
	var out strings.Builder
	for i := 1; i <= recapEntries+3; i++ {
		fmt.Fprintf(&out, "    flow_test.go:%d: entry %d\n        a continuation line\n", i, i)
	}
	fmt.Fprintf(&out, "    flow_test.go:99: %s\n", strings.Repeat("x", 2*recapWidth))
	got := recap("p TestX", out.String())
	if strings.Contains(got, "entry 4\n") || !strings.Contains(got, "entry 5\n") || strings.Contains(got, "continuation") {
		t.Errorf("recap keeps other than the last %d entries' first lines:\n%s", recapEntries, got)
	}
	if !strings.Contains(got, strings.Repeat("x", recapWidth-len("flow_test.go:99: ")-1)+"…\n") {
		t.Errorf("a long entry is not cut to %d runes:\n%s", recapWidth, got)
	}
}

// A test that quotes a failed command's output in its last entry (t.Fatalf("cmd: %v\n%s", err, out)) fails for
// the reason at that output's end: the recap keeps its last lines, and only those.
func TestRecapKeepsTheLastEntrysTail(t *testing.T) {
	var out strings.Builder
	out.WriteString("    zonedfs_test.go:67: hack/demo-zoned.sh took 34s\n        an earlier entry's continuation\n")
	out.WriteString("    zonedfs_test.go:69: hack/demo-zoned.sh: exit status 1\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&out, "        ==> step %d\n", i)
	}
	out.WriteString("        demo-zoned: step 'hack/qemu/build-xfs-userland.sh' failed (above)\n        \n")
	got := recap("p TestZonedFilesystems", out.String())
	want := "    zonedfs_test.go:69: hack/demo-zoned.sh: exit status 1\n        …\n        ==> step 8\n        ==> step 9\n" +
		"        ==> step 10\n        demo-zoned: step 'hack/qemu/build-xfs-userland.sh' failed (above)\n"
	if !strings.HasSuffix(got, want) || strings.Contains(got, "step 7") || strings.Contains(got, "earlier entry's") {
		t.Errorf("recap:\n%s\nwant it to end with:\n%s", got, want)
	}
}

func TestRecapOfATimedOutTestHasThePanic(t *testing.T) {
	in, err := os.Open("testdata/go-test-timeout.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	s := newSummary(io.Discard, time.Now)
	s.run(in, nil)
	var out bytes.Buffer
	if err := s.writeRecap(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TestHangs (did not finish)", "still waiting for db Available after 1m0s", "panic: test timed out after 2s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("recap lacks %q:\n%s", want, out.String())
		}
	}
}

func TestNoRecapWhenNothingFailed(t *testing.T) {
	var out bytes.Buffer
	if err := newSummary(io.Discard, time.Now).writeRecap(&out); err != nil || out.Len() != 0 {
		t.Errorf("recap of a run without failures: %q, %v", out.String(), err)
	}
}

// Tests waiting at t.Parallel for their turn are not running: the progress line names the sequential test
// that is, and a parallel test's time counts from its turn.
func TestProgressLeavesOutPausedTests(t *testing.T) {
	b, err := os.ReadFile("testdata/go-test-parallel.json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var out bytes.Buffer
	var clock time.Time
	s := newSummary(&out, func() time.Time { return clock })
	// the progress line 90 s after the first line of the capture that holds all of marks
	progressAfter := func(marks ...string) string {
		t.Helper()
		for len(lines) > 0 {
			line := lines[0]
			lines = lines[1:]
			s.line([]byte(line))
			found := true
			for _, m := range marks {
				found = found && strings.Contains(line, m)
			}
			if found {
				var e event
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatal(err)
				}
				clock = e.Time.Add(90 * time.Second)
				out.Reset()
				s.progress()
				return out.String()
			}
		}
		t.Fatalf("no line with %q in the capture", marks)
		return ""
	}
	got := progressAfter("runs while the parallel ones wait")
	if !strings.Contains(got, "running: example.com/parallel TestSequential (p_test.go:19: runs while the parallel ones wait) 1m30s\n") ||
		strings.Contains(got, "TestFirst") || strings.Contains(got, "TestSecond") {
		t.Errorf("while the parallel tests wait their turn: %q, want the sequential test alone", got)
	}
	got = progressAfter(`"Action":"cont"`, `"Test":"TestFirst"`)
	if !strings.Contains(got, "running: example.com/parallel TestFirst 1m30s\n") || strings.Contains(got, "TestSecond") {
		t.Errorf("once TestFirst has its turn: %q, want it alone, timed from its turn", got)
	}
	for len(lines) > 0 {
		s.line([]byte(lines[0]))
		lines = lines[1:]
	}
	if len(s.running) != 0 || len(s.paused) != 0 {
		t.Errorf("after the package ended: running %v, paused %v", s.running, s.paused)
	}
}
