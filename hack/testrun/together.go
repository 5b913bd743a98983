package main

import (
	"io"
	"os"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// qemuGuestPackage is the QEMU guest suite's. make test runs it in a go test of its own, in the background from
// stage 6's start to stage 7's end: it is stage 6's longest package (7.6 minutes in the cold run of
// 2026-11-29, of a 9.7-minute stage), and its last minutes, one emulated guest at a time mostly waiting, used
// a sixth to a half of the machine (a 10-s sample of the warm run after) while the stage waited for it. Its
// results reach testsummary when it has ended, before stage 8, whose emulated node wants both CPUs.
const qemuGuestPackage = "github.com/zns-mysql/zns-mysql/operator/internal/qemuguest"

// splitPackage takes pkg out of pkgs: whether it was there, and the others in their order.
func splitPackage(pkgs []string, pkg string) (bool, []string) {
	var rest []string
	found := false
	for _, p := range pkgs {
		if p == pkg {
			found = true
			continue
		}
		rest = append(rest, p)
	}
	return found, rest
}

// joinGuestTests waits for the QEMU guest suite's go test, saying meanwhile that it does, then passes its
// go test -json output on to testsummary whole (nothing else writes then) and returns its status.
func (r *runner) joinGuestTests(j *stagerun.Job) int {
	rc := r.Heartbeat("the QEMU guest suite", "begun in stage 6, beside the other tests", "", j.Wait)
	f, err := os.Open(j.Log)
	if err != nil {
		r.Logf("the QEMU guest suite's results are lost: %v", err)
		return 1
	}
	defer f.Close()
	out, _ := r.Out.Get()
	if _, err := io.Copy(out, f); err != nil {
		r.Logf("the QEMU guest suite's results: %v", err)
		return 1
	}
	return rc
}
