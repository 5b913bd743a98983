package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type key struct{ pkg, test string }

type summary struct {
	w     io.Writer
	now   func() time.Time
	quiet time.Duration // a progress line after this long without output

	start       time.Time
	lastPrinted time.Time
	output      map[key]*strings.Builder
	running     map[key]time.Time // top-level tests and packages started and not finished, with their start
	// paused are running tests that wait at t.Parallel for a turn: they are left out of the progress line,
	// which would otherwise list as busy every test of a package that has not begun yet
	paused map[key]bool

	failedTests, skips, failedPkgs []string
	recaps                         []string // per failed test, the lines that say why (writeRecap)
	passed, failed, skipped        int
}

func newSummary(w io.Writer, now func() time.Time) *summary {
	t := now()
	return &summary{w: w, now: now, quiet: 29 * time.Second, start: t, lastPrinted: t,
		output: map[key]*strings.Builder{}, running: map[key]time.Time{}, paused: map[key]bool{}}
}

func (s *summary) printf(format string, args ...any) {
	fmt.Fprintf(s.w, format, args...)
	s.lastPrinted = s.now()
}

// run reads the stream to its end, printing as it goes, and reports whether everything passed. On every
// tick with nothing printed for the tick's period it names what is still running.
func (s *summary) run(r io.Reader, tick <-chan time.Time) bool {
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return s.finish()
			}
			s.line(line)
		case <-tick:
			if s.now().Sub(s.lastPrinted) >= s.quiet {
				s.progress()
			}
		}
	}
}

func (s *summary) line(line []byte) {
	var e event
	if json.Unmarshal(line, &e) != nil || e.Action == "" {
		s.printf("%s\n", line) // build errors, stage banners and other plain output
		return
	}
	k := key{e.Package, e.Test}
	at := e.Time
	if at.IsZero() {
		at = s.now()
	}
	switch e.Action {
	case "start":
		s.running[key{e.Package, ""}] = at
	case "run":
		if !strings.Contains(e.Test, "/") {
			s.running[k] = at
		}
	case "pause":
		if _, ok := s.running[k]; ok {
			s.paused[k] = true
		}
	case "cont":
		if s.paused[k] {
			// its time counts from its turn: the wait before it was for the other tests
			delete(s.paused, k)
			s.running[k] = at
		}
	case "output":
		b := s.output[k]
		if b == nil {
			b = &strings.Builder{}
			s.output[k] = b
		}
		b.WriteString(e.Output)
	case "pass", "fail", "skip":
		delete(s.running, k)
		delete(s.paused, k)
		s.result(e, k)
	}
}

func (s *summary) result(e event, k key) {
	if e.Test == "" {
		label := strings.ToUpper(e.Action)
		if e.Action == "skip" {
			label = "----" // go test reports a package without test files as skipped
		}
		s.printf("%-4s %s (%.1fs)\n", label, e.Package, e.Elapsed)
		if e.Action == "fail" {
			s.unfinished(e.Package)
			s.failedPkgs = append(s.failedPkgs, e.Package)
			if b := s.output[k]; b != nil {
				s.printf("%s", indent(b.String()))
			}
		}
		return
	}
	if strings.Contains(e.Test, "/") && e.Action != "fail" {
		// Subtests count through their parents, except that a skipped subtest's reason is shown.
		if e.Action == "skip" {
			s.skips = append(s.skips, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, reason(s.output[k])))
		}
		return
	}
	switch e.Action {
	case "pass":
		s.passed++
	case "fail":
		if !strings.Contains(e.Test, "/") {
			s.failed++
		}
		s.failedTests = append(s.failedTests, fmt.Sprintf("--- FAIL %s %s\n%s", short(e.Package), e.Test, indent(text(s.output[k]))))
		s.recaps = append(s.recaps, recap(short(e.Package)+" "+e.Test, text(s.output[k])))
	case "skip":
		s.skipped++
		s.skips = append(s.skips, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, reason(s.output[k])))
	}
}

// unfinishedTail bounds the output kept of a test that never finished: its own lines come first, then the
// goroutine dump of go test's -timeout, of which the test's own goroutine is near the top.
const unfinishedTail = 120

// unfinished counts as failed the tests of a failed package that never reported a result: go test's -timeout
// panics inside the running test, and test2json then ends the package alone. Without this the test that hung
// would be in no count and its output (what it waited for) nowhere.
func (s *summary) unfinished(pkg string) {
	var tests []string
	for k := range s.running {
		if k.pkg == pkg && k.test != "" {
			tests = append(tests, k.test)
		}
	}
	sort.Strings(tests)
	for _, test := range tests {
		k := key{pkg, test}
		delete(s.running, k)
		delete(s.paused, k)
		s.failed++
		lines := strings.Split(strings.TrimRight(text(s.output[k]), "\n"), "\n")
		if len(lines) > unfinishedTail {
			lines = append(lines[:unfinishedTail:unfinishedTail], fmt.Sprintf("(%d more lines)", len(lines)-unfinishedTail))
		}
		s.failedTests = append(s.failedTests, fmt.Sprintf("--- FAIL %s %s (did not finish: its package failed, as on go test's -timeout)\n%s",
			short(pkg), test, indent(strings.Join(lines, "\n"))))
		s.recaps = append(s.recaps, recap(short(pkg)+" "+test+" (did not finish)", text(s.output[k])))
	}
}

