// Command testsummary reads `go test -json` on stdin, prints each package's result, the output of every
// failed test, the reason of every skipped test, and closes with "N passed, N failed, N skipped". It exits
// non-zero when a test or a package failed, so a skipped suite can never pass for a run one. While tests
// run it says every 30 s which are still running and for how long, so a long suite is never silent.
package main

import (
	"os"
	"time"
)

func main() {
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	s := newSummary(os.Stdout, time.Now)
	if !s.run(os.Stdin, tick.C) {
		os.Exit(1)
	}
}
