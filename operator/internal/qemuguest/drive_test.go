//go:build zns_guest

package qemuguest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
)

// driveDevices skips nothing: the suite boots the guest with the emulated conventional and FDP namespaces
// (nvme1n1, nvme2n1) whenever QEMU can make them, and leaves the null_blk fixture to the tests that own it.
func driveDevices(t *testing.T) {
	t.Helper()
	inGuest(t)
	for _, d := range []string{"nvme1n1", "nvme2n1"} {
		if _, err := os.Stat("/dev/" + d); err != nil {
			t.Fatalf("/dev/%s: %v (TestGuestSuite asks run.sh for it with --nvme)", d, err)
		}
	}
}

// sidecar runs `znsbench drive` as a benchmark Job's sidecar runs it, around work, and returns its report:
// started, the gate awaited as the runner awaits it, work done, then SIGTERM as the kubelet sends it.
func sidecar(t *testing.T, args []string, cred *syscall.Credential, work func()) (drivereport.Report, string) {
	t.Helper()
	bin := os.Getenv(envZnsbench)
	if bin == "" {
		t.Fatalf("%s is not set: TestGuestSuite passes the znsbench binary", envZnsbench)
	}
	dir, err := os.MkdirTemp("", "drive")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	term := filepath.Join(dir, "termination-log")
	var stdout, stderr bytes.Buffer
	c := exec.Command(bin, append([]string{"drive", "--target", t.Name(), "--dir", dir, "--termination-log", term}, args...)...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	sleep := func(ctx context.Context, d time.Duration) error { time.Sleep(d); return ctx.Err() }
	ready, err := drivereport.AwaitGate(context.Background(), dir, time.Minute, 100*time.Millisecond, sleep)
	if err != nil || !ready {
		_ = c.Process.Kill()
		_ = c.Wait()
		t.Fatalf("the sidecar did not open the gate (ready %v, %v):\n%s", ready, err, stderr.String())
	}
	work()
	start := time.Now()
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("the sidecar: %v\n%s", err, stderr.String())
	}
	t.Logf("sidecar finished %.1fs after SIGTERM:\n%s", time.Since(start).Seconds(), stderr.String())
	raw, err := os.ReadFile(term)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := drivereport.Decode(raw)
	if err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	t.Logf("report: %s", raw)
	return rep, string(raw)
}

// randomWrites writes n MiB of random 4 KiB direct writes over the first span MiB of dev.
func randomWrites(t *testing.T, dev string, n, span int64) {
	t.Helper()
	args := []string{"--name=drive", "--filename=/dev/" + dev, "--rw=randwrite", "--bs=4k", "--direct=1", "--ioengine=libaio",
		"--iodepth=8", "--size=" + strconv.FormatInt(span, 10) + "M", "--io_size=" + strconv.FormatInt(n, 10) + "M", "--output-format=terse"}
	if out, err := exec.Command("fio", args...).CombinedOutput(); err != nil {
		t.Fatalf("fio %v: %v\n%s", args, err, out)
	}
}

// TestDriveSidecarOnNVMe runs the sidecar on the emulated conventional namespace with the OCP log while fio
// writes random 4 KiB blocks: the drive's counters, the block layer and the model agree on what the host
// wrote; the drive's media bytes equal its host bytes (QEMU has no FTL behind the namespace); the model,
// which has one, writes more to its flash, and more at 7% over-provisioning than at 28%.
func TestDriveSidecarOnNVMe(t *testing.T) {
	driveDevices(t)
	tracefs := btTracefs(t)
	const dev = "nvme1n1"
	statDev := statDevice(t, dev)
	before := btStat(t, statDev)
	rep, raw := sidecar(t, []string{"--phase", "run", "--device", dev, "--counters", "--model-op", "7,28", "--tracefs", tracefs}, nil,
		func() { randomWrites(t, dev, 48, 256) })
	written := int64(btDelta(t, before, statDev).WrittenBytes())
	saveCapture(t, "drive/run-"+dev+".json", []byte(raw))

	if rep.BlockLayerWrittenBytes == nil || *rep.BlockLayerWrittenBytes != written {
		t.Errorf("block layer bytes %v, want the stat's %d", rep.BlockLayerWrittenBytes, written)
	}
	c := rep.Counters
	if c == nil {
		t.Fatalf("no counters: %s", rep.CountersUnavailable)
	}
	if c.MediaWrittenBytes == nil || c.MediaSource != "smart+ocp" {
		t.Fatalf("counters %+v: want media bytes from the OCP log", c)
	}
	if *c.MediaWrittenBytes != written {
		t.Errorf("OCP media bytes %d, want the %d the host wrote: emulation has no FTL", *c.MediaWrittenBytes, written)
	}
	if c.HostWrittenBytes < written || c.HostWrittenBytes >= written+2*c.HostResolutionBytes {
		t.Errorf("SMART host bytes %d for %d written (resolution %d)", c.HostWrittenBytes, written, c.HostResolutionBytes)
	}
	if len(rep.Model) != 2 {
		t.Fatalf("model: %+v, %s", rep.Model, rep.ModelUnavailable)
	}
	wa := map[int]float64{}
	for _, m := range rep.Model {
		if m.HostWrittenBytes != written {
			t.Errorf("OP %d%%: the model was fed %d bytes, the host wrote %d", m.OverProvisioningPercent, m.HostWrittenBytes, written)
		}
		wa[m.OverProvisioningPercent], _ = m.WriteAmplification()
		t.Logf("OP %d%%: modelled WA %.2f (steady %v after %d rounds)", m.OverProvisioningPercent, wa[m.OverProvisioningPercent], m.SteadyState, m.PreconditionRounds)
	}
	if !(wa[7] > wa[28] && wa[28] > 1) {
		t.Errorf("modelled WA %.2f at 7%%, %.2f at 28%%: random writes over a full drive cost more than their size, and more with less spare flash", wa[7], wa[28])
	}
}

