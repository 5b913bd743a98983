// Package precondition plans and records the preconditioning of a whole
// conventional device, the seed methodology's first step for a conventional
// SSD: sequential passes over the whole device, then rounds of random 4 KiB
// writes until their write IOPS settle by SNIA's steady-state rule (package
// steadystate) or a round limit is reached. It is pure: znsdb runs the fio
// jobs it builds and feeds their reports back to a Record.
package precondition

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/steadystate"
)

// Plan is what preconditioning does. Its zero value asks for nothing.
type Plan struct {
	// Enabled: the user asked for a precondition (storage.device.precondition).
	Enabled bool
	// Passes over the whole device, sequential, in writes of BlockSize bytes.
	Passes    int
	BlockSize int64
	// Rounds is the most rounds of random writes, RoundSeconds each; they stop
	// early once Rule holds over their write IOPS.
	Rounds       int
	RoundSeconds int
	Rule         steadystate.Rule
}

// Defaults of the API (ZNSDatabase spec.storage.device.precondition).
const (
	DefaultPasses       = 2
	DefaultBlockSize    = 128 << 10
	DefaultRoundSeconds = 60
	MinBlockSize        = 4 << 10
	MaxBlockSize        = 16 << 20
	MinRoundSeconds     = 5
	MaxRoundSeconds     = 3600
)

// DefaultPlan is an enabled plan with the API's defaults: two sequential
// passes of 128 KiB writes, no random rounds, SNIA's rule for when there are.
func DefaultPlan() Plan {
	return Plan{Enabled: true, Passes: DefaultPasses, BlockSize: DefaultBlockSize, RoundSeconds: DefaultRoundSeconds,
		Rule: steadystate.DefaultRule()}
}

