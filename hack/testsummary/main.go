// Command testsummary reads `go test -json` on stdin, prints each package's result, the output of every
// failed test, the reason of every skipped test, and closes with "N passed, N failed, N skipped". It exits
// non-zero when a test or a package failed, so a skipped suite can never pass for a run one. While tests
// run it says every 30 s which are still running and for how long, so a long suite is never silent.
//
// `testsummary stages LOG SECONDS` prints instead how long each stage of a run took, from the stage log
// hack/test.sh writes and the run's length in seconds.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "stages" {
		os.Exit(stages(os.Args[2:]))
	}
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	s := newSummary(os.Stdout, time.Now)
	if !s.run(os.Stdin, tick.C) {
		os.Exit(1)
	}
}

func stages(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: testsummary stages LOG SECONDS")
		return 2
	}
	total, err := strconv.Atoi(args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary stages: %q is not a number of seconds\n", args[1])
		return 2
	}
	f, err := os.Open(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary stages: %v\n", err)
		return 1
	}
	defer f.Close()
	if err := stageTable(os.Stdout, f, total); err != nil {
		fmt.Fprintf(os.Stderr, "testsummary stages: %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
