package nvmelog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
)

// replay answers admin commands from the pages recorded in dir, checking that each command is formed the
// way QEMU accepted it in the guest. A page that was not recorded gets what QEMU answered there: Invalid
// Field in Command. Get Features FDP answers enabled when the FDP statistics were recorded (QEMU's
// answer in the fdp case).
func replay(t *testing.T, dir string) admin {
	return func(c command) (uint32, error) {
		var p Page
		switch {
		case c.opcode == opIdentify && c.cdw10 == cnsController && c.nsid == 0:
			p = PageIDCtrl
		case c.opcode == opIdentify && c.cdw10 == cnsNamespace && c.nsid == 1:
			p = PageIDNamespace
		case c.opcode == opGetLogPage && (int(c.cdw10>>16)+1)*4 == len(c.data) && c.cdw10&(1<<15) != 0:
			switch lid := c.cdw10 & 0xFF; {
			case lid == LogSMART && c.nsid == BroadcastNSID:
				p = PageSMART
			case lid == LogOCPSMART:
				p = PageOCPSMART
			case lid == LogFDPStats && c.cdw11>>16 == 1:
				p = PageFDPStats
			}
		case c.opcode == opGetFeatures && c.cdw10 == fidFDP && c.cdw11 == 1:
			if _, err := os.Stat(filepath.Join(dir, string(PageFDPStats)+".bin")); err == nil {
				return 1, nil
			}
			return 0, nil
		}
		if p == "" {
			t.Fatalf("unexpected command %+v", c)
		}
		b, err := os.ReadFile(filepath.Join(dir, string(p)+".bin"))
		if errors.Is(err, os.ErrNotExist) {
			return 0, &StatusError{Status: 0x4002}
		}
		if err != nil || len(b) != len(c.data) {
			t.Fatalf("%s: %d bytes for a %d-byte command, %v", p, len(b), len(c.data), err)
		}
		copy(c.data, b)
		return 0, nil
	}
}

