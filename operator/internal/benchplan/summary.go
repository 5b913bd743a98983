package benchplan

import (
	"fmt"
	"slices"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// RecordSize keeps the database size the runner read after a run: the latest is the size after the runs.
func RecordSize(ts *v1alpha1.TargetStatus, sum benchresult.Summary) {
	if sum.DataBytes <= 0 {
		return
	}
	if ts.Size == nil {
		ts.Size = &v1alpha1.DataSize{Source: sum.DataBytesSource}
	}
	ts.Size.AfterRunBytes = sum.DataBytes
}

// Summarize computes each target's mean, its spread across runs and its ratios to the baseline. With a thread
// sweep they are also computed per thread count (status.targets[].sweep), the target's own then being those of
// the last count; with spec.workloads, per workload (status.targets[].workloads), the target's own being those
// of the first workload. With spec.measureInterference the target's own are its runs together, and its runs
// alone are compared with them (status.targets[].alone).
func Summarize(spec *v1alpha1.BenchmarkSpec, st *v1alpha1.BenchmarkStatus) {
	const headline = ""
	base := map[string]runsSummary{}
	sums := make([]map[string]runsSummary, len(st.Targets))
	for i := range st.Targets {
		ts := &st.Targets[i]
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		ts.State = v1alpha1.TargetDone
		if note := steadyNote(ts); note != "" && !slices.Contains(ts.Notes, note) {
			ts.Notes = append(ts.Notes, note)
		}
		together := runsWhere(ts.Iterations, func(r v1alpha1.IterationResult) bool { return !r.Alone })
		sums[i] = map[string]runsSummary{headline: summarizeRuns(together)}
		ts.Sweep, ts.Workloads, ts.Alone = nil, nil, nil
		if alone := runsWhere(ts.Iterations, func(r v1alpha1.IterationResult) bool { return r.Alone }); len(alone) > 0 {
			a := summarizeRuns(alone)
			ts.Alone = &v1alpha1.AloneResult{Mean: a.mean.DeepCopy(), AcrossRuns: a.spread.DeepCopy(),
				Interference: ratios(sums[i][headline], a, false)}
		}
		for _, th := range spec.ThreadSweep {
			if its := runsWhere(ts.Iterations, func(r v1alpha1.IterationResult) bool { return r.Threads == th }); len(its) > 0 {
				s := summarizeRuns(its)
				sums[i][threadsKey(th)], sums[i][headline] = s, s // the last count's is the target's own
				ts.Sweep = append(ts.Sweep, v1alpha1.SweepPoint{Threads: th, Mean: s.mean, AcrossRuns: s.spread,
					Operations: meanOperations(s.runs)})
			}
		}
		for _, w := range spec.Workloads {
			if its := runsWhere(ts.Iterations, func(r v1alpha1.IterationResult) bool { return r.Workload == w }); len(its) > 0 {
				s := summarizeRuns(its)
				sums[i][workloadKey(w)] = s
				if len(ts.Workloads) == 0 { // the first workload's is the target's own
					sums[i][headline] = s
				}
				ts.Workloads = append(ts.Workloads, v1alpha1.WorkloadPoint{Workload: w, Mean: s.mean.DeepCopy(),
					AcrossRuns: s.spread.DeepCopy(), DriveMean: meanDrive(s.runs)})
			}
		}
		ts.Mean, ts.AcrossRuns = sums[i][headline].mean.DeepCopy(), sums[i][headline].spread.DeepCopy()
		ts.DriveMean = meanDrive(sums[i][headline].runs)
		if ts.YCSB != nil {
			ts.YCSB.Operations = meanOperations(sums[i][headline].runs)
		}
		if ts.Name == st.Baseline {
			base = sums[i]
		}
	}
	for i := range st.Targets {
		ts := &st.Targets[i]
		if ts.State != v1alpha1.TargetDone {
			continue
		}
		self := ts.Name == st.Baseline
		ts.VsBaseline = ratios(sums[i][headline], base[headline], self)
		for j := range ts.Sweep {
			k := threadsKey(ts.Sweep[j].Threads)
			ts.Sweep[j].VsBaseline = ratios(sums[i][k], base[k], self)
		}
		for j := range ts.Workloads {
			k := workloadKey(ts.Workloads[j].Workload)
			ts.Workloads[j].VsBaseline = ratios(sums[i][k], base[k], self)
		}
	}
}

func threadsKey(th int32) string { return fmt.Sprintf("threads %d", th) }

func workloadKey(w string) string { return "workload " + w }

func runsWhere(its []v1alpha1.IterationResult, keep func(v1alpha1.IterationResult) bool) []v1alpha1.IterationResult {
	var out []v1alpha1.IterationResult
	for _, it := range its {
		if keep(it) {
			out = append(out, it)
		}
	}
	return out
}
