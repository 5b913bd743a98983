package benchplan

import (
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

// Summarize computes each target's mean, its spread across runs and its ratios to the baseline; with a thread
// sweep, per thread count (status.targets[].sweep), mean, spread and ratios then being those of the last count.
func Summarize(spec *v1alpha1.BenchmarkSpec, st *v1alpha1.BenchmarkStatus) {
	base := map[int32]runsSummary{}
	sums := make([]map[int32]runsSummary, len(st.Targets))
	for i := range st.Targets {
		ts := &st.Targets[i]
		if ts.State == v1alpha1.TargetFailed {
			continue
		}
		ts.State = v1alpha1.TargetDone
		if note := steadyNote(ts); note != "" && !slices.Contains(ts.Notes, note) {
			ts.Notes = append(ts.Notes, note)
		}
		sums[i] = map[int32]runsSummary{0: summarizeRuns(ts.Iterations)}
		ts.Sweep = nil
		for _, th := range spec.ThreadSweep {
			var its []v1alpha1.IterationResult
			for _, it := range ts.Iterations {
				if it.Threads == th {
					its = append(its, it)
				}
			}
			if len(its) > 0 {
				s := summarizeRuns(its)
				sums[i][th] = s
				ts.Sweep = append(ts.Sweep, v1alpha1.SweepPoint{Threads: th, Mean: s.mean, AcrossRuns: s.spread})
			}
		}
		if n := len(ts.Sweep); n > 0 {
			sums[i][0] = sums[i][ts.Sweep[n-1].Threads]
		}
		ts.Mean, ts.AcrossRuns = sums[i][0].mean.DeepCopy(), sums[i][0].spread.DeepCopy()
		ts.DriveMean = meanDrive(sums[i][0].runs)
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
		ts.VsBaseline = ratios(sums[i][0], base[0], self)
		for j := range ts.Sweep {
			th := ts.Sweep[j].Threads
			ts.Sweep[j].VsBaseline = ratios(sums[i][th], base[th], self)
		}
	}
}
