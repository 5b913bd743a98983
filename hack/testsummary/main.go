// Command testsummary reads `go test -json` on stdin, prints each package's result, the output of every
// failed test, the reason of every skipped test, and closes with "N passed, N failed, N skipped". It exits
// non-zero when a test or a package failed, so a skipped suite can never pass for a run one. While tests
// run it says every 30 s which are still running and for how long, so a long suite is never silent.
//
// With `--recap FILE` it also writes to FILE, for each failed test, the last log entries it wrote before any
// dump: hack/test.sh prints them after the stage timings, at the very end of the log.
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
	recapFile := ""
	if len(os.Args) == 3 && os.Args[1] == "--recap" {
		recapFile = os.Args[2]
	} else if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: testsummary [--recap FILE] < go-test.json, or testsummary stages LOG SECONDS")
		os.Exit(2)
	}
	tick := time.NewTicker(30 * time.Second)
	s := newSummary(os.Stdout, time.Now)
	ok := s.run(os.Stdin, tick.C)
	tick.Stop()
	if recapFile != "" {
		if err := writeRecapFile(s, recapFile); err != nil {
			fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
			ok = false
		}
	}
	if !ok {
		os.Exit(1)
	}
}

func writeRecapFile(s *summary, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := s.writeRecap(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
