package ftl

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// snapshotMagic opens a snapshot; its last byte is the format's version.
var snapshotMagic = [8]byte{'Z', 'N', 'S', 'F', 'T', 'L', 0, 1}

// WriteSnapshot writes the model's whole state, so that ReadSnapshot gives back a model that goes on exactly
// as this one would: a preconditioned model is then settled once and reused, not settled again by every phase
// (minutes for a large drive, and on an emulated node the CPU the databases need). A SHA-256 of what precedes
// it ends the snapshot.
func (m *Model) WriteSnapshot(w io.Writer) error {
	h := sha256.New()
	bw := bufio.NewWriter(io.MultiWriter(w, h))
	fields := []any{snapshotMagic,
		int64(m.g.pageBytes), int64(m.g.ppb), m.g.logicalPages, m.g.logicalBlocks, m.g.physicalBlocks, int64(m.g.reserve),
		m.c, int64(m.minBucket), m.frontier, int64(m.fill), int64(len(m.free))}
	for _, f := range fields {
		if err := binary.Write(bw, binary.LittleEndian, f); err != nil {
			return err
		}
	}
	for _, s := range []any{m.free, m.l2p, m.p2l, m.validBits, m.valid, m.head, m.next, m.prev} {
		if err := binary.Write(bw, binary.LittleEndian, s); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(h.Sum(nil))
	return err
}

// ErrSnapshotMismatch is returned by ReadSnapshot for a snapshot of another drive's geometry.
var ErrSnapshotMismatch = errors.New("ftl: the snapshot is of another geometry")

// ReadSnapshot reads what WriteSnapshot wrote of a model of config c. A snapshot that is cut short, damaged
// (its checksum), of another format or of another geometry than c's is refused, never half read. It is read as
// a stream: a large drive's model is not held twice.
func ReadSnapshot(r io.Reader, c Config) (*Model, error) {
	g, err := c.withDefaults().geometry()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(r)
	h := sha256.New()
	hr := io.TeeReader(br, h)
	var magic [len(snapshotMagic)]byte
	if _, err := io.ReadFull(hr, magic[:]); err != nil || magic != snapshotMagic {
		return nil, errors.New("ftl: not a model snapshot of this format")
	}
	var head struct {
		PageBytes, PPB, LogicalPages, LogicalBlocks, PhysicalBlocks, Reserve int64
		C                                                                    Counters
		MinBucket                                                            int64
		Frontier                                                             int32
		Fill, Free                                                           int64
	}
	if err := binary.Read(hr, binary.LittleEndian, &head); err != nil {
		return nil, fmt.Errorf("ftl: the model snapshot's header: %w", err)
	}
	if head.PageBytes != int64(g.pageBytes) || head.PPB != int64(g.ppb) || head.LogicalPages != g.logicalPages ||
		head.LogicalBlocks != g.logicalBlocks || head.PhysicalBlocks != g.physicalBlocks || head.Reserve != int64(g.reserve) {
		return nil, fmt.Errorf("%w: %d pages of %d bytes in %d blocks of %d, the model %d of %d in %d of %d", ErrSnapshotMismatch,
			head.LogicalPages, head.PageBytes, head.PhysicalBlocks, head.PPB, g.logicalPages, g.pageBytes, g.physicalBlocks, g.ppb)
	}
	nb := int(g.physicalBlocks)
	if head.Free < 0 || head.Free > int64(nb) || head.Frontier < 0 || head.Frontier >= int32(nb) ||
		head.Fill < 0 || head.Fill > int64(g.ppb) || head.MinBucket < 0 || head.MinBucket > int64(g.ppb) {
		return nil, errors.New("ftl: the model snapshot's header is out of range")
	}
	m := allocate(g, int(head.Free))
	m.c, m.minBucket, m.frontier, m.fill = head.C, int(head.MinBucket), head.Frontier, int(head.Fill)
	for _, s := range []any{m.free, m.l2p, m.p2l, m.validBits, m.valid, m.head, m.next, m.prev} {
		if err := binary.Read(hr, binary.LittleEndian, s); err != nil {
			return nil, fmt.Errorf("ftl: the model snapshot is cut short: %w", err)
		}
	}
	var sum [sha256.Size]byte
	if _, err := io.ReadFull(br, sum[:]); err != nil {
		return nil, fmt.Errorf("ftl: the model snapshot's checksum is missing: %w", err)
	}
	if !bytes.Equal(h.Sum(nil), sum[:]) {
		return nil, errors.New("ftl: the model snapshot is damaged (its SHA-256 does not match)")
	}
	if n, _ := io.Copy(io.Discard, br); n != 0 {
		return nil, fmt.Errorf("ftl: %d bytes after the model snapshot", n)
	}
	return m, nil
}
