package fio

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The NVMe ZNS namespace of the QEMU tier: 64 MiB zones of 60 MiB capacity, max open/active 14.
var znsDevice = Device{Path: "/dev/nvme0n1", SizeBytes: 64 * 64 * mib, Zoned: true, ZoneSizeBytes: 64 * mib,
	ZoneCapacityBytes: 60 * mib, Zones: 64, MaxOpenZones: 14, MaxActiveZones: 14}

var convDevice = Device{Path: "/dev/loop1", SizeBytes: 256 * mib}

func stepArgs(t *testing.T, d Device, p Profile, b Bounds, g Grid) []string {
	t.Helper()
	steps, err := Plan(d, []Profile{p}, b, g)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range steps {
		out = append(out, strings.Join(s.Args, " "))
	}
	return out
}

func TestPlanProfiles(t *testing.T) {
	b := Bounds{Runtime: 30 * time.Second, SpanBytes: 28 * 64 * mib}
	tests := []struct {
		name   string
		dev    Device
		p      Profile
		bounds Bounds
		want   string
	}{
		// 14 writers (the open limit), 2 zones each, one write in flight per zone, fio told the limit
		{"zoned write", znsDevice, ProfileSeqWriteOpenZones, b,
			"--output-format=json --name=seqwrite-open-zones --filename=/dev/nvme0n1 --rw=write --bs=131072 --ioengine=libaio " +
				"--iodepth=1 --direct=1 --numjobs=14 --group_reporting --offset_increment=134217728 --size=134217728 --runtime=30s " +
				"--zonemode=zbd --max_open_zones=14"},
		// the span rounds down to whole zones
		{"zoned randread", znsDevice, ProfileRandRead4K, Bounds{Runtime: time.Minute, SpanBytes: 150 * mib},
			"--output-format=json --name=randread-4k --filename=/dev/nvme0n1 --rw=randread --bs=4096 --ioengine=libaio --iodepth=32 " +
				"--direct=1 --size=134217728 --runtime=60s --time_based --zonemode=zbd"},
		// the reader on the first half, the capped writer on the second, reported apart; both with the device's
		// open-zone limit, since fio refuses jobs of one process whose max_open_zones differ
		{"zoned read under writes", znsDevice, ProfileRandReadUnderWrites, b,
			"--output-format=json --name=reader --filename=/dev/nvme0n1 --rw=randread --bs=4096 --ioengine=libaio --iodepth=32 " +
				"--direct=1 --size=939524096 --runtime=30s --time_based --zonemode=zbd --max_open_zones=14 " +
				"--name=writer --filename=/dev/nvme0n1 --rw=write --bs=131072 --ioengine=libaio --iodepth=1 --direct=1 " +
				"--offset=939524096 --size=939524096 --runtime=30s --time_based --rate=67108864 --zonemode=zbd --max_open_zones=14 --new_group"},
		{"zoned seqread", znsDevice, ProfileSeqRead128KQD32, b,
			"--output-format=json --name=seqread-128k-qd32 --filename=/dev/nvme0n1 --rw=read --bs=131072 --ioengine=libaio " +
				"--iodepth=32 --direct=1 --size=1879048192 --runtime=30s --time_based --zonemode=zbd"},
		// a conventional device: the same profile without zonemode, DefaultWriters writers in 1 MiB-aligned shares
		{"conventional write", convDevice, ProfileSeqWriteOpenZones, Bounds{Runtime: 2 * time.Second, SpanBytes: 100*mib + 5},
			"--output-format=json --name=seqwrite-open-zones --filename=/dev/loop1 --rw=write --bs=131072 --ioengine=libaio " +
				"--iodepth=1 --direct=1 --numjobs=8 --group_reporting --offset_increment=12582912 --size=12582912 --runtime=2s"},
		{"conventional read under writes at a given rate", convDevice, ProfileRandReadUnderWrites,
			Bounds{Runtime: 2 * time.Second, WriteRateBytes: 16 * mib},
			"--output-format=json --name=reader --filename=/dev/loop1 --rw=randread --bs=4096 --ioengine=libaio --iodepth=32 " +
				"--direct=1 --size=134217728 --runtime=2s --time_based " +
				"--name=writer --filename=/dev/loop1 --rw=write --bs=131072 --ioengine=libaio --iodepth=1 --direct=1 " +
				"--offset=134217728 --size=134217728 --runtime=2s --time_based --rate=16777216 --new_group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stepArgs(t, tt.dev, tt.p, tt.bounds, Grid{})
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("got  %q\nwant %s", got, tt.want)
			}
		})
	}
}