// progress names the tests still running, the longest-running first (packages whose tests have not
// started yet are compiling or setting up).
func (s *summary) progress() {
	now := s.now()
	type item struct {
		name  string
		since time.Duration
	}
	var items []item
	for k, t := range s.running {
		if k.test == "" {
			busy := false
			for o := range s.running {
				busy = busy || (o.pkg == k.pkg && o.test != "")
			}
			if busy {
				continue
			}
			items = append(items, item{short(k.pkg) + " (setting up)", now.Sub(t)})
			continue
		}
		if s.paused[k] {
			continue
		}
		name := short(k.pkg) + " " + k.test
		if last := lastLine(s.output[k]); last != "" {
			// what a long test says last is what it waits for (test/e2e's waitFor says so every minute):
			// a stall shows in CI's tail, not only in a log nobody kept
			name += " (" + last + ")"
		}
		items = append(items, item{name, now.Sub(t)})
	}
	if len(items) == 0 {
		s.printf("     ... %s since the start, waiting for go test\n", mmss(now.Sub(s.start)))
		return
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].since != items[j].since {
			return items[i].since > items[j].since
		}
		return items[i].name < items[j].name
	})
	var parts []string
	for i, it := range items {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more", len(items)-4))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", it.name, mmss(it.since)))
	}
	s.printf("     ... %s since the start; running: %s\n", mmss(now.Sub(s.start)), strings.Join(parts, ", "))
}

func (s *summary) finish() bool {
	if len(s.failedTests) > 0 {
		s.printf("\nFailures:\n")
		for _, f := range s.failedTests {
			s.printf("%s", f)
		}
	}
	if len(s.skips) > 0 {
		sort.Strings(s.skips)
		s.printf("\nSkipped (each names what it needs):\n")
		for _, sk := range s.skips {
			s.printf("  %s\n", sk)
		}
	}
	s.printf("\n%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	if s.failed > 0 || len(s.failedPkgs) > 0 || s.passed == 0 {
		if len(s.failedPkgs) > 0 {
			s.printf("failed packages: %s\n", strings.Join(s.failedPkgs, " "))
		}
		return false
	}
	return true
}

func mmss(d time.Duration) string {
	sec := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%dm%02ds", sec/60, sec%60)
}

func text(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	return b.String()
}

// lastLineMax bounds the last output line a progress line quotes.
const lastLineMax = 160

// lastLine is a test's last line of its own output, trimmed and cut to lastLineMax ("" when none).
func lastLine(b *strings.Builder) string {
	for _, l := range slices.Backward(strings.Split(text(b), "\n")) {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		if r := []rune(t); len(r) > lastLineMax {
			t = string(r[:lastLineMax-1]) + "…"
		}
		return t
	}
	return ""
}

// reason is the skip message: the output lines other than the === / --- framing.
func reason(b *strings.Builder) string {
	var out []string
	for _, l := range strings.Split(text(b), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		out = append(out, t)
	}
	return strings.Join(out, " ")
}

func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/zns-mysql/zns-mysql/")
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l != "" {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}

// logEntry is the first line of a t.Log or t.Error entry in go test's output: "    file_test.go:123: message".
var logEntry = regexp.MustCompile(`^\s+([\w.-]+\.go:\d+: .*)$`)

// recapEntries and recapWidth bound what the recap keeps of each failed test; recapTail is how many of the last
// entry's continuation lines it keeps (a failed command's output, quoted in a t.Fatalf, ends with its reason).
const (
	recapEntries = 6
	recapWidth   = 400
	recapTail    = 4
)

// recap is a failed test's name and the last log entries it wrote before any dump of its cluster (test/e2e
// dumps its namespace on failure in entries starting "--- "), with go test's timeout panic: the lines that
// say why it failed. A CI log is often seen only by its tail, and a dump hundreds of lines long pushes the
// reason out of it. Of each entry it keeps the first line, and of the last entry also its last lines.
func recap(name, output string) string {
	var entries []string
	var tail []string // the last entry's continuation lines
	for _, l := range strings.Split(output, "\n") {
		if strings.HasPrefix(l, "panic: test timed out") {
			entries, tail = append(entries, l), nil
			continue
		}
		m := logEntry.FindStringSubmatch(l)
		if m == nil {
			if len(entries) > 0 && strings.HasPrefix(l, "        ") && strings.TrimSpace(l) != "" {
				tail = append(tail, strings.TrimSpace(l))
			}
			continue
		}
		if _, msg, _ := strings.Cut(m[1], ": "); strings.HasPrefix(msg, "--- ") {
			break
		}
		entries, tail = append(entries, m[1]), nil
	}
	if len(entries) > recapEntries {
		entries = entries[len(entries)-recapEntries:]
	}
	if len(tail) > recapTail {
		tail = append([]string{"…"}, tail[len(tail)-recapTail:]...)
	}
	var b strings.Builder
	b.WriteString("  " + name + "\n")
	if len(entries) == 0 {
		b.WriteString("    (it logged nothing: its output is above)\n")
	}
	for _, e := range entries {
		b.WriteString("    " + cut(e) + "\n")
	}
	for _, l := range tail {
		b.WriteString("        " + cut(l) + "\n")
	}
	return b.String()
}

func cut(line string) string {
	if r := []rune(line); len(r) > recapWidth {
		return string(r[:recapWidth-1]) + "…"
	}
	return line
}

// writeRecap writes what each failed test said last, for the very end of a long log; nothing when none failed.
func (s *summary) writeRecap(w io.Writer) error {
	if len(s.recaps) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "Why the failed tests failed (their last log entries; their whole output is above):\n"); err != nil {
		return err
	}
	for _, r := range s.recaps {
		if _, err := io.WriteString(w, r); err != nil {
			return err
		}
	}
	return nil
}
