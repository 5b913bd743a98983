//go:build !unix

package ftl

// processCPUSeconds is not measured here; the benchmark reports wall time only.
func processCPUSeconds() (float64, bool) { return 0, false }
