package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs/zenfscapture"
)

const sysBlock = "../../internal/zbd/testdata/sys/block"

// reply is what a fake command prints and returns.
type reply struct {
	stdout, stderr string
	err            error
}

// fakeRunner records every command and answers by zenfs subcommand.
type fakeRunner struct {
	calls   [][]string
	replies map[string]reply
	// before runs when a subcommand starts, to observe the machine then.
	before map[string]func()
}

func (f *fakeRunner) Run(_ context.Context, name string, args ...string) (string, string, error) {
	f.calls = append(f.calls, append([]string{name}, args...))
	if fn := f.before[args[0]]; fn != nil {
		fn()
	}
	r, ok := f.replies[args[0]]
	if !ok && name == "blkid" {
		// A test that does not script blkid gets its answer for a device with no signature it knows.
		return "", "", blkidNothingFoundErr
	}
	if !ok {
		return "", "unexpected command", errors.New("exit status 1")
	}
	return r.stdout, r.stderr, r.err
}

// argv is every command but blkid, which every format runs first to see what the device holds: what the
// ZenFS tests are about is which zenfs commands ran.
func (f *fakeRunner) argv() string {
	var lines []string
	for _, c := range f.zenfsCalls() {
		lines = append(lines, strings.Join(c, " "))
	}
	return strings.Join(lines, "\n")
}

// allArgv is every command, blkid's included.
func (f *fakeRunner) allArgv() string {
	var lines []string
	for _, c := range f.calls {
		lines = append(lines, strings.Join(c, " "))
	}
	return strings.Join(lines, "\n")
}

// zenfsCalls are the calls other than blkid's.
func (f *fakeRunner) zenfsCalls() [][]string {
	var out [][]string
	for _, c := range f.calls {
		if c[0] != "blkid" {
			out = append(out, c)
		}
	}
	return out
}

const zoneSize = 64 << 20

// fakeDevices serves one zoned device: its zone report and sparse content.
type fakeDevices struct {
	path      string
	zones     []zbd.Zone
	reportErr error
	openErr   error
	// sharedErr fails OpenShared; openErr (a busy device) does not.
	sharedErr error
	readErr   error
	resetErr  error
	data      map[int64][]byte
	reported  int
	opened    int
	shared    int
	closed    int
	// resets counts ResetZones calls, zonesReset the zones they reset.
	resets     int
	zonesReset int
}

// zonedDevice is a device of n empty zones of the given size.
func zonedDevice(name string, n int, size int64) *fakeDevices {
	f := &fakeDevices{path: "/dev/" + name, data: map[int64][]byte{}}
	for i := range n {
		start := int64(i) * size
		f.zones = append(f.zones, zbd.Zone{Start: start, Len: size, Capacity: size, WritePointer: start,
			Type: zbd.ZoneTypeSeqWriteReq, Cond: zbd.ZoneCondEmpty})
	}
	return f
}

// nullb0 matches testdata's nullb0: 64 empty 64 MiB zones.
func nullb0() *fakeDevices { return zonedDevice("nullb0", 64, zoneSize) }

// write puts data at the start of zone i and moves its write pointer.
func (f *fakeDevices) write(i int, data []byte) *fakeDevices {
	z := &f.zones[i]
	f.data[z.Start] = data
	z.WritePointer, z.Cond = z.Start+int64(len(data)), zbd.ZoneCondClosed
	return f
}

func (f *fakeDevices) ReportZones(devPath string) ([]zbd.Zone, error) {
	f.reported++
	if devPath != f.path {
		return nil, &os.PathError{Op: "open", Path: devPath, Err: os.ErrNotExist}
	}
	return f.zones, f.reportErr
}

func (f *fakeDevices) Open(devPath string) (ReaderAtCloser, error) {
	if devPath != f.path {
		return nil, &os.PathError{Op: "open", Path: devPath, Err: os.ErrNotExist}
	}
	if f.openErr != nil {
		return nil, f.openErr
	}
	f.opened++
	return f, nil
}

