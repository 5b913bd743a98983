package ftl

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/zns-mysql/zns-mysql/operator/internal/steadystate"
)

// WriteRandomPages writes n pages, each at a page-aligned offset drawn
// uniformly from the logical space by src. The draw is a multiply-high of a
// 64-bit value (bias below 2^-30 for any model that fits in memory), which
// keeps the generator's cost small next to the model's.
func (m *Model) WriteRandomPages(n int64, src *rand.PCG) {
	lp := uint64(m.g.logicalPages)
	for range n {
		hi, _ := bits.Mul64(src.Uint64(), lp)
		m.writePage(uint32(hi))
	}
}

// WriteSequentialPass writes every logical page once, in order.
func (m *Model) WriteSequentialPass() {
	for lpn := range m.g.logicalPages {
		m.writePage(uint32(lpn))
	}
}

// PreconditionConfig drives Precondition. The zero value is usable.
type PreconditionConfig struct {
	// Rule judges the per-round write amplification; zero means
	// steadystate.DefaultRule().
	Rule steadystate.Rule
	// RoundFraction is each round's random writes as a share of the logical
	// capacity; zero means 1 (a round overwrites the capacity once, on average).
	RoundFraction float64
	// MaxRounds bounds the random rounds; zero means 30.
	MaxRounds int
	// Seed makes the random offsets reproducible.
	Seed uint64
}

// Preconditioned is what Precondition did.
type Preconditioned struct {
	// RoundWA is each random round's write amplification, in order.
	RoundWA []float64
	// Steady is the rule's judgement of the last window of RoundWA;
	// Steady.Reached tells whether steady state was reached before MaxRounds.
	Steady steadystate.Result
	// Sequential is the two sequential passes' counters.
	Sequential Counters
}

// Precondition brings the model to steady state the way the seed methodology
// preconditions a conventional drive with fio: two sequential passes over the
// whole logical space, then rounds of uniform random page writes until the
// steady-state rule holds over the rounds' write amplification, or MaxRounds.
func (m *Model) Precondition(c PreconditionConfig) (Preconditioned, error) {
	if c.Rule == (steadystate.Rule{}) {
		c.Rule = steadystate.DefaultRule()
	}
	if err := c.Rule.Validate(); err != nil {
		return Preconditioned{}, err
	}
	if c.RoundFraction == 0 {
		c.RoundFraction = 1
	}
	if !(c.RoundFraction > 0) || math.IsInf(c.RoundFraction, 0) {
		return Preconditioned{}, fmt.Errorf("ftl: RoundFraction is %v, want more than 0", c.RoundFraction)
	}
	if c.MaxRounds == 0 {
		c.MaxRounds = 30
	}
	if c.MaxRounds < c.Rule.Window {
		return Preconditioned{}, fmt.Errorf("ftl: MaxRounds is %d, fewer than the rule's window of %d", c.MaxRounds, c.Rule.Window)
	}
	perRound := int64(math.Ceil(c.RoundFraction * float64(m.g.logicalPages)))
	var p Preconditioned
	before := m.Counters()
	m.WriteSequentialPass()
	m.WriteSequentialPass()
	p.Sequential = m.Counters().Sub(before)
	src := rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15)
	for range c.MaxRounds {
		before := m.Counters()
		m.WriteRandomPages(perRound, src)
		p.RoundWA = append(p.RoundWA, m.Counters().Sub(before).WA())
		if p.Steady = c.Rule.Evaluate(p.RoundWA); p.Steady.Reached {
			break
		}
	}
	return p, nil
}
