package dbinit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

func typicalReport() Report {
	return Report{
		Device: &zbd.Device{Name: "nullb0", Model: zbd.ModelHostManaged, NrZones: 64, ZoneSizeBytes: 64 << 20,
			ZoneCapacityBytes: 64 << 20, Scheduler: "mq-deadline", AvailableSchedulers: []string{"none", "mq-deadline"},
			CapacityBytes: 4 << 30, LogicalBlockSize: 4096},
		Filesystem: &FilesystemState{Type: "zenfs", UUID: "1b0f5c4e-2a6d-4c1e-9a3b-5f7d2e8c9a10",
			Action: fsformat.ActionFormat, Reason: "device is empty; formatting it with zenfs",
			Space: &Space{At: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC), FreeBytes: 3904 << 20}},
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	r := typicalReport()
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// Zoned XFS's metadata device survives the encoding too (Encode rebuilds the report it shortens).
	paired := r
	paired.MetadataDevice = &zbd.Device{Name: "nvme0n1", Model: zbd.ModelNone, CapacityBytes: 512 << 20}
	if b, err := paired.Encode(); err != nil || !strings.Contains(string(b), `"metadataDevice":{"name":"nvme0n1"`) {
		t.Errorf("metadata device lost: %s %v", b, err)
	}
	// The operator reads these names; they are an interface.
	for _, key := range []string{`"device":`, `"nrZones":64`, `"zoneSizeBytes":67108864`, `"maxOpenZones":0`,
		`"scheduler":"mq-deadline"`, `"filesystem":`, `"type":"zenfs"`, `"space":`, `"action":"format"`, `"freeBytes":4093640704`, `"usedBytes":0`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s missing from %s", key, b)
		}
	}
	if strings.Contains(string(b), `"error"`) || strings.Contains(string(b), `"problems"`) {
		t.Errorf("empty fields not omitted: %s", b)
	}
}

// The largest report the helper can produce: a device with every field at
// its widest, every problem Judge can raise at once plus an access problem,
// a long reason and a huge stderr in the error.
func TestEncodeMaximalReportFits(t *testing.T) {
	d := zbd.Device{Name: strings.Repeat("n", 31), Model: "host-managed", NrZones: 1 << 40, ZoneSizeBytes: 1 << 62,
		ZoneCapacityBytes: 1 << 62, MaxOpenZones: 1 << 32, MaxActiveZones: 1 << 32, Scheduler: "mq-deadline",
		AvailableSchedulers: []string{"none", "mq-deadline", "kyber", "bfq", "bfq2", "adios", "x", "y", "z", "w"},
		CapacityBytes:       1 << 62, LogicalBlockSize: 4096}
	worst := zbd.Device{Name: d.Name, Model: zbd.ModelHostManaged, NrZones: 1, MaxOpenZones: 1, MaxActiveZones: 1,
		Scheduler: "none", AvailableSchedulers: []string{"none"}}
	problems := append(zbd.Judge(worst), zbd.AccessProblem("/dev/"+d.Name, errPermission{}))
	if len(problems) < 4 {
		t.Fatalf("only %d problems", len(problems))
	}
	// Unescaped quotes and angle brackets grow under JSON escaping.
	huge := strings.Repeat(`<"é">`, 5000)
	limited := zbd.Device{Name: d.Name, Model: zbd.ModelHostManaged, NrZones: 64, MaxOpenZones: 8, MaxActiveZones: 8,
		Scheduler: "mq-deadline", AvailableSchedulers: []string{"mq-deadline"}}
	warnings := zbd.Advise(limited)
	if len(warnings) != 2 {
		t.Fatalf("Advise gave %d warnings", len(warnings))
	}
	r := Report{Device: &d, MetadataDevice: &d, Warnings: append(warnings, zbd.Problem{Code: "Y", Message: huge}), ErrorReason: "ZenFSAborted",
		Problems: append(problems, zbd.Problem{Code: "X", Message: huge}),
		Filesystem: &FilesystemState{Type: "zenfs", Found: "zenfs", UUID: strings.Repeat("u", 36), Action: fsformat.ActionRefuse, Reason: huge,
			Space: &Space{At: time.Now(), FreeBytes: 1 << 62, UsedBytes: 1 << 62, ReclaimableBytes: 1 << 62, SpaceAmplificationPercent: 1 << 62}},
		Error: huge}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxReportBytes {
		t.Fatalf("report is %d bytes, limit %d", len(b), MaxReportBytes)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("shortened report is not JSON: %v", err)
	}
	if back.Device == nil || back.Device.Name != d.Name || back.MetadataDevice == nil || back.Filesystem == nil || !strings.HasSuffix(back.Error, "…") ||
		back.ErrorReason != "ZenFSAborted" || len(back.Warnings) != 3 {
		t.Errorf("shortening lost structure: %+v", back)
	}
	// Without the huge texts, every problem Judge can raise fits unshortened.
	r.Problems, r.Warnings, r.Filesystem.Reason, r.Error = problems, warnings, "device holds data that is not ZenFS", "zenfs mkfs failed: exit status 1"
	b, err = r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back = Report{}
	if err := json.Unmarshal(b, &back); err != nil || !cmp.Equal(back.Problems, problems) || !cmp.Equal(back.Warnings, warnings) {
		t.Errorf("problems were shortened though they fit (%d bytes): %v", len(b), err)
	}
	t.Logf("realistic worst report: %d bytes", len(b))
}

