//go:build linux

package blocktrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Tracer is a running capture: a private tracing instance whose only
// enabled event is block:block_rq_complete, filtered to one device, and a
// goroutine reading its trace_pipe.
type Tracer struct {
	dev      Dev
	instance string
	event    string
	fd       int
	fn       func(Event)
	text     io.Writer
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}

	totals  Totals // the reader's until done is closed
	readErr error

	once    sync.Once
	stopErr error
}

// Start makes a tracing instance (<tracefs>/instances/zns-...), so that
// nothing global is touched and concurrent captures do not meet, sizes its
// buffer, enables block_rq_complete there with a filter on the device, and
// reads trace_pipe on a goroutine, calling fn (when not nil) with each
// completion in order until Stop. Start the workload after Start returns
// and let it finish before Stop.
func Start(opts Options, fn func(Event)) (*Tracer, error) {
	sysBlock := opts.SysBlock
	if sysBlock == "" {
		sysBlock = "/sys/block"
	}
	dev, err := DeviceNumber(sysBlock, opts.Device)
	if err != nil {
		return nil, err
	}
	var tracefs string
	if opts.Tracefs != "" {
		tracefs, err = FindTracefs(opts.Tracefs)
	} else {
		tracefs, err = FindTracefs()
	}
	if err != nil {
		return nil, err
	}
	const event = "events/block/block_rq_complete"
	if _, err := os.Stat(filepath.Join(tracefs, event, "enable")); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (no %s): the kernel needs CONFIG_EVENT_TRACING", ErrNoBlockEvents, filepath.Join(tracefs, event))
	} else if err != nil {
		return nil, describe("find", filepath.Join(tracefs, event), err)
	}
	size := opts.BufferSizeKB
	if size == 0 {
		size = DefaultBufferSizeKB
	}
	if size < 0 {
		return nil, fmt.Errorf("blocktrace: buffer size %d KiB", size)
	}
	t := &Tracer{dev: dev, fd: -1, fn: fn, text: opts.Text, interval: opts.PollInterval,
		stop: make(chan struct{}), done: make(chan struct{})}
	if t.interval <= 0 {
		t.interval = DefaultPollInterval
	}
	t.instance = filepath.Join(tracefs, "instances", InstanceName(opts.Device))
	if err := os.Mkdir(t.instance, 0o750); err != nil {
		return nil, describe("create the tracing instance", t.instance, err)
	}
	t.event = filepath.Join(t.instance, event)
	fail := func(err error) (*Tracer, error) {
		t.remove()
		return nil, err
	}
	if err := t.write("buffer_size_kb", strconv.Itoa(size)); err != nil {
		return fail(err)
	}
	if err := t.write(filepath.Join(event, "filter"), Filter(dev)); err != nil {
		return fail(err)
	}
	// Non-blocking, outside Go's poller: the reader polls and Stop can tell
	// an empty buffer (EAGAIN) from a slow one.
	pipe := filepath.Join(t.instance, "trace_pipe")
	t.fd, err = syscall.Open(pipe, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail(describe("open", pipe, err))
	}
	if err := t.write(filepath.Join(event, "enable"), "1"); err != nil {
		return fail(err)
	}
	go t.read()
	return t, nil
}

// Dev is the device traced.
func (t *Tracer) Dev() Dev { return t.dev }

// Instance is the tracing instance's directory.
func (t *Tracer) Instance() string { return t.instance }

// Stop disables the event, reads what the buffer still holds, takes the
// ring buffer's overrun and dropped counts, and removes the instance. The
// error wraps ErrLostEvents when the trace is incomplete (the totals are
// still returned), and tells what could not be cleaned up.
func (t *Tracer) Stop() (Totals, error) {
	t.once.Do(func() {
		var errs []error
		// After this no event enters the buffer; the reader stops at the
		// first EAGAIN it gets after seeing the stop.
		if err := t.write(filepath.Join("events/block/block_rq_complete", "enable"), "0"); err != nil {
			errs = append(errs, err)
		}
		close(t.stop)
		<-t.done
		if t.readErr != nil {
			errs = append(errs, t.readErr)
		}
		overrun, dropped, err := t.bufferStats()
		if err != nil {
			errs = append(errs, err)
		}
		t.totals.Overrun, t.totals.Dropped = overrun, dropped
		if err := t.remove(); err != nil {
			errs = append(errs, err)
		}
		if err := t.totals.Err(); err != nil {
			errs = append(errs, err)
		}
		t.stopErr = errors.Join(errs...)
	})
	return t.totals, t.stopErr
}

