package blocktrace

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	ev := func(op Op, maj, min uint32, sector uint64, n uint32, errno int16) Parsed {
		return Parsed{Kind: Complete, Event: Event{Sector: sector, Dev: Dev{maj, min}, Sectors: n, Error: errno, Op: op}}
	}
	issue := func(p Parsed) Parsed { p.Kind = Issue; return p }
	for _, tc := range []struct {
		line string
		want Parsed
	}{
		// real lines (testdata and the guest's trace file, 6.1)
		{"    kworker/0:1H-37      [000] .N...    19.379896: block_rq_complete: 254,0 WS () 0 + 248 [0]\n", ev(OpWrite, 254, 0, 0, 248, 0)},
		{"    kworker/0:1H-37      [000] .....    26.479047: block_rq_complete: 254,0 DS () 131072 + 65536 [0]", ev(OpDiscard, 254, 0, 131072, 65536, 0)},
		{"          <idle>-0       [000] d.h1.    30.051770: block_rq_complete: 259,0 N () 18446744073709551615 + 5 [0]", ev(OpOther, 259, 0, NoSector, 5, 0)},
		{"          <idle>-0       [000] d.H1.     7.900746: block_rq_complete: 259,0 NS () 0 + 0 [0]", ev(OpOther, 259, 0, 0, 0, 0)},
		{"          <idle>-0       [000] d.H1.     7.923016: block_rq_complete: 259,0 RS () 0 + 8 [0]", ev(OpRead, 259, 0, 0, 8, 0)},
		{"    kworker/0:1H-37      [000] .....     7.700756: block_rq_issue: 259,0 WS 65536 () 0 + 128 [kworker/0:1H]", issue(ev(OpWrite, 259, 0, 0, 128, 0))},
		// rwbs: preflush F before the operation, FUA F after it
		{"x-1 [000] ..... 1.0: block_rq_complete: 8,0 FWFS () 100 + 8 [0]", ev(OpWrite, 8, 0, 100, 8, 0)},
		{"x-1 [000] ..... 1.0: block_rq_complete: 8,0 FF () 0 + 0 [0]", ev(OpFlush, 8, 0, 0, 0, 0)},
		{"x-1 [000] ..... 1.0: block_rq_complete: 8,0 F () 0 + 0 [0]", ev(OpFlush, 8, 0, 0, 0, 0)},
		{"x-1 [000] ..... 1.0: block_rq_complete: 8,0 FS () 0 + 0 [0]", ev(OpFlush, 8, 0, 0, 0, 0)},
		{"x-1 [000] ..... 1.0: block_rq_complete: 8,0 RA () 64 + 256 [0]", ev(OpRead, 8, 0, 64, 256, 0)},
		{"x-1 [000] ..... 1.0: block_rq_complete: 8,0 DE () 0 + 8 [0]", ev(OpOther, 8, 0, 0, 8, 0)},
		{"x-1 [000] ..... 1.0: block_rq_complete: 8,16 WSM () 2048 + 8 [-5]", ev(OpWrite, 8, 16, 2048, 8, -5)},
		// later kernels: zone operations named, an I/O priority before the bracket
		{"x-1 [000] ..... 1.0: block_rq_complete: 259,1 ZA () 524288 + 256 [0]", ev(OpWrite, 259, 1, 524288, 256, 0)},
		{"x-1 [000] ..... 1.0: block_rq_complete: 259,1 ZR () 524288 + 0 [0]", ev(OpOther, 259, 1, 524288, 0, 0)},
		{"<idle>-0 [002] ..s1. 411.215842: block_rq_complete: 8,48 WS () 1024 + 32 none,0,0 [0]", ev(OpWrite, 8, 48, 1024, 32, 0)},
		{"x-1 [007] ..... 1.0: block_rq_issue: 8,0 WS 4096 () 16573296 + 8 rt,4 [kworker/7:0H]", issue(ev(OpWrite, 8, 0, 16573296, 8, 0))},
		// a task name with spaces
		{"   my prog-12  [001] ..... 1.0: block_rq_complete: 8,0 W () 8 + 8 [0]", ev(OpWrite, 8, 0, 8, 8, 0)},

		{"CPU:0 [LOST 1800 EVENTS]\n", Parsed{Kind: Lost, Lost: 1800}},
		{"CPU:13 [LOST EVENTS]", Parsed{Kind: Lost, Lost: -1}},

		{"", Parsed{Reason: "blank line"}},
		{"# tracer: nop", Parsed{Reason: "comment"}},
		{"x-1 [000] ..... 1.0: block_rq_insert: 8,0 WS 4096 () 0 + 8 [x]", Parsed{Reason: "not a block_rq_complete or block_rq_issue event"}},
		{"CPU:0 [LOST many EVENTS]", Parsed{Reason: "not a block_rq_complete or block_rq_issue event"}},
	} {
		if got := ParseLine([]byte(tc.line)); got != tc.want {
			t.Errorf("ParseLine(%q) =\n%+v, want\n%+v", tc.line, got, tc.want)
		}
	}
}

