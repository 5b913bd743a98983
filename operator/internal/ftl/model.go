package ftl

import (
	"errors"
	"fmt"
	"math/bits"
)

// unmapped marks a logical page that holds no data (never written, or discarded).
const unmapped = ^uint32(0)

// ErrOutOfRange is returned for I/O that is not wholly inside the logical
// capacity. Such I/O is refused, not clamped: a trace that runs off the end of
// the device was taken from a different device, and silently dropping part of
// it would understate the writes.
var ErrOutOfRange = errors.New("ftl: I/O outside the logical capacity")

// Counters are cumulative, in pages. Take one with Model.Counters before and
// after a phase and Sub them for the phase's own figures.
type Counters struct {
	// HostPages is pages the host wrote.
	HostPages uint64
	// GCPages is valid pages garbage collection copied.
	GCPages uint64
	// MediaPages is pages programmed into flash: HostPages + GCPages.
	MediaPages uint64
	// Erases counts erased blocks.
	Erases uint64
	// DiscardedPages counts pages that held data until a discard unmapped them.
	DiscardedPages uint64
}

// WA is media over host pages; 0 before any host write.
func (c Counters) WA() float64 {
	if c.HostPages == 0 {
		return 0
	}
	return float64(c.MediaPages) / float64(c.HostPages)
}

// Sub returns the counts since earlier.
func (c Counters) Sub(earlier Counters) Counters {
	return Counters{
		HostPages:      c.HostPages - earlier.HostPages,
		GCPages:        c.GCPages - earlier.GCPages,
		MediaPages:     c.MediaPages - earlier.MediaPages,
		Erases:         c.Erases - earlier.Erases,
		DiscardedPages: c.DiscardedPages - earlier.DiscardedPages,
	}
}

// Model is the FTL's state. Memory is about 4 bytes per logical page plus
// 4.125 per physical page (about 9.3 bytes per exported 4 KiB at r = 0.28,
// 156 MB for 64 GiB). It is not safe for concurrent use.
type Model struct {
	g geometry
	// l2p maps a logical page to its physical page, or unmapped.
	l2p []uint32
	// p2l is the logical page each physical page was programmed for; it
	// means something only while the page's bit in validBits is set.
	p2l       []uint32
	validBits []uint64
	// valid counts each block's valid pages.
	valid []uint16
	// Closed (full, not being written) blocks sit in doubly linked lists by
	// valid count, so that greedy GC finds its victim by looking at the
	// lowest non-empty list rather than at every block.
	head       []int32 // per valid count 0..ppb; -1 when empty
	next, prev []int32 // per block
	minBucket  int     // no closed block has fewer valid pages
	free       []int32 // erased blocks
	frontier   int32   // the open block host writes and GC copies go to
	fill       int     // pages programmed in the frontier
	c          Counters
}

// New builds an empty (all pages unmapped, all blocks erased) model.
func New(c Config) (*Model, error) {
	g, err := c.withDefaults().geometry()
	if err != nil {
		return nil, err
	}
	nb := int(g.physicalBlocks)
	m := allocate(g, 0)
	for i := range m.l2p {
		m.l2p[i] = unmapped
	}
	for i := range m.head {
		m.head[i] = -1
	}
	// Stacked so that block 0 is used first: easier to follow in a debugger.
	for b := nb - 1; b >= 0; b-- {
		m.free = append(m.free, int32(b))
	}
	m.frontier = m.popFree()
	return m, nil
}

// allocate makes a model's structures for geometry g, zeroed, with free holding nFree blocks.
func allocate(g geometry, nFree int) *Model {
	nb := int(g.physicalBlocks)
	return &Model{
		g:         g,
		l2p:       make([]uint32, g.logicalPages),
		p2l:       make([]uint32, nb*g.ppb),
		validBits: make([]uint64, nb*g.ppb/64),
		valid:     make([]uint16, nb),
		head:      make([]int32, g.ppb+1),
		next:      make([]int32, nb),
		prev:      make([]int32, nb),
		free:      make([]int32, nFree, nb),
	}
}

// LogicalPages is the exported capacity in pages.
func (m *Model) LogicalPages() int64 { return m.g.logicalPages }

// PageBytes is the mapping unit.
func (m *Model) PageBytes() int { return m.g.pageBytes }

// PhysicalPages is the flash capacity in pages, whole erase blocks.
func (m *Model) PhysicalPages() int64 { return m.g.physicalBlocks * int64(m.g.ppb) }

// OverProvisioning is the model's actual r after rounding up to whole blocks;
// compare analytic figures against this one.
func (m *Model) OverProvisioning() float64 {
	return float64(m.PhysicalPages())/float64(m.g.logicalPages) - 1
}

// Counters returns the cumulative counters.
func (m *Model) Counters() Counters { return m.c }

