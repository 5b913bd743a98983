package zbd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
)

func codes(ps []Problem) string {
	var cs []string
	for _, p := range ps {
		cs = append(cs, p.Code)
	}
	return strings.Join(cs, ",")
}

// The verdicts the QEMU tier must reproduce on real devices.
func TestPreflightRecordedDevices(t *testing.T) {
	tests := []struct {
		name  string
		codes string
		// words each message must contain, so a user can act on it
		mention []string
	}{
		{"nullb0", "", nil},
		{"nvme0n2", CodeWrongScheduler, []string{`"none"`, "echo mq-deadline > /sys/block/nvme0n2/queue/scheduler",
			`KERNEL=="nvme0n2", ATTR{queue/scheduler}="mq-deadline"`}},
		{"nullb1", CodeNotHostManaged, []string{"conventional", "host-managed"}},
		{"vda", CodeNotHostManaged, []string{"vda is a conventional"}},
		{"zram0", CodeNotHostManaged, []string{"zram0 is a conventional"}},
		{"sdb", CodeNotHostManaged, []string{"host-aware", "host-managed"}},
		{"nullb2", CodeTooFewZones, []string{"has 16 zones", "at least 32"}},
		{"nullb3", CodeTooFewOpenZones, []string{"only 3 open zones", "at least 7", "hangs"}},
		{"nvme0n1p1", CodePartition, []string{"partition of nvme0n1", "whole device"}},
		{"nullb9", CodeNoSuchDevice, []string{"no such block device", "nullb9"}},
		{"/dev/nullb0", CodeInvalidName, []string{"not a path"}},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, "/", "_"), func(t *testing.T) {
			d, ps, err := Preflight(sysBlock, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if got := codes(ps); got != tt.codes {
				t.Fatalf("problems %q, want %q: %+v", got, tt.codes, ps)
			}
			for _, m := range tt.mention {
				if !strings.Contains(ps[0].Message, m) {
					t.Errorf("message %q does not mention %q", ps[0].Message, m)
				}
			}
			// A device that sysfs describes is always returned for the report.
			if wantDevice := tt.codes != CodePartition && tt.codes != CodeNoSuchDevice && tt.codes != CodeInvalidName; (d != nil) != wantDevice {
				t.Errorf("device returned = %v, want %v", d != nil, wantDevice)
			}
		})
	}
}

func fitDevice() Device {
	return Device{Name: "nullb0", Model: ModelHostManaged, NrZones: 64, ZoneSizeBytes: 64 << 20,
		Scheduler: "mq-deadline", AvailableSchedulers: []string{"none", "mq-deadline"}}
}

// The floor: refused at the limits where RocksDB stalled on the real ZenFS
// (4, 5, 6) and below; accepted from MinOpenZones; warned about up to the 14
// that completed.
func TestJudgeLimits(t *testing.T) {
	tests := []struct {
		open, active int64
		codes        string // refusals
		warnings     string
	}{
		{0, 0, "", ""}, // no limits (null_blk's default)
		{14, 14, "", ""},
		{14, 0, "", ""},
		{384, 384, "", ""},
		{4, 4, CodeTooFewOpenZones + "," + CodeTooFewActiveZones, ""}, // DB::Open hung
		{4, 14, CodeTooFewOpenZones, ""},                              // DB::Open hung
		{5, 5, CodeTooFewOpenZones + "," + CodeTooFewActiveZones, ""}, // first flush hung
		{5, 14, CodeTooFewOpenZones, ""},                              // first flush hung
		{6, 6, CodeTooFewOpenZones + "," + CodeTooFewActiveZones, ""}, // flush + compaction hung
		{7, 7, "", CodeFewOpenZones + "," + CodeFewActiveZones},       // the floor
		{7, 0, "", CodeFewOpenZones},
		{13, 14, "", CodeFewOpenZones},
		{14, 13, "", CodeFewActiveZones},
		{0, 6, CodeTooFewActiveZones, ""},
		{0, 7, "", CodeFewActiveZones},
		{1, 0, CodeTooFewOpenZones, ""},
		{3, 3, CodeTooFewOpenZones + "," + CodeTooFewActiveZones, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("open%d_active%d", tt.open, tt.active), func(t *testing.T) {
			d := fitDevice()
			d.MaxOpenZones, d.MaxActiveZones = tt.open, tt.active
			if got := codes(Judge(d)); got != tt.codes {
				t.Errorf("Judge = %q, want %q", got, tt.codes)
			}
			if got := codes(Advise(d)); got != tt.warnings {
				t.Errorf("Advise = %q, want %q", got, tt.warnings)
			}
		})
	}
}

