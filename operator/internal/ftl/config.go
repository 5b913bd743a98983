// Package ftl models the drive-internal half of write amplification on a
// conventional SSD: a page-mapped flash translation layer with greedy garbage
// collection, fed with block-level writes and discards. Where a drive reports
// no media counter (and QEMU's or null_blk's "drives" have no FTL at all), the
// model estimates what the NAND would have received. It also carries the
// analytic reference for uniform random writes (Xiang and Kurkoski) and the
// seed methodology's self-preconditioning. It is pure.
package ftl

import (
	"errors"
	"fmt"
	"math"
)

const (
	// DefaultPageBytes is the mapping unit of most SSDs' page maps.
	DefaultPageBytes = 4096
	// DefaultPagesPerBlock makes 4 MiB erase blocks of 4 KiB mapping units
	// (NAND erase blocks are several MiB). The block size is not neutral:
	// with few pages per block the victims' valid counts vary more and greedy
	// GC does better than the analytic limit. On a 16 GiB model at r = 0.07,
	// 256 pages per block gave a write amplification 2.7% below
	// GreedyUniformWA, while 1024 on 8 GiB came within 0.1% of it at every r
	// from 0.07 to 1. Larger blocks need a larger model before the reserve and
	// the open block stop mattering: 1024 on 1 GiB (1024 blocks) came out 4.9%
	// above the analytic figure at r = 0.07.
	DefaultPagesPerBlock = 1024
	// DefaultReserveBlocks is the free-block reserve: GC runs as soon as a
	// host write leaves fewer free blocks than this. One is enough: the write
	// that takes the last free block opens it, leaving room for any victim's
	// valid pages (a victim always has an invalid one). Every reserve block is
	// spare capacity GC cannot use, so more only raises WA.
	DefaultReserveBlocks = 1
	// maxPhysicalPages keeps page numbers in uint32 with the unmapped marker
	// to spare: 16 TiB of 4 KiB pages.
	maxPhysicalPages = math.MaxUint32 - 1
)

// Config describes the modelled drive. Zero PageBytes, PagesPerBlock and
// ReserveBlocks take the defaults.
type Config struct {
	// LogicalBytes is the exported capacity, a whole number of pages.
	LogicalBytes int64
	// OverProvisioning is r = spare / user capacity (0.07 and 0.28 are common
	// datacenter figures). The physical capacity is LogicalBytes x (1+r)
	// rounded up to whole erase blocks.
	OverProvisioning float64
	// PageBytes is the mapping unit; a multiple of 512.
	PageBytes int
	// PagesPerBlock is the erase block in pages; a multiple of 64 (the model
	// keeps each block's valid bits in whole 64-bit words).
	PagesPerBlock int
	// ReserveBlocks is the number of free blocks below which GC runs.
	ReserveBlocks int
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.PageBytes == 0 {
		c.PageBytes = DefaultPageBytes
	}
	if c.PagesPerBlock == 0 {
		c.PagesPerBlock = DefaultPagesPerBlock
	}
	if c.ReserveBlocks == 0 {
		c.ReserveBlocks = DefaultReserveBlocks
	}
	return c
}

// geometry is what a valid config works out to.
type geometry struct {
	pageBytes, ppb int
	logicalPages   int64
	logicalBlocks  int64 // rounded up
	physicalBlocks int64
	reserve        int
}

// Validate reports every problem with c (after defaults), each naming its field.
func (c Config) Validate() error {
	_, err := c.withDefaults().geometry()
	return err
}

func (c Config) geometry() (geometry, error) {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("ftl: "+format, a...)) }
	if c.PageBytes <= 0 || c.PageBytes%512 != 0 {
		bad("PageBytes is %d, want a positive multiple of 512", c.PageBytes)
	}
	if c.PagesPerBlock <= 0 || c.PagesPerBlock%64 != 0 || c.PagesPerBlock > math.MaxUint16 {
		bad("PagesPerBlock is %d, want a positive multiple of 64 up to %d", c.PagesPerBlock, math.MaxUint16/64*64)
	}
	if c.ReserveBlocks < 1 {
		bad("ReserveBlocks is %d, want at least 1: GC needs a free block to copy into", c.ReserveBlocks)
	}
	if !(c.OverProvisioning > 0) || math.IsInf(c.OverProvisioning, 0) {
		bad("OverProvisioning is %v, want more than 0: without spare blocks greedy GC cannot make room", c.OverProvisioning)
	}
	if c.LogicalBytes <= 0 {
		bad("LogicalBytes is %d, want more than 0", c.LogicalBytes)
	} else if c.PageBytes > 0 && c.LogicalBytes%int64(c.PageBytes) != 0 {
		bad("LogicalBytes %d is not a whole number of %d-byte pages", c.LogicalBytes, c.PageBytes)
	}
	if len(errs) > 0 {
		return geometry{}, errors.Join(errs...)
	}
	g := geometry{pageBytes: c.PageBytes, ppb: c.PagesPerBlock, reserve: c.ReserveBlocks,
		logicalPages: c.LogicalBytes / int64(c.PageBytes)}
	ppb := int64(c.PagesPerBlock)
	g.logicalBlocks = (g.logicalPages + ppb - 1) / ppb
	phys := math.Ceil(float64(g.logicalPages) * (1 + c.OverProvisioning) / float64(ppb))
	if phys*float64(ppb) > maxPhysicalPages {
		return geometry{}, fmt.Errorf("ftl: LogicalBytes %d with OverProvisioning %v is more than %d physical pages", c.LogicalBytes, c.OverProvisioning, int64(maxPhysicalPages))
	}
	g.physicalBlocks = int64(phys)
	// GC always finds a victim with an invalid page when the blocks that can
	// hold data (all but the reserve and the open block) exceed the logical
	// space by at least one block.
	if g.physicalBlocks-g.logicalBlocks-int64(g.reserve)-1 < 1 {
		return geometry{}, fmt.Errorf("ftl: OverProvisioning %v gives %d spare blocks over %d logical ones, want at least ReserveBlocks+2 = %d",
			c.OverProvisioning, g.physicalBlocks-g.logicalBlocks, g.logicalBlocks, g.reserve+2)
	}
	return g, nil
}
