//go:build unix

package ftl

import "syscall"

// processCPUSeconds is the user and system time of the whole process so far:
// on a shared machine the benchmark's wall time says more about the
// neighbours than about the model.
func processCPUSeconds() (float64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, true
}
