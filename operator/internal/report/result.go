package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// num reads a status figure; ok is false when it is empty or not a number.
func num(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// ResultLine is the one-line result `kubectl get benchmarks` shows, e.g. "myrocks 0.80x, p95 1.11x vs innodb":
// every finished target but the baseline with its TPS and latency ratios ("no significant TPS difference" where
// the runs' noise covers it), failed targets by name. With spec.measureInterference each target's TPS together
// over alone follows: "...; together/alone TPS: myrocks 0.62x, innodb n.s.". Empty until there are results.
func ResultLine(b *v1alpha1.Benchmark) string {
	line, intf := comparisonLine(b), interferenceResult(b)
	switch {
	case intf == "":
		return line
	case line == "":
		return intf
	}
	return line + "; " + intf
}

// comparisonLine is ResultLine's comparison with the baseline.
func comparisonLine(b *v1alpha1.Benchmark) string {
	var parts []string
	baseOK := false
	for _, ts := range b.Status.Targets {
		if ts.Name == b.Status.Baseline {
			baseOK = ts.State == v1alpha1.TargetDone && ts.Mean != nil
			continue
		}
		switch {
		case ts.State == v1alpha1.TargetFailed:
			parts = append(parts, ts.Name+" failed ("+dash(ts.Reason)+")")
		case ts.State == v1alpha1.TargetDone && ts.VsBaseline != nil && ts.VsBaseline.TPS != "":
			v := ts.VsBaseline
			p := ts.Name + " " + times(v.TPS)
			if v.TPSVerdict == v1alpha1.VerdictNoSignificantDifference {
				p = ts.Name + " no significant TPS difference"
			}
			switch {
			case v.LatencyPct == "":
			case v.LatencyPctVerdict == v1alpha1.VerdictNoSignificantDifference:
				p += ", no significant " + pctLabel(b) + " difference"
			default:
				p += ", " + pctLabel(b) + " " + times(v.LatencyPct)
			}
			parts = append(parts, p)
		}
	}
	if b.Status.Baseline == "" {
		return strings.Join(parts, "; ")
	}
	for _, ts := range b.Status.Targets {
		if ts.Name == b.Status.Baseline && ts.State == v1alpha1.TargetFailed {
			return strings.Join(append(parts, "baseline "+ts.Name+" failed ("+dash(ts.Reason)+"): no ratios"), "; ")
		}
	}
	if !baseOK {
		return strings.Join(parts, "; ")
	}
	if len(parts) == 0 { // the baseline alone
		if ts := baselineStatus(b); ts != nil {
			line := fmt.Sprintf("%s %s TPS, %s %s ms", ts.Name, dash(ts.Mean.TPS), pctLabel(b), dash(ts.Mean.LatencyPctMs))
			if !InSteadyState(*ts) {
				line += " (not in steady state)"
			}
			return line
		}
	}
	line := strings.Join(parts, "; ") + " vs " + b.Status.Baseline
	if n := len(b.Spec.ThreadSweep); n > 0 {
		line = fmt.Sprintf("at %d threads: %s", b.Spec.ThreadSweep[n-1], line)
	}
	if len(b.Spec.Workloads) > 1 { // the status's own figures are the first workload's
		line = fmt.Sprintf("%s (1st of %d workloads): %s", b.Spec.Workloads[0], len(b.Spec.Workloads), line)
	}
	if base := baselineStatus(b); base != nil && !InSteadyState(*base) {
		line += " (baseline not in steady state)"
	}
	return line
}

func baselineStatus(b *v1alpha1.Benchmark) *v1alpha1.TargetStatus {
	for i := range b.Status.Targets {
		if b.Status.Targets[i].Name == b.Status.Baseline {
			return &b.Status.Targets[i]
		}
	}
	return nil
}

// InSteadyState is false for a target the methodology wants in steady state before its runs (a conventional
// one) whose write-only phase did not settle or did not run; statuses written before the phase existed count
// as true, since nothing is known of them.
func InSteadyState(ts v1alpha1.TargetStatus) bool {
	st := ts.SteadyState
	return st == nil || !st.Required || st.Reached
}

// Elapsed is how long the Benchmark has run: from its start to its end, or to now while it runs.
func Elapsed(b *v1alpha1.Benchmark, now time.Time) (time.Duration, bool) {
	if b.Status.StartedAt == nil {
		return 0, false
	}
	end := now
	if b.Status.CompletedAt != nil {
		end = b.Status.CompletedAt.Time
	}
	// In whole seconds, as the API stores the times: the controller computes this from a completedAt it has just
	// set (with its nanoseconds) and a reader from the stored one, and both must get the same figure.
	start := b.Status.StartedAt.Time.Truncate(time.Second)
	end = end.Truncate(time.Second)
	if end.Before(start) {
		return 0, true
	}
	return end.Sub(start), true
}

// Remaining estimates the time left once the runs are scheduled: the rest of the current run (from its common
// start), then each further run with its start delay (not the wait for its runners to be ready, which depends
// on how fast the node starts pods). The prepare phases have no estimate (how long a load
// takes depends on the drive); ok is false there and after the end.
func Remaining(b *v1alpha1.Benchmark, now time.Time) (time.Duration, bool) {
	if b.Status.Phase != v1alpha1.BenchmarkRunning || b.Status.Iteration < 1 {
		return 0, false
	}
	s := b.Spec
	run := time.Duration(s.DurationSeconds) * time.Second
	delay := time.Duration(s.StartDelaySeconds) * time.Second
	var left time.Duration
	switch at := b.Status.StartAt; {
	case at != nil:
		left = at.Add(run).Sub(now)
	default: // between runs: the next one is about to be scheduled
		left = delay + run
	}
	if left < 0 {
		left = 0 // the run is over; its results are being collected
	}
	runs := RunsTotal(b)
	left += time.Duration(runs-RunIndex(b)) * (delay + run)
	return left, true
}

// RunsTotal is how many runs the Benchmark makes (iterations, times the thread counts of a sweep).
func RunsTotal(b *v1alpha1.Benchmark) int32 {
	return b.Spec.Runs()
}

// RunIndex is the 1-based number of the current run among RunsTotal.
func RunIndex(b *v1alpha1.Benchmark) int32 {
	return b.Status.Iteration
}

// Short formats a duration for people, to the second: "1h02m03s", "4m05s", "9s".
func Short(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}
