package ftl

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

const mib = 1 << 20

func newModel(t testing.TB, c Config) *Model {
	t.Helper()
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkInvariants cross-checks every structure of the model against the
// others: the maps agree, valid counts match the bits, each closed block is in
// its bucket exactly once, free blocks are empty.
func checkInvariants(t *testing.T, m *Model) {
	t.Helper()
	ppb := m.g.ppb
	mapped := 0
	for lpn, ppn := range m.l2p {
		if ppn == unmapped {
			continue
		}
		mapped++
		if m.validBits[ppn/64]&(1<<(ppn%64)) == 0 || m.p2l[ppn] != uint32(lpn) {
			t.Fatalf("logical %d maps to physical %d, which is not valid for it", lpn, ppn)
		}
	}
	totalValid := 0
	for b := range m.valid {
		n := 0
		for _, w := range m.validBits[b*ppb/64 : (b+1)*ppb/64] {
			n += bits.OnesCount64(w)
		}
		if n != int(m.valid[b]) {
			t.Fatalf("block %d counts %d valid pages, its bits say %d", b, m.valid[b], n)
		}
		totalValid += n
	}
	if totalValid != mapped {
		t.Fatalf("%d valid pages, %d mapped logical pages", totalValid, mapped)
	}
	state := make([]string, len(m.valid))
	for _, b := range m.free {
		if state[b] != "" || m.valid[b] != 0 {
			t.Fatalf("free block %d is %q with %d valid pages", b, state[b], m.valid[b])
		}
		state[b] = "free"
	}
	state[m.frontier] = "open"
	for v, b := range m.head {
		if v < m.minBucket && b >= 0 {
			t.Fatalf("bucket %d is below the minimum %d but holds block %d", v, m.minBucket, b)
		}
		for prev := int32(-1); b >= 0; prev, b = b, m.next[b] {
			if state[b] != "" || int(m.valid[b]) != v || m.prev[b] != prev {
				t.Fatalf("block %d in bucket %d: state %q, valid %d, prev %d want %d", b, v, state[b], m.valid[b], m.prev[b], prev)
			}
			state[b] = "closed"
		}
	}
	for b, s := range state {
		if s == "" {
			t.Fatalf("block %d is neither free, open nor in a bucket", b)
		}
	}
	if len(m.free) < m.g.reserve {
		t.Fatalf("%d free blocks, reserve %d", len(m.free), m.g.reserve)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{LogicalBytes: 256 * mib, OverProvisioning: 0.07}
	if err := ok.Validate(); err != nil {
		t.Fatalf("%+v: %v", ok, err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no capacity", func(c *Config) { c.LogicalBytes = 0 }, "LogicalBytes is 0"},
		{"part of a page", func(c *Config) { c.LogicalBytes += 512 }, "not a whole number of 4096-byte pages"},
		{"no spare", func(c *Config) { c.OverProvisioning = 0 }, "OverProvisioning is 0"},
		{"negative spare", func(c *Config) { c.OverProvisioning = -0.1 }, "OverProvisioning is -0.1"},
		{"page size", func(c *Config) { c.PageBytes = 1000 }, "PageBytes is 1000"},
		{"block size", func(c *Config) { c.PagesPerBlock = 100 }, "PagesPerBlock is 100"},
		{"block too big", func(c *Config) { c.PagesPerBlock = 1 << 16 }, "PagesPerBlock is 65536"},
		{"reserve", func(c *Config) { c.ReserveBlocks = -1 }, "ReserveBlocks is -1"},
		// 64 logical blocks and 1% spare round up to 65 physical: one spare
		// block, not enough for the reserve and the open block.
		{"too little spare", func(c *Config) { c.OverProvisioning = 0.01 }, "gives 1 spare blocks over 64 logical ones, want at least ReserveBlocks+2 = 3"},
		// 7% is 5 spare blocks.
		{"reserve eats the spare", func(c *Config) { c.ReserveBlocks = 4 }, "gives 5 spare blocks over 64 logical ones, want at least ReserveBlocks+2 = 6"},
		{"beyond uint32", func(c *Config) { c.LogicalBytes = 16 << 40 }, "physical pages"},
	} {
		c := ok
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate(%+v) = %v, want %q", tc.name, c, err, tc.want)
		}
		if _, err := New(c); err == nil {
			t.Errorf("%s: New accepted %+v", tc.name, c)
		}
	}
	// Every field's problem is reported at once.
	err := Config{PageBytes: -1, PagesPerBlock: 7, ReserveBlocks: -2}.Validate()
	for _, field := range []string{"LogicalBytes", "OverProvisioning", "PageBytes", "PagesPerBlock", "ReserveBlocks"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("all wrong: %v does not name %s", err, field)
		}
	}
}

func TestGeometry(t *testing.T) {
	// 64 MiB is 16 blocks of 1024 pages; 7% spare is 1.12 blocks, rounded up to 2:
	// too few, so 28%: 4.48 rounded up to 5.
	m := newModel(t, Config{LogicalBytes: 64 * mib, OverProvisioning: 0.28})
	if m.LogicalPages() != 16384 || m.PhysicalPages() != 21*1024 || m.PageBytes() != 4096 {
		t.Errorf("logical %d physical %d page %d", m.LogicalPages(), m.PhysicalPages(), m.PageBytes())
	}
	if r := m.OverProvisioning(); r != 5.0/16 {
		t.Errorf("OverProvisioning = %v, want 5/16", r)
	}
	if c := m.Counters(); c != (Counters{}) || c.WA() != 0 {
		t.Errorf("fresh counters %+v, WA %v", c, c.WA())
	}
	checkInvariants(t, m)
}

func TestByteAddressing(t *testing.T) {
	m := newModel(t, Config{LogicalBytes: 64 * mib, OverProvisioning: 0.28})
	size := int64(64 * mib)
	for _, tc := range []struct {
		name           string
		off, n         int64
		pages, mapped  uint64
		discard        bool
		discardedPages uint64
	}{
		{name: "one byte is one page", off: 100, n: 1, pages: 1, mapped: 1},
		{name: "straddling two pages", off: 4095, n: 2, pages: 2, mapped: 2},
		{name: "aligned 8 KiB", off: 8192, n: 8192, pages: 2, mapped: 4},
		{name: "empty", off: 4096, n: 0, mapped: 4},
		{name: "the last page", off: size - 1, n: 1, pages: 1, mapped: 5},
		// Discards unmap whole pages only: 100..8191 covers page 1 alone.
		{name: "partial discard", off: 100, n: 8092, discard: true, discardedPages: 1, mapped: 4},
		{name: "discard less than a page", off: 8193, n: 4000, discard: true, mapped: 4},
		{name: "discard everything", off: 0, n: size, discard: true, discardedPages: 4},
	} {
		before := m.Counters()
		var err error
		if tc.discard {
			err = m.Discard(tc.off, tc.n)
		} else {
			err = m.Write(tc.off, tc.n)
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		d := m.Counters().Sub(before)
		if d.HostPages != tc.pages || d.DiscardedPages != tc.discardedPages || mappedPages(m) != tc.mapped {
			t.Errorf("%s: %+v, %d mapped; want %d host pages, %d discarded, %d mapped", tc.name, d, mappedPages(m), tc.pages, tc.discardedPages, tc.mapped)
		}
	}
	checkInvariants(t, m)
}

func mappedPages(m *Model) uint64 {
	var n uint64
	for _, p := range m.l2p {
		if p != unmapped {
			n++
		}
	}
	return n
}

func TestOutOfRange(t *testing.T) {
	m := newModel(t, Config{LogicalBytes: 64 * mib, OverProvisioning: 0.28})
	size := int64(64 * mib)
	for _, r := range [][2]int64{{-1, 10}, {0, -1}, {size, 1}, {size - 4096, 4097}, {size + 4096, 0}, {1 << 62, 1 << 62}} {
		for name, op := range map[string]func(int64, int64) error{"Write": m.Write, "Discard": m.Discard} {
			if err := op(r[0], r[1]); !errors.Is(err, ErrOutOfRange) {
				t.Errorf("%s(%d, %d) = %v, want ErrOutOfRange", name, r[0], r[1], err)
			}
		}
	}
	// Refused I/O leaves no trace, not even its in-range part.
	if c := m.Counters(); c != (Counters{}) || mappedPages(m) != 0 {
		t.Errorf("after refused I/O: %+v, %d mapped", c, mappedPages(m))
	}
	// The whole device, and nothing at its end, are in range.
	if err := m.Write(0, size); err != nil {
		t.Error(err)
	}
	if err := m.Discard(size, 0); err != nil {
		t.Error(err)
	}
}

func TestSequentialOverwriteIsOne(t *testing.T) {
	for _, c := range []Config{
		{LogicalBytes: 64 * mib, OverProvisioning: 0.28},
		{LogicalBytes: 64 * mib, OverProvisioning: 0.07, PagesPerBlock: 64, ReserveBlocks: 4},
		// Logical space not a whole number of blocks.
		{LogicalBytes: 64*mib + 40960, OverProvisioning: 0.1, PagesPerBlock: 128},
	} {
		m := newModel(t, c)
		if err := m.Write(0, c.LogicalBytes); err != nil {
			t.Fatal(err)
		}
		if c := m.Counters(); c.WA() != 1 || c.Erases != 0 {
			t.Errorf("%+v: first fill %+v", c, m.Counters())
		}
		for pass := range 3 {
			before := m.Counters()
			// In 1 MiB requests, as a sequential fio job would issue them.
			for off := int64(0); off < c.LogicalBytes; off += mib {
				if err := m.Write(off, min(mib, c.LogicalBytes-off)); err != nil {
					t.Fatal(err)
				}
			}
			d := m.Counters().Sub(before)
			if d.MediaPages != d.HostPages || d.GCPages != 0 || d.Erases == 0 {
				t.Errorf("%+v: overwrite %d: %+v, want WA exactly 1 and some erases", c, pass+1, d)
			}
		}
		checkInvariants(t, m)
	}
}

func TestRandomKeepsInvariants(t *testing.T) {
	// A small model with small blocks and a larger reserve, many GC rounds,
	// writes and discards mixed; the structures must stay consistent.
	m := newModel(t, Config{LogicalBytes: 8 * mib, OverProvisioning: 0.2, PagesPerBlock: 64, ReserveBlocks: 3})
	src := rand.NewPCG(7, 8)
	rng := rand.New(src)
	size := int64(8 * mib)
	for i := range 20000 {
		off, n := rng.Int64N(size), rng.Int64N(64*1024)
		n = min(n, size-off)
		var err error
		if i%5 == 0 {
			err = m.Discard(off, n)
		} else {
			err = m.Write(off, n)
		}
		if err != nil {
			t.Fatal(err)
		}
		if i%2000 == 0 {
			checkInvariants(t, m)
		}
	}
	m.WriteRandomPages(5*m.LogicalPages(), src)
	checkInvariants(t, m)
	c := m.Counters()
	if c.Erases == 0 || c.GCPages == 0 || c.MediaPages != c.HostPages+c.GCPages {
		t.Errorf("counters %+v", c)
	}
}
