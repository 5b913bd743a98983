package drivereport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func int64p(v int64) *int64 { return &v }

func TestReportRoundTrip(t *testing.T) {
	in := Report{
		Phase: "run", Device: "nvme1n1", DeviceBytes: 1 << 30, BlockLayerWrittenBytes: int64p(52428800),
		Counters: &Counters{Logs: []string{"smart", "ocp"}, HostWrittenBytes: 52736000, HostResolutionBytes: 512000,
			HostWriteCommands: 12800, MediaWrittenBytes: int64p(52428800), MediaSource: "ocp"},
		Model: []Modelled{{OverProvisioningPercent: 7, HostWrittenBytes: 52428800, MediaWrittenBytes: 157286400, SteadyState: true, PreconditionRounds: 6, PageBytes: 4096}},
	}
	b, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if out.Schema != SchemaVersion || out.Device != "nvme1n1" || *out.BlockLayerWrittenBytes != 52428800 || out.Counters.HostWrittenBytes != 52736000 ||
		*out.Counters.MediaWrittenBytes != 52428800 || len(out.Model) != 1 || out.Model[0].MediaWrittenBytes != 157286400 {
		t.Fatalf("round trip changed the report: %+v", out)
	}
	wa, ok := out.Model[0].WriteAmplification()
	if !ok || wa != 3 {
		t.Fatalf("modelled WA = %v, %v; want 3", wa, ok)
	}
	if wa, ok := out.Counters.WriteAmplification(); !ok || wa < 0.994 || wa > 0.995 {
		t.Fatalf("drive WA = %v, %v; want 52428800/52736000", wa, ok)
	}
}

func TestNoFigureWithoutItsCounter(t *testing.T) {
	if _, ok := (Counters{HostWrittenBytes: 512000}).WriteAmplification(); ok {
		t.Fatal("a drive without a media counter has no write amplification")
	}
	if _, ok := (Counters{MediaWrittenBytes: int64p(10)}).WriteAmplification(); ok {
		t.Fatal("no host bytes, no ratio")
	}
	if _, ok := (Modelled{MediaWrittenBytes: 10}).WriteAmplification(); ok {
		t.Fatal("a model fed nothing has no write amplification")
	}
	if _, ok := PerTransaction(100, 0); ok {
		t.Fatal("no transactions, no per-transaction figure")
	}
}

func TestEncodeBoundsTheReport(t *testing.T) {
	long := strings.Repeat("é", 1000) // two bytes each: a cut must not split one
	b, err := Report{Device: "nullb0", CountersUnavailable: long, ModelUnavailable: long}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxBytes {
		t.Fatalf("%d bytes", len(b))
	}
	r, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(r.CountersUnavailable, "...") || len(r.CountersUnavailable) > maxReasonBytes {
		t.Fatalf("reason not shortened: %d bytes", len(r.CountersUnavailable))
	}
	many := Report{Device: "nvme0n1"}
	for i := 0; i < 100; i++ {
		many.Model = append(many.Model, Modelled{OverProvisioningPercent: i, HostWrittenBytes: 1 << 40, MediaWrittenBytes: 1 << 41})
	}
	if _, err := many.Encode(); err == nil {
		t.Fatal("a report past MaxBytes was encoded")
	}
	if _, err := (Report{Model: []Modelled{{MediaWrittenBytes: -1}}}).Encode(); err == nil {
		t.Fatal("a negative byte count was encoded")
	}
}

func TestDecodeRefusesOtherSchemas(t *testing.T) {
	if _, err := Decode([]byte(`{"schema":2,"device":"x"}`)); !errors.Is(err, ErrSchema) {
		t.Fatalf("err = %v", err)
	}
	if _, err := Decode([]byte(`not json`)); err == nil {
		t.Fatal("garbage decoded")
	}
}

func noSleep(context.Context, time.Duration) error { return nil }

func TestGateSidecarFirst(t *testing.T) {
	dir := t.TempDir()
	if err := OpenGate(dir); err != nil {
		t.Fatal(err)
	}
	// A sidecar the kubelet restarted finds its own word.
	if err := OpenGate(dir); err != nil {
		t.Fatalf("second open: %v", err)
	}
	ready, err := AwaitGate(context.Background(), dir, time.Minute, time.Second, noSleep)
	if err != nil || !ready {
		t.Fatalf("runner saw ready=%v err=%v", ready, err)
	}
}

