package main

import (
	"bytes"
	"io"
	"os/exec"
	"sync"
)

// qemuGuestPackage is the QEMU guest suite's. Stage 6 runs it in a go test of its own, beside the one of every
// other package: it is the stage's longest (7.6 minutes in the cold run of 2026-11-29, of a 9.7-minute stage),
// and under go test's -p it began only once its compile and a slot were free (2m16s in), then ran alone for
// its last 3.6 minutes, while its guest, mostly waiting, used a third of the machine.
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

// runTogether runs the commands side by side into the outputs of the moment and returns their statuses, in
// the commands' order. Each command's stdout and stderr reach the outputs a whole line at a time: go test
// -json's events, which testsummary reads a line each, stay whole however the commands' writes interleave.
func (r *runner) runTogether(cmds ...*exec.Cmd) []int {
	var mu sync.Mutex
	out, _ := r.Out.Get()
	rcs := make([]int, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		w := &lineWriter{mu: &mu, out: out}
		c.Stdout, c.Stderr = w, w
		wg.Go(func() {
			rcs[i] = r.Run(c)
			w.flush()
		})
	}
	wg.Wait()
	return rcs
}

// lineWriter passes on to out only whole lines, each batch of them in one Write under mu, which the writers of
// the commands that run together share.
type lineWriter struct {
	mu  *sync.Mutex
	out io.Writer
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	end := bytes.LastIndexByte(w.buf, '\n') + 1
	if end == 0 {
		return len(p), nil
	}
	w.mu.Lock()
	_, err := w.out.Write(w.buf[:end])
	w.mu.Unlock()
	w.buf = append(w.buf[:0], w.buf[end:]...)
	return len(p), err
}

// flush passes on what is left of a last line without its newline, ended by one.
func (w *lineWriter) flush() {
	if len(w.buf) == 0 {
		return
	}
	w.buf = append(w.buf, '\n')
	w.mu.Lock()
	w.out.Write(w.buf)
	w.mu.Unlock()
	w.buf = nil
}
