// Package benchtiming measures what orchestration adds around a Benchmark's runs: from the apply of the
// Benchmark to sysbench's first second, and from its last second to Completed, phase by phase, with the time
// spent in runner work (prepare, verify, precondition) and in database restarts (profile switches) shown apart
// from the overhead that remains. It reads only what a cluster keeps: the Benchmark's status (phaseHistory,
// the runs' endTime and durationSec), the termination messages of its runner pods, and, when recorded while
// the Benchmark ran, when its databases were not Available (RecordAvailability).
//
// The e2e suite logs the figures of its Benchmarks; the envtest suite (operator/internal/controller) checks
// the computation against a Benchmark it drives through every phase. docs/performance.md says where the
// figures come from.
package benchtiming

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// The operator's runner pods carry LabelBenchmark and run the runner in RunnerContainer (package resources of
// the operator, which test code outside operator/ cannot import; the envtest suite checks they agree).
const (
	LabelBenchmark  = "zns-mysql.dev/benchmark"
	RunnerContainer = "znsbench"
)

// Interval is a stretch of time with what happened in it.
type Interval struct {
	What     string
	From, To time.Time
}

// Input is what the figures are computed from.
type Input struct {
	Benchmark *v1alpha1.Benchmark
	// Applied is when the Benchmark was applied, as the client saw it; zero takes its creationTimestamp, which
	// the API server keeps to the second only (truncated: the first phase then looks up to 1 s longer).
	Applied time.Time
	// Work are the runners' own times (from their termination messages): prepare, verify, precondition. Run
	// intervals are not work to subtract: the run's start-up is reported as its own phase.
	Work []Interval
	// Unavailable are the stretches in which a target database was not Available (a restart).
	Unavailable []Interval
	// RunPodsUp is when the last runner container of the first run started (Collect reads it from the pods);
	// from then until the runners start, they wait for the common start time (spec.startDelaySeconds), a wait
	// by design that is reported apart from the overhead. Zero leaves it inside the overhead.
	RunPodsUp time.Time
}

// Phase is one stretch of the timeline.
type Phase struct {
	Name     string
	From, To time.Time
	Wall     time.Duration
	Work     time.Duration // runner work inside the phase
	Restarts time.Duration // databases not Available inside the phase, beyond the work
	Wait     time.Duration // the wait for the common start time, by design (spec.startDelaySeconds)
	Overhead time.Duration // Wall - Work - Restarts - Wait
}

// Report is the timeline of one Benchmark.
type Report struct {
	Applied, FirstSecond, LastSecond, Completed time.Time
	// ToFirstSecond runs from the apply to the start of sysbench's first second in the first run; AfterLastSecond
	// from the end of its last second in the last run to Completed; BetweenRuns from one run's end to the next
	// run's first second.
	ToFirstSecond, AfterLastSecond, BetweenRuns []Phase
}

// Overhead sums the overhead of phases.
func Overhead(ps []Phase) time.Duration {
	var d time.Duration
	for _, p := range ps {
		d += p.Overhead
	}
	return d
}