func TestGateRunnerGivesUp(t *testing.T) {
	dir := t.TempDir()
	slept := time.Duration(0)
	sleep := func(_ context.Context, d time.Duration) error { slept += d; return nil }
	ready, err := AwaitGate(context.Background(), dir, 5*time.Second, time.Second, sleep)
	if err != nil || ready {
		t.Fatalf("ready=%v err=%v", ready, err)
	}
	if slept != 5*time.Second {
		t.Fatalf("waited %s, want the whole timeout", slept)
	}
	if err := OpenGate(dir); !errors.Is(err, ErrPhaseStartedFirst) {
		t.Fatalf("a late sidecar must learn that the phase started without it: %v", err)
	}
}

func TestGateRaceHasOneWinner(t *testing.T) {
	for i := 0; i < 50; i++ {
		dir := t.TempDir()
		var wg sync.WaitGroup
		var sidecarErr error
		var ready bool
		wg.Add(2)
		go func() { defer wg.Done(); sidecarErr = OpenGate(dir) }()
		go func() { defer wg.Done(); ready, _ = AwaitGate(context.Background(), dir, 0, time.Second, noSleep) }()
		wg.Wait()
		// Either the sidecar was first and the runner saw it, or the runner was first and the sidecar knows.
		if ready == (sidecarErr != nil) {
			t.Fatalf("round %d: runner ready=%v, sidecar err=%v: they disagree", i, ready, sidecarErr)
		}
	}
}

func TestGateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sleep := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	if _, err := AwaitGate(ctx, t.TempDir(), time.Minute, time.Second, sleep); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestGateUnwritableDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	if err := OpenGate(missing); err == nil {
		t.Fatal("no error for a directory that does not exist")
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("OpenGate created the directory")
	}
}

// The reports the sidecar left in the QEMU guest (testdata/README.md) decode, and hold what emulation makes
// true: media bytes equal host bytes on a device with no FTL, SMART's count covers the block layer's within its
// step, the model writes more to its flash at less over-provisioning, and reasons stand where figures cannot.
func TestRecordedReports(t *testing.T) {
	read := func(name string) Report {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Decode([]byte(strings.TrimSpace(string(b))))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ocp := read("qemu-run-nvme1n1-ocp.json")
	host := *ocp.BlockLayerWrittenBytes
	if c := ocp.Counters; *c.MediaWrittenBytes != host || c.HostWrittenBytes < host || c.HostWrittenBytes-host >= c.HostResolutionBytes {
		t.Errorf("OCP counters %+v against %d bytes from the block layer", c, host)
	}
	wa7, _ := ocp.Model[0].WriteAmplification()
	wa28, _ := ocp.Model[1].WriteAmplification()
	if ocp.Model[0].OverProvisioningPercent != 7 || !(wa7 > wa28 && wa28 > 1) || ocp.Model[0].HostWrittenBytes != host {
		t.Errorf("model %+v", ocp.Model)
	}
	fdp := read("qemu-prepare-nvme2n1-fdp.json")
	if c := fdp.Counters; c.MediaSource != "fdp" || c.HostWrittenBytes != *fdp.BlockLayerWrittenBytes || *c.MediaWrittenBytes != c.HostWrittenBytes {
		t.Errorf("FDP counters %+v", c)
	}
	if wa, ok := fdp.Counters.WriteAmplification(); !ok || wa != 1 {
		t.Errorf("FDP WA %v %v, want exactly 1 under emulation", wa, ok)
	}
	unpriv := read("qemu-run-nvme1n1-unprivileged.json")
	if unpriv.Counters != nil || unpriv.Model != nil || !strings.Contains(unpriv.CountersUnavailable, "CAP_SYS_ADMIN") ||
		!strings.Contains(unpriv.ModelUnavailable, "tracefs") {
		t.Errorf("unprivileged %+v", unpriv)
	}
	if nb := read("qemu-run-nullb13.json"); nb.Counters != nil || nb.CountersUnavailable != "no drive counters: nullb13 is not an NVMe device" {
		t.Errorf("null_blk %+v", nb)
	}
}