func recordedSnapshot(t *testing.T, dir, dev string, taken time.Time) *Snapshot {
	t.Helper()
	s, err := collect(dev, 1, replay(t, filepath.Join("testdata", dir)), taken)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func recordedStat(t *testing.T, dir string) blockstat.Stat {
	t.Helper()
	s, err := blockstat.Parse(string(readPage(t, filepath.Join(dir, "stat"))))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordedDeltas replays the captures through collect and Delta, against the block layer's count
// captured with them (the namespace's path device, see testdata/README.md).
func TestRecordedDeltas(t *testing.T) {
	const written = 49 * 65536 // dd bs=65536 count=49 oflag=direct
	t0 := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		c, dev   string
		ocp, fdp bool
	}{{"zns", "nvme0n1", false, false}, {"conv-ocp", "nvme1n1", true, false}, {"fdp", "nvme2n1", true, true}} {
		t.Run(tc.c, func(t *testing.T) {
			before := recordedSnapshot(t, tc.c+"/before", tc.dev, t0)
			after := recordedSnapshot(t, tc.c+"/after", tc.dev, t0.Add(3*time.Second))
			blk, err := blockstat.Delta(recordedStat(t, tc.c+"/before"), recordedStat(t, tc.c+"/after"))
			if err != nil || blk.WrittenBytes() != written || blk.WriteIOs != 49 {
				t.Fatalf("block layer: %+v, %v", blk, err)
			}
			d, err := Delta(before, after)
			if err != nil {
				t.Fatal(err)
			}
			if d.Device != tc.dev || d.Interval != 3*time.Second || d.DataUnitsWritten != 7 || d.HostBytes != 7*DataUnitBytes ||
				d.HostBytesResolution != DataUnitBytes || d.HostWriteCommands != 49 {
				t.Errorf("SMART figures: %+v", d)
			}
			if diff := int64(d.HostBytes) - written; diff <= -DataUnitBytes || diff >= DataUnitBytes {
				t.Errorf("SMART says %d bytes, the block layer %d", d.HostBytes, written)
			}
			switch {
			case tc.fdp:
				if *d.FDP != (FDPChange{HostBytes: written, MediaBytes: written}) || d.WA == nil ||
					*d.WA != (WriteAmplification{HostBytes: written, MediaBytes: written, HostBytesResolution: 1, Source: "fdp", Ratio: 1}) {
					t.Errorf("FDP %+v, WA %+v", d.FDP, d.WA)
				}
				if after.EnduranceGroup != 1 || !after.FDPEnabled || len(after.Absent) != 0 {
					t.Errorf("endurance group %d, enabled %v, absent %v", after.EnduranceGroup, after.FDPEnabled, after.Absent)
				}
			case tc.ocp:
				// media bytes against rounded-up host data units: over 3 MB the ratio is off by 10%
				if *d.OCP != (OCPChange{MediaBytesWritten: written}) || d.WA == nil || d.WA.Source != "smart+ocp" ||
					d.WA.Ratio != float64(written)/(7*DataUnitBytes) || d.WA.HostBytesResolution != DataUnitBytes {
					t.Errorf("OCP %+v, WA %+v", d.OCP, d.WA)
				}
				if !errors.Is(after.Reason(PageFDPStats), ErrUnsupported) || d.FDP != nil {
					t.Errorf("FDP %+v, reason %v", d.FDP, after.Reason(PageFDPStats))
				}
			default:
				if d.OCP != nil || d.WA != nil || !errors.Is(d.NoWA, ErrUnsupported) || !strings.Contains(d.NoWA.Error(), "no media bytes") {
					t.Errorf("OCP %+v, WA %+v (%v)", d.OCP, d.WA, d.NoWA)
				}
				if after.OCP != nil || !errors.Is(after.Reason(PageOCPSMART), ErrUnsupported) {
					t.Errorf("OCP %+v, reason %v", after.OCP, after.Reason(PageOCPSMART))
				}
			}
		})
	}
}

func TestDeltaRefuses(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	before := recordedSnapshot(t, "fdp/before", "nvme2n1", t0)
	after := recordedSnapshot(t, "fdp/after", "nvme2n1", t0.Add(time.Second))
	fresh := func() (*Snapshot, *Snapshot) {
		b, a := *before, *after
		sb, sa, ob, oa, fb, fa := *b.SMART, *a.SMART, *b.OCP, *a.OCP, *b.FDP, *a.FDP
		b.SMART, a.SMART, b.OCP, a.OCP, b.FDP, a.FDP = &sb, &sa, &ob, &oa, &fb, &fa
		b.Absent, a.Absent = map[Page]error{}, map[Page]error{}
		return &b, &a
	}
	// each counter going backwards: the drive was reset or replaced
	for name, break_ := range map[string]func(b, a *Snapshot){
		"data units":   func(b, a *Snapshot) { b.SMART.DataUnitsWritten = Uint128{Lo: 8} },
		"commands":     func(b, a *Snapshot) { b.SMART.HostWriteCommands = Uint128{Lo: 50} },
		"ocp":          func(b, a *Snapshot) { b.OCP.PhysicalMediaUnitsWritten = Uint128{Hi: 1} },
		"fdp media":    func(b, a *Snapshot) { b.FDP.MediaBytesWritten = Uint128{Lo: 1 << 40} },
		"fdp erased":   func(b, a *Snapshot) { b.FDP.MediaBytesErased = Uint128{Lo: 1} },
		"other serial": func(b, a *Snapshot) { a.Controller.Serial = "fdp9" },
	} {
		b, a := fresh()
		break_(b, a)
		if _, err := Delta(b, a); !errors.Is(err, ErrCounterReset) {
			t.Errorf("%s: %v, want ErrCounterReset", name, err)
		}
	}
	b, a := fresh()
	if _, err := Delta(a, b); err == nil || !strings.Contains(err.Error(), "comes before") {
		t.Errorf("snapshots swapped: %v", err)
	}
	a.Device = "nvme1n1"
	if _, err := Delta(b, a); err == nil || errors.Is(err, ErrCounterReset) {
		t.Errorf("two devices: %v", err)
	}
	if _, err := Delta(nil, a); err == nil {
		t.Error("nil snapshot accepted")
	}

	// no SMART log: the reason comes through, no figure is made up
	b, a = fresh()
	b.SMART = nil
	b.Absent[PageSMART] = classify("nvme2n1", PageSMART, syscall.EACCES)
	if d, err := Delta(b, a); d != nil || !errors.Is(err, ErrPermission) {
		t.Errorf("no SMART before: %+v, %v", d, err)
	}

	// FDP statistics in one snapshot only: OCP media bytes against SMART host bytes instead
	b, a = fresh()
	b.FDP = nil
	d, err := Delta(b, a)
	if err != nil || d.FDP != nil || d.WA == nil || d.WA.Source != "smart+ocp" {
		t.Errorf("FDP missing before: %+v, %v", d, err)
	}
	// nothing written: no ratio
	d, err = Delta(b, b)
	if err != nil || d.WA != nil || d.NoWA == nil || d.HostBytes != 0 {
		t.Errorf("no writes: %+v, %v", d, err)
	}
}

// TestCollectFailures: what Read makes of a device that refuses or is not NVMe.
func TestCollectFailures(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		errno error
		kind  error
		says  string
	}{
		{syscall.EACCES, ErrPermission, "nvmelog: nvme0n1: needs CAP_SYS_ADMIN"},
		{syscall.ENOTTY, ErrNotNVMe, "nvmelog: nvme0n1: no drive counters: nvme0n1 is not an NVMe device"},
	} {
		s, err := collect("nvme0n1", 1, func(command) (uint32, error) { return 0, tc.errno }, now)
		if s != nil || !errors.Is(err, tc.kind) || !strings.HasPrefix(err.Error(), tc.says) {
			t.Errorf("%v: %+v, %v", tc.errno, s, err)
		}
	}
	// Identify admitted (Linux >= 6.2 lets it through nvme_cmd_allowed), the logs refused
	ctrl := readPage(t, "fdp/after/id-ctrl.bin")
	s, err := collect("nvme2n1", 1, func(c command) (uint32, error) {
		if c.opcode == opIdentify && c.cdw10 == cnsController {
			copy(c.data, ctrl)
			return 0, nil
		}
		return 0, syscall.EACCES
	}, now)
	if err != nil || s.SMART != nil || s.OCP != nil || s.FDP != nil || len(s.Absent) != 3 {
		t.Fatalf("%+v, %v", s, err)
	}
	for p, r := range s.Absent {
		if !errors.Is(r, ErrPermission) || !strings.Contains(r.Error(), permissionDetail) {
			t.Errorf("%s: %v", p, r)
		}
	}
	if _, err := Delta(s, s); !errors.Is(err, ErrPermission) {
		t.Errorf("Delta of refused snapshots: %v", err)
	}
	// a controller device has no namespace, so no endurance group
	s, err = collect("nvme2", 0, replay(t, "testdata/fdp/after"), now)
	if err != nil || s.FDP != nil || !errors.Is(s.Reason(PageFDPStats), ErrUnsupported) || s.SMART == nil || s.OCP == nil {
		t.Errorf("controller device: %+v, %v", s, err)
	}
}

func TestReadNotADevice(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvme0n1"), make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir, "nvme0n1"); !errors.Is(err, ErrNotNVMe) && !errors.Is(err, ErrUnsupportedOS) {
		t.Errorf("a regular file: %v", err)
	}
	if _, err := Read(dir, "nvme5n1"); !errors.Is(err, ErrNoDevice) && !errors.Is(err, ErrUnsupportedOS) {
		t.Errorf("no such file: %v", err)
	}
	for _, bad := range []string{"", "..", "../nvme0n1"} {
		if _, err := Read(dir, bad); err == nil {
			t.Errorf("Read(%q) accepted", bad)
		}
	}
}
