//go:build zns_guest && zns_userland

package qemuguest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/precondition"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// The format Job of a storage.device, for real: znsdb preflight and format with the host's fio, blkid and mkfs
// (run.sh --userland; TestConventionalGuest boots it) on a memory-backed conventional null_blk device, whose
// block-layer counters say what really reached the device.

// convDevice checks that run.sh made the device.
func convDevice(t *testing.T) {
	t.Helper()
	inGuest(t)
	if _, err := os.Stat(convPath); err != nil {
		t.Fatalf("%s: %v (TestConventionalGuest has run.sh make it)", convPath, err)
	}
}

// preconditionArgs: two passes, then up to four 5-second rounds judged over a window of three.
var preconditionArgs = precondition.Plan{Enabled: true, Passes: 2, BlockSize: 128 << 10, Rounds: 4, RoundSeconds: 5,
	Rule: precondition.DefaultPlan().Rule}

func init() { preconditionArgs.Rule.Window = 3 }

func formatArgs(fs string, plan precondition.Plan) []string {
	return append([]string{"format", "--device", convDev, "--filesystem", fs, "--termination-log", ""}, plan.Args()...)
}

// written is what the block layer counted as written to the device since before.
func written(t *testing.T, before blockstat.Stat) int64 {
	t.Helper()
	after, err := blockstat.Sample(sysBlk, convDev)
	if err != nil {
		t.Fatal(err)
	}
	d, err := blockstat.Delta(before, after)
	if err != nil {
		t.Fatal(err)
	}
	return int64(d.WrittenBytes())
}

