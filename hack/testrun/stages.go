package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// Stages numbers the stages of a run: each begins with a banner a person can find in a long log, with the time
// since the start, and a line in the stage-timings file (number, name and seconds since the start,
// tab-separated: `testsummary stages` reads it); a stage that fails says which one it was and what the user
// can do.
type Stages struct {
	Total int              // the number in every banner's "[N/Total]"
	Log   string           // the stage-timings file, emptied by Reset
	Start time.Time        // the run's start
	Now   func() time.Time // time.Now, or a test's clock
	Out   func() io.Writer // where banners and failures go (the runner's stderr of the moment)
	// Gate, when set, is called before a stage begins: the runner's, which holds a run being interrupted there.
	Gate func()
}

// Failure stops a run: the stage it failed in and what the user can do.
type Failure struct {
	Stage int
	ToDo  string
}

func (f *Failure) Error() string { return fmt.Sprintf("ERROR in stage %d. %s", f.Stage, f.ToDo) }

// fail is bash's `fail STAGE WHAT-TO-DO`, as an error a stage returns.
func fail(stage int, todo string) error { return &Failure{Stage: stage, ToDo: todo} }

// Elapsed is the whole seconds since the start, as bash's $SECONDS - T0.
func (s *Stages) Elapsed() int { return int(s.Now().Sub(s.Start) / time.Second) }

// Reset empties the stage-timings file.
func (s *Stages) Reset() error { return os.WriteFile(s.Log, nil, 0o644) }

// Begin announces stage n and records when it began.
func (s *Stages) Begin(n int, name string) error {
	if s.Gate != nil {
		s.Gate()
	}
	at := s.Elapsed()
	fmt.Fprintf(s.Out(), "\n==> [%d/%d] %s (%s since the start)\n", n, s.Total, name, stagerun.Mmss(at))
	f, err := os.OpenFile(s.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "%d\t%s\t%d\n", n, name, at); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Report prints why the run stops, "\ntest: ERROR in stage N. WHAT-TO-DO", and returns the exit status, 1. An
// error that is not a *Failure is reported as a failure of stage n.
func (s *Stages) Report(n int, err error) int {
	var f *Failure
	if !errors.As(err, &f) {
		f = &Failure{Stage: n, ToDo: err.Error()}
	}
	fmt.Fprintf(s.Out(), "\ntest: %s\n", f.Error())
	return 1
}

// Run is one stage: its banner, then body; when body fails, the failure is reported and Run returns 1 (else 0).
func (s *Stages) Run(n int, name string, body func() error) int {
	err := s.Begin(n, name)
	if err == nil {
		err = body()
	}
	if err != nil {
		return s.Report(n, err)
	}
	return 0
}
