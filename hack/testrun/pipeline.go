package main

import (
	"io"
	"os"
	"os/exec"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// summaryPipe is bash's `{ stages 6 to 8; } 2>&1 | tee last-test.json | testsummary --recap RECAP`: while it
// is open, the runner and every command it starts write their stdout and stderr into one pipe, whose every
// byte goes to the JSON file and to testsummary's stdin. testsummary reads the go test -json lines and passes
// the others (banners, the runner's log lines, build errors) through, in the order they were written.
type summaryPipe struct {
	w      *os.File // the write end, the outputs meanwhile
	ts     *exec.Cmd
	tsRC   int // 127 when testsummary did not start
	copied chan bool
}

// openSummary starts testsummary and makes the pipe into it the runner's outputs.
func (r *runner) openSummary(jsonPath, recap string) (*summaryPipe, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	tsIn, toTS, err := os.Pipe()
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	p := &summaryPipe{w: pw, copied: make(chan bool, 1)}
	p.ts = exec.Command(r.summary, "--recap", recap)
	p.ts.Dir, p.ts.Env, p.ts.Stdin, p.ts.Stdout, p.ts.Stderr = r.Root, r.Env.List(nil), tsIn, r.Stdout, r.Stderr
	if err := p.ts.Start(); err != nil {
		r.Logf("%s: %v", r.summary, err)
		p.tsRC, p.ts = stagerun.StartFailure(err), nil
		toTS.Close()
		toTS = nil
	}
	tsIn.Close()
	file, err := os.Create(jsonPath)
	teeOK := err == nil
	if err != nil {
		r.Logf("tee: %v", err)
		file = nil
	}
	go func() { p.copied <- tee(pr, file, toTS) && teeOK }()
	r.Out.Set(pw, pw)
	return p, nil
}

// tee copies from until its end into file and to, each while it takes it (a reader that went away does not
// stop the pipe), then closes them; false when writing the file failed.
func tee(from io.ReadCloser, file, to *os.File) bool {
	ok := true
	buf := make([]byte, 64<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			if file != nil {
				if _, werr := file.Write(buf[:n]); werr != nil {
					ok = false
					file.Close()
					file = nil
				}
			}
			if to != nil {
				if _, werr := to.Write(buf[:n]); werr != nil {
					to.Close()
					to = nil
				}
			}
		}
		if err != nil {
			break
		}
	}
	from.Close()
	if file != nil && file.Close() != nil {
		ok = false
	}
	if to != nil {
		to.Close()
	}
	return ok
}

// close gives the runner its outputs back, lets testsummary finish and returns the pipeline's status, as bash's
// pipefail has it: testsummary's when it failed, else tee's, else the stages' (stagesRC).
func (p *summaryPipe) close(r *runner, stagesRC int) int {
	r.Out.Set(r.Stdout, r.Stderr)
	p.w.Close()
	teeOK := <-p.copied
	if p.ts != nil {
		p.tsRC = stagerun.ExitStatus(p.ts.Wait())
	}
	return pipelineStatus(stagesRC, teeOK, p.tsRC)
}

// pipelineStatus is `set -o pipefail`'s status of `stages | tee | testsummary`: the last that failed.
func pipelineStatus(stagesRC int, teeOK bool, tsRC int) int {
	switch {
	case tsRC != 0:
		return tsRC
	case !teeOK:
		return 1
	}
	return stagesRC
}