// TestDriveSidecarFDP: under FDP the drive counts host and media bytes itself, exactly.
func TestDriveSidecarFDP(t *testing.T) {
	driveDevices(t)
	const dev = "nvme2n1"
	statDev := statDevice(t, dev)
	before := btStat(t, statDev)
	rep, raw := sidecar(t, []string{"--phase", "prepare", "--device", dev, "--counters"}, nil, func() { randomWrites(t, dev, 8, 64) })
	written := int64(btDelta(t, before, statDev).WrittenBytes())
	saveCapture(t, "drive/prepare-"+dev+".json", []byte(raw))
	c := rep.Counters
	if c == nil || c.MediaSource != "fdp" || c.HostResolutionBytes != 1 {
		t.Fatalf("counters %+v (%s): want exact FDP figures", c, rep.CountersUnavailable)
	}
	if c.HostWrittenBytes != written || *c.MediaWrittenBytes != written {
		t.Errorf("FDP host %d, media %d bytes; the block layer sent %d", c.HostWrittenBytes, *c.MediaWrittenBytes, written)
	}
}

// TestDriveSidecarUnprivileged: without root and CAP_SYS_ADMIN the sidecar reports why, with no figure.
func TestDriveSidecarUnprivileged(t *testing.T) {
	driveDevices(t)
	tracefs := btTracefs(t)
	rep, _ := sidecar(t, []string{"--phase", "run", "--device", "nvme1n1", "--counters", "--model-op", "7", "--tracefs", tracefs},
		&syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}, func() {})
	if rep.Counters != nil || !contains(rep.CountersUnavailable, "CAP_SYS_ADMIN") {
		t.Errorf("counters %+v, reason %q", rep.Counters, rep.CountersUnavailable)
	}
	if rep.Model != nil || rep.ModelUnavailable == "" {
		t.Errorf("model %+v, reason %q", rep.Model, rep.ModelUnavailable)
	}
	t.Logf("reasons: %q; %q", rep.CountersUnavailable, rep.ModelUnavailable)
}

// TestDriveSidecarNullblk: a device with no NVMe logs gets a reason, and still its block layer count.
func TestDriveSidecarNullblk(t *testing.T) {
	inGuest(t)
	const dev = "nullb13" // used by no other test
	if _, err := os.Stat("/dev/" + dev); err != nil {
		if _, errOut, code := script("create", "--first", "13", "--conventional", "--size", "256"); code != 0 {
			t.Fatalf("creating %s: %s", dev, errOut)
		}
	}
	before := btStat(t, dev)
	rep, _ := sidecar(t, []string{"--phase", "run", "--device", dev, "--counters"}, nil, func() { randomWrites(t, dev, 4, 64) })
	if rep.Counters != nil || !contains(rep.CountersUnavailable, "not an NVMe device") {
		t.Errorf("counters %+v, reason %q", rep.Counters, rep.CountersUnavailable)
	}
	if w := int64(btDelta(t, before, dev).WrittenBytes()); rep.BlockLayerWrittenBytes == nil || *rep.BlockLayerWrittenBytes != w {
		t.Errorf("block layer bytes %v, want %d", rep.BlockLayerWrittenBytes, w)
	}
}

func contains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

// saveCapture keeps a real output for testdata (ZNS_QEMU_UPDATE_TESTDATA copies the capture directory).
func saveCapture(t *testing.T, name string, b []byte) {
	t.Helper()
	dir := os.Getenv(envCapture)
	if dir == "" {
		return
	}
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
