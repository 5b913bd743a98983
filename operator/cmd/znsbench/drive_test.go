package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/blocktrace"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/ftl"
)

// fakeBlock writes /sys/block/<dev>/{stat,size} as the kernel prints them (17 fields since 5.5).
func fakeBlock(t *testing.T, dir, dev string, writeSectors, sizeSectors int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, dev), 0o755); err != nil {
		t.Fatal(err)
	}
	stat := "     100        0     2000      50      300        0 " + itoa(writeSectors) + "     900        0      800      950        0        0        0        0        0        0\n"
	if err := os.WriteFile(filepath.Join(dir, dev, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, dev, "size"), []byte(itoa(sizeSectors)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// runDrive runs the sidecar until stop is called (the kubelet's SIGTERM), then returns its report.
func runDrive(t *testing.T, args []string, during func(dir string)) (drivereport.Report, string) {
	t.Helper()
	dir := t.TempDir()
	term := filepath.Join(t.TempDir(), "termination-log")
	ctx, stop := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() {
		done <- driveCmd(ctx, append(args, "--dir", dir, "--termination-log", term), &out, &errb)
	}()
	if ready, err := drivereport.AwaitGate(context.Background(), dir, 10*time.Second, 10*time.Millisecond, sleepCtx); err != nil || !ready {
		stop()
		<-done
		t.Fatalf("the sidecar never opened the gate (ready %v, %v): %s", ready, err, errb.String())
	}
	during(dir)
	stop()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	raw, err := os.ReadFile(term)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := drivereport.Decode(raw)
	if err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if strings.TrimSpace(out.String()) != string(raw) {
		t.Errorf("stdout %q differs from the termination log %q", out.String(), raw)
	}
	return rep, errb.String()
}

// The block layer's count over the phase, and honest reasons for what the sidecar cannot read: a device that is
// no NVMe namespace gives no counters, and a model without tracefs gives no model, never a zero.
func TestDriveSidecarReasons(t *testing.T) {
	sys := t.TempDir()
	fakeBlock(t, sys, "nullb0", 1000, 1<<21)
	devDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(devDir, "nullb0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, log := runDrive(t, []string{"--phase", "run", "--device", "nullb0", "--sys-block", sys, "--dev-dir", devDir,
		"--counters", "--model-op", "7,28", "--tracefs", filepath.Join(t.TempDir(), "no-tracefs")}, func(string) {
		fakeBlock(t, sys, "nullb0", 1000+2048, 1<<21) // 1 MiB written during the phase
	})
	if rep.BlockLayerWrittenBytes == nil || *rep.BlockLayerWrittenBytes != 1<<20 {
		t.Fatalf("block layer bytes %v, want 1 MiB", rep.BlockLayerWrittenBytes)
	}
	if rep.DeviceBytes != 1<<30 {
		t.Errorf("device bytes %d, want 1 GiB", rep.DeviceBytes)
	}
	if rep.Counters != nil || !strings.HasPrefix(rep.CountersUnavailable, "no drive counters") {
		t.Errorf("counters %+v, reason %q", rep.Counters, rep.CountersUnavailable)
	}
	if rep.Model != nil || !strings.Contains(rep.ModelUnavailable, "block trace could not start") {
		t.Errorf("model %+v, reason %q", rep.Model, rep.ModelUnavailable)
	}
	if !strings.Contains(log, "ready") {
		t.Errorf("log: %s", log)
	}
}

// The reasons the operator gave travel into the report as they are.
func TestDriveSidecarPassesReasonsOn(t *testing.T) {
	sys := t.TempDir()
	fakeBlock(t, sys, "nvme0n1", 0, 1<<21)
	rep, _ := runDrive(t, []string{"--phase", "prepare", "--device", "nvme0n1", "--sys-block", sys,
		"--counters-unavailable", "no drive counters: reachable only through its file system",
		"--model-unavailable", "a zoned device needs no model"}, func(string) {})
	if rep.CountersUnavailable != "no drive counters: reachable only through its file system" || rep.ModelUnavailable != "a zoned device needs no model" {
		t.Fatalf("%+v", rep)
	}
}

// A sidecar the kubelet restarted has lost its first readings: it says so rather than report half a phase.
func TestDriveSidecarRestarted(t *testing.T) {
	sys := t.TempDir()
	fakeBlock(t, sys, "nvme0n1", 0, 1<<21)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, drivereport.BeforeFile), []byte("earlier\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, code := parseDriveFlags([]string{"--phase", "run", "--device", "nvme0n1", "--dir", dir, "--sys-block", sys, "--counters", "--model-op", "7"}, &bytes.Buffer{})
	if code >= 0 {
		t.Fatalf("flags: exit %d", code)
	}
	rep := startDrive(f, t.Logf).finish(t.Logf)
	if !strings.Contains(rep.CountersUnavailable, "restarted") || !strings.Contains(rep.ModelUnavailable, "restarted") || rep.BlockLayerWrittenBytes != nil {
		t.Fatalf("%+v", rep)
	}
}

func TestDriveFlags(t *testing.T) {
	for _, args := range [][]string{{}, {"--device", "x"}, {"--dir", "/x"}, {"--device", "x", "--dir", "/x", "--model-op", "0"},
		{"--device", "x", "--dir", "/x", "--model-op", "7,abc"}, {"--device", "x", "--dir", "/x", "extra"}} {
		if _, code := parseDriveFlags(args, &bytes.Buffer{}); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// The model set applies what the trace gathered while the models settled, in order, and counts only the
// phase's own writes: random writes over a full, settled drive at 7% over-provisioning cost several times
// their size in flash, a sequential rewrite of the whole device costs less.
func TestModelSetMeasuresThePhaseOnly(t *testing.T) {
	const dev = 64 << 20 // 16384 pages
	s := newModelSet(dev, []int{7, 28})
	// Arrives before the models are ready: kept, then applied.
	for i := uint64(0); i < 4096; i++ {
		s.feed(blocktrace.Event{Op: blocktrace.OpWrite, Sector: (i * 7919 % 16384) * 8, Sectors: 8})
	}
	s.feed(blocktrace.Event{Op: blocktrace.OpRead, Sector: 0, Sectors: 8})             // not a write
	s.feed(blocktrace.Event{Op: blocktrace.OpWrite, Sector: 0, Sectors: 8, Error: -5}) // failed
	s.precondition(t.Logf)
	for i := uint64(0); i < 4096; i++ {
		s.feed(blocktrace.Event{Op: blocktrace.OpWrite, Sector: (i * 104729 % 16384) * 8, Sectors: 8})
	}
	res, err := s.results()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	for _, m := range res {
		if m.HostWrittenBytes != 8192*4096 {
			t.Errorf("OP %d%%: host %d bytes, want the 8192 traced pages only", m.OverProvisioningPercent, m.HostWrittenBytes)
		}
		wa, _ := m.WriteAmplification()
		t.Logf("OP %d%%: WA %.2f after %d rounds (steady %v)", m.OverProvisioningPercent, wa, m.PreconditionRounds, m.SteadyState)
		if wa <= 1.2 {
			t.Errorf("OP %d%%: WA %.2f for scattered writes over a settled full drive, want well above 1", m.OverProvisioningPercent, wa)
		}
	}
	wa7, _ := res[0].WriteAmplification()
	wa28, _ := res[1].WriteAmplification()
	if wa7 <= wa28 {
		t.Errorf("WA at 7%% (%.2f) not above WA at 28%% (%.2f): less spare flash must cost more copies", wa7, wa28)
	}
}

func TestModelSetRefusesTraceOutsideTheDevice(t *testing.T) {
	s := newModelSet(32<<20, []int{28})
	s.precondition(t.Logf)
	s.feed(blocktrace.Event{Op: blocktrace.OpWrite, Sector: 1 << 30, Sectors: 8})
	if _, err := s.results(); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("err = %v", err)
	}
}

func TestModelGeometry(t *testing.T) {
	for _, c := range []struct {
		bytes   int64
		pb, ppb int
	}{
		{1 << 30, ftl.DefaultPageBytes, 1024}, // 256 blocks of 4 MiB
		{64 << 20, ftl.DefaultPageBytes, 64},  // 256 blocks of 256 KiB
		{8 << 20, ftl.DefaultPageBytes, 64},   // as small as blocks go: 32 of them
		{4 << 40, 1 << 19, 1024},              // 8M pages of 512 KiB
	} {
		pb, ppb := geometry(c.bytes)
		if pb != c.pb || ppb != c.ppb || c.bytes/int64(pb) > maxModelPages {
			t.Errorf("%d bytes: page %d, block %d pages; want %d, %d", c.bytes, pb, ppb, c.pb, c.ppb)
		}
	}
}