// The messages say what happens and what to do.
func TestZoneLimitMessages(t *testing.T) {
	d := fitDevice()
	d.MaxOpenZones, d.MaxActiveZones = 6, 6
	ps := Judge(d)
	for _, want := range []string{"only 6 open zones", "at least 7", "waits forever", "without an error", "zone_max_open"} {
		if !strings.Contains(ps[0].Message, want) {
			t.Errorf("refusal %q lacks %q", ps[0].Message, want)
		}
	}
	d.MaxOpenZones, d.MaxActiveZones = 12, 12
	ws := Advise(d)
	for _, want := range []string{"12 open zones", "14 seen to work", "8 memtables", "max_open_zones of 14"} {
		if !strings.Contains(ws[0].Message, want) {
			t.Errorf("warning %q lacks %q", ws[0].Message, want)
		}
	}
	// A refused device gets no advice on top of its refusal.
	d.Scheduler = "none"
	if ws := Advise(d); len(ws) != 0 {
		t.Errorf("Advise on a refused device = %+v", ws)
	}
}

func TestBusyProblem(t *testing.T) {
	p := BusyProblem("/dev/nullb0", ErrBusy)
	if p.Code != CodeDeviceBusy || !strings.Contains(p.Message, "/dev/nullb0 is busy") || !strings.Contains(p.Message, "Nothing was read or changed") {
		t.Errorf("got %+v", p)
	}
}

func TestJudgeZoneCountBoundary(t *testing.T) {
	d := fitDevice()
	d.NrZones = MinZones
	if ps := Judge(d); len(ps) != 0 {
		t.Errorf("%d zones: %+v", MinZones, ps)
	}
	d.NrZones = MinZones - 1
	if got := codes(Judge(d)); got != CodeTooFewZones {
		t.Errorf("%d zones: %q", MinZones-1, got)
	}
}

func TestJudgeSchedulerNotOffered(t *testing.T) {
	d := fitDevice()
	d.Scheduler, d.AvailableSchedulers = "none", []string{"none"}
	ps := Judge(d)
	if codes(ps) != CodeSchedulerUnavailable || !strings.Contains(ps[0].Message, "modprobe mq-deadline") {
		t.Errorf("got %+v", ps)
	}
	d.Scheduler, d.AvailableSchedulers = "none", nil
	if ps := Judge(d); codes(ps) != CodeSchedulerUnavailable || !strings.Contains(ps[0].Message, "bio-based") {
		t.Errorf("got %+v", ps)
	}
	d.Scheduler, d.AvailableSchedulers = "kyber", []string{"none", "mq-deadline", "kyber"}
	if ps := Judge(d); codes(ps) != CodeWrongScheduler || !strings.Contains(ps[0].Message, `"kyber"`) {
		t.Errorf("got %+v", ps)
	}
}

// Every problem of a host-managed device is reported at once, so a user
// fixes them in one go.
func TestJudgeReportsAllProblems(t *testing.T) {
	d := Device{Name: "nullb5", Model: ModelHostManaged, NrZones: 8, MaxOpenZones: 2, MaxActiveZones: 2,
		Scheduler: "none", AvailableSchedulers: []string{"none", "mq-deadline"}}
	want := strings.Join([]string{CodeTooFewZones, CodeWrongScheduler, CodeTooFewOpenZones, CodeTooFewActiveZones}, ",")
	if got := codes(Judge(d)); got != want {
		t.Errorf("Judge = %q, want %q", got, want)
	}
}

func TestJudgeUnknownModel(t *testing.T) {
	ps := Judge(Device{Name: "x0", Model: "zoned-future"})
	if codes(ps) != CodeNotHostManaged || !strings.Contains(ps[0].Message, `"zoned-future"`) {
		t.Errorf("got %+v", ps)
	}
}

func TestAccessProblem(t *testing.T) {
	_, errMissing := os.Open("testdata/no-such-node")
	if p := AccessProblem("/dev/nullb0", errMissing); p.Code != CodeNoDeviceNode || !strings.Contains(p.Message, "/dev/nullb0") {
		t.Errorf("missing node: %+v", p)
	}
	errPerm := &fs.PathError{Op: "open", Path: "/dev/nullb0", Err: fs.ErrPermission}
	if p := AccessProblem("/dev/nullb0", errPerm); p.Code != CodeDeviceNotAccessible || !strings.Contains(p.Message, "supplementalGroups") {
		t.Errorf("permission: %+v", p)
	}
	if p := AccessProblem("/dev/nullb0", errors.New("input/output error")); p.Code != CodeDeviceNotAccessible || !strings.Contains(p.Message, "input/output error") {
		t.Errorf("other: %+v", p)
	}
}
