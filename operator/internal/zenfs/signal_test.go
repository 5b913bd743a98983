package zenfs

import (
	"os/exec"
	"strings"
	"testing"
)

// dieBy runs a shell that sends itself sig after printing stderr: a real
// process ending on a real signal, so that the runner's error is what
// os/exec reports for one (an *exec.ExitError whose wait status says
// "signaled"), not a string made up here.
func dieBy(t *testing.T, sig, stderr string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `printf '%s' "$1" >&2; kill -`+sig+` $$`, "sh", stderr)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	err := cmd.Run()
	if err == nil {
		t.Fatalf("sh survived SIG%s", sig)
	}
	return errOut.String(), err
}

// A zenfs killed by the OOM killer (what the real zenfs met on random bytes
// over nullb1's first meta zone in a 3 GiB guest: 2.8 GB resident, SIGKILL)
// is classified as killed, with the signal named and what clears the data.
// No run of the captures ended that way (none of their .rc files says 137):
// the kill here is a real SIGKILL of a real process instead.
func TestClassifyKilledZenFS(t *testing.T) {
	stderr, err := dieBy(t, "KILL", "")
	for _, tc := range []struct {
		name   string
		runErr error
	}{
		{"wait status", err},
		// The same death as the captures' .rc files and a shell would report it.
		{"shell exit status", exitErr(137)},
		{"error text only", errorText("zenfs failed (signal: killed)")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Classify("", stderr, tc.runErr)
			if f.Reason != ReasonKilled {
				t.Fatalf("reason %s, want %s (%q)", f.Reason, ReasonKilled, f.Message)
			}
			for _, want := range []string{"SIGKILL", "exit 137", "OOM killer", "one of this node's zoned devices",
				"not ZenFS", "blkzone reset -o <zone start> -c 1 /dev/<device>`", "reformatToken"} {
				if !strings.Contains(f.Message, want) {
					t.Errorf("message lacks %q: %q", want, f.Message)
				}
			}
		})
	}
	// A kill outranks whatever zenfs printed before it: the kill is why it stopped.
	stderr, err = dieBy(t, "KILL", "Failed to open zoned block device: nullb0, error: Device or resource busy\n")
	if f := Classify("nullb0", stderr, err); f.Reason != ReasonKilled || !strings.Contains(f.Message, "Device or resource busy") {
		t.Errorf("killed after printing: %+v", f)
	}
}

// An abort keeps its reason and now names the signal when zenfs said nothing
// recognisable (an assertion), and the recorded bad_alloc abort says what to
// do about the data behind it.
func TestClassifyAbortedZenFS(t *testing.T) {
	stderr, err := dieBy(t, "ABRT", "zenfs: fs/zbd_zenfs.cc:100: Assertion `x' failed.\n")
	f := Classify("nullb1", stderr, err)
	if f.Reason != ReasonAborted || !strings.Contains(f.Message, "SIGABRT, exit 134") || !strings.Contains(f.Message, "Assertion") {
		t.Errorf("assertion abort: %+v", f)
	}
	// followup/B-garbage/10-random1-ls-uuid: random bytes over nullb1's first meta zone, exit 134.
	rec := readCapture(t, "followup/B-garbage/10-random1-ls-uuid.stderr")
	f = Classify("nullb1", rec, exitErr(134))
	for _, want := range []string{"std::bad_alloc", "not ZenFS", "memory bound", "blkzone reset -o <zone start> -c 1 /dev/nullb1", "reformatToken"} {
		if f.Reason != ReasonAborted || !strings.Contains(f.Message, want) {
			t.Errorf("recorded bad_alloc: %s, message lacks %q: %q", f.Reason, want, f.Message)
		}
	}
}

// Other signals are neither an abort nor a kill, and are named.
func TestClassifyOtherSignals(t *testing.T) {
	stderr, err := dieBy(t, "SEGV", "")
	f := Classify("nvme0n2", stderr, err)
	if f.Reason != ReasonSignaled || !strings.Contains(f.Message, "SIGSEGV") || !strings.Contains(f.Message, "exit 139") ||
		!strings.Contains(f.Message, "nvme0n2") {
		t.Errorf("SIGSEGV: %+v", f)
	}
	if f := Classify("nvme0n2", "", exitErr(135)); f.Reason != ReasonSignaled || !strings.Contains(f.Message, "SIGBUS") {
		t.Errorf("exit 135: %+v", f)
	}
	// An ordinary failure is not a signal.
	if f := Classify("nvme0n2", "", exitErr(1)); f.Reason != ReasonUnknown {
		t.Errorf("exit 1: %+v", f)
	}
}

type errorText string

func (e errorText) Error() string { return string(e) }

// Every message of every captured failure reads as text: no unfilled
// placeholder and no fmt complaint (an advice without the device in it once
// ended in "%!(EXTRA string=nullb0)").
func TestClassifiedMessagesAreWhole(t *testing.T) {
	n := 0
	for _, r := range zenfsRuns(t) {
		if r.rc == 0 {
			continue
		}
		dev, _ := r.flag("zbd")
		for _, runErr := range []error{exitErr(r.rc), errorText("signal: killed"), errorText("signal: segmentation fault")} {
			n++
			m := Classify(dev, r.stderr, runErr).Message
			if strings.Contains(m, "%!") || strings.Contains(m, "{dev}") || strings.Contains(m, "{kernel}") {
				t.Errorf("%s: %q", r.rel, m)
			}
		}
	}
	if n == 0 {
		t.Fatal("no failed run in the captures")
	}
}
