package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

const convBytes = 1 << 30

// conventionalSysfs is a sysfs tree with one conventional device of size bytes, as the kernel shows an NVMe
// namespace or a virtio disk.
func conventionalSysfs(t *testing.T, name string, size int64) string {
	dir := t.TempDir()
	for f, v := range map[string]string{
		"size": fmt.Sprint(size / 512), "queue/zoned": "none", "queue/scheduler": "[none] mq-deadline",
		"queue/logical_block_size": "512", "queue/chunk_sectors": "0", "queue/nr_zones": "0",
	} {
		p := filepath.Join(dir, name, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// conventionalDevice is a device with no zones, all zeros but what write puts there (fakeDevices' data).
func conventionalDevice(name string) *fakeDevices {
	return &fakeDevices{path: "/dev/" + name, data: map[int64][]byte{}}
}

// machine answers the commands of a conventional format by program: blkid's probe (what the device holds now),
// fio (a JSON report per job, or a failure), mkfs (which makes the file system blkid then finds).
type machine struct {
	t     *testing.T
	devs  *fakeDevices
	calls []string
	// found is what blkid finds; mkfs replaces it with its own file system.
	found reply
	// fioFails makes the nth fio run (1-based) fail; 0 never.
	fioFails, fioRuns int
	// iops is the write IOPS of the random rounds in turn.
	iops []float64
	// heldDuringFio and heldDuringMkfs are the device's exclusive holds when fio and mkfs ran.
	heldDuringFio  []int
	heldDuringMkfs int
}

func (m *machine) Run(_ context.Context, name string, args ...string) (string, string, error) {
	m.calls = append(m.calls, name+" "+strings.Join(args, " "))
	held := m.devs.opened - m.devs.closed
	switch name {
	case "blkid":
		return m.found.stdout, m.found.stderr, m.found.err
	case "fio":
		m.fioRuns++
		m.heldDuringFio = append(m.heldDuringFio, held)
		if m.fioRuns == m.fioFails {
			return "", "fio: pid=1234, got signal=9\n", errors.New("signal: killed")
		}
		return fioJSON(m.t, args, &m.iops), "", nil
	case "mkfs.ext4", "mkfs.xfs":
		m.heldDuringMkfs = held
		label := args[1]
		m.found = reply{stdout: fmt.Sprintf("LABEL=%s\nUUID=made-by-mkfs\nTYPE=%s\nUSAGE=filesystem\n", label,
			strings.TrimPrefix(name, "mkfs."))}
		return "", "", nil
	}
	return "", "unexpected command", errors.New("exit status 1")
}

// fioJSON is fio's JSON report of one of the precondition's jobs: a pass writes the whole device at 2 GB/s, a
// round the next of iops for 5 s.
func fioJSON(t *testing.T, args []string, iops *[]float64) string {
	job := map[string]any{"jobname": "", "error": 0}
	var w map[string]any
	switch {
	case strings.Contains(strings.Join(args, " "), "--name=precondition-pass"):
		job["jobname"] = "precondition-pass"
		w = map[string]any{"io_bytes": convBytes, "bw_bytes": 2e9, "iops": 15258.8, "runtime": 537}
	default:
		next := (*iops)[0]
		*iops = (*iops)[1:]
		job["jobname"] = "precondition-round"
		w = map[string]any{"io_bytes": int64(next * 4096 * 5), "iops": next, "runtime": 5000}
	}
	job["write"] = w
	b, err := json.Marshal(map[string]any{"fio version": "fio-3.33", "jobs": []any{job}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func convArgs(sys string, extra ...string) []string {
	return append([]string{"format", "--device", "vdb", "--sys-block", sys, "--filesystem", "ext4"}, extra...)
}

var preconditionFlags = []string{"--precondition", "--precondition-passes=2", "--precondition-rounds=4",
	"--precondition-round-seconds=5", "--steady-window=3"}

func TestConventionalEmptyDeviceWithoutTokenIsNotPreconditioned(t *testing.T) {
	sys := conventionalSysfs(t, "vdb", convBytes)
	m := &machine{t: t, devs: conventionalDevice("vdb"), found: blkidNothing(t)}
	res := runZnsdb(t, m, m.devs, nil, convArgs(sys, preconditionFlags...)...)
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	want := "blkid -p -o export /dev/vdb\n" +
		"mkfs.ext4 -L zns-mysql -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 /dev/vdb\n" +
		"blkid -p -o export /dev/vdb"
	if got := strings.Join(m.calls, "\n"); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
	fs, p := res.report.Filesystem, res.report.Precondition
	if fs == nil || fs.Action != fsformat.ActionFormat || fs.Label != "zns-mysql" || fs.UUID != "made-by-mkfs" {
		t.Errorf("filesystem %+v", fs)
	}
	if p == nil || p.Complete || p.Note != fsformat.NoTokenNoPrecondition || len(p.Passes) != 0 {
		t.Errorf("precondition %+v; want the note that it needs a new token", p)
	}
}

func TestConventionalPreconditionThenFormat(t *testing.T) {
	sys := conventionalSysfs(t, "vdb", convBytes)
	m := &machine{t: t, devs: conventionalDevice("vdb"), found: blkidNothing(t), iops: []float64{500, 1000, 1020, 990, 1000}}
	res := runZnsdb(t, m, m.devs, map[string]string{tokenEnv: "2026-11-27"}, convArgs(sys, preconditionFlags...)...)
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var fio []string
	for _, c := range m.calls {
		if strings.HasPrefix(c, "fio ") {
			fio = append(fio, strings.Fields(c)[2])
		}
	}
	// two passes, then rounds until the window of 3 holds (1000, 1020, 990): the fifth round never runs
	if got := strings.Join(fio, " "); got != "--name=precondition-pass --name=precondition-pass --name=precondition-round "+
		"--name=precondition-round --name=precondition-round --name=precondition-round" {
		t.Errorf("fio jobs: %s", got)
	}
	last := m.calls[len(m.calls)-2]
	if last != "mkfs.ext4 -L "+zonedfs.Label("2026-11-27")+" -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 -F /dev/vdb" {
		t.Errorf("mkfs after the precondition: %q", last)
	}
	for i, h := range m.heldDuringFio {
		if h != 1 {
			t.Errorf("fio run %d: the device was held %d times; want exclusively by znsdb while fio writes it", i+1, h)
		}
	}
	if m.heldDuringMkfs != 0 {
		t.Errorf("mkfs ran with the device still held (%d): it opens the device exclusively", m.heldDuringMkfs)
	}
	p := res.report.Precondition
	if p == nil || !p.Complete || len(p.Passes) != 2 || len(p.Rounds) != 4 || !p.SteadyState || p.RoundsAsked != 4 ||
		p.Passes[0].Bytes != convBytes || p.Passes[0].MBps != 1999.5 || p.StartedAt.IsZero() {
		t.Errorf("precondition %+v", p)
	}
	if fs := res.report.Filesystem; fs.Action != fsformat.ActionFormat || fs.Label != zonedfs.Label("2026-11-27") {
		t.Errorf("filesystem %+v", fs)
	}
	for _, line := range []string{"pass 1/2 done: 1073741824 bytes", "round 4/4 done: 990.0 write IOPS", "complete: wrote"} {
		if !strings.Contains(res.stderr, line) {
			t.Errorf("stderr does not report %q:\n%s", line, res.stderr)
		}
	}

	// Started again with the same token (the pod restarted after the Job): kept, nothing written.
	m.calls = nil
	again := runZnsdb(t, m, m.devs, map[string]string{tokenEnv: "2026-11-27"}, convArgs(sys, preconditionFlags...)...)
	if again.code != exitOK || again.report.Filesystem.Action != fsformat.ActionKeep || again.report.Precondition != nil ||
		len(m.calls) != 1 {
		t.Errorf("second start: exit %d, %+v, %+v, commands %q", again.code, again.report.Filesystem, again.report.Precondition, m.calls)
	}
}

// TestConventionalInterruptedPreconditionLeavesNoFileSystem: a precondition that stops (fio killed) makes no file
// system and says so; the device then holds fio's data and no label, and the same token preconditions again.
func TestConventionalInterruptedPreconditionLeavesNoFileSystem(t *testing.T) {
	sys := conventionalSysfs(t, "vdb", convBytes)
	m := &machine{t: t, devs: conventionalDevice("vdb"), found: blkidNothing(t), fioFails: 2}
	env := map[string]string{tokenEnv: "t1"}
	res := runZnsdb(t, m, m.devs, env, convArgs(sys, "--precondition")...)
	if res.code != exitRefused || !strings.Contains(res.report.Error, "not formatted") ||
		!strings.Contains(res.report.Error, "pass 2 of 2") {
		t.Fatalf("exit %d, error %q", res.code, res.report.Error)
	}
	p := res.report.Precondition
	if p == nil || p.Complete || len(p.Passes) != 1 || !strings.Contains(p.Note, "killed") {
		t.Errorf("precondition %+v", p)
	}
	for _, c := range m.calls {
		if strings.HasPrefix(c, "mkfs") {
			t.Errorf("mkfs ran after an interrupted precondition: %s", c)
		}
	}
	// The next format Job: fio's data at the device's start, blkid finds nothing, the token is still new.
	m.devs.data[0] = []byte("fio's buffer pattern")
	m.calls, m.fioRuns, m.fioFails = nil, 0, 0
	retry := runZnsdb(t, m, m.devs, env, convArgs(sys, "--precondition")...)
	if retry.code != exitOK || retry.report.Precondition == nil || !retry.report.Precondition.Complete ||
		len(retry.report.Precondition.Passes) != 2 || m.fioRuns != 2 {
		t.Errorf("retry: exit %d, precondition %+v, fio runs %d (%s)", retry.code, retry.report.Precondition, m.fioRuns, retry.stderr)
	}
}

func TestConventionalRefusesWhatIsNotItsOwn(t *testing.T) {
	sys := conventionalSysfs(t, "vdb", convBytes)
	for name, c := range map[string]struct {
		found reply
		data  int64 // offset of non-zero bytes, -1 for none
		says  string
	}{
		"someone's ext4":                  {reply{stdout: "LABEL=home\nTYPE=ext4\n"}, 0, "not made by zns-mysql"},
		"an xfs of ours, for ext4":        {reply{stdout: "LABEL=zns-mysql\nTYPE=xfs\n"}, 0, "xfs"},
		"data blkid does not know, start": {blkidNothing(t), 4096, "first or last MiB"},
		"data blkid does not know, end":   {blkidNothing(t), convBytes - 512, "first or last MiB"},
	} {
		devs := conventionalDevice("vdb")
		if c.data >= 0 {
			devs.data[c.data] = []byte{0x5a}
		}
		m := &machine{t: t, devs: devs, found: c.found}
		res := runZnsdb(t, m, devs, nil, convArgs(sys, "--precondition")...)
		fs := res.report.Filesystem
		if res.code != exitRefused || fs == nil || fs.Action != fsformat.ActionRefuse || !strings.Contains(fs.Reason, c.says) {
			t.Errorf("%s: exit %d, %+v", name, res.code, fs)
		}
		if len(m.calls) != 1 || res.report.Precondition != nil {
			t.Errorf("%s: commands %q, precondition %+v: want only blkid's probe", name, m.calls, res.report.Precondition)
		}
	}
}

func TestConventionalDeviceRefusedByPreflight(t *testing.T) {
	for name, c := range map[string]struct {
		sys, device, code string
	}{
		"a zoned device":  {sysBlock, "nullb0", zonedfs.CodeZonedDevice},
		"256 MiB":         {conventionalSysfs(t, "vdc", 256<<20), "vdc", zonedfs.CodeDeviceTooSmall},
		"no such device":  {sysBlock, "vdz", zbd.CodeNoSuchDevice},
		"a partition":     {partitionSysfs(t), "vdb1", zbd.CodePartition},
		"an invalid name": {sysBlock, "-rf", zbd.CodeInvalidName},
	} {
		m := &machine{t: t, devs: conventionalDevice(c.device), found: blkidNothing(t)}
		res := runZnsdb(t, m, m.devs, map[string]string{tokenEnv: "t"},
			"format", "--device", c.device, "--sys-block", c.sys, "--filesystem", "xfs", "--precondition")
		if res.code != exitRefused || len(res.report.Problems) == 0 || res.report.Problems[0].Code != c.code {
			t.Errorf("%s: exit %d, problems %+v", name, res.code, res.report.Problems)
		}
		if len(m.calls) != 0 || m.devs.opened != 0 {
			t.Errorf("%s: a refused device was opened (%d) or probed: %q", name, m.devs.opened, m.calls)
		}
		if c.code == zbd.CodePartition && !strings.Contains(res.report.Problems[0].Message, "whole device") {
			t.Errorf("the partition refusal speaks of zones: %s", res.report.Problems[0].Message)
		}
	}
	// The preflight Job's command reads sysfs alone, and judges a zoned device unfit with the way out.
	m := &machine{t: t, devs: conventionalDevice("nullb0")}
	res := runZnsdb(t, m, m.devs, nil, "preflight", "--device", "nullb0", "--sys-block", sysBlock, "--sysfs-only", "--filesystem", "ext4")
	if res.code != exitRefused || res.report.Device == nil || !strings.Contains(res.report.Problems[0].Message, "zonedDevice") {
		t.Errorf("preflight of a zoned device for ext4: exit %d, %+v", res.code, res.report)
	}
	sys := conventionalSysfs(t, "vdb", convBytes)
	ok := runZnsdb(t, m, conventionalDevice("vdb"), nil, "preflight", "--device", "vdb", "--sys-block", sys, "--sysfs-only", "--filesystem", "ext4")
	if ok.code != exitOK || ok.report.Device == nil || ok.report.Device.Model != zbd.ModelNone || ok.report.Device.CapacityBytes != convBytes {
		t.Errorf("preflight of a fit device: exit %d, %+v", ok.code, ok.report)
	}
}

func partitionSysfs(t *testing.T) string {
	dir := conventionalSysfs(t, "vdb", convBytes)
	p := filepath.Join(dir, "vdb", "vdb1", "partition")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestConventionalBusyDeviceIsLeftAlone(t *testing.T) {
	sys := conventionalSysfs(t, "vdb", convBytes)
	devs := conventionalDevice("vdb")
	devs.openErr = zbd.ErrBusy
	m := &machine{t: t, devs: devs, found: blkidNothing(t)}
	res := runZnsdb(t, m, devs, map[string]string{tokenEnv: "t"}, convArgs(sys, "--precondition")...)
	if res.code != exitRefused || len(res.report.Problems) != 1 || res.report.Problems[0].Code != zbd.CodeDeviceBusy || len(m.calls) != 0 {
		t.Errorf("exit %d, problems %+v, commands %q", res.code, res.report.Problems, m.calls)
	}
}

func TestPreconditionOnlyOnAConventionalDevice(t *testing.T) {
	m := &machine{t: t, devs: nullb0(), found: blkidNothing(t)}
	res := runZnsdb(t, m, m.devs, map[string]string{tokenEnv: "t"}, zonedFSArgs("btrfs", "--precondition")...)
	if res.code != exitRefused || !strings.Contains(res.report.Error, "no FTL") || len(m.calls) != 0 {
		t.Errorf("exit %d, error %q, commands %q", res.code, res.report.Error, m.calls)
	}
	sys := conventionalSysfs(t, "vdb", convBytes)
	bad := runZnsdb(t, m, conventionalDevice("vdb"), nil, convArgs(sys, "--precondition", "--precondition-passes=0")...)
	if bad.code != exitRefused || !strings.Contains(bad.report.Error, "write nothing") {
		t.Errorf("a plan that writes nothing: exit %d, error %q", bad.code, bad.report.Error)
	}
}

// TestConventionalFormatWaitsForTheDriveSidecar: with --drive-dir, the format writes nothing before the drive
// sidecar's first readings, and a sidecar that comes late learns that the format went on without it.
func TestConventionalFormatWaitsForTheDriveSidecar(t *testing.T) {
	sys := conventionalSysfs(t, "vdb", convBytes)
	dir := t.TempDir()
	if err := drivereport.OpenGate(dir); err != nil { // the sidecar was ready first
		t.Fatal(err)
	}
	m := &machine{t: t, devs: conventionalDevice("vdb"), found: blkidNothing(t), iops: []float64{1000, 1000, 1000}}
	res := runZnsdb(t, m, m.devs, map[string]string{tokenEnv: "2026-11-27"}, convArgs(sys, append(preconditionFlags, "--drive-dir", dir)...)...)
	if res.code != exitOK || res.report.Precondition == nil || !res.report.Precondition.Complete || strings.Contains(res.stderr, "drive sidecar") {
		t.Fatalf("exit %d, %+v: %s", res.code, res.report.Precondition, res.stderr)
	}
	if err := drivereport.OpenGate(dir); err != nil {
		t.Errorf("the gate no longer says ready: %v", err)
	}
}
