package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// A stage log has one line per stage that began: its number, its name and the seconds since the run started,
// tab-separated (hack/test.sh's stage function writes it). Stages run one after the other, so each lasted
// until the next began, and the last until the run's end.

type stageStart struct {
	number, name string
	at           int
}

// stageTable prints how long each stage of a run of total seconds took, and its share of the whole: where a
// cold run's time goes, at the end of every run.
func stageTable(w io.Writer, log io.Reader, total int) error {
	var stages []stageStart
	sc := bufio.NewScanner(log)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			return fmt.Errorf("stage log line %q: want number, name and seconds, tab-separated", sc.Text())
		}
		at, err := strconv.Atoi(f[2])
		if err != nil || at < 0 || at > total {
			return fmt.Errorf("stage log line %q: seconds since the start must be a whole number from 0 to %d", sc.Text(), total)
		}
		if n := len(stages); n > 0 && at < stages[n-1].at {
			return fmt.Errorf("stage log line %q: begins before the stage above it", sc.Text())
		}
		stages = append(stages, stageStart{number: f[0], name: f[1], at: at})
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(stages) == 0 {
		return fmt.Errorf("the stage log is empty")
	}
	width := 0
	for _, s := range stages {
		width = max(width, len(s.name))
	}
	fmt.Fprintf(w, "stage timings (%s in all):\n", mmss(seconds(total)))
	for i, s := range stages {
		end := total
		if i+1 < len(stages) {
			end = stages[i+1].at
		}
		share := 0.0
		if total > 0 {
			share = 100 * float64(end-s.at) / float64(total)
		}
		fmt.Fprintf(w, "  %-3s %-*s  %8s  %3.0f%%\n", s.number, width, s.name, mmss(seconds(end-s.at)), share)
	}
	return nil
}

func seconds(s int) time.Duration { return time.Duration(s) * time.Second }
