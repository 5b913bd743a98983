//go:build zns_guest

package qemuguest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/blocktrace"
	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
)

// btDevice is the conventional null_blk device of these tests; 12 is used
// by no other test.
const btDevice = "nullb12"

// btRecord describes a recorded capture: it is saved beside the trace text
// (operator/internal/blocktrace/testdata), and its stat delta, taken from
// the kernel's own counters, is what the parser's totals must match there.
type btRecord struct {
	Kernel       string
	NVMeFirmware string // QEMU's NVMe controller reports QEMU's version
	Device, Dev  string
	Event        string
	Filter       string
	BufferSizeKB int
	Commands     []string
	StatDelta    blockstat.Stat
	// Requests is how many single-request writes the lost-events capture
	// issued; 0 elsewhere.
	Requests int
	Lines    int
}

// btTracefs mounts tracefs at its own mount point if nothing is there.
func btTracefs(t *testing.T) string {
	t.Helper()
	if _, err := blocktrace.FindTracefs(blocktrace.DefaultTracefs); err == nil {
		return blocktrace.DefaultTracefs
	}
	if err := syscall.Mount("nodev", blocktrace.DefaultTracefs, "tracefs", 0, ""); err != nil {
		t.Fatalf("mount -t tracefs nodev %s: %v", blocktrace.DefaultTracefs, err)
	}
	return blocktrace.DefaultTracefs
}