// Compute builds the report. The first second begins when sysbench's clock started, endTime minus durationSec
// of the first run (the earliest target); the last second ends at the last run's endTime (the latest target).
func Compute(in Input) (Report, error) {
	b := in.Benchmark
	var r Report
	if b == nil {
		return r, fmt.Errorf("no Benchmark")
	}
	r.Applied = in.Applied
	if r.Applied.IsZero() {
		r.Applied = b.CreationTimestamp.Time
	}
	if b.Status.StartedAt == nil {
		return r, fmt.Errorf("benchmark %s/%s has not started", b.Namespace, b.Name)
	}
	runs, err := runTimes(b)
	if err != nil {
		return r, err
	}
	if len(runs) == 0 {
		return r, fmt.Errorf("benchmark %s/%s has no finished run with startTime, endTime and durationSec", b.Namespace, b.Name)
	}
	first, last := runs[0], runs[len(runs)-1]
	r.FirstSecond, r.LastSecond = first.clockStart, last.end
	for _, h := range b.Status.PhaseHistory {
		if h.Phase == v1alpha1.BenchmarkCompleted {
			r.Completed = h.Time.Time
		}
	}
	if r.Completed.IsZero() {
		return r, fmt.Errorf("benchmark %s/%s is not Completed (phase %q)", b.Namespace, b.Name, b.Status.Phase)
	}

	// Cut points before the first second: the first reconcile, every phase change, the first runner's start.
	// The first reconcile: startedAt, which keeps seconds only, or better the first phase's start, which the
	// same reconcile wrote to the microsecond.
	hist := b.Status.PhaseHistory
	firstReconcile := b.Status.StartedAt.Time
	if len(hist) > 0 && hist[0].Time.Time.Sub(firstReconcile) < time.Second && !hist[0].Time.Time.Before(firstReconcile) {
		firstReconcile = hist[0].Time.Time
	}
	cuts := []Interval{{What: "queued (apply to first reconcile)", From: r.Applied, To: firstReconcile}}
	for i, h := range hist {
		if !h.Time.Time.Before(r.FirstSecond) {
			break
		}
		to := r.FirstSecond
		if i+1 < len(hist) && hist[i+1].Time.Time.Before(to) {
			to = hist[i+1].Time.Time
		}
		if h.Phase == v1alpha1.BenchmarkRunning && first.runnerStart.After(h.Time.Time) && first.runnerStart.Before(to) {
			up := in.RunPodsUp
			if up.After(h.Time.Time) && up.Before(first.runnerStart) {
				cuts = append(cuts, Interval{What: "Running: Jobs to runner pods up", From: h.Time.Time, To: up},
					Interval{What: waitName, From: up, To: first.runnerStart})
			} else {
				cuts = append(cuts, Interval{What: "Running: Jobs to runner start", From: h.Time.Time, To: first.runnerStart})
			}
			cuts = append(cuts, Interval{What: "Running: runner start to first second (sysbench connects)", From: first.runnerStart, To: to})
			continue
		}
		cuts = append(cuts, Interval{What: string(h.Phase), From: h.Time.Time, To: to})
	}
	for _, c := range cuts {
		r.ToFirstSecond = append(r.ToFirstSecond, measure(c, in))
	}
	for i := 0; i+1 < len(runs); i++ {
		r.BetweenRuns = append(r.BetweenRuns, measure(Interval{What: fmt.Sprintf("run %d end to run %d first second", runs[i].iteration, runs[i+1].iteration),
			From: runs[i].end, To: runs[i+1].clockStart}, in))
	}
	r.AfterLastSecond = []Phase{measure(Interval{What: "last second to Completed (Job ends, operator reads the result)",
		From: r.LastSecond, To: r.Completed}, in)}
	return r, nil
}

// waitName is the phase of the wait for the common start time.
const waitName = "Running: pods up, waiting for the common start"

// run is one iteration across its targets: the earliest start, the latest end.
type run struct {
	iteration               int32
	runnerStart, clockStart time.Time
	end                     time.Time
}

func runTimes(b *v1alpha1.Benchmark) ([]run, error) {
	byIt := map[int32]*run{}
	for _, ts := range b.Status.Targets {
		for _, it := range ts.Iterations {
			if it.StartTime == "" || it.EndTime == "" || it.DurationSec == "" {
				continue
			}
			start, err1 := time.Parse(time.RFC3339Nano, it.StartTime)
			end, err2 := time.Parse(time.RFC3339Nano, it.EndTime)
			var secs float64
			_, err3 := fmt.Sscanf(it.DurationSec, "%g", &secs)
			if err1 != nil || err2 != nil || err3 != nil {
				return nil, fmt.Errorf("target %s run %d: times %q..%q, durationSec %q", ts.Name, it.Iteration, it.StartTime, it.EndTime, it.DurationSec)
			}
			clock := end.Add(-time.Duration(secs * float64(time.Second)))
			r, ok := byIt[it.Iteration]
			if !ok {
				byIt[it.Iteration] = &run{iteration: it.Iteration, runnerStart: start, clockStart: clock, end: end}
				continue
			}
			if start.Before(r.runnerStart) {
				r.runnerStart = start
			}
			if clock.Before(r.clockStart) {
				r.clockStart = clock
			}
			if end.After(r.end) {
				r.end = end
			}
		}
	}
	out := make([]run, 0, len(byIt))
	for _, r := range byIt {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].iteration < out[j].iteration })
	return out, nil
}

