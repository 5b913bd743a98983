//go:build capture

package fio

// TestCaptureProfiles records fio's real output for every profile on a conventional block device into
// testdata/profile-*.json (testdata/README.md). It is behind the "capture" build tag because each run is a
// new measurement, and it writes to the device: give it a scratch loop device, as root,
//
//	truncate -s 256M /tmp/fio-capture.img && losetup -f --show /tmp/fio-capture.img   # prints /dev/loopN
//	FIO_CAPTURE_DEVICE=/dev/loopN go test -tags capture -run TestCaptureProfiles -v ./operator/internal/fio/
//	losetup -d /dev/loopN
//
// Each file is fio's stdout byte for byte; the argv it ran with is in the file's "job options" and in
// testdata/profiles.args, one step a line.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCaptureProfiles(t *testing.T) {
	dev := os.Getenv("FIO_CAPTURE_DEVICE")
	if dev == "" {
		t.Skip("FIO_CAPTURE_DEVICE names the scratch block device to write")
	}
	size, err := exec.Command("blockdev", "--getsize64", dev).Output()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range strings.TrimSpace(string(size)) {
		n = n*10 + int64(c-'0')
	}
	// a small grid: the captures need each shape (one job, clones under group_reporting), not every point
	g := Grid{RW: RandRead, BlockSizes: []int64{4 << 10}, NumJobs: []int{1, 2}, IODepths: []int{8}}
	steps, err := Plan(Device{Path: dev, SizeBytes: n}, Profiles,
		Bounds{Runtime: 2 * time.Second, SpanBytes: 128 << 20, WriteRateBytes: 16 << 20}, g)
	if err != nil {
		t.Fatal(err)
	}
	var argLines []string
	for _, s := range steps {
		out, err := exec.Command("fio", s.Args...).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", s.Profile, s.Point, err)
		}
		name := "profile-" + string(s.Profile)
		if s.Point != "" {
			name += "-" + strings.ReplaceAll(strings.ReplaceAll(s.Point, "=", ""), " ", "-")
		}
		name = strings.ReplaceAll(name, filepath.Base(dev), "dev")
		if err := os.WriteFile(filepath.Join("testdata", name+".json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		argLines = append(argLines, name+".json: fio "+strings.Join(s.Args, " "))
		t.Logf("%s: %d bytes", name, len(out))
	}
	if err := os.WriteFile("testdata/profiles.args", []byte(strings.Join(argLines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
