package drivereport

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The gate orders the sidecar's first readings before the runner's phase. One file decides it, created with
// O_EXCL by whichever side comes first: the sidecar, once it has read the counters and is tracing ("ready"),
// or the runner, when it stops waiting and starts without it ("started without the drive sidecar"). Whoever
// loses the race reads the winner's word, so the sidecar never reports figures for a phase that began before
// its first reading.
const gateFile = "gate"

const (
	gateReady   = "ready"
	gateStarted = "started without the drive sidecar"
)

// ErrPhaseStartedFirst: the runner began its phase before the sidecar's first readings; the sidecar's figures
// for it would miss the beginning.
var ErrPhaseStartedFirst = errors.New("the phase started before the drive sidecar had read the drive (it was not ready in time): no figures for it")

// OpenGate is the sidecar's side: it says the phase may start. It fails with ErrPhaseStartedFirst when the
// runner already started.
func OpenGate(dir string) error {
	won, word, err := claim(dir, gateReady)
	if err != nil || won || word == gateReady { // a restarted sidecar finds its own word
		return err
	}
	return ErrPhaseStartedFirst
}

// AwaitGate is the runner's side: it waits up to timeout for the sidecar, polling every interval, and reports
// whether the sidecar was ready; when it was not, the gate records that the phase started without it.
func AwaitGate(ctx context.Context, dir string, timeout, interval time.Duration, sleep func(context.Context, time.Duration) error) (bool, error) {
	for waited := time.Duration(0); ; waited += interval {
		word, err := readGate(dir)
		if err != nil {
			return false, err
		}
		if word != "" {
			return word == gateReady, nil
		}
		if waited >= timeout {
			break
		}
		if err := sleep(ctx, interval); err != nil {
			return false, err
		}
	}
	won, word, err := claim(dir, gateStarted)
	if err != nil {
		return false, err
	}
	return !won && word == gateReady, nil
}

// claim creates the gate with word unless it exists; it returns whether it did, and the word that holds.
func claim(dir, word string) (bool, string, error) {
	path := filepath.Join(dir, gateFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		held, rerr := readGate(dir)
		return false, held, rerr
	}
	if err != nil {
		return false, "", fmt.Errorf("drive gate: %w", err)
	}
	// The word is written after the create: a reader that finds the file empty waits for it (readGate).
	if _, err := f.WriteString(word + "\n"); err != nil {
		f.Close()
		return false, "", fmt.Errorf("drive gate: %w", err)
	}
	return true, word, f.Close()
}

// readGate is the gate's word, "" when there is none yet; a file still empty is read again briefly.
func readGate(dir string) (string, error) {
	for i := 0; ; i++ {
		b, err := os.ReadFile(filepath.Join(dir, gateFile))
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("drive gate: %w", err)
		}
		if w := strings.TrimSpace(string(b)); w != "" || i >= 50 {
			if w == "" {
				return "", fmt.Errorf("drive gate: %s stays empty", filepath.Join(dir, gateFile))
			}
			return w, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}