// The writers follow the device's tighter limit, and never exceed the zones of the span or MaxWriters.
func TestWriterCount(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Device)
		span int64
		want int
	}{
		{"open limit", func(d *Device) { d.MaxOpenZones, d.MaxActiveZones = 14, 14 }, 0, 14},
		{"active limit tighter", func(d *Device) { d.MaxOpenZones, d.MaxActiveZones = 14, 6 }, 0, 6},
		{"only an active limit", func(d *Device) { d.MaxOpenZones, d.MaxActiveZones = 0, 9 }, 0, 9},
		{"no limit", func(d *Device) { d.MaxOpenZones, d.MaxActiveZones = 0, 0 }, 0, DefaultWriters},
		{"hundreds of open zones", func(d *Device) { d.MaxOpenZones, d.MaxActiveZones = 384, 384 }, 0, MaxWriters},
		{"fewer zones in the span", func(d *Device) {}, 3 * 64 * mib, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := znsDevice
			tt.edit(&d)
			steps, err := Plan(d, []Profile{ProfileSeqWriteOpenZones}, Bounds{Runtime: time.Second, SpanBytes: tt.span}, Grid{})
			if err != nil {
				t.Fatal(err)
			}
			if steps[0].NumJobs != tt.want {
				t.Errorf("%d writers, want %d", steps[0].NumJobs, tt.want)
			}
		})
	}
}