func sample(t *testing.T) blockstat.Stat {
	t.Helper()
	s, err := blockstat.Sample(sysBlk, convDev)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// probe is blkid's real view of the device.
func probe(t *testing.T) zonedfs.Probe {
	t.Helper()
	cmd := zonedfs.ProbeCommand(convPath)
	out, err := exec.Command(cmd[0], cmd[1:]...).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == zonedfs.BlkidNothingFound {
		return zonedfs.Probe{}
	}
	if err != nil {
		t.Fatalf("blkid: %v", err)
	}
	p, err := zonedfs.ParseProbe(string(out))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkPreconditioned: the report and the block layer agree that every pass wrote the whole device and every
// round what it says.
func checkPreconditioned(t *testing.T, r dbinit.Report, wrote int64) {
	t.Helper()
	p := r.Precondition
	if p == nil || !p.Complete || len(p.Passes) != 2 || len(p.Rounds) < 3 || len(p.Rounds) > 4 || p.RoundsAsked != 4 {
		t.Fatalf("precondition %+v", p)
	}
	size := int64(convMiB) << 20
	for i, pass := range p.Passes {
		if pass.Bytes != size || pass.MBps <= 0 {
			t.Errorf("pass %d: %+v; want the whole device (%d bytes)", i+1, pass, size)
		}
	}
	fioBytes := precondition.WrittenBytes(*p)
	if wrote < fioBytes || fioBytes < 2*size {
		t.Errorf("the block layer counted %d bytes written, fio %d; want at least two whole devices (%d)", wrote, fioBytes, 2*size)
	}
	t.Logf("block layer: %d bytes written (%.2f x the device); fio: %d; %s", wrote, float64(wrote)/float64(size), fioBytes,
		precondition.Summary(*p))
}

func TestConventionalPreflight(t *testing.T) {
	convDevice(t)
	r, stderr, code := znsdb(t, "preflight", "--device", convDev, "--filesystem", "ext4", "--termination-log", "")
	if code != 0 || r.Device == nil || r.Device.Model != "none" || r.Device.CapacityBytes != int64(convMiB)<<20 {
		t.Errorf("preflight of a conventional device: exit %d, %+v\n%s", code, r, stderr)
	}
	// A zoned device named as a conventional one: refused, pointing at zonedDevice.
	r, _, code = znsdb(t, "preflight", "--device", convZonedDev, "--filesystem", "ext4", "--termination-log", "")
	if code != 1 || len(r.Problems) == 0 || r.Problems[0].Code != zonedfs.CodeZonedDevice || !strings.Contains(r.Problems[0].Message, "zonedDevice") {
		t.Errorf("preflight of a zoned device for ext4: exit %d, %+v", code, r.Problems)
	}
}

// TestConventionalExt4 walks one device through what its format Jobs meet: empty without a token, a new token
// with a precondition, a restart, someone else's file system, and a precondition killed after its first pass.
func TestConventionalExt4(t *testing.T) {
	convDevice(t)
	size := int64(convMiB) << 20

	t.Run("empty, no token: formatted, not preconditioned", func(t *testing.T) {
		before := sample(t)
		r, stderr, code := znsdb(t, formatArgs("ext4", preconditionArgs)...)
		if code != 0 || r.Filesystem == nil || r.Filesystem.Action != fsformat.ActionFormat || r.Filesystem.Label != zonedfs.Label("") {
			t.Fatalf("exit %d, %+v\n%s", code, r.Filesystem, stderr)
		}
		if p := r.Precondition; p == nil || p.Complete || p.Note != fsformat.NoTokenNoPrecondition {
			t.Errorf("precondition %+v", p)
		}
		if w := written(t, before); w >= size/2 {
			t.Errorf("%d bytes written without a token: more than mkfs writes", w)
		}
		if got := probe(t); got.Type != "ext4" || got.Label != "zns-mysql" {
			t.Errorf("blkid finds %+v", got)
		}
	})

	t.Run("new token: preconditioned twice over, then ext4", func(t *testing.T) {
		before := sample(t)
		start := time.Now()
		r, stderr, code := znsdbEnv(t, []string{"ZNS_REFORMAT_TOKEN=t1"}, formatArgs("ext4", preconditionArgs)...)
		took := time.Since(start)
		if code != 0 || r.Filesystem.Action != fsformat.ActionFormat || r.Filesystem.Label != zonedfs.Label("t1") {
			t.Fatalf("exit %d, %+v\n%s", code, r.Filesystem, stderr)
		}
		checkPreconditioned(t, r, written(t, before))
		t.Logf("format Job took %s; stderr:\n%s", took.Round(time.Millisecond), stderr)
		b, _ := json.Marshal(r.Precondition)
		capture(t, "precondition/report-ext4.json", b)
		if got := probe(t); got.Type != "ext4" || got.Label != zonedfs.Label("t1") {
			t.Errorf("blkid finds %+v", got)
		}
	})

	t.Run("restart with the applied token: kept, nothing written", func(t *testing.T) {
		before := sample(t)
		r, stderr, code := znsdbEnv(t, []string{"ZNS_REFORMAT_TOKEN=t1"}, formatArgs("ext4", preconditionArgs)...)
		if code != 0 || r.Filesystem.Action != fsformat.ActionKeep || r.Precondition != nil {
			t.Fatalf("exit %d, %+v %+v\n%s", code, r.Filesystem, r.Precondition, stderr)
		}
		if w := written(t, before); w != 0 {
			t.Errorf("a kept device was written: %d bytes", w)
		}
	})

	t.Run("someone's ext4, no token: refused, untouched", func(t *testing.T) {
		if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-L", "home", convPath).CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4: %v\n%s", err, out)
		}
		before := sample(t)
		r, stderr, code := znsdb(t, formatArgs("ext4", preconditionArgs)...)
		if code != 1 || r.Filesystem.Action != fsformat.ActionRefuse || !strings.Contains(r.Filesystem.Reason, "not made by zns-mysql") {
			t.Fatalf("exit %d, %+v\n%s", code, r.Filesystem, stderr)
		}
		if w := written(t, before); w != 0 {
			t.Errorf("a refused device was written: %d bytes", w)
		}
		if got := probe(t); got.Label != "home" {
			t.Errorf("blkid finds %+v", got)
		}
	})

	t.Run("killed after the first pass: no file system, and the next run starts over", func(t *testing.T) {
		before := sample(t)
		stderr := killAfterFirstPass(t, "t2")
		if w := written(t, before); w < size {
			t.Errorf("%d bytes written before the kill; want at least the first pass (%d)", w, size)
		}
		if got := probe(t); got.Type != "" {
			t.Errorf("after the kill blkid finds %+v; want nothing (fio overwrote the old superblock, mkfs never ran)", got)
		}
		t.Logf("the killed run said:\n%s", stderr)
		before = sample(t)
		r, out, code := znsdbEnv(t, []string{"ZNS_REFORMAT_TOKEN=t2"}, formatArgs("ext4", preconditionArgs)...)
		if code != 0 || r.Filesystem.Action != fsformat.ActionFormat || r.Filesystem.Found != "" || r.Filesystem.Label != zonedfs.Label("t2") {
			t.Fatalf("the next run: exit %d, %+v\n%s", code, r.Filesystem, out)
		}
		if !strings.Contains(r.Filesystem.Reason, "first or last MiB") {
			t.Errorf("the next run did not see fio's data: %q", r.Filesystem.Reason)
		}
		checkPreconditioned(t, r, written(t, before))
	})

	t.Run("fio's own output for the builders", func(t *testing.T) {
		plan := preconditionArgs
		pass := runFio(t, plan.PassJob(convPath), "precondition-pass-"+convDev+".json")
		if w := pass.Totals(fio.Write); w.IOBytes != size || w.BWBytes <= 0 || w.RuntimeMs <= 0 {
			t.Errorf("pass: %+v; want the whole device (%d bytes)", w, size)
		}
		round := runFio(t, plan.RoundJob(convPath), "precondition-round-"+convDev+".json")
		if w := round.Totals(fio.Write); w.IOPS <= 0 || w.IOBytes <= 0 || w.RuntimeMs < 4500 {
			t.Errorf("round: %+v", w)
		}
	})
}

