package blocktrace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrLostEvents marks a trace that misses events: the ring buffer
// overwrote or dropped some before they were read. Whatever was computed
// from it (an FTL model's write amplification) must not be trusted.
var ErrLostEvents = errors.New("blocktrace: the trace lost events")

// Totals adds up the completions of a trace. The byte sums count what the
// block layer's stat file counts for the same requests: the sectors of each
// completion, failed ones included.
type Totals struct {
	Writes, WriteBytes     uint64
	Discards, DiscardBytes uint64
	Reads, ReadBytes       uint64
	Flushes                uint64
	// Others are N requests (see the package comment) with a position;
	// OtherBytes > 0 means writes the stat counts may be among them.
	Others, OtherBytes uint64
	// Passthrough counts completions without a position (NoSector): a
	// driver's own commands, which the stat does not count.
	Passthrough, PassthroughBytes uint64
	// Errors counts completions with a non-zero error (also in the sums).
	Errors uint64
	// Issues counts block_rq_issue events, which stay out of the sums.
	Issues uint64
	// LostMarkers counts trace_pipe's lost-events markers, LostEvents the
	// events they say were lost ("[LOST EVENTS]" adds no count).
	LostMarkers, LostEvents uint64
	// Malformed counts lines that named a block event but did not parse.
	Malformed uint64
	// Overrun and Dropped are the ring buffer's own counts, which
	// Tracer.Stop reads from per_cpu/cpu*/stats ("overrun", "dropped
	// events"): overwritten events show as markers too, events dropped by a
	// buffer not in overwrite mode only here.
	Overrun, Dropped uint64
}

// Add counts one parsed line.
func (t *Totals) Add(p Parsed) {
	switch p.Kind {
	case Complete:
		t.AddComplete(p.Event)
	case Issue:
		t.Issues++
	case Lost:
		t.LostMarkers++
		if p.Lost > 0 {
			t.LostEvents += uint64(p.Lost)
		}
	case Malformed:
		t.Malformed++
	}
}

// AddComplete counts one block_rq_complete event.
func (t *Totals) AddComplete(e Event) {
	b := e.Bytes()
	switch {
	case e.Passthrough():
		t.Passthrough++
		t.PassthroughBytes += b
	case e.Op == OpWrite:
		t.Writes++
		t.WriteBytes += b
	case e.Op == OpDiscard:
		t.Discards++
		t.DiscardBytes += b
	case e.Op == OpRead:
		t.Reads++
		t.ReadBytes += b
	case e.Op == OpFlush:
		t.Flushes++
	default:
		t.Others++
		t.OtherBytes += b
	}
	if e.Error != 0 {
		t.Errors++
	}
}

// Err is nil for a complete trace, else an error wrapping ErrLostEvents
// that says what was lost. Malformed lines count as lost: an event that
// could not be read is missing from the stream.
func (t Totals) Err() error {
	var what []string
	if t.LostMarkers > 0 {
		what = append(what, fmt.Sprintf("%d lost-events markers (%d events counted)", t.LostMarkers, t.LostEvents))
	}
	if t.Overrun > 0 {
		what = append(what, fmt.Sprintf("%d overwritten by the ring buffer", t.Overrun))
	}
	if t.Dropped > 0 {
		what = append(what, fmt.Sprintf("%d dropped by the ring buffer", t.Dropped))
	}
	if t.Malformed > 0 {
		what = append(what, fmt.Sprintf("%d malformed lines", t.Malformed))
	}
	if what == nil {
		return nil
	}
	return fmt.Errorf("%w: %s (a larger buffer_size_kb, or a faster consumer, keeps them)", ErrLostEvents, strings.Join(what, ", "))
}

// ParseText reads recorded trace text (a saved trace_pipe or trace file),
// calls fn, when not nil, with each block_rq_complete event in order, and
// returns the totals. Its error is a read error; check Totals.Err for
// losses.
func ParseText(r io.Reader, fn func(Event)) (Totals, error) {
	var t Totals
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// no trace line is this long: count it and skip the rest of it
			t.Malformed++
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			line = nil
		}
		if len(line) > 0 {
			p := ParseLine(line)
			t.Add(p)
			if p.Kind == Complete && fn != nil {
				fn(p.Event)
			}
		}
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return t, err
		}
	}
}
