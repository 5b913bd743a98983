package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/observe"
)

const cmdObserve = "observe"

// observeShutdownGrace bounds the wait for requests in flight once the observer ends.
const observeShutdownGrace = 5 * time.Second

type observeFlags struct {
	listen, device, sysBlock, driveDir string
	target, phase, terminationLog      string
	maxWait                            time.Duration
}

// observeCmd is the main container of an observer pod, on the device's node, for a runner on another node
// that cannot see the device: it samples the device's block-layer counters when the runner asks (POST /begin,
// POST /end) and exits after /end, so that the kubelet stops the drive sidecar beside it, which then reports
// as it does beside a runner.
func observeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code := parseObserveFlags(args, stderr)
	if code >= 0 {
		return code
	}
	o := newObserver(f, stderr)
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		o.logf("cannot listen on %s: %v", f.listen, err)
		o.report(stdout, "cannot listen: "+err.Error())
		return 1
	}
	return o.serve(ctx, ln, stdout)
}

func parseObserveFlags(args []string, stderr io.Writer) (observeFlags, int) {
	var f observeFlags
	fs := flag.NewFlagSet("znsbench observe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.listen, "listen", ":"+strconv.Itoa(observe.DefaultPort), "address to serve "+observe.PathReady+", "+observe.PathBegin+" and "+observe.PathEnd+" on")
	fs.StringVar(&f.device, "device", "", "kernel name of the device to sample (nullb0); DEV+DEV counts several together")
	fs.StringVar(&f.sysBlock, "sys-block", "/sys/block", "sysfs block directory")
	fs.StringVar(&f.driveDir, "drive-dir", "", "directory shared with the drive sidecar: not ready until it has read the drive (bounded wait)")
	fs.StringVar(&f.target, "target", "", "target name, for the log and the summary")
	fs.StringVar(&f.phase, "phase", "", "the phase the remote runner runs, for the log and the summary")
	fs.DurationVar(&f.maxWait, "max-wait", 24*time.Hour, "exit 1 when no "+observe.PathEnd+" came within this")
	fs.StringVar(&f.terminationLog, "termination-log", "/dev/termination-log", "where to write the summary (skipped if not writable)")
	if err := fs.Parse(args); err != nil {
		return f, 2
	}
	bad := f.device == "" || f.maxWait <= 0 || f.listen == "" || fs.NArg() > 0
	for _, dev := range strings.Split(f.device, "+") {
		bad = bad || dev == "" || strings.ContainsAny(dev, "/\x00")
	}
	if bad {
		fmt.Fprintln(stderr, "znsbench observe: --device DEV or DEV+DEV (kernel names) is required, --max-wait positive, --listen not empty, and no arguments")
		return f, 2
	}
	return f, -1
}

type observer struct {
	f      observeFlags
	tag    string
	stderr io.Writer
	logMu  sync.Mutex

	ready       chan struct{} // closed once the drive gate is settled
	readyLogged atomic.Int32  // 1: a 503 was logged, 2: a 200 was

	mu        sync.Mutex
	before    []blockstat.Stat // the last /begin's samples; nil when there was none or it failed
	beginErr  string           // why the last /begin has no samples
	beginTime time.Time
	endReply  *observe.Reply // set by the first /end, answered again to a repeated one
	endTime   time.Time

	done     chan struct{} // closed once /end's answer is out
	doneOnce sync.Once
}

func newObserver(f observeFlags, stderr io.Writer) *observer {
	tag := strings.TrimSpace(f.phase + " " + f.target)
	if tag != "" {
		tag = " [" + tag + "]"
	}
	return &observer{f: f, tag: tag, stderr: stderr, ready: make(chan struct{}), done: make(chan struct{})}
}

func (o *observer) logf(format string, a ...any) {
	o.logMu.Lock()
	defer o.logMu.Unlock()
	fmt.Fprintf(o.stderr, "znsbench observe%s: %s\n", o.tag, fmt.Sprintf(format, a...))
}

// serve answers until /end, the context's end or --max-wait, and returns the exit status: 0 only after /end,
// as then the runner's figures are complete whatever they say.
func (o *observer) serve(ctx context.Context, ln net.Listener, stdout io.Writer) int {
	// Requests waiting for the drive gate hold the shutdown; ending their context lets a stopped observer go.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{Handler: o, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base }}
	if o.f.driveDir == "" {
		close(o.ready)
	} else {
		go o.awaitReady(ctx)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	o.logf("listening on %s for device %s (sysfs %s)", ln.Addr(), o.f.device, o.f.sysBlock)

	timer := time.NewTimer(o.f.maxWait)
	defer timer.Stop()
	var why string
	select {
	case <-o.done:
	case <-ctx.Done():
		why = fmt.Sprintf("stopped (%v) before the runner's %s", context.Cause(ctx), observe.PathEnd)
	case <-timer.C:
		why = fmt.Sprintf("no %s within --max-wait %s", observe.PathEnd, o.f.maxWait)
	case err := <-served:
		why = fmt.Sprintf("serving failed: %v", err)
	}
	select {
	case <-o.done: // /end won a race with the stop: its answer is out, the figures stand
		why = ""
	default:
		cancelBase()
	}
	sctx, cancel := context.WithTimeout(context.Background(), observeShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if why != "" {
		o.logf("%s; exiting with status 1", why)
	}
	o.report(stdout, why)
	if why != "" {
		return 1
	}
	return 0
}

// awaitReady holds /ready (and /begin) until the drive sidecar has taken its first readings, as a runner beside
// it would hold its phase: its figures must start before the runner's.
func (o *observer) awaitReady(ctx context.Context) {
	awaitDrive(ctx, o.f.driveDir, sleepCtx, o.logf)
	close(o.ready)
}

func (o *observer) isReady() bool {
	select {
	case <-o.ready:
		return true
	default:
		return false
	}
}

func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var method string
	var handle func(http.ResponseWriter, *http.Request)
	switch r.URL.Path {
	case observe.PathReady:
		method, handle = http.MethodGet, o.handleReady
	case observe.PathBegin:
		method, handle = http.MethodPost, o.handleBegin
	case observe.PathEnd:
		method, handle = http.MethodPost, o.handleEnd
	default:
		o.logf("%s %s from %s: 404", r.Method, r.URL.Path, r.RemoteAddr)
		http.NotFound(w, r)
		return
	}
	if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
		o.logf("%s %s from %s: 405 (only %s)", r.Method, r.URL.Path, r.RemoteAddr, method)
		w.Header().Set("Allow", method)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	handle(w, r)
}

// handleReady logs only the first answer of each kind: the kubelet probes every few seconds for the whole phase.
func (o *observer) handleReady(w http.ResponseWriter, r *http.Request) {
	if !o.isReady() {
		if o.readyLogged.CompareAndSwap(0, 1) {
			o.logf("GET %s from %s: 503, waiting for the drive sidecar", observe.PathReady, r.RemoteAddr)
		}
		http.Error(w, "not ready: waiting for the drive sidecar", http.StatusServiceUnavailable)
		return
	}
	if o.readyLogged.Swap(2) != 2 {
		o.logf("GET %s from %s: 200, ready", observe.PathReady, r.RemoteAddr)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ready\n")
}

func (o *observer) handleBegin(w http.ResponseWriter, r *http.Request) {
	// The operator starts the runner only once the observer is ready; a /begin before that still must not
	// start the phase's figures before the drive sidecar's.
	select {
	case <-o.ready:
	case <-r.Context().Done():
		o.logf("POST %s from %s: given up before the drive gate settled (%v)", observe.PathBegin, r.RemoteAddr, context.Cause(r.Context()))
		http.Error(w, "the observer is stopping", http.StatusServiceUnavailable)
		return
	}
	o.mu.Lock()
	if o.endReply != nil {
		o.mu.Unlock()
		o.logf("POST %s from %s: 409, after %s", observe.PathBegin, r.RemoteAddr, observe.PathEnd)
		http.Error(w, "the observer has already answered "+observe.PathEnd, http.StatusConflict)
		return
	}
	rep := observe.Reply{Device: o.f.device}
	sts, err := sampleDevices(o.f.sysBlock, o.f.device)
	o.before, o.beginErr, o.beginTime = sts, "", time.Now()
	if err != nil {
		o.beginErr = err.Error()
		rep.Reason = o.beginErr
	} else {
		rep.Sampled = true
	}
	o.mu.Unlock()
	if rep.Sampled {
		o.logf("POST %s from %s: %s sampled", observe.PathBegin, r.RemoteAddr, o.f.device)
	} else {
		o.logf("POST %s from %s: %s", observe.PathBegin, r.RemoteAddr, rep.Reason)
	}
	writeReply(w, rep)
}

func (o *observer) handleEnd(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	if o.endReply != nil {
		rep := *o.endReply
		o.mu.Unlock()
		o.logf("POST %s from %s: repeated, the first answer again", observe.PathEnd, r.RemoteAddr)
		writeReply(w, rep)
		return
	}
	rep := o.measure()
	o.endReply, o.endTime = &rep, time.Now()
	o.mu.Unlock()
	if rep.Sampled {
		o.logf("POST %s from %s: %s took %d bytes since %s", observe.PathEnd, r.RemoteAddr, o.f.device, *rep.WrittenBytes, observe.PathBegin)
	} else {
		o.logf("POST %s from %s: not counted: %s", observe.PathEnd, r.RemoteAddr, rep.Reason)
	}
	writeReply(w, rep)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	o.doneOnce.Do(func() { close(o.done) })
}

// measure is /end's answer; o.mu is held.
func (o *observer) measure() observe.Reply {
	rep := observe.Reply{Device: o.f.device}
	switch {
	case o.before == nil && o.beginTime.IsZero():
		rep.Reason = "no " + observe.PathBegin + " before this " + observe.PathEnd + ": nothing to count from"
		return rep
	case o.before == nil:
		rep.Reason = "the " + observe.PathBegin + " sample failed: " + o.beginErr
		return rep
	}
	after, err := sampleDevices(o.f.sysBlock, o.f.device)
	if err != nil {
		rep.Reason = err.Error()
		return rep
	}
	written, err := writtenBetween(o.before, after)
	if err != nil {
		rep.Reason = fmt.Sprintf("device %s: %v", o.f.device, err)
		return rep
	}
	rep.Sampled, rep.WrittenBytes = true, &written
	return rep
}

// writeReply sends the whole answer with its length, so that a flush completes it for the runner before the
// observer goes away.
func writeReply(w http.ResponseWriter, rep observe.Reply) {
	b, err := json.Marshal(rep)
	if err != nil { // a Reply always encodes
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// report writes what was sampled to the termination log and stdout; why is the failure, if any.
func (o *observer) report(stdout io.Writer, why string) {
	o.mu.Lock()
	s := observe.Summary{Phase: o.f.phase, Target: o.f.target, Device: o.f.device}
	if !o.beginTime.IsZero() {
		s.BeginTime = o.beginTime.UTC().Format(time.RFC3339Nano)
	}
	if rep := o.endReply; rep != nil {
		s.EndTime = o.endTime.UTC().Format(time.RFC3339Nano)
		s.Sampled, s.WrittenBytes, s.Reason = rep.Sampled, rep.WrittenBytes, rep.Reason
	}
	o.mu.Unlock()
	if why != "" {
		s.Reason = strings.TrimPrefix(s.Reason+"; "+why, "; ")
	}
	b, err := s.Encode()
	if err != nil {
		b, _ = observe.Summary{Device: o.f.device, Reason: "summary not encoded: " + err.Error()}.Encode()
	}
	if o.f.terminationLog != "" {
		if err := os.WriteFile(o.f.terminationLog, b, 0o644); err != nil {
			o.logf("termination log not written (%v); the summary is on stdout", err)
		}
	}
	fmt.Fprintf(stdout, "%s\n", b)
}