func (t *Tracer) write(rel, value string) error {
	p := filepath.Join(t.instance, rel)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return describe("open", p, err)
	}
	_, err = f.WriteString(value + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		err = describe("write "+strconv.Quote(value)+" to", p, err)
		// a refused filter says why in the instance's error_log
		if log, _ := os.ReadFile(filepath.Join(t.instance, "error_log")); len(bytes.TrimSpace(log)) > 0 {
			err = fmt.Errorf("%w\n%s", err, bytes.TrimSpace(log))
		}
	}
	return err
}

// remove closes trace_pipe and removes the instance (which an open file
// of it keeps busy); removing it disables its events and frees its buffer.
func (t *Tracer) remove() error {
	if t.fd >= 0 {
		syscall.Close(t.fd)
		t.fd = -1
	}
	if err := syscall.Rmdir(t.instance); err != nil {
		return describe("remove the tracing instance", t.instance, &os.PathError{Op: "rmdir", Path: t.instance, Err: err})
	}
	return nil
}

func (t *Tracer) bufferStats() (overrun, dropped uint64, err error) {
	files, err := filepath.Glob(filepath.Join(t.instance, "per_cpu", "cpu*", "stats"))
	if err != nil || len(files) == 0 {
		return 0, 0, fmt.Errorf("blocktrace: no per_cpu/cpu*/stats in %s (%v)", t.instance, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, 0, describe("read", f, err)
		}
		o, d, err := parseStats(string(b))
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", f, err)
		}
		overrun += o
		dropped += d
	}
	return overrun, dropped, nil
}

// read runs on its own goroutine until Stop: trace_pipe returns whole
// lines, at most a page per read.
func (t *Tracer) read() {
	defer close(t.done)
	buf := make([]byte, 64<<10)
	held := 0 // bytes of an incomplete line at the start of buf
	stopping := false
	timer := time.NewTimer(t.interval)
	defer timer.Stop()
	for {
		if held == len(buf) {
			t.totals.Malformed++ // a 64 KiB line: not the kernel's
			held = 0
		}
		n, err := syscall.Read(t.fd, buf[held:])
		if n > 0 {
			held = t.lines(buf[:held+n])
			continue
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil && err != syscall.EAGAIN:
			t.readErr = describe("read", filepath.Join(t.instance, "trace_pipe"), &os.PathError{Op: "read", Err: err})
			return
		case stopping:
			// empty after the event was disabled: everything was read
			if held > 0 {
				t.lines(append(buf[:held], '\n'))
			}
			return
		}
		timer.Reset(t.interval)
		select {
		case <-t.stop:
			stopping = true // read until empty once more
		case <-timer.C:
		}
	}
}

// lines handles the whole lines in b and moves the rest to its start,
// returning its length.
func (t *Tracer) lines(b []byte) int {
	last := bytes.LastIndexByte(b, '\n')
	if last < 0 {
		return len(b)
	}
	whole := b[:last+1]
	if t.text != nil {
		if _, err := t.text.Write(whole); err != nil && t.readErr == nil {
			t.readErr = fmt.Errorf("blocktrace: writing the trace text: %w", err)
			t.text = nil
		}
	}
	for len(whole) > 0 {
		i := bytes.IndexByte(whole, '\n')
		p := ParseLine(whole[:i])
		t.totals.Add(p)
		if p.Kind == Complete && t.fn != nil {
			t.fn(p.Event)
		}
		whole = whole[i+1:]
	}
	return copy(b, b[last+1:])
}
