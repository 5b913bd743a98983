package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/observe"
)

// deviceSampler measures what the target's device took during a phase: read here from sysfs when the runner
// is on the device's node, asked of the observer there when it is not. A figure it cannot get is logged and
// left out of the summary, never a failure of the phase.
type deviceSampler interface {
	// begin takes the first sample, right before the tool starts; a second begin replaces the first.
	begin(ctx context.Context)
	// end takes the second and returns what the devices took since begin; ok is false when that is not known.
	end(ctx context.Context) (w deviceWritten, ok bool)
}

// deviceWritten is what end measured: the device as the summary names it, and the bytes written to it.
type deviceWritten struct {
	device string
	bytes  int64
}

// newDeviceSampler picks the sampler the flags ask for; nil without --device and --observer.
func (r *runner) newDeviceSampler() deviceSampler {
	c := r.cfg
	switch {
	case c.observer != "":
		return newObserverSampler(c.observer, c.observerTimeout, r.sleep, r.logf)
	case c.device != "":
		return &sysfsSampler{sysBlock: c.sysBlock, device: c.device, logf: r.logf}
	}
	return nil
}

// beginDevice and endDevice are the phase's ends of the measurement; endDevice fills the summary's device
// figures and returns the bytes, -1 when unknown. endDevice without a begin before it does nothing, so that a
// caller that may or may not have begun can always call it.
func (r *runner) beginDevice(ctx context.Context) {
	if r.devices == nil {
		return
	}
	r.devices.begin(ctx)
	r.deviceBegun = true
}

func (r *runner) endDevice(ctx context.Context) int64 {
	if r.devices == nil || !r.deviceBegun {
		return -1
	}
	r.deviceBegun = false
	w, ok := r.devices.end(ctx)
	if !ok {
		return -1
	}
	r.sum.Device, r.sum.DeviceWrittenBytes = w.device, w.bytes
	return w.bytes
}

// observerFlags are the runner's flags for a device on another node; the sysbench and the YCSB phases share them.
func observerFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.observer, "observer", "", "URL of the observer on the device's node (znsbench observe, http://HOST:9106), for a runner on another node: "+
		"it samples the device before and after the phase instead of --device; unreachable is logged, never a failure")
	fs.DurationVar(&c.observerTimeout, "observer-timeout", defaultObserverTimeout, "bound of one call to --observer (each is tried a few times)")
}

// checkPhaseFlags refuses flags that contradict each other: two ways to start, and --observer with the flags that
// only make sense on the device's node (there the observer samples the device and the drive sidecar runs beside
// it).
func checkPhaseFlags(c config) error {
	if err := c.start.check(); err != nil {
		return err
	}
	if c.observer == "" {
		return nil
	}
	if c.device != "" {
		return errors.New("--observer and --device exclude each other: the observer samples the device on its own node")
	}
	if c.driveDir != "" {
		return errors.New("--observer and --drive-dir exclude each other: the drive sidecar runs beside the observer, which waits for it")
	}
	u, err := url.Parse(c.observer)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--observer %q is not an http://HOST:PORT URL", c.observer)
	}
	if c.observerTimeout <= 0 {
		return fmt.Errorf("--observer-timeout %s: must be positive", c.observerTimeout)
	}
	return nil
}

// sampleDevices reads every device of spec (DEV or DEV+DEV) once.
func sampleDevices(sysBlock, spec string) ([]blockstat.Stat, error) {
	var sts []blockstat.Stat
	for _, dev := range strings.Split(spec, "+") {
		st, err := blockstat.Sample(sysBlock, dev)
		if err != nil {
			return nil, fmt.Errorf("device %s not sampled (%v)", dev, err)
		}
		sts = append(sts, st)
	}
	return sts, nil
}

// writtenBetween is what the devices took between two samples, all together: a file system whose metadata is
// on a device of its own (zoned XFS's) writes to both for the same transactions.
func writtenBetween(before, after []blockstat.Stat) (int64, error) {
	if len(before) != len(after) {
		return 0, fmt.Errorf("%d devices sampled before, %d after", len(before), len(after))
	}
	var written int64
	for i := range after {
		d, err := blockstat.Delta(before[i], after[i])
		if err != nil {
			return 0, err
		}
		written += int64(d.WrittenBytes())
	}
	return written, nil
}

// sysfsSampler reads the device where the runner runs. A device that is not visible here is not an error.
type sysfsSampler struct {
	sysBlock, device string
	logf             func(string, ...any)
	before           []blockstat.Stat // nil when the first sample failed
}

func (s *sysfsSampler) begin(context.Context) {
	sts, err := sampleDevices(s.sysBlock, s.device)
	if err != nil {
		s.logf("%v; written bytes omitted", err)
	}
	s.before = sts
}

func (s *sysfsSampler) end(context.Context) (deviceWritten, bool) {
	before := s.before
	s.before = nil
	if before == nil {
		return deviceWritten{}, false
	}
	after, err := sampleDevices(s.sysBlock, s.device)
	if err != nil {
		s.logf("%v; written bytes omitted", err)
		return deviceWritten{}, false
	}
	w, err := writtenBetween(before, after)
	if err != nil {
		s.logf("device %s: %v; written bytes omitted", s.device, err)
		return deviceWritten{}, false
	}
	return deviceWritten{device: s.device, bytes: w}, true
}