func TestPlanOrderAndGrid(t *testing.T) {
	steps, err := Plan(znsDevice, []Profile{ProfileGrid, ProfileSeqRead128KQD32, ProfileSeqWriteOpenZones},
		Bounds{Runtime: 5 * time.Second}, DefaultGrid())
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2+MaxGridPoints {
		t.Fatalf("%d steps, want the write, the read and %d grid points", len(steps), MaxGridPoints)
	}
	// the write first: a zoned device's reads find data only below the write pointers
	if steps[0].Profile != ProfileSeqWriteOpenZones || !steps[0].Writes || steps[1].Profile != ProfileSeqRead128KQD32 || steps[1].Writes {
		t.Errorf("order %s (writes %v), %s (writes %v)", steps[0].Profile, steps[0].Writes, steps[1].Profile, steps[1].Writes)
	}
	seen := map[string]bool{}
	for _, s := range steps[2:] {
		if s.Profile != ProfileGrid || s.Writes || seen[s.Point] {
			t.Errorf("grid step %+v", s)
		}
		seen[s.Point] = true
		want := []string{"--bs=" + itoa(s.BlockSize), "--iodepth=" + itoa(int64(s.IODepth)), "--zonemode=zbd", "--rw=randread"}
		if s.NumJobs > 1 {
			want = append(want, "--numjobs="+itoa(int64(s.NumJobs)), "--group_reporting")
		}
		args := strings.Join(s.Args, " ")
		for _, w := range want {
			if !strings.Contains(args, w+" ") && !strings.HasSuffix(args, w) {
				t.Errorf("%s: %s lacks %s", s.Point, args, w)
			}
		}
	}
	if !seen["bs=131072 jobs=4 qd=32"] || !seen["bs=4096 jobs=1 qd=1"] {
		t.Errorf("corners missing: %v", seen)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// A sequential-write grid gives each clone a share of its own, and a zoned device's writers must fit its open limit.
func TestGridWrites(t *testing.T) {
	g := Grid{RW: SeqWrite, BlockSizes: []int64{DefaultBlockSize}, NumJobs: []int{4}, IODepths: []int{1}}
	steps, err := Plan(znsDevice, []Profile{ProfileGrid}, Bounds{Runtime: time.Second, SpanBytes: 8 * 64 * mib}, g)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(steps[0].Args, " ")
	for _, w := range []string{"--numjobs=4", "--offset_increment=134217728", "--size=134217728", "--max_open_zones=4"} {
		if !strings.Contains(args, w) {
			t.Errorf("%s lacks %s", args, w)
		}
	}
	if !steps[0].Writes || !Writes(ProfileGrid, g) {
		t.Error("a write grid is not marked as writing")
	}
	g.NumJobs = []int{16}
	if _, err := Plan(znsDevice, []Profile{ProfileGrid}, Bounds{Runtime: time.Second}, g); err == nil ||
		!strings.Contains(err.Error(), "device's limit of 14") {
		t.Errorf("16 writers on a 14-open-zone device: %v", err)
	}
}

func TestPlanRefused(t *testing.T) {
	b := Bounds{Runtime: time.Second}
	big := Grid{RW: RandRead, BlockSizes: []int64{4096, 8192, 16384, 32768}, NumJobs: []int{1, 2, 4}, IODepths: []int{1, 8, 32}}
	tests := []struct {
		name     string
		dev      Device
		profiles []Profile
		bounds   Bounds
		grid     Grid
		says     string
	}{
		{"unknown profile", convDevice, []Profile{"randtrim"}, b, Grid{}, `unknown profile "randtrim"`},
		{"no profile", convDevice, nil, b, Grid{}, "no profile"},
		{"no runtime", convDevice, []Profile{ProfileRandRead4K}, Bounds{}, Grid{}, "runtime is needed"},
		{"grid too big", convDevice, []Profile{ProfileGrid}, b, big, "36 points (4 block sizes x 3 job counts x 3 queue depths): at most 27"},
		{"empty grid", convDevice, []Profile{ProfileGrid}, b, Grid{RW: RandRead}, "at least one block size"},
		{"random writes on zones", znsDevice, []Profile{ProfileGrid}, b,
			Grid{RW: RandWrite, BlockSizes: []int64{4096}, NumJobs: []int{1}, IODepths: []int{1}}, "random writes cannot run on a zoned device"},
		{"odd grid block size", convDevice, []Profile{ProfileGrid}, b,
			Grid{RW: RandRead, BlockSizes: []int64{1000}, NumJobs: []int{1}, IODepths: []int{1}}, "block size 1000"},
		{"zero queue depth", convDevice, []Profile{ProfileGrid}, b,
			Grid{RW: RandRead, BlockSizes: []int64{4096}, NumJobs: []int{1}, IODepths: []int{0}}, "must be positive"},
		{"span of one zone", znsDevice, []Profile{ProfileRandRead4K}, Bounds{Runtime: time.Second, SpanBytes: 64 * mib}, Grid{}, "fewer than 2 units"},
		{"zoned without geometry", Device{Path: "/dev/nullb0", SizeBytes: 1 << 30, Zoned: true}, []Profile{ProfileRandRead4K}, b, Grid{}, "zone size 0"},
		{"capacity above size", func() Device { d := znsDevice; d.ZoneCapacityBytes = 65 * mib; return d }(),
			[]Profile{ProfileRandRead4K}, b, Grid{}, "at most the zone size"},
		{"conventional with zones", Device{Path: "/dev/sdb", SizeBytes: 1 << 30, Zones: 4}, []Profile{ProfileRandRead4K}, b, Grid{}, "has no zones"},
		{"relative path", Device{Path: "sdb", SizeBytes: 1 << 30}, []Profile{ProfileRandRead4K}, b, Grid{}, "absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Plan(tt.dev, tt.profiles, tt.bounds, tt.grid)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Plan = %d steps, %v; want an error saying %q", len(steps), err, tt.says)
			}
		})
	}
}

func TestWrites(t *testing.T) {
	for p, want := range map[Profile]bool{
		ProfileSeqWriteOpenZones: true, ProfileRandReadUnderWrites: true,
		ProfileRandRead4K: false, ProfileSeqRead128KQD32: false, ProfileGrid: false,
	} {
		if Writes(p, DefaultGrid()) != want {
			t.Errorf("Writes(%s) = %v", p, !want)
		}
	}
}