// measure splits one stretch into work, restarts and overhead.
func measure(c Interval, in Input) Phase {
	p := Phase{Name: c.What, From: c.From, To: c.To, Wall: c.To.Sub(c.From)}
	if p.Wall <= 0 {
		p.Wall = 0
		return p
	}
	if c.What == waitName {
		p.Wait = p.Wall
		return p
	}
	work := covered(clip(in.Work, c.From, c.To))
	both := covered(clip(append(append([]Interval(nil), in.Work...), in.Unavailable...), c.From, c.To))
	p.Work, p.Restarts = work, both-work
	p.Overhead = p.Wall - both
	return p
}

func clip(ivs []Interval, from, to time.Time) []Interval {
	var out []Interval
	for _, iv := range ivs {
		a, b := iv.From, iv.To
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if b.After(a) {
			out = append(out, Interval{From: a, To: b})
		}
	}
	return out
}

// covered is the length of the union of intervals.
func covered(ivs []Interval) time.Duration {
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].From.Before(ivs[j].From) })
	var total time.Duration
	var curFrom, curTo time.Time
	for i, iv := range ivs {
		if i == 0 || iv.From.After(curTo) {
			total += curTo.Sub(curFrom)
			curFrom, curTo = iv.From, iv.To
			continue
		}
		if iv.To.After(curTo) {
			curTo = iv.To
		}
	}
	return total + curTo.Sub(curFrom)
}

// String is the report as a table.
func (r Report) String() string {
	var b strings.Builder
	row := func(p Phase) {
		fmt.Fprintf(&b, "  %-62s %8.2f %8.2f %8.2f %8.2f %8.2f\n", p.Name, p.Wall.Seconds(), p.Work.Seconds(), p.Restarts.Seconds(),
			p.Wait.Seconds(), p.Overhead.Seconds())
	}
	fmt.Fprintf(&b, "  %-62s %8s %8s %8s %8s %8s\n", "phase (seconds)", "wall", "work", "restarts", "wait", "overhead")
	for _, p := range r.ToFirstSecond {
		row(p)
	}
	fmt.Fprintf(&b, "  %-62s %8.2f %8s %8s %8s %8.2f\n", "apply to first second", r.FirstSecond.Sub(r.Applied).Seconds(), "", "", "",
		Overhead(r.ToFirstSecond).Seconds())
	for _, p := range r.BetweenRuns {
		row(p)
	}
	for _, p := range r.AfterLastSecond {
		row(p)
	}
	return b.String()
}

// summary is the part of the runner's termination message the timeline needs (operator/internal/benchresult).
type summary struct {
	Phase     string `json:"phase"`
	Target    string `json:"target"`
	Iteration int    `json:"iteration"`
	StartTime string `json:"startTime"`
	EndTime   string `json:"endTime"`
}

// Collected is what Collect reads from a Benchmark's runner pods.
type Collected struct {
	// Work are the runners' prepare, verify and precondition times.
	Work []Interval
	// RunPodsUp is when the last runner container of run 1 started (to the second: the kubelet's precision).
	RunPodsUp time.Time
}

// Collect reads the runner work of a Benchmark from its runner pods' termination messages, and when the
// first run's runner containers started.
func Collect(ctx context.Context, c client.Reader, b *v1alpha1.Benchmark) (Collected, error) {
	var out Collected
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(b.Namespace), client.MatchingLabels{LabelBenchmark: b.Name}); err != nil {
		return out, err
	}
	for _, pod := range pods.Items {
		for _, cs := range pod.Status.ContainerStatuses {
			term := cs.State.Terminated
			if cs.Name != RunnerContainer || term == nil || term.Message == "" {
				continue
			}
			var s summary
			if err := json.Unmarshal([]byte(term.Message), &s); err != nil {
				return out, fmt.Errorf("pod %s: termination message: %v", pod.Name, err)
			}
			if s.Phase == "run" {
				if s.Iteration == 1 && term.StartedAt.After(out.RunPodsUp) {
					out.RunPodsUp = term.StartedAt.Time
				}
				continue
			}
			if s.StartTime == "" || s.EndTime == "" {
				continue
			}
			from, err1 := time.Parse(time.RFC3339Nano, s.StartTime)
			to, err2 := time.Parse(time.RFC3339Nano, s.EndTime)
			if err1 != nil || err2 != nil {
				return out, fmt.Errorf("pod %s: times %q..%q", pod.Name, s.StartTime, s.EndTime)
			}
			out.Work = append(out.Work, Interval{What: s.Phase + " " + s.Target, From: from, To: to})
		}
	}
	return out, nil
}
