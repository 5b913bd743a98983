package ftl

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/steadystate"
)

// analyticModelBytes is large enough for the reserve and the open block to be
// a small share of the spare at r = 0.1 (2048 blocks of 1024 pages), and small
// enough that the whole table runs in a few seconds on a loaded machine.
const analyticModelBytes = 2 << 30

func preconditioned(t *testing.T, c Config, seed uint64) (*Model, Preconditioned) {
	t.Helper()
	m := newModel(t, c)
	p, err := m.Precondition(PreconditionConfig{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Steady.Reached {
		t.Fatalf("%+v: no steady state in %d rounds: %s (WA %.3f)", c, len(p.RoundWA), p.Steady.Reason, p.RoundWA)
	}
	return m, p
}

func TestUniformRandomMatchesAnalytic(t *testing.T) {
	for _, r := range []float64{0.1, 0.2, 0.3, 0.5, 1.0} {
		m, p := preconditioned(t, Config{LogicalBytes: analyticModelBytes, OverProvisioning: r}, 1)
		before := m.Counters()
		m.WriteRandomPages(2*m.LogicalPages(), rand.NewPCG(2, 3))
		got := m.Counters().Sub(before).WA()
		want := GreedyUniformWA(m.OverProvisioning())
		t.Logf("r %.4f: simulated WA %.4f, analytic %.4f (%+.2f%%); preconditioning rounds %.3f", m.OverProvisioning(), got, want, (got/want-1)*100, p.RoundWA)
		if math.Abs(got/want-1) > 0.03 {
			t.Errorf("r %.4f: simulated WA %.4f is more than 3%% from the analytic %.4f", m.OverProvisioning(), got, want)
		}
	}
}

func TestPrecondition(t *testing.T) {
	c := Config{LogicalBytes: 256 * mib, OverProvisioning: 0.28}
	m, p := preconditioned(t, c, 42)
	// Two sequential passes over an empty drive: two capacities, WA 1.
	if s := p.Sequential; s.HostPages != 2*uint64(m.LogicalPages()) || s.MediaPages != s.HostPages {
		t.Errorf("sequential passes %+v", s)
	}
	// The first random round starts from blocks full of valid data and spare
	// blocks still free: its WA is the lowest.
	if len(p.RoundWA) < 5 || slices.Min(p.RoundWA) != p.RoundWA[0] || p.RoundWA[0] <= 1 {
		t.Errorf("rounds %v", p.RoundWA)
	}
	if got := steadystate.DefaultRule().Evaluate(p.RoundWA); got != p.Steady {
		t.Errorf("Steady %+v, the rule says %+v", p.Steady, got)
	}
	// The same seed gives the same rounds, another seed other rounds.
	_, again := preconditioned(t, c, 42)
	_, other := preconditioned(t, c, 43)
	if !slices.Equal(p.RoundWA, again.RoundWA) || slices.Equal(p.RoundWA, other.RoundWA) {
		t.Errorf("seed 42: %v and %v; seed 43: %v", p.RoundWA, again.RoundWA, other.RoundWA)
	}
}

func TestPreconditionLimits(t *testing.T) {
	c := Config{LogicalBytes: 64 * mib, OverProvisioning: 0.28}
	// A rule no series of a random process meets stops at MaxRounds.
	strict := steadystate.Rule{Window: 3, RangePct: 1e-9, ExcursionPct: 1e-9}
	p, err := newModel(t, c).Precondition(PreconditionConfig{Rule: strict, MaxRounds: 4, RoundFraction: 0.1})
	if err != nil || p.Steady.Reached || len(p.RoundWA) != 4 || !strings.Contains(p.Steady.Reason, "range") {
		t.Errorf("strict rule: %+v, %v", p, err)
	}
	for _, tc := range []struct {
		pc   PreconditionConfig
		want string
	}{
		{PreconditionConfig{Rule: steadystate.Rule{Window: 1}}, "Window"},
		{PreconditionConfig{RoundFraction: -1}, "RoundFraction"},
		{PreconditionConfig{RoundFraction: math.NaN()}, "RoundFraction"},
		{PreconditionConfig{MaxRounds: 3}, "MaxRounds is 3, fewer than the rule's window of 5"},
	} {
		m := newModel(t, c)
		if _, err := m.Precondition(tc.pc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.pc, err, tc.want)
		}
		if m.Counters() != (Counters{}) {
			t.Errorf("%+v: wrote before refusing: %+v", tc.pc, m.Counters())
		}
	}
}

func TestDiscardAllThenWriteIsOne(t *testing.T) {
	c := Config{LogicalBytes: 512 * mib, OverProvisioning: 0.1}
	m, _ := preconditioned(t, c, 5)
	if err := m.Discard(0, c.LogicalBytes); err != nil {
		t.Fatal(err)
	}
	if d := m.Counters().DiscardedPages; d != uint64(m.LogicalPages()) {
		t.Errorf("discarded %d pages, want all %d", d, m.LogicalPages())
	}
	// Every block now holds only stale pages: GC erases without copying
	// while any of them is left, i.e. for about one capacity of writes.
	before := m.Counters()
	m.WriteRandomPages(m.LogicalPages()*9/10, rand.NewPCG(6, 7))
	if d := m.Counters().Sub(before); d.WA() != 1 || d.GCPages != 0 || d.Erases == 0 {
		t.Errorf("random writes after discarding everything: %+v, WA %v", d, d.WA())
	}
	checkInvariants(t, m)
}

func TestDiscardLowersWA(t *testing.T) {
	// Both drives are preconditioned, then the host keeps overwriting the
	// lower half of the space at random. One host discards the upper half
	// first (a deleted file, with TRIM); the other does not, so the drive
	// keeps copying the upper half's stale-but-valid data around.
	c := Config{LogicalBytes: 512 * mib, OverProvisioning: 0.1}
	half := c.LogicalBytes / 2
	run := func(discard bool) float64 {
		m, _ := preconditioned(t, c, 9)
		if discard {
			if err := m.Discard(half, half); err != nil {
				t.Fatal(err)
			}
		}
		rng := rand.New(rand.NewPCG(10, 11))
		pages := half / int64(m.PageBytes())
		// Three passes' worth of the half to reach its steady state, then one measured.
		for range 3 * pages {
			if err := m.Write(rng.Int64N(pages)*int64(m.PageBytes()), int64(m.PageBytes())); err != nil {
				t.Fatal(err)
			}
		}
		before := m.Counters()
		for range pages {
			if err := m.Write(rng.Int64N(pages)*int64(m.PageBytes()), int64(m.PageBytes())); err != nil {
				t.Fatal(err)
			}
		}
		return m.Counters().Sub(before).WA()
	}
	with, without := run(true), run(false)
	// With the upper half discarded the drive is a half-size drive with
	// (1.1 - 0.5) / 0.5 = 1.2 over-provisioning.
	m := newModel(t, c)
	rEff := float64(m.PhysicalPages())/(float64(m.LogicalPages())/2) - 1
	want := GreedyUniformWA(rEff)
	t.Logf("random writes to half the space: WA %.3f with the other half discarded (analytic at r %.3f: %.3f), %.3f without", with, rEff, want, without)
	if !(with < without) || math.Abs(with/want-1) > 0.03 {
		t.Errorf("WA with discards %.3f (analytic %.3f), without %.3f", with, want, without)
	}
}