func btStat(t *testing.T, dev string) blockstat.Stat {
	t.Helper()
	s, err := blockstat.Sample(sysBlk, dev)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func btDelta(t *testing.T, before blockstat.Stat, dev string) blockstat.Stat {
	t.Helper()
	d, err := blockstat.Delta(before, btStat(t, dev))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// btRun runs a command, returning its line for the record.
func btRun(t *testing.T, argv ...string) string {
	t.Helper()
	start := time.Now()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	t.Logf("%s (%.1fs)", strings.Join(argv, " "), time.Since(start).Seconds())
	return strings.Join(argv, " ")
}

// btFio runs a job (JSON output) and returns its report and command line.
func btFio(t *testing.T, job fio.Job) (*fio.Report, string) {
	t.Helper()
	argv, err := job.Command()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	t.Logf("%s (%.1fs)", strings.Join(argv, " "), time.Since(start).Seconds())
	r, err := fio.Parse(out)
	if err == nil {
		err = r.Err()
	}
	if err != nil || len(r.Jobs) != 1 {
		t.Fatalf("fio's report: %v\n%s", err, out)
	}
	return r, strings.Join(argv, " ")
}

func btStart(t *testing.T, opts blocktrace.Options, fn func(blocktrace.Event)) *blocktrace.Tracer {
	t.Helper()
	tr, err := blocktrace.Start(opts, fn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Stop() }) // a no-op after the test's own Stop
	if _, err := os.Stat(tr.Instance()); err != nil {
		t.Fatalf("no instance directory: %v", err)
	}
	return tr
}

func btSave(t *testing.T, name string, text []byte, rec btRecord) {
	t.Helper()
	rec.Kernel = readFirstLine(t, "/proc/sys/kernel/osrelease")
	rec.NVMeFirmware = readFirstLine(t, "/sys/class/nvme/nvme0/firmware_rev")
	rec.Event = "block:block_rq_complete"
	rec.Lines = bytes.Count(text, []byte("\n"))
	js, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	capture(t, filepath.Join("blocktrace", name+".txt"), text)
	capture(t, filepath.Join("blocktrace", name+".json"), append(js, '\n'))
}

func readFirstLine(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// btCheck compares a capture's totals with the stat delta: the bytes must
// be equal to the sector.
func btCheck(t *testing.T, tot blocktrace.Totals, d blockstat.Stat) {
	t.Helper()
	t.Logf("trace: %d writes %d B, %d discards %d B, %d reads %d B, %d flushes, %d other %d B, %d errors; "+
		"stat: %d writes %d sectors, %d discards %d sectors, %d reads %d sectors",
		tot.Writes, tot.WriteBytes, tot.Discards, tot.DiscardBytes, tot.Reads, tot.ReadBytes, tot.Flushes,
		tot.Others, tot.OtherBytes, tot.Errors, d.WriteIOs, d.WriteSectors, d.DiscardIOs, d.DiscardSectors,
		d.ReadIOs, d.ReadSectors)
	if tot.WriteBytes != d.WrittenBytes() || tot.DiscardBytes != d.DiscardSectors*512 {
		t.Errorf("trace wrote %d B and discarded %d B; the stat says %d and %d", tot.WriteBytes, tot.DiscardBytes,
			d.WrittenBytes(), d.DiscardSectors*512)
	}
	if err := tot.Err(); err != nil || tot.Errors != 0 || tot.OtherBytes != 0 {
		t.Errorf("lost: %v; errors %d, other bytes %d", err, tot.Errors, tot.OtherBytes)
	}
}

// TestBlocktraceNullblk captures sequential and random direct writes and a
// discard on a conventional null_blk device, and checks the trace against
// the block layer's counters and against what was asked.
func TestBlocktraceNullblk(t *testing.T) {
	inGuest(t)
	tracefs := btTracefs(t)
	dev := "/dev/" + btDevice
	mustScript(t, "create", "--first", "12", "--conventional", "--size", "128", "--memory-backed", "--discard")
	t.Cleanup(func() { script("destroy", btDevice) })

	var text bytes.Buffer
	var events []blocktrace.Event
	before := btStat(t, btDevice)
	tr := btStart(t, blocktrace.Options{Device: btDevice, Tracefs: tracefs, Text: &text},
		func(e blocktrace.Event) { events = append(events, e) })
	var cmds []string
	_, c := btFio(t, fio.Job{Name: "seqwrite", Filename: dev, RW: fio.SeqWrite, BlockSize: 128 << 10, IODepth: 32, Size: 8 * mib})
	cmds = append(cmds, c)
	_, c = btFio(t, fio.Job{Name: "randwrite", Filename: dev, RW: fio.RandWrite, BlockSize: 4096, IODepth: 32,
		Offset: 16 * mib, Size: 4 * mib})
	cmds = append(cmds, c)
	cmds = append(cmds, btRun(t, "blkdiscard", "-o", strconv.FormatInt(64*mib, 10), "-l", strconv.FormatInt(32*mib, 10), dev))
	tot, err := tr.Stop()
	if err != nil {
		t.Fatal(err)
	}
	d := btDelta(t, before, btDevice)
	btCheck(t, tot, d)
	if tot.WriteBytes != 12*uint64(mib) || tot.DiscardBytes != 32*uint64(mib) {
		t.Errorf("trace: %d B written, %d B discarded; asked 12 MiB and 32 MiB", tot.WriteBytes, tot.DiscardBytes)
	}
	for _, e := range events {
		end := e.Sector + uint64(e.Sectors)
		ok := e.Dev == tr.Dev() && e.Error == 0
		switch e.Op {
		case blocktrace.OpWrite:
			ok = ok && (end <= 8*uint64(mib)/512 || e.Sector >= 16*uint64(mib)/512 && end <= 20*uint64(mib)/512)
		case blocktrace.OpDiscard:
			ok = ok && e.Sector >= 64*uint64(mib)/512 && end <= 96*uint64(mib)/512
		}
		if !ok {
			t.Errorf("event %+v: another device, an error, or outside what was written", e)
		}
	}
	if _, err := os.Stat(tr.Instance()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the instance %s is still there after Stop: %v", tr.Instance(), err)
	}
	btSave(t, "nullb-conventional", text.Bytes(), btRecord{Device: btDevice, Dev: tr.Dev().String(),
		Filter: blocktrace.Filter(tr.Dev()), BufferSizeKB: blocktrace.DefaultBufferSizeKB, Commands: cmds, StatDelta: d})

	t.Run("rate", func(t *testing.T) {
		// As fast as fio's random 4 KiB writes go here: the rate the tracer
		// kept up with, with nothing lost.
		before := btStat(t, btDevice)
		tr := btStart(t, blocktrace.Options{Device: btDevice, Tracefs: tracefs}, nil)
		r, _ := btFio(t, fio.Job{Name: "rate", Filename: dev, RW: fio.RandWrite, BlockSize: 4096, IODepth: 32,
			Size: 64 * mib, Runtime: 3 * time.Second, TimeBased: true})
		tot, err := tr.Stop()
		if err != nil {
			t.Fatal(err)
		}
		btCheck(t, tot, btDelta(t, before, btDevice))
		w := r.Jobs[0].Write
		if w.RuntimeMs <= 0 || int64(tot.WriteBytes) != w.IOBytes {
			t.Fatalf("fio wrote %d B in %d ms, the trace %d B", w.IOBytes, w.RuntimeMs, tot.WriteBytes)
		}
		t.Logf("kept up with %d completions in %d ms: %.0f events/s, nothing lost (buffer %d KiB per CPU, CPUs %s)",
			tot.Writes, w.RuntimeMs, float64(tot.Writes)*1000/float64(w.RuntimeMs), blocktrace.DefaultBufferSizeKB,
			readFirstLine(t, "/sys/devices/system/cpu/online"))
	})

	t.Run("drain", func(t *testing.T) {
		// fio is the bottleneck above. Here the events wait in the buffer
		// while the consumer is held, then the tracer reads them as fast as
		// it can: its own rate in this guest.
		const requests = 4000
		gate := make(chan struct{})
		release := sync.OnceFunc(func() { close(gate) })
		var n int
		var released, drained time.Time
		tr := btStart(t, blocktrace.Options{Device: btDevice, Tracefs: tracefs}, func(blocktrace.Event) {
			<-gate
			if n++; n == requests {
				drained = time.Now()
			}
		})
		t.Cleanup(release)
		btWrites(t, dev, requests)
		released = time.Now()
		release()
		tot, err := tr.Stop()
		if err != nil || tot.Writes != requests || drained.IsZero() {
			t.Fatalf("%d writes traced, %v", tot.Writes, err)
		}
		el := drained.Sub(released)
		t.Logf("drained %d buffered events in %.0f ms: %.0f events/s", requests, el.Seconds()*1000, requests/el.Seconds())
	})
}

// btWrites writes n blocks of 4 KiB from offset 0, each its own request
// (direct, synchronous).
func btWrites(t *testing.T, dev string, n int) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := alignedBuffer(4096)
	for i := range n {
		if _, err := f.WriteAt(buf, int64(i)*4096); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBlocktraceNVMe captures fio's zoned sequential write of one zone of
// the emulated NVMe ZNS namespace (the last zone: the other tests expect
// the first ones empty), then resets the zone.
func TestBlocktraceNVMe(t *testing.T) {
	inGuest(t)
	tracefs := btTracefs(t)
	dev := "/dev/" + nvmeDev
	const zone, zoneSize, zoneCap = 39, 64 * mib, 60 * mib
	t.Cleanup(func() { blkzone(t, "reset", dev, zone, zoneSize) })

	var text bytes.Buffer
	before := btStat(t, nvmeDev)
	tr := btStart(t, blocktrace.Options{Device: nvmeDev, Tracefs: tracefs, Text: &text}, nil)
	r, c := btFio(t, fio.ZonedSeqWrite(dev, zone*zoneSize, zoneSize))
	tot, err := tr.Stop()
	if err != nil {
		t.Fatal(err)
	}
	d := btDelta(t, before, nvmeDev)
	btCheck(t, tot, d)
	if r.Jobs[0].Write.IOBytes != zoneCap || tot.WriteBytes != uint64(zoneCap) {
		t.Errorf("fio wrote %d B, the trace %d B; the zone holds %d", r.Jobs[0].Write.IOBytes, tot.WriteBytes, zoneCap)
	}
	btSave(t, "nvme-zns", text.Bytes(), btRecord{Device: nvmeDev, Dev: tr.Dev().String(),
		Filter: blocktrace.Filter(tr.Dev()), BufferSizeKB: blocktrace.DefaultBufferSizeKB, Commands: []string{c}, StatDelta: d})
}

// TestBlocktraceLost stalls the consumer while a small buffer overflows:
// the capture must say it lost events, and how many.
func TestBlocktraceLost(t *testing.T) {
	inGuest(t)
	tracefs := btTracefs(t)
	mustScript(t, "create", "--first", "12", "--conventional", "--size", "64")
	t.Cleanup(func() { script("destroy", btDevice) })

	const requests, kb = 2048, 8 // 8 KiB: the smallest ring buffer, 2 pages
	gate := make(chan struct{})
	release := sync.OnceFunc(func() { close(gate) })
	var text bytes.Buffer
	before := btStat(t, btDevice)
	tr := btStart(t, blocktrace.Options{Device: btDevice, Tracefs: tracefs, Text: &text, BufferSizeKB: kb},
		func(blocktrace.Event) { <-gate })
	t.Cleanup(release) // before btStart's Stop
	btWrites(t, "/dev/"+btDevice, requests)
	release()
	tot, err := tr.Stop()
	d := btDelta(t, before, btDevice)
	t.Logf("%d writes delivered, %d markers counting %d lost, ring buffer overrun %d, dropped %d; stat %d writes",
		tot.Writes, tot.LostMarkers, tot.LostEvents, tot.Overrun, tot.Dropped, d.WriteIOs)
	if !errors.Is(err, blocktrace.ErrLostEvents) {
		t.Fatalf("Stop: %v, want ErrLostEvents", err)
	}
	if d.WriteIOs != requests || tot.LostMarkers == 0 || tot.Writes+tot.LostEvents != requests || tot.Overrun != tot.LostEvents {
		t.Errorf("want %d writes delivered or counted lost, the markers' count equal to the overrun", requests)
	}
	btSave(t, "lost-events", text.Bytes(), btRecord{Device: btDevice, Dev: tr.Dev().String(), Filter: blocktrace.Filter(tr.Dev()),
		BufferSizeKB: kb, Commands: []string{"2048 x pwrite(O_DIRECT) of 4096 bytes at 0, 4096, ... (Go)"},
		StatDelta: d, Requests: requests})
}
