package fio

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBuiltCommands(t *testing.T) {
	tests := []struct {
		name string
		job  Job
		want string
	}{
		{"precondition", Precondition("/dev/nvme0n1"),
			"fio --output-format=json --name=precondition --filename=/dev/nvme0n1 --rw=write --bs=131072 " +
				"--ioengine=libaio --iodepth=32 --direct=1 --loops=2"},
		{"zoned write", ZonedSeqWrite("/dev/nullb0", 128*mib, 256*mib),
			"fio --output-format=json --name=zoned-seqwrite --filename=/dev/nullb0 --rw=write --bs=131072 " +
				"--ioengine=libaio --iodepth=32 --direct=1 --offset=134217728 --size=268435456 --zonemode=zbd"},
		{"zoned read", ZonedRandRead("/dev/nullb0", 0, 64*mib, 1500*time.Millisecond),
			"fio --output-format=json --name=zoned-randread --filename=/dev/nullb0 --rw=randread --bs=4096 " +
				"--ioengine=libaio --iodepth=32 --direct=1 --size=67108864 --runtime=1500ms --time_based --zonemode=zbd"},
		{"device precondition pass", WholeDevicePass("/dev/nvme1n1", 1<<20),
			"fio --output-format=json --name=precondition-pass --filename=/dev/nvme1n1 --rw=write --bs=1048576 " +
				"--ioengine=libaio --iodepth=32 --direct=1"},
		{"device precondition round", RandomRound("/dev/nvme1n1", 5*time.Second),
			"fio --output-format=json --name=precondition-round --filename=/dev/nvme1n1 --rw=randwrite --bs=4096 " +
				"--ioengine=libaio --iodepth=32 --direct=1 --runtime=5s --time_based --randrepeat=0 --norandommap"},
		{"defaults", Job{Name: "j", Filename: "/dev/sdb", RW: SeqRead},
			"fio --output-format=json --name=j --filename=/dev/sdb --rw=read --bs=131072 --ioengine=libaio --iodepth=1 --direct=1"},
		{"everything", Job{Name: "all", Filename: "/dev/nvme0n2", RW: RandWrite, BlockSize: 4096, IODepth: 8,
			IOEngine: "io_uring", NumJobs: 4, Loops: 3, Runtime: time.Minute, Zoned: true, MaxOpenZones: 12},
			"fio --output-format=json --name=all --filename=/dev/nvme0n2 --rw=randwrite --bs=4096 --ioengine=io_uring " +
				"--iodepth=8 --direct=1 --numjobs=4 --group_reporting --loops=3 --runtime=60s --zonemode=zbd --max_open_zones=12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.job.Command()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("got  %s\nwant %s", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// A device path with a space stays one argv element: nothing is parsed by a shell.
func TestArgsAreNotShellWords(t *testing.T) {
	args, err := Job{Name: "a job; rm -rf /", Filename: "/dev/disk/by-id/nvme-My Drive", RW: SeqRead}.Args()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(args, "--filename=/dev/disk/by-id/nvme-My Drive") || !slices.Contains(args, "--name=a job; rm -rf /") {
		t.Errorf("args %q", args)
	}
}

func TestFioDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second:             "1s",
		90 * time.Second:        "90s",
		1500 * time.Millisecond: "1500ms",
		time.Nanosecond:         "1ms", // never 0, which fio reads as no limit
	} {
		if got := fioDuration(d); got != want {
			t.Errorf("fioDuration(%v) = %s, want %s", d, got, want)
		}
	}
}

func TestJobRefused(t *testing.T) {
	ok := ZonedSeqWrite("/dev/nullb0", 0, 64*mib)
	tests := []struct {
		name string
		edit func(*Job)
		says string
	}{
		{"no name", func(j *Job) { j.Name = "" }, "job name"},
		{"relative path", func(j *Job) { j.Filename = "nullb0" }, "absolute path"},
		{"file list", func(j *Job) { j.Filename = "/dev/nullb0:/dev/nullb1" }, "contains ':'"},
		{"unknown rw", func(j *Job) { j.RW = "trim" }, `rw "trim"`},
		{"odd block size", func(j *Job) { j.BlockSize = 1000 }, "block size 1000"},
		{"odd offset", func(j *Job) { j.Offset = 4097 }, "offset 4097"},
		{"negative size", func(j *Job) { j.Size = -512 }, "size -512"},
		{"negative depth", func(j *Job) { j.IODepth = -1 }, "cannot be negative"},
		{"endless", func(j *Job) { j.TimeBased, j.Runtime = true, 0 }, "time_based needs a runtime"},
		{"open zones, not zoned", func(j *Job) { j.Zoned, j.MaxOpenZones = false, 4 }, "zoned jobs only"},
		{"engine with options", func(j *Job) { j.IOEngine = "libaio --verify=md5" }, "not an engine name"},
		{"fresh offsets of a sequential job", func(j *Job) { j.FreshRandom = true }, "random jobs only"},
	}
	if _, err := ok.Args(); err != nil {
		t.Fatalf("the base job is refused: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := ok
			tt.edit(&j)
			args, err := j.Command()
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Command() = %q, %v; want an error saying %q", args, err, tt.says)
			}
		})
	}
	// every problem is reported at once
	_, err := Job{Filename: "x", RW: "y", BlockSize: 3}.Args()
	for _, want := range []string{"job name", "absolute path", `rw "y"`, "block size 3"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}
