package v1alpha1

// A thread sweep runs the workload at several thread counts over the same prepared data: one run per count
// (each repeated spec.iterations times), every target together. Runs are numbered 1..Runs() in
// status.iteration and in the Jobs' names; RunThreads says which count a run uses.

// Runs is how many runs the Benchmark makes: iterations, times the thread counts of a sweep.
func (s *BenchmarkSpec) Runs() int32 {
	it := max(s.Iterations, 1)
	if n := int32(len(s.ThreadSweep)); n > 0 {
		return it * n
	}
	return it
}

// RunThreads is the thread count of run (1-based) and which repetition of that count it is (1-based).
func (s *BenchmarkSpec) RunThreads(run int32) (threads, repetition int32) {
	it := max(s.Iterations, 1)
	if len(s.ThreadSweep) == 0 || run < 1 {
		return s.Threads, max(run, 1)
	}
	i := min((run-1)/it, int32(len(s.ThreadSweep))-1)
	return s.ThreadSweep[i], (run-1)%it + 1
}
