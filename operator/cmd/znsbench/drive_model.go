package main

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/zns-mysql/zns-mysql/operator/internal/blocktrace"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/ftl"
)

const (
	// maxModelPages bounds each model's map (about 9 bytes per page): a larger device is modelled with a larger
	// mapping unit, so that four factors of a 4 TB drive still fit in a few hundred MB.
	maxModelPages = 8 << 20
	// maxPendingEvents bounds the trace kept while the models precondition themselves (24 bytes each): a phase
	// that writes faster than they settle loses its model, never the sidecar its memory.
	maxPendingEvents = 4 << 20
	// modelSeed makes every phase's model start from the same steady state.
	modelSeed = 0x7a6e73
)

// modelSet is one FTL model per over-provisioning factor, fed from the trace. The models precondition
// themselves first (two sequential passes, random rounds until they settle); the trace that arrives meanwhile
// waits in pending and is applied once they are ready, in order.
type modelSet struct {
	deviceBytes int64
	ops         []int
	cache       *modelCache // nil: every phase settles its models

	mu       sync.Mutex
	ready    bool
	done     chan struct{}
	pending  []blocktrace.Event
	overflow bool
	models   []*ftl.Model
	steady   []bool
	rounds   []int
	start    []ftl.Counters
	skipped  int64 // events outside the model's capacity
	err      error
}

func newModelSet(deviceBytes int64, ops []int) *modelSet {
	return &modelSet{deviceBytes: deviceBytes, ops: ops, done: make(chan struct{})}
}

// minModelBlocks keeps enough erase blocks in a small device for its spare ones to matter: at 7% a model needs
// a few spare blocks beyond GC's reserve, and greedy GC behaves like a drive's only with many blocks to choose from.
const minModelBlocks = 256

// geometry is the mapping unit that keeps a model of the device within maxModelPages, and an erase block of
// ftl's default size unless the device is too small to hold minModelBlocks of them (down to 64 pages).
func geometry(deviceBytes int64) (pageBytes, pagesPerBlock int) {
	pb := int64(ftl.DefaultPageBytes)
	for deviceBytes/pb > maxModelPages {
		pb *= 2
	}
	ppb := int64(ftl.DefaultPagesPerBlock)
	for ppb > 64 && deviceBytes/pb/ppb < minModelBlocks {
		ppb /= 2
	}
	return int(pb), int(ppb)
}

// feed is the tracer's callback.
func (s *modelSet) feed(e blocktrace.Event) {
	if e.Error != 0 || e.Passthrough() || (e.Op != blocktrace.OpWrite && e.Op != blocktrace.OpDiscard) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready {
		if len(s.pending) >= maxPendingEvents {
			s.overflow = true
			return
		}
		s.pending = append(s.pending, e)
		return
	}
	s.apply(e)
}

// apply runs one event through every model; the caller holds mu.
func (s *modelSet) apply(e blocktrace.Event) {
	off, n := int64(e.Sector)*blocktrace.SectorBytes, int64(e.Bytes())
	for _, m := range s.models {
		var err error
		if e.Op == blocktrace.OpWrite {
			err = m.Write(off, n)
		} else {
			err = m.Discard(off, n)
		}
		if errors.Is(err, ftl.ErrOutOfRange) {
			s.skipped++
			return
		}
	}
}

// precondition builds and settles the models, then applies what the trace gathered meanwhile. The models are
// independent and each settles on one core: they settle side by side, so that a phase waits for the slowest
// factor rather than for the sum (on the emulated node, 67 s and 34 s one after the other for a 2 GiB device).
func (s *modelSet) precondition(logf func(string, ...any)) {
	defer close(s.done)
	pb, ppb := geometry(s.deviceBytes)
	logical := s.deviceBytes / int64(pb*ppb) * int64(pb*ppb)
	models := make([]*ftl.Model, len(s.ops))
	steady := make([]bool, len(s.ops))
	rounds := make([]int, len(s.ops))
	errs := make([]error, len(s.ops))
	var wg sync.WaitGroup
	for i, op := range s.ops {
		wg.Go(func() {
			m, st, err := s.settle(ftl.Config{LogicalBytes: logical, OverProvisioning: float64(op) / 100, PageBytes: pb, PagesPerBlock: ppb}, op, logf)
			if err != nil {
				errs[i] = err
				return
			}
			models[i], steady[i], rounds[i] = m, st.Steady, st.Rounds
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		s.fail(err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models, s.steady, s.rounds = models, steady, rounds
	for _, m := range models {
		s.start = append(s.start, m.Counters())
	}
	for _, e := range s.pending {
		s.apply(e)
	}
	s.pending, s.ready = nil, true
}

// settle gives one model in steady state: the node's cache entry when an earlier phase left one, else a model
// preconditioned here (and kept in the cache for the phases after).
func (s *modelSet) settle(cfg ftl.Config, op int, logf func(string, ...any)) (*ftl.Model, settled, error) {
	if s.cache != nil {
		m, st, err := s.cache.load(cfg, op)
		switch {
		case err == nil:
			logf("model at OP %d%%: settled before on this node, read from its cache (%d random rounds, steady state %v (%s))", op, st.Rounds, st.Steady, st.Reason)
			return m, st, nil
		case !errors.Is(err, fs.ErrNotExist):
			logf("model at OP %d%%: the node's cache entry is not used, the model settles anew: %v", op, err)
		}
	}
	m, err := ftl.New(cfg)
	if err != nil {
		return nil, settled{}, fmt.Errorf("a model of %d bytes at OP %d%%: %w", cfg.LogicalBytes, op, err)
	}
	p, err := m.Precondition(ftl.PreconditionConfig{Seed: modelSeed})
	if err != nil {
		return nil, settled{}, err
	}
	logf("model at OP %d%%: %d random rounds, steady state %v (%s)", op, len(p.RoundWA), p.Steady.Reached, p.Steady.Reason)
	st := settled{Rounds: len(p.RoundWA), Steady: p.Steady.Reached, Reason: p.Steady.Reason}
	if s.cache != nil {
		if err := s.cache.store(cfg, op, m, st); err != nil {
			logf("model at OP %d%%: not kept in the node's cache, later phases settle it again: %v", op, err)
		}
	}
	return m, st, nil
}

func (s *modelSet) fail(err error) {
	s.mu.Lock()
	s.err, s.pending, s.ready = err, nil, true
	s.mu.Unlock()
}

// results waits for the models to be ready and reads what the phase did to each.
func (s *modelSet) results() ([]drivereport.Modelled, error) {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.err != nil:
		return nil, s.err
	case s.overflow:
		return nil, fmt.Errorf("the phase wrote more than %d requests while the model was still settling; model a smaller device or run a longer phase", maxPendingEvents)
	case s.skipped > 0:
		return nil, fmt.Errorf("%d traced requests fell outside the device's %d bytes", s.skipped, s.deviceBytes)
	}
	out := make([]drivereport.Modelled, len(s.models))
	for i, m := range s.models {
		c := m.Counters().Sub(s.start[i])
		pb := int64(m.PageBytes())
		out[i] = drivereport.Modelled{OverProvisioningPercent: s.ops[i], HostWrittenBytes: int64(c.HostPages) * pb,
			MediaWrittenBytes: int64(c.MediaPages) * pb, SteadyState: s.steady[i], PreconditionRounds: s.rounds[i], PageBytes: int(pb)}
	}
	return out, nil
}