type errPermission struct{}

func (errPermission) Error() string { return "permission denied" }

func TestTruncate(t *testing.T) {
	if got := truncate("héllo", 4); got != "h…" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("hello", 5); got != "hello" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("hello", 2); got != "" {
		t.Errorf("truncate = %q", got)
	}
}

// A conventional device's format report at its largest: every pass and round the API allows, with the widest
// figures, long texts beside them; and lists longer than the bounds (which the helper never makes) are cut to
// the first passes and the last rounds, on which the steady-state verdict rests.
func TestEncodePreconditionFits(t *testing.T) {
	huge := strings.Repeat(`<"é">`, 3000)
	p := &PreconditionState{Complete: true, Note: huge, SteadyReason: huge, RoundsAsked: MaxPreconditionRounds,
		StartedAt:  time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.UTC),
		FinishedAt: time.Date(2026, 11, 28, 10, 0, 0, 987654321, time.UTC)}
	for range MaxPreconditionPasses + 3 {
		p.Passes = append(p.Passes, PassFigures{Bytes: 1 << 62, Seconds: 123456.789, MBps: 12345.678})
	}
	for i := range MaxPreconditionRounds + 5 {
		p.Rounds = append(p.Rounds, RoundFigures{WriteIOPS: 1234567.891 + float64(i), Bytes: 1 << 62, Seconds: 3600.5})
	}
	r := Report{
		Device: &zbd.Device{Name: strings.Repeat("n", 31), Model: zbd.ModelNone, Scheduler: "mq-deadline",
			AvailableSchedulers: []string{"none", "mq-deadline", "kyber", "bfq"}, CapacityBytes: 1 << 62, LogicalBlockSize: 4096},
		Filesystem: &FilesystemState{Type: "ext4", Found: "xfs", UUID: strings.Repeat("u", 36), Label: "zns-0123abcd",
			Action: fsformat.ActionFormat, Reason: huge},
		Precondition: p,
		Error:        huge,
	}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxReportBytes {
		t.Fatalf("report is %d bytes, limit %d", len(b), MaxReportBytes)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("shortened report is not JSON: %v", err)
	}
	bp := back.Precondition
	if bp == nil || len(bp.Passes) != MaxPreconditionPasses || len(bp.Rounds) != MaxPreconditionRounds ||
		bp.Rounds[0].WriteIOPS != p.Rounds[5].WriteIOPS || !bp.Complete || !bp.FinishedAt.Equal(p.FinishedAt) {
		t.Errorf("precondition after shortening: %+v", bp)
	}
	if back.Filesystem == nil || back.Filesystem.Action != fsformat.ActionFormat || back.Filesystem.Label != "zns-0123abcd" {
		t.Errorf("filesystem after shortening: %+v", back.Filesystem)
	}
	t.Logf("largest precondition report: %d bytes", len(b))
}