func TestParseLineMalformed(t *testing.T) {
	for _, tc := range []struct{ payload, why string }{
		{"259 WS () 0 + 8 [0]", "no MAJOR,MINOR"},
		{"259,x WS () 0 + 8 [0]", "no MAJOR,MINOR"},
		{"259,0 QS () 0 + 8 [0]", "bad rwbs"},
		{"259,0 W3 () 0 + 8 [0]", "bad rwbs"},
		{"259,0 WS 0 + 8 [0]", "no (cmd)"},
		{"259,0 WS () 0 8 [0]", "no SECTOR + N"},
		{"259,0 WS () 18446744073709551616 + 8 [0]", "no SECTOR + N"},
		{"259,0 WS () 0 + 4294967296 [0]", "no sector count"},
		{"259,0 WS () 0 + 8", "no sector count"},
		{"259,0 WS () 0 + 8 [0", "no [...] at the end"},
		{"259,0 WS () 0 + 8 [x]", "bad [error]"},
		{"259,0 WS () 0 + 8 [-40000]", "bad [error]"},
	} {
		got := ParseLine([]byte("fio-1 [000] ..... 1.0: block_rq_complete: " + tc.payload))
		if got.Kind != Malformed || !strings.Contains(got.Reason, tc.why) || !strings.Contains(got.Reason, tc.payload) {
			t.Errorf("%q: %+v, want Malformed saying %q", tc.payload, got, tc.why)
		}
	}
	if got := ParseLine([]byte("x-1 [000] ..... 1.0: block_rq_issue: 8,0 WS 4096")); got.Kind != Malformed || !strings.HasPrefix(got.Reason, "block_rq_issue: no bytes") {
		t.Errorf("issue without bytes: %+v", got)
	}
}

func TestParseLineAllocates(t *testing.T) {
	for _, line := range []string{
		"    kworker/0:1H-37      [000] .N...    19.379896: block_rq_complete: 254,0 WS () 0 + 248 [0]\n",
		"CPU:0 [LOST 1800 EVENTS]\n",
	} {
		b := []byte(line)
		if n := testing.AllocsPerRun(100, func() { ParseLine(b) }); n != 0 {
			t.Errorf("ParseLine(%q): %v allocations", line, n)
		}
	}
}

func TestTotals(t *testing.T) {
	var tot Totals
	for _, l := range []string{
		"a-1 [000] ..... 1.0: block_rq_complete: 8,0 WS () 0 + 8 [0]",
		"a-1 [000] ..... 1.0: block_rq_complete: 8,0 W () 8 + 8 [-5]",
		"a-1 [000] ..... 1.0: block_rq_complete: 8,0 D () 64 + 128 [0]",
		"a-1 [000] ..... 1.0: block_rq_complete: 8,0 R () 0 + 16 [0]",
		"a-1 [000] ..... 1.0: block_rq_complete: 8,0 FF () 0 + 0 [0]",
		"a-1 [000] ..... 1.0: block_rq_complete: 8,0 N () 256 + 8 [0]",
		"a-1 [000] ..... 1.0: block_rq_complete: 8,0 N () 18446744073709551615 + 5 [0]",
		"a-1 [000] ..... 1.0: block_rq_issue: 8,0 W 4096 () 0 + 8 [a]",
		"# comment",
	} {
		tot.Add(ParseLine([]byte(l)))
	}
	want := Totals{Writes: 2, WriteBytes: 8192, Discards: 1, DiscardBytes: 65536, Reads: 1, ReadBytes: 8192, Flushes: 1,
		Others: 1, OtherBytes: 4096, Passthrough: 1, PassthroughBytes: 2560, Errors: 1, Issues: 1}
	if tot != want {
		t.Errorf("totals\n%+v, want\n%+v", tot, want)
	}
	if err := tot.Err(); err != nil {
		t.Errorf("Err() = %v for a trace that lost nothing", err)
	}
}

func TestTotalsErr(t *testing.T) {
	for _, tc := range []struct {
		tot  Totals
		says string
	}{
		{Totals{LostMarkers: 2, LostEvents: 1800}, "2 lost-events markers (1800 events counted)"},
		{Totals{LostMarkers: 1}, "1 lost-events markers (0 events counted)"},
		{Totals{Overrun: 7}, "7 overwritten by the ring buffer"},
		{Totals{Dropped: 3}, "3 dropped by the ring buffer"},
		{Totals{Malformed: 1}, "1 malformed lines"},
	} {
		err := tc.tot.Err()
		if !errors.Is(err, ErrLostEvents) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "buffer_size_kb") {
			t.Errorf("%+v: Err() = %v, want ErrLostEvents saying %q and what to do", tc.tot, err, tc.says)
		}
	}
}

func TestParseTextLongLine(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	text := "a-1 [000] ..... 1.0: block_rq_complete: 8,0 W () 0 + 8 [0]\n" + long + "\n" +
		"a-1 [000] ..... 1.0: block_rq_complete: 8,0 W () 8 + 8 [0]" // no final newline
	var sectors []uint64
	tot, err := ParseText(strings.NewReader(text), func(e Event) { sectors = append(sectors, e.Sector) })
	if err != nil || tot.Writes != 2 || tot.Malformed != 1 || len(sectors) != 2 || sectors[1] != 8 {
		t.Errorf("totals %+v, sectors %v, err %v", tot, sectors, err)
	}
}

func BenchmarkParseLine(b *testing.B) {
	text, err := os.ReadFile("testdata/nullb-conventional.txt")
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
	b.SetBytes(int64(len(text)) / int64(len(lines)))
	n := 0
	for b.Loop() {
		if ParseLine(lines[n%len(lines)]).Kind != Complete {
			b.Fatalf("line %d did not parse", n%len(lines))
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}
