package zbd

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sysBlock = "testdata/sys/block"

func TestInspectRecordedDevices(t *testing.T) {
	tests := []struct {
		name string
		want Device
	}{
		{"nullb0", Device{
			Name: "nullb0", Model: ModelHostManaged, NrZones: 64, ZoneSizeBytes: 64 << 20,
			Scheduler: "mq-deadline", AvailableSchedulers: []string{"none", "mq-deadline"},
			CapacityBytes: 4 << 30, LogicalBlockSize: 4096,
		}},
		{"nvme0n2", Device{
			Name: "nvme0n2", Model: ModelHostManaged, NrZones: 32, ZoneSizeBytes: 128 << 20,
			Scheduler: "none", AvailableSchedulers: []string{"none", "mq-deadline", "kyber", "bfq"},
			CapacityBytes: 4 << 30, LogicalBlockSize: 4096,
		}},
		{"nullb1", Device{
			Name: "nullb1", Model: ModelNone,
			Scheduler: "mq-deadline", AvailableSchedulers: []string{"none", "mq-deadline", "kyber", "bfq"},
			CapacityBytes: 1 << 30, LogicalBlockSize: 512,
		}},
		{"sdb", Device{
			Name: "sdb", Model: ModelHostAware, NrZones: 55880, ZoneSizeBytes: 256 << 20,
			Scheduler: "mq-deadline", AvailableSchedulers: []string{"mq-deadline", "kyber", "bfq", "none"},
			CapacityBytes: 55880 * (256 << 20), LogicalBlockSize: 512,
		}},
		// Captured from this machine's kernel (6.18): a virtio disk, and a
		// bio-based device without queue/scheduler. Neither has the zone
		// limit files.
		{"vda", Device{
			Name: "vda", Model: ModelNone,
			Scheduler: "mq-deadline", AvailableSchedulers: []string{"none", "mq-deadline", "kyber", "bfq"},
			CapacityBytes: 256 << 30, LogicalBlockSize: 512,
		}},
		{"zram0", Device{Name: "zram0", Model: ModelNone, Scheduler: "none", LogicalBlockSize: 4096}},
		{"nullb3", Device{
			Name: "nullb3", Model: ModelHostManaged, NrZones: 64, ZoneSizeBytes: 64 << 20, MaxOpenZones: 3,
			Scheduler: "mq-deadline", AvailableSchedulers: []string{"none", "mq-deadline"},
			CapacityBytes: 4 << 30, LogicalBlockSize: 4096,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Inspect(sysBlock, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Inspect(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestInspectMissingAndPartition(t *testing.T) {
	if _, err := Inspect(sysBlock, "nullb9"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("missing device: err = %v, want ErrNoDevice", err)
	}
	_, err := Inspect(sysBlock, "nvme0n1p1")
	if !errors.Is(err, ErrPartition) {
		t.Fatalf("partition: err = %v, want ErrPartition", err)
	}
	if want := "nvme0n1p1 is a partition of nvme0n1"; err.Error() != want {
		t.Errorf("partition error = %q, want %q", err, want)
	}
}

// Under /sys/class/block a partition is a sibling of its disk, marked by a
// "partition" file.
func TestInspectPartitionBesideDisk(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "sda1", "partition"), "1\n")
	if _, err := Inspect(dir, "sda1"); !errors.Is(err, ErrPartition) {
		t.Errorf("err = %v, want ErrPartition", err)
	}
}

// Kernels before 5.9 have no max_open_zones/max_active_zones: no limit known.
func TestInspectWithoutLimitAttributes(t *testing.T) {
	dir := t.TempDir()
	for rel, v := range map[string]string{
		"size":                     "8388608\n",
		"queue/zoned":              "host-managed\n",
		"queue/chunk_sectors":      "131072\n",
		"queue/nr_zones":           "64\n",
		"queue/scheduler":          "[mq-deadline] none\n",
		"queue/logical_block_size": "512\n",
	} {
		writeFile(t, filepath.Join(dir, "nullb0", rel), v)
	}
	d, err := Inspect(dir, "nullb0")
	if err != nil {
		t.Fatal(err)
	}
	if d.MaxOpenZones != 0 || d.MaxActiveZones != 0 || d.NrZones != 64 {
		t.Errorf("got %+v", d)
	}
}

func TestInspectRequiredAttributeMissing(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "nullb0", "queue", "zoned"), "host-managed\n")
	_, err := Inspect(dir, "nullb0")
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want a not-exist error for size", err)
	}
}

func TestInspectGarbageNumber(t *testing.T) {
	dir := t.TempDir()
	for rel, v := range map[string]string{
		"size": "lots\n", "queue/zoned": "none\n", "queue/scheduler": "none\n", "queue/logical_block_size": "512\n",
	} {
		writeFile(t, filepath.Join(dir, "loop0", rel), v)
	}
	if _, err := Inspect(dir, "loop0"); err == nil {
		t.Error("Inspect accepted size \"lots\"")
	}
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"nullb0", "nvme0n2", "sdb", "dm-0", "mmcblk0"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/dev/nullb0", "../nullb0", "..", ".", "-nullb0", "nvme0n1 ", "a$b",
		"nullb0/../../etc", "averyveryveryverylongdevicename0"} {
		if err := ValidateName(bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
	// The check runs before any file access.
	if _, err := Inspect(sysBlock, "../block/nullb0"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Inspect with a path: %v", err)
	}
}

func TestParseScheduler(t *testing.T) {
	tests := []struct {
		in        string
		active    string
		available []string
	}{
		{"[mq-deadline] kyber bfq none\n", "mq-deadline", []string{"mq-deadline", "kyber", "bfq", "none"}},
		{"none [mq-deadline] \n", "mq-deadline", []string{"none", "mq-deadline"}},
		{"[none] mq-deadline kyber bfq \n", "none", []string{"none", "mq-deadline", "kyber", "bfq"}},
		{"none\n", "none", []string{"none"}},
		{"", "", nil},
	}
	for _, tt := range tests {
		active, available := ParseScheduler(tt.in)
		if active != tt.active || !slices.Equal(available, tt.available) {
			t.Errorf("ParseScheduler(%q) = %q, %q; want %q, %q", tt.in, active, available, tt.active, tt.available)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
