package blocktrace

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
)

// record is the JSON the in-guest test writes beside each capture
// (operator/internal/qemuguest/blocktrace_test.go, btRecord).
type record struct {
	Kernel, Device, Dev, Event, Filter string
	BufferSizeKB                       int
	Commands                           []string
	StatDelta                          blockstat.Stat
	Requests                           int
	Lines                              int
}

func readRecord(t *testing.T, name string) (record, []byte) {
	t.Helper()
	js, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r record
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join("testdata", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "\n"); n != r.Lines || r.Event != "block:block_rq_complete" {
		t.Fatalf("%s: %d lines of %s, the record says %d of %s", name, n, r.Event, r.Lines, r.Event)
	}
	return r, text
}

// TestRecordedCaptures parses the real trace_pipe text of the guest's
// captures (testdata/README.md) and compares the totals with what the
// kernel's stat file counted over the same capture.
func TestRecordedCaptures(t *testing.T) {
	for _, name := range []string{"nullb-conventional", "nvme-zns"} {
		t.Run(name, func(t *testing.T) {
			r, text := readRecord(t, name)
			dev, err := ParseDev(r.Dev)
			if err != nil || Filter(dev) != r.Filter {
				t.Fatalf("device %s (%v): filter %q, the record says %q", r.Dev, err, Filter(dev), r.Filter)
			}
			tot, err := ParseText(strings.NewReader(string(text)), func(e Event) {
				if e.Dev != dev || e.Error != 0 {
					t.Errorf("event %+v: another device than %s, or an error", e, dev)
				}
			})
			if err != nil || tot.Err() != nil {
				t.Fatalf("%v, %v", err, tot.Err())
			}
			d := r.StatDelta
			if tot.WriteBytes != d.WrittenBytes() || tot.DiscardBytes != d.DiscardSectors*512 || tot.ReadBytes != d.ReadBytes() {
				t.Errorf("trace wrote %d, discarded %d, read %d bytes; the stat counted %d, %d, %d", tot.WriteBytes,
					tot.DiscardBytes, tot.ReadBytes, d.WrittenBytes(), d.DiscardSectors*512, d.ReadBytes())
			}
			// these drivers finish each request in one completion, so the
			// request counts agree too
			if tot.Writes != d.WriteIOs || tot.Discards != d.DiscardIOs || tot.Writes == 0 {
				t.Errorf("trace: %d writes, %d discards; stat: %d, %d", tot.Writes, tot.Discards, d.WriteIOs, d.DiscardIOs)
			}
			if tot.OtherBytes != 0 || tot.Malformed != 0 || tot.Issues != 0 {
				t.Errorf("unexpected lines: %+v", tot)
			}
			t.Logf("%+v", tot)
		})
	}
}

// TestRecordedLostEvents: the capture whose consumer was held while 2048
// writes overflowed an 8 KiB buffer. Every write is either delivered or
// counted by the lost-events marker.
func TestRecordedLostEvents(t *testing.T) {
	r, text := readRecord(t, "lost-events")
	tot, err := ParseText(strings.NewReader(string(text)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(tot.Err(), ErrLostEvents) || tot.LostMarkers != 1 {
		t.Errorf("Err() = %v with %d markers, want ErrLostEvents from one marker", tot.Err(), tot.LostMarkers)
	}
	if r.Requests == 0 || uint64(r.Requests) != r.StatDelta.WriteIOs || tot.Writes+tot.LostEvents != uint64(r.Requests) {
		t.Errorf("%d delivered + %d lost, want the %d writes issued (stat: %d)", tot.Writes, tot.LostEvents, r.Requests, r.StatDelta.WriteIOs)
	}
}
