package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
)

// loopDevice attaches a fresh sparse file of size bytes as a loop device (root, losetup) and returns its
// kernel name; it is detached when the test ends.
func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a loop device")
	}
	for _, tool := range []string{"losetup", "fio"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	img := filepath.Join(t.TempDir(), "dev.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "-f", "--show", img).Output()
	if err != nil {
		t.Skipf("losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	return filepath.Base(dev)
}

// The runner on a real conventional block device: an empty one is written without a token and its figures
// and block-layer bytes come back; then, holding data, the writing profiles are refused without a token and
// run with one, while read-only profiles need none; a mounted file system on it is refused, untouched.
func TestFioRunnerOnLoopDevice(t *testing.T) {
	dev := loopDevice(t, 64<<20)
	ctx := context.Background()
	f := fioFlags{device: dev, devDir: "/dev", sysBlock: "/sys/block", fioPath: "fio", runtime: time.Second, span: 32 << 20}
	logf := t.Logf
	write := []fio.Profile{fio.ProfileSeqWriteOpenZones, fio.ProfileRandRead4K}

	rep := runFio(ctx, f, write, fio.Grid{}, logf)
	if rep.Refused != "" || rep.Failed != "" || rep.Found != "empty" || rep.Zoned || len(rep.Results) != 2 {
		t.Fatalf("empty device: %+v", rep)
	}
	w := rep.Results[0].Write
	if rep.Results[0].Profile != fio.ProfileSeqWriteOpenZones || w == nil || w.Bytes <= 0 || rep.Results[1].Read == nil {
		t.Fatalf("results %+v", rep.Results)
	}
	if rep.BlockLayerWrittenBytes == nil || *rep.BlockLayerWrittenBytes < w.Bytes {
		t.Errorf("block layer wrote %v bytes, fio %d", rep.BlockLayerWrittenBytes, w.Bytes)
	}
	if rep.CountersUnavailable == "" {
		t.Error("no reason for the missing drive counters")
	}

	rep = runFio(ctx, f, write, fio.Grid{}, logf)
	if !strings.Contains(rep.Refused, "writeToken") || !strings.HasPrefix(rep.Found, "data") || len(rep.Results) != 0 {
		t.Errorf("a device with data, writing, no token: %+v", rep)
	}
	rep = runFio(ctx, f, []fio.Profile{fio.ProfileSeqRead128KQD32}, fio.Grid{}, logf)
	if rep.Refused != "" || len(rep.Results) != 1 || rep.Results[0].Write != nil {
		t.Errorf("read-only on a device with data: %+v", rep)
	}
	withToken := f
	withToken.writeToken = "2026-11-27"
	if rep = runFio(ctx, withToken, write, fio.Grid{}, logf); rep.Refused != "" || len(rep.Results) != 2 {
		t.Errorf("with a token: %+v", rep)
	}

	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("needs mkfs.ext4 for the mounted case")
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "/dev/"+dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "/dev/"+dev, mnt).CombinedOutput(); err != nil {
		t.Skipf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	if err := os.WriteFile(filepath.Join(mnt, "keep"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep = runFio(ctx, withToken, write, fio.Grid{}, logf)
	if !strings.Contains(rep.Refused, "busy") || len(rep.Results) != 0 || rep.BlockLayerWrittenBytes != nil {
		t.Errorf("a mounted device, even with a token: %+v", rep)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "keep")); err != nil || string(b) != "data" {
		t.Errorf("the file system's file: %q %v", b, err)
	}
}

func TestFioCommandUsage(t *testing.T) {
	var out, errb strings.Builder
	if rc := fioCmd(context.Background(), []string{"--device", "../sda", "--profiles", "randread-4k"}, &out, &errb); rc != 2 {
		t.Errorf("a path as device: exit %d, %s", rc, errb.String())
	}
	if rc := fioCmd(context.Background(), []string{"--device", "sda", "--grid-bs", "4k"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "--grid-bs") {
		t.Errorf("a block size with a unit: exit %d, %s", rc, errb.String())
	}
}