// Validate refuses what the API refuses, for a command line written by hand.
func (p Plan) Validate() error {
	if !p.Enabled {
		return nil
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if p.Passes < 0 || p.Passes > dbinit.MaxPreconditionPasses {
		bad("precondition: %d sequential passes, want 0 to %d", p.Passes, dbinit.MaxPreconditionPasses)
	}
	if p.BlockSize < MinBlockSize || p.BlockSize > MaxBlockSize || p.BlockSize%MinBlockSize != 0 {
		bad("precondition: block size %d, want a multiple of 4 KiB from 4 KiB to 16 MiB", p.BlockSize)
	}
	if p.Rounds < 0 || p.Rounds > dbinit.MaxPreconditionRounds {
		bad("precondition: %d random rounds, want 0 to %d", p.Rounds, dbinit.MaxPreconditionRounds)
	}
	if p.Passes == 0 && p.Rounds == 0 {
		bad("precondition: no passes and no rounds write nothing")
	}
	if p.Rounds > 0 {
		if p.RoundSeconds < MinRoundSeconds || p.RoundSeconds > MaxRoundSeconds {
			bad("precondition: rounds of %d s, want %d to %d", p.RoundSeconds, MinRoundSeconds, MaxRoundSeconds)
		}
		if err := p.Rule.Validate(); err != nil {
			errs = append(errs, err)
		} else if p.Rule.Window > p.Rounds {
			bad("precondition: a steady-state window of %d rounds is longer than the %d rounds allowed", p.Rule.Window, p.Rounds)
		}
	}
	return errors.Join(errs...)
}

// Flag names of znsdb format.
const (
	flagEnabled      = "precondition"
	flagPasses       = "precondition-passes"
	flagBlockSize    = "precondition-block-size"
	flagRounds       = "precondition-rounds"
	flagRoundSeconds = "precondition-round-seconds"
	flagWindow       = "steady-window"
	flagRange        = "steady-max-range-percent"
	flagExcursion    = "steady-max-excursion-percent"
)

// RegisterFlags adds the plan's flags to fs, with the API's defaults; Args
// writes the command line they read back.
func (p *Plan) RegisterFlags(fs *flag.FlagSet) {
	d := DefaultPlan()
	fs.BoolVar(&p.Enabled, flagEnabled, false, "precondition the whole device before mkfs (conventional devices; "+
		"runs only when a new reformat token confirms the format: it DESTROYS the device's contents)")
	fs.IntVar(&p.Passes, flagPasses, d.Passes, "sequential passes over the whole device")
	fs.Int64Var(&p.BlockSize, flagBlockSize, d.BlockSize, "write size of the sequential passes, in bytes")
	fs.IntVar(&p.Rounds, flagRounds, 0, "most rounds of random 4 KiB writes after the passes")
	fs.IntVar(&p.RoundSeconds, flagRoundSeconds, d.RoundSeconds, "length of a random round, in seconds")
	fs.IntVar(&p.Rule.Window, flagWindow, d.Rule.Window, "rounds the steady-state rule judges together")
	fs.Float64Var(&p.Rule.RangePct, flagRange, d.Rule.RangePct, "steady-state limit of the window's range, "+
		"in percent of its average")
	fs.Float64Var(&p.Rule.ExcursionPct, flagExcursion, d.Rule.ExcursionPct, "steady-state limit of the "+
		"least-squares line's excursion across the window, in percent of its average")
}

// Args is the command line of an enabled plan (none for a disabled one).
func (p Plan) Args() []string {
	if !p.Enabled {
		return nil
	}
	f := func(name, v string) string { return "--" + name + "=" + v }
	return []string{"--" + flagEnabled,
		f(flagPasses, strconv.Itoa(p.Passes)),
		f(flagBlockSize, strconv.FormatInt(p.BlockSize, 10)),
		f(flagRounds, strconv.Itoa(p.Rounds)),
		f(flagRoundSeconds, strconv.Itoa(p.RoundSeconds)),
		f(flagWindow, strconv.Itoa(p.Rule.Window)),
		f(flagRange, strconv.FormatFloat(p.Rule.RangePct, 'g', -1, 64)),
		f(flagExcursion, strconv.FormatFloat(p.Rule.ExcursionPct, 'g', -1, 64)),
	}
}

// PassJob is the fio job of one sequential pass over devPath.
func (p Plan) PassJob(devPath string) fio.Job { return fio.WholeDevicePass(devPath, p.BlockSize) }

// RoundJob is the fio job of one random round on devPath.
func (p Plan) RoundJob(devPath string) fio.Job {
	return fio.RandomRound(devPath, time.Duration(p.RoundSeconds)*time.Second)
}

// Record keeps what a precondition did so far. A precondition is complete
// only once Finish says so; until then nothing may treat the device as
// preconditioned.
type Record struct {
	plan          Plan
	capacityBytes int64
	state         dbinit.PreconditionState
	iops          []float64
}

// Start begins the record of plan on a device of capacityBytes.
func Start(plan Plan, capacityBytes int64, now time.Time) *Record {
	return &Record{plan: plan, capacityBytes: capacityBytes,
		state: dbinit.PreconditionState{StartedAt: now.UTC(), RoundsAsked: plan.Rounds}}
}

// writes reads the one write direction of a precondition job's report.
func writes(rep *fio.Report) (fio.IOStats, error) {
	if err := rep.Err(); err != nil {
		return fio.IOStats{}, err
	}
	w := rep.Totals(fio.Write)
	if w.IOBytes <= 0 || w.RuntimeMs <= 0 {
		return fio.IOStats{}, fmt.Errorf("fio reports %d bytes written in %d ms", w.IOBytes, w.RuntimeMs)
	}
	return w, nil
}

// AddPass records a sequential pass. A pass that did not write the whole
// device (less than its capacity, less the last partial block) is an error:
// a device written less than asked is not preconditioned.
func (r *Record) AddPass(rep *fio.Report) (dbinit.PassFigures, error) {
	w, err := writes(rep)
	if err != nil {
		return dbinit.PassFigures{}, fmt.Errorf("pass %d: %w", len(r.state.Passes)+1, err)
	}
	if whole := r.capacityBytes - r.capacityBytes%r.plan.BlockSize; w.IOBytes < whole {
		return dbinit.PassFigures{}, fmt.Errorf("pass %d wrote %d bytes of the device's %d", len(r.state.Passes)+1, w.IOBytes, whole)
	}
	s := float64(w.RuntimeMs) / 1000
	f := dbinit.PassFigures{Bytes: w.IOBytes, Seconds: round(s, 3), MBps: round(float64(w.IOBytes)/s/1e6, 1)}
	r.state.Passes = append(r.state.Passes, f)
	return f, nil
}

// AddRound records a random round and judges the rounds so far: done is
// true once the rule holds over the last window, or the round limit is
// reached.
func (r *Record) AddRound(rep *fio.Report) (f dbinit.RoundFigures, done bool, err error) {
	w, err := writes(rep)
	if err != nil {
		return dbinit.RoundFigures{}, false, fmt.Errorf("round %d: %w", len(r.state.Rounds)+1, err)
	}
	f = dbinit.RoundFigures{WriteIOPS: round(w.IOPS, 1), Bytes: w.IOBytes, Seconds: round(float64(w.RuntimeMs)/1000, 3)}
	r.state.Rounds = append(r.state.Rounds, f)
	// Judged on fio's own figure, not the rounded one that is reported.
	r.iops = append(r.iops, w.IOPS)
	res := r.plan.Rule.Evaluate(r.iops)
	r.state.SteadyState, r.state.SteadyReason = res.Reached, res.Reason
	if res.Start >= 0 {
		// Rounds counted from 1, as the status lists them, and the window named.
		window := fmt.Sprintf("rounds %d-%d", res.Start+1, res.Start+r.plan.Rule.Window)
		r.state.SteadyReason = fmt.Sprintf("%s: %s", window, res.Reason)
		if res.Reached {
			r.state.SteadyReason = fmt.Sprintf("steady over %s: range %.1f%% (limit %g%%), excursion %.1f%% (limit %g%%) "+
				"of the average, %.0f write IOPS", window, res.RangePct, r.plan.Rule.RangePct, res.ExcursionPct,
				r.plan.Rule.ExcursionPct, res.Average)
		}
	}
	if !res.Reached && len(r.iops) >= r.plan.Rounds {
		r.state.SteadyReason = fmt.Sprintf("not steady after %d rounds: %s", len(r.iops), r.state.SteadyReason)
	}
	return f, res.Reached || len(r.iops) >= r.plan.Rounds, nil
}

// Finish marks the record complete: every pass ran, and the rounds stopped
// at steady state or at their limit.
func (r *Record) Finish(now time.Time) dbinit.PreconditionState {
	s := r.State(now)
	s.Complete = true
	return s
}

// Fail marks the record incomplete, with why.
func (r *Record) Fail(now time.Time, err error) dbinit.PreconditionState {
	s := r.State(now)
	s.Complete, s.Note = false, "preconditioning stopped: "+err.Error()
	return s
}

// State is the record so far.
func (r *Record) State(now time.Time) dbinit.PreconditionState {
	s := r.state
	s.FinishedAt = now.UTC()
	return s
}

// WrittenBytes is what the passes and rounds of s wrote.
func WrittenBytes(s dbinit.PreconditionState) int64 {
	var n int64
	for _, p := range s.Passes {
		n += p.Bytes
	}
	for _, r := range s.Rounds {
		n += r.Bytes
	}
	return n
}

func round(x float64, digits int) float64 {
	m := math.Pow10(digits)
	return math.Round(x*m) / m
}

// Summary says in one line what s did: its totals, the passes' throughput
// and the rounds' steady-state verdict (for an Event).
func Summary(s dbinit.PreconditionState) string {
	out := fmt.Sprintf("wrote %s in %s", decimalBytes(WrittenBytes(s)), s.FinishedAt.Sub(s.StartedAt).Round(time.Second))
	if len(s.Passes) > 0 {
		out += fmt.Sprintf("; %d sequential pass(es) over the whole device at", len(s.Passes))
		for i, p := range s.Passes {
			if i > 0 {
				out += ","
			}
			out += fmt.Sprintf(" %.1f", p.MBps)
		}
		out += " MB/s"
	}
	if n := len(s.Rounds); n > 0 {
		out += fmt.Sprintf("; %d random round(s) of 4 KiB writes, the last at %.0f write IOPS", n, s.Rounds[n-1].WriteIOPS)
	}
	switch {
	case s.RoundsAsked == 0:
		out += "; no random rounds asked for, so no steady-state verdict"
	case s.SteadyState:
		out += "; steady state reached: " + s.SteadyReason
	default:
		out += "; " + s.SteadyReason
	}
	return out
}

// decimalBytes writes n in the drive makers' units (a "3.84 TB" drive).
func decimalBytes(n int64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	x, i := float64(n), 0
	for x >= 1000 && i < len(units)-1 {
		x /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.2f %s", x, units[i])
}
