package v1alpha1

import "strings"

// A thread sweep runs the workload at several thread counts over the same prepared data, and spec.workloads
// runs several workloads so: one run per count or workload (each repeated spec.iterations times), every target
// together. Runs are numbered 1..Runs() in status.iteration and in the Jobs' names; RunThreads and RunWorkload
// say which count and which workload a run uses. Admission refuses a sweep of several workloads.

// Runs is how many runs the Benchmark makes: iterations, times the thread counts of a sweep or the workloads;
// with spec.measureInterference, the targets' runs alone come first.
func (s *BenchmarkSpec) Runs() int32 {
	it := max(s.Iterations, 1)
	switch {
	case s.MeasureInterference:
		return it * int32(len(s.Targets)+1)
	case len(s.ThreadSweep) > 0:
		return it * int32(len(s.ThreadSweep))
	case len(s.Workloads) > 0:
		return it * int32(len(s.Workloads))
	}
	return it
}

// RunAlone is the target that runs alone in run (1-based), "" for a run of every target together. The runs
// alone come first, target by target in spec order, each repeated iterations times.
func (s *BenchmarkSpec) RunAlone(run int32) string {
	if !s.MeasureInterference || run < 1 {
		return ""
	}
	if i := (run - 1) / max(s.Iterations, 1); int(i) < len(s.Targets) {
		return s.Targets[i].Name
	}
	return ""
}

// RunThreads is the thread count of run (1-based) and which repetition of that count it is (1-based).
func (s *BenchmarkSpec) RunThreads(run int32) (threads, repetition int32) {
	if len(s.ThreadSweep) == 0 {
		return s.Threads, s.repetition(run)
	}
	return s.ThreadSweep[s.group(run, len(s.ThreadSweep))], s.repetition(run)
}

// RunWorkloads are the workloads the runs use, in order: spec.workloads, or spec.workload alone.
func (s *BenchmarkSpec) RunWorkloads() []string {
	if s.Tool == ToolYCSB && s.YCSB != nil {
		return []string{s.YCSB.Label()}
	}
	if len(s.Workloads) > 0 {
		return s.Workloads
	}
	return []string{s.Workload}
}

// WorkloadLabel names what the runs run: the workload, or the workloads joined by commas.
func (s *BenchmarkSpec) WorkloadLabel() string { return strings.Join(s.RunWorkloads(), ",") }

// RunWorkload is the workload of run (1-based).
func (s *BenchmarkSpec) RunWorkload(run int32) string {
	if s.Tool == ToolYCSB && s.YCSB != nil {
		return s.YCSB.Label()
	}
	if len(s.Workloads) == 0 {
		return s.Workload
	}
	return s.Workloads[s.group(run, len(s.Workloads))]
}

// group is the index of run's thread count or workload among n, each repeated iterations times.
func (s *BenchmarkSpec) group(run int32, n int) int32 {
	if run < 1 {
		return 0
	}
	return min((run-1)/max(s.Iterations, 1), int32(n)-1)
}

// repetition is which repetition of its thread count or workload run is (1-based).
func (s *BenchmarkSpec) repetition(run int32) int32 {
	if len(s.ThreadSweep) == 0 && len(s.Workloads) == 0 && !s.MeasureInterference || run < 1 {
		return max(run, 1)
	}
	return (run-1)%max(s.Iterations, 1) + 1
}