// OpenShared reads the device without claiming it: it works while another
// process holds it exclusively (openErr being zbd.ErrBusy).
func (f *fakeDevices) OpenShared(devPath string) (ReaderAtCloser, error) {
	if devPath != f.path {
		return nil, &os.PathError{Op: "open", Path: devPath, Err: os.ErrNotExist}
	}
	if f.sharedErr != nil {
		return nil, f.sharedErr
	}
	f.shared++
	return f, nil
}

func (f *fakeDevices) ReadAt(p []byte, off int64) (int, error) {
	if f.readErr != nil {
		return 0, f.readErr
	}
	clear(p)
	end := off + int64(len(p))
	for start, d := range f.data {
		if lo, hi := max(start, off), min(start+int64(len(d)), end); lo < hi {
			copy(p[lo-off:hi-off], d[lo-start:hi-start])
		}
	}
	return len(p), nil
}

func (f *fakeDevices) Close() error { f.closed++; return nil }

// ResetZones empties every written zone, as BLKRESETZONE does.
func (f *fakeDevices) ResetZones(devPath string, zones []zbd.Zone) (int, error) {
	f.resets++
	if devPath != f.path {
		return 0, &os.PathError{Op: "open", Path: devPath, Err: os.ErrNotExist}
	}
	if f.resetErr != nil {
		return 0, f.resetErr
	}
	n := 0
	for i := range f.zones {
		z := &f.zones[i]
		if z.Type.Sequential() && z.Cond != zbd.ZoneCondEmpty {
			z.Cond, z.WritePointer = zbd.ZoneCondEmpty, z.Start
			delete(f.data, z.Start)
			n++
		}
	}
	f.zonesReset += n
	return n, nil
}

// realSuperblock is the first 4 KiB of nullb0's first meta zone as the real
// zenfs mkfs wrote it (UUID c59e1291-..., aux /tmp/aux/nullb0-3/).
func realSuperblock(t *testing.T) []byte {
	return zenfscapture.Hexdump(t, "capture/nullb0/formatted-metazone0.first4k.hex.txt")
}

type result struct {
	code           int
	stdout, stderr string
	report         dbinit.Report
}

// runZnsdb runs the helper with fakes and reads back its termination log,
// which must hold exactly what stdout shows.
func runZnsdb(t *testing.T, r Runner, devs Devices, env map[string]string, args ...string) result {
	t.Helper()
	return runZnsdbOn(t, deps{runner: r, devices: devs, getenv: func(k string) string { return env[k] }}, args...)
}

// runZnsdbOn runs the helper with d, its output captured.
func runZnsdbOn(t *testing.T, d deps, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	logPath := filepath.Join(t.TempDir(), "termination-log")
	if args[0] != "health" {
		args = append(args, "--termination-log", logPath)
	}
	d.stdout, d.stderr = &out, &errOut
	if d.getenv == nil {
		d.getenv = func(string) string { return "" }
	}
	code := run(context.Background(), args, d)
	res := result{code: code, stdout: out.String(), stderr: errOut.String()}
	if args[0] == "health" || code == exitUsage {
		return res
	}
	logged, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("no termination log: %v (stderr %s)", err, res.stderr)
	}
	if strings.TrimSpace(res.stdout) != string(logged) {
		t.Errorf("stdout %q differs from termination log %q", res.stdout, logged)
	}
	if err := json.Unmarshal(logged, &res.report); err != nil {
		t.Fatalf("termination log is not a report: %v: %s", err, logged)
	}
	return res
}

// blkidNothingFoundErr is the error of a process that exited with blkid's "nothing found" status.
var blkidNothingFoundErr = func() error {
	err := exec.Command("sh", "-c", "exit 2").Run()
	if err == nil {
		panic("sh -c 'exit 2' succeeded")
	}
	return err
}()