// Write records a host write of length bytes at offset. A write that covers
// part of a page is counted as a write of the whole page: the drive has to
// program a whole mapping unit (read-modify-write inside the controller), so
// that is what reaches the flash.
func (m *Model) Write(offset, length int64) error {
	first, end, err := m.pages(offset, length, true)
	if err != nil {
		return err
	}
	for lpn := first; lpn < end; lpn++ {
		m.writePage(uint32(lpn))
	}
	return nil
}

// Discard records a TRIM/deallocate of length bytes at offset. Only pages the
// range covers wholly are unmapped: a partly discarded page still holds the
// rest of its data. Unmapped pages become invalid, so GC no longer copies them.
func (m *Model) Discard(offset, length int64) error {
	first, end, err := m.pages(offset, length, false)
	if err != nil {
		return err
	}
	for lpn := first; lpn < end; lpn++ {
		if old := m.l2p[lpn]; old != unmapped {
			m.invalidate(old)
			m.l2p[lpn] = unmapped
			m.c.DiscardedPages++
		}
	}
	return nil
}

// pages turns a byte range into the page range [first, end): outward (every
// page touched) for writes, inward (only whole pages) for discards.
func (m *Model) pages(offset, length int64, outward bool) (first, end int64, err error) {
	limit := m.g.logicalPages * int64(m.g.pageBytes)
	if offset < 0 || length < 0 || offset > limit || length > limit-offset {
		return 0, 0, fmt.Errorf("%w: offset %d length %d, capacity %d bytes", ErrOutOfRange, offset, length, limit)
	}
	ps := int64(m.g.pageBytes)
	if outward {
		first, end = offset/ps, (offset+length+ps-1)/ps
	} else {
		first, end = (offset+ps-1)/ps, (offset+length)/ps
	}
	if length == 0 || end < first {
		return 0, 0, nil
	}
	return first, end, nil
}

// writePage is one host page write: the old copy becomes invalid, the new one
// goes to the frontier, and GC runs if that used up the reserve.
func (m *Model) writePage(lpn uint32) {
	m.c.HostPages++
	if old := m.l2p[lpn]; old != unmapped {
		m.invalidate(old)
	}
	m.program(lpn)
	if len(m.free) < m.g.reserve {
		m.collect()
	}
}

// program writes lpn into the next page of the frontier.
func (m *Model) program(lpn uint32) {
	if m.fill == m.g.ppb {
		m.insert(m.frontier)
		m.frontier = m.popFree()
	}
	ppn := uint32(m.frontier)*uint32(m.g.ppb) + uint32(m.fill)
	m.fill++
	m.p2l[ppn] = lpn
	m.l2p[lpn] = ppn
	m.validBits[ppn/64] |= 1 << (ppn % 64)
	m.valid[m.frontier]++
	m.c.MediaPages++
}

func (m *Model) popFree() int32 {
	n := len(m.free) - 1
	b := m.free[n]
	m.free = m.free[:n]
	m.fill = 0
	return b
}

// invalidate marks a physical page stale and moves its block down a bucket.
func (m *Model) invalidate(ppn uint32) {
	m.validBits[ppn/64] &^= 1 << (ppn % 64)
	b := int32(ppn / uint32(m.g.ppb))
	if b == m.frontier {
		m.valid[b]--
		return
	}
	m.remove(b)
	m.valid[b]--
	m.insert(b)
}

// insert puts closed block b into the bucket of its valid count.
func (m *Model) insert(b int32) {
	v := int(m.valid[b])
	h := m.head[v]
	m.next[b], m.prev[b] = h, -1
	if h >= 0 {
		m.prev[h] = b
	}
	m.head[v] = b
	m.minBucket = min(m.minBucket, v)
}

// remove takes closed block b out of its bucket.
func (m *Model) remove(b int32) {
	n, p := m.next[b], m.prev[b]
	if p >= 0 {
		m.next[p] = n
	} else {
		m.head[m.valid[b]] = n
	}
	if n >= 0 {
		m.prev[n] = p
	}
}

// collect runs greedy GC until the reserve is restored: the closed block with
// the fewest valid pages has them copied to the frontier and is erased.
// Config.Validate guarantees that such a block always has an invalid page, so
// each round gains space and at most one new frontier is opened per victim
// (the free list cannot run dry; see the geometry check).
func (m *Model) collect() {
	ppb := m.g.ppb
	for len(m.free) < m.g.reserve {
		for m.head[m.minBucket] < 0 {
			m.minBucket++
			if m.minBucket >= ppb {
				panic("ftl: no garbage collection victim with an invalid page (geometry check broken)")
			}
		}
		b := m.head[m.minBucket]
		m.remove(b)
		words := m.validBits[int(b)*ppb/64 : (int(b)+1)*ppb/64]
		base := uint32(b) * uint32(ppb)
		for wi, w := range words {
			for w != 0 {
				i := uint32(bits.TrailingZeros64(w))
				w &= w - 1
				m.program(m.p2l[base+uint32(wi)*64+i])
				m.c.GCPages++
			}
			words[wi] = 0
		}
		m.valid[b] = 0
		m.free = append(m.free, b)
		m.c.Erases++
	}
}