// How the runner calls the observer. The observer's node may be one under QEMU's emulation, slow to answer,
// so a call gets a generous bound and a few tries; a variable so that tests need not wait.
var (
	observerAttempts   = 4
	observerRetryPause = 2 * time.Second
)

// defaultObserverTimeout bounds one call to the observer.
const defaultObserverTimeout = 30 * time.Second

// observerStopBound bounds the one /end tried once the runner is being stopped: the kubelet's grace period is
// short, and the observer still has to hear that the phase is over.
const observerStopBound = 5 * time.Second

// observerSampler asks the observer on the device's node to sample it.
type observerSampler struct {
	base   string
	client *http.Client
	sleep  func(context.Context, time.Duration) error
	logf   func(string, ...any)
	// began is whether the observer confirmed the first sample: figures from an /end whose /begin went
	// unanswered could count from a moment after the tool started.
	began bool
}

func newObserverSampler(base string, timeout time.Duration, sleep func(context.Context, time.Duration) error, logf func(string, ...any)) *observerSampler {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// The observer is a pod address: a proxy from the environment would not reach it. A connection kept from
	// /begin would sit idle for the whole phase and could be gone by /end; two calls per phase need no reuse.
	tr.Proxy = nil
	tr.DisableKeepAlives = true
	return &observerSampler{base: strings.TrimRight(base, "/"), client: &http.Client{Timeout: timeout, Transport: tr},
		sleep: sleep, logf: logf}
}

func (o *observerSampler) begin(ctx context.Context) {
	o.began = false
	rep, err := o.call(ctx, observe.PathBegin, observerAttempts)
	switch {
	case err != nil:
		o.logf("device figures omitted: %v", err)
	case !rep.Sampled:
		o.logf("device figures omitted: the observer could not sample %s at %s: %s", rep.Device, observe.PathBegin, rep.Reason)
	default:
		o.began = true
		o.logf("observer sampled %s at %s", rep.Device, observe.PathBegin)
	}
}

// end always calls the observer, even when begin failed: /end is what lets it exit and the drive sidecar
// beside it report.
func (o *observerSampler) end(ctx context.Context) (deviceWritten, bool) {
	attempts := observerAttempts
	if ctx.Err() != nil {
		// The runner is being stopped: one short try, so that the observer need not wait for its --max-wait.
		attempts = 1
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), observerStopBound)
		defer cancel()
	}
	rep, err := o.call(ctx, observe.PathEnd, attempts)
	began := o.began
	o.began = false
	switch {
	case err != nil:
		o.logf("device figures omitted: %v", err)
	case !rep.Sampled:
		o.logf("device figures omitted: the observer could not count %s at %s: %s", rep.Device, observe.PathEnd, rep.Reason)
	case !began:
		o.logf("device figures omitted: the observer counted %s from a %s this runner saw no answer to", rep.Device, observe.PathBegin)
	case rep.WrittenBytes == nil || *rep.WrittenBytes < 0 || rep.Device == "":
		o.logf("device figures omitted: the observer's %s answer has no usable writtenBytes or device", observe.PathEnd)
	default:
		o.logf("observer counted %d bytes written to %s", *rep.WrittenBytes, rep.Device)
		return deviceWritten{device: rep.Device, bytes: *rep.WrittenBytes}, true
	}
	return deviceWritten{}, false
}

// call POSTs to the observer, trying again after a failure that another try may cure: no answer, or a 5xx.
func (o *observerSampler) call(ctx context.Context, path string, attempts int) (observe.Reply, error) {
	u := o.base + path
	for i := 1; ; i++ {
		rep, retry, err := o.once(ctx, u)
		if err == nil {
			return rep, nil
		}
		if !retry || i >= attempts || ctx.Err() != nil {
			if i > 1 {
				err = fmt.Errorf("%w (after %d attempts)", err, i)
			}
			return rep, err
		}
		o.logf("observer %s: %v; trying again in %s (attempt %d of %d)", u, err, observerRetryPause, i+1, attempts)
		if o.sleep(ctx, observerRetryPause) != nil {
			return rep, fmt.Errorf("%w (interrupted before attempt %d)", err, i+1)
		}
	}
}

func (o *observerSampler) once(ctx context.Context, u string) (rep observe.Reply, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(nil))
	if err != nil {
		return rep, false, err
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return rep, true, err // the error names the URL
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return rep, true, fmt.Errorf("observer %s: reading the answer: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return rep, resp.StatusCode >= 500, fmt.Errorf("observer %s: %s: %s", u, resp.Status, observe.Truncate(strings.TrimSpace(string(body)), 200))
	}
	if err := json.Unmarshal(body, &rep); err != nil {
		return rep, false, fmt.Errorf("observer %s: answer is not JSON (%v): %s", u, err, observe.Truncate(string(body), 200))
	}
	return rep, false, nil
}