// TestConventionalXFS: the same on xfs, whose label holds 12 bytes, and a precondition of one pass.
func TestConventionalXFS(t *testing.T) {
	convDevice(t)
	if _, err := exec.LookPath("mkfs.xfs"); err != nil {
		t.Fatal("mkfs.xfs is not in the guest's userland: TestConventionalGuest skips this test there")
	}
	plan := preconditionArgs
	plan.Passes, plan.Rounds = 1, 0
	r, stderr, code := znsdbEnv(t, []string{"ZNS_REFORMAT_TOKEN=xfs-2026-11-27"}, formatArgs("xfs", plan)...)
	if code != 0 || r.Filesystem.Action != fsformat.ActionFormat || r.Precondition == nil || !r.Precondition.Complete {
		t.Fatalf("exit %d, %+v %+v\n%s", code, r.Filesystem, r.Precondition, stderr)
	}
	if got := probe(t); got.Type != "xfs" || got.Label != zonedfs.Label("xfs-2026-11-27") || len(got.Label) > 12 {
		t.Errorf("blkid finds %+v", got)
	}
	again, _, code := znsdbEnv(t, []string{"ZNS_REFORMAT_TOKEN=xfs-2026-11-27"}, formatArgs("xfs", plan)...)
	if code != 0 || again.Filesystem.Action != fsformat.ActionKeep {
		t.Errorf("restart: exit %d, %+v", code, again.Filesystem)
	}
}

// killAfterFirstPass starts a format with a precondition and, once it reports its first pass done, kills it and
// everything it started (fio) with SIGKILL, as a node restart or a deleted pod does. It returns what it printed.
func killAfterFirstPass(t *testing.T, token string) string {
	t.Helper()
	c := exec.Command(os.Getenv(envZnsdb), formatArgs("ext4", preconditionArgs)...)
	c.Env = append(os.Environ(), "ZNS_REFORMAT_TOKEN="+token)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var said bytes.Buffer
	sc := bufio.NewScanner(pipe)
	killed := false
	for sc.Scan() {
		fmt.Fprintln(&said, sc.Text())
		if !killed && strings.Contains(sc.Text(), "pass 1/2 done") {
			if err := syscall.Kill(-c.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = c.Wait()
	if !killed {
		t.Fatalf("the format never reported its first pass: %v\n%s", err, said.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the format was not killed: %v", err)
	}
	return said.String()
}
