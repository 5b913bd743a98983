package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// The common start of a run across targets comes one of two ways:
//
//   - --start-at: a time fixed in advance; every runner must be at the barrier by then.
//   - --start-file with --ready-listen (what the operator uses): the runner says it is at the barrier by
//     opening its readiness endpoint, and waits for the start time. The operator sets the time once every
//     target's pod is Ready and hands it over twice: as a pod annotation, which the kubelet writes into the file
//     (a downward API volume), and by posting it to the endpoint, which is quicker where the kubelet is slow to
//     refresh the file. A run then starts as soon as the slowest runner is ready, instead of after a
//     delay sized for the slowest pod start a node might have.

// startPoll is how often the runner reads the start file: the file is tiny and local.
const startPoll = 200 * time.Millisecond

// startWaitLog is how often a runner still waiting for its start says so.
const startWaitLog = time.Minute

// startBarrier is the runner's part of the common start.
type startBarrier struct {
	at          time.Time
	file        string
	tolerance   time.Duration
	readyListen string
	// given is the start the operator posted to the readiness endpoint (POST /start), when it did: the same time
	// as the annotation's, there in a second where the kubelet took more than a minute under emulation to write
	// the file. The first time given counts.
	given chan time.Time
}

func startFlags(fs *flag.FlagSet, b *startBarrier) {
	fs.Func("start-at", "RFC 3339 time to start at (the multi-tenant barrier)", func(v string) error {
		t, err := time.Parse(time.RFC3339Nano, v)
		b.at = t
		return err
	})
	fs.StringVar(&b.file, "start-file", "", "wait at the barrier until this file holds the RFC 3339 start time (the operator's pod annotation, "+
		"through a downward API volume); with --ready-listen, the readiness endpoint says when the runner is there")
	fs.DurationVar(&b.tolerance, "start-tolerance", 5*time.Second, "how late after the start time the runner may still start; later is a failure")
	fs.StringVar(&b.readyListen, "ready-listen", "", "address of the readiness endpoint, served from the moment the runner waits at the barrier "+
		"(GET /readyz answers 200; before, nothing listens); POST /start with an RFC 3339 body gives the start as the file does, the first one counts")
}

func (b *startBarrier) check() error {
	if !b.at.IsZero() && b.file != "" {
		return errors.New("--start-at and --start-file are two ways to start: give one")
	}
	if b.readyListen != "" && b.file == "" {
		return errors.New("--ready-listen needs --start-file: the endpoint says the runner waits for a start it is to be given")
	}
	return nil
}

// await holds the run until its common start: the time given, or the one the start file comes to hold. The
// readiness endpoint, when there is one, stays up until the caller calls done (at the end of its phase), so that
// the pod stays Ready while it runs.
func (b *startBarrier) await(ctx context.Context, now func() time.Time, sleep func(context.Context, time.Duration) error, logf func(string, ...any)) (done func(), err error) {
	done = func() {}
	at := b.at
	if b.file != "" {
		if done, err = b.serveReadiness(logf); err != nil {
			return done, err
		}
		if at, err = b.awaitFile(ctx, now, sleep, logf); err != nil {
			return done, err
		}
	}
	return done, waitForStart(ctx, at, b.tolerance, now, sleep)
}

// serveReadiness answers the kubelet's readiness probe until done is called; without --ready-listen it does
// nothing.
func (b *startBarrier) serveReadiness(logf func(string, ...any)) (done func(), err error) {
	if b.readyListen == "" {
		return func() {}, nil
	}
	l, err := net.Listen("tcp", b.readyListen)
	if err != nil {
		return func() {}, fmt.Errorf("readiness endpoint: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "waiting at the start barrier or past it")
	})
	mux.HandleFunc("POST /start", b.takeStart)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("readiness endpoint stopped: %v", err)
		}
	}()
	return func() { _ = srv.Close() }, nil
}

// maxStartAhead bounds how far ahead a posted start may be: further is not a start the operator gives.
const maxStartAhead = time.Hour

// takeStart is POST /start: the body is the common start, RFC 3339. Only the first one is taken.
func (b *startBarrier) takeStart(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 128))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(raw)))
	if err != nil {
		http.Error(w, "the body is not an RFC 3339 time: "+err.Error(), http.StatusBadRequest)
		return
	}
	if time.Until(at) > maxStartAhead {
		http.Error(w, fmt.Sprintf("a start more than %s ahead is refused", maxStartAhead), http.StatusBadRequest)
		return
	}
	select {
	case b.given <- at:
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "a start was given already", http.StatusConflict)
	}
}

// awaitFile waits until the start file, or the operator's POST /start, holds a time.
func (b *startBarrier) awaitFile(ctx context.Context, now func() time.Time, sleep func(context.Context, time.Duration) error, logf func(string, ...any)) (time.Time, error) {
	began := now()
	logf("at the start barrier: waiting for the common start in %s", b.file)
	nextLog := began.Add(startWaitLog)
	for {
		select {
		case at := <-b.given:
			logf("common start %s, given by the operator's call %s after the runner was ready", at.UTC().Format(time.RFC3339), now().Sub(began).Round(100*time.Millisecond))
			return at, nil
		default:
		}
		raw, err := os.ReadFile(b.file)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return time.Time{}, fmt.Errorf("start file: %w", err)
		}
		if v := strings.TrimSpace(string(raw)); v != "" {
			at, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return time.Time{}, fmt.Errorf("start file %s holds %q, not an RFC 3339 time: %w", b.file, v, err)
			}
			logf("common start %s, given by the start file %s after the runner was ready", at.UTC().Format(time.RFC3339), now().Sub(began).Round(100*time.Millisecond))
			return at, nil
		}
		if t := now(); !t.Before(nextLog) {
			logf("still waiting for the common start after %s (the operator sets it once every target's runner is ready)", t.Sub(began).Round(time.Second))
			nextLog = t.Add(startWaitLog)
		}
		if err := sleep(ctx, startPoll); err != nil {
			return time.Time{}, fmt.Errorf("interrupted while waiting for the common start in %s: %w", b.file, err)
		}
	}
}
