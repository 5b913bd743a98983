package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// Formatting never destroys anything when it fails: the device is checked
// free first, and the aux directory of a live ZenFS survives a failed mkfs.

// auxWithOldFS is the aux directory of a ZenFS in use: ZenFS's directory
// tree with LOCK and LOG files, and the token that formatted it.
func auxWithOldFS(t *testing.T) (string, map[string]string) {
	t.Helper()
	aux := t.TempDir()
	files := map[string]string{".rocksdb/LOCK": "", ".rocksdb/LOG": "old log", TokenFile: "t1\n"}
	for name, content := range files {
		p := filepath.Join(aux, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return aux, files
}

const TokenFile = dbinit.TokenFileName

func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A failed mkfs changes nothing outside the device: the previous aux
// directory is back exactly, no token is recorded, df does not run, and the
// failure carries a reason (here from the real zenfs's words).
func TestMkfsFailureKeepsAuxDir(t *testing.T) {
	for _, tc := range []struct {
		capture string
		reason  zenfs.Reason
		mention string
	}{
		// A RocksDB held the device when zenfs mkfs opened it (a race the
		// exclusive-open check cannot close).
		{"capture/errors/busy-mkfs-force", zenfs.ReasonBusy, "busy"},
		{"followup/B-garbage/05-mkfs-force", zenfs.ReasonAborted, "std::bad_alloc"},
		{"capture/errors/scheduler-none-mkfs", zenfs.ReasonWrongScheduler, "echo mq-deadline > /sys/block/nullb0/queue/scheduler"},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			aux, want := auxWithOldFS(t)
			r := zenfsFake(t, true, usedDf(t))
			r.replies["mkfs"] = replay(t, tc.capture)
			res := runZnsdb(t, r, nullb0().write(0, realSuperblock(t)), map[string]string{tokenEnv: "t2"}, formatArgs(aux)...)
			if res.code != exitRefused {
				t.Fatalf("exit %d", res.code)
			}
			if got := dirFiles(t, aux); !cmp.Equal(got, want) {
				t.Errorf("aux dir after the failed mkfs: %v, want %v", got, want)
			}
			if _, err := os.Stat(dbinit.StashPath(aux)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("stash left behind: %v", err)
			}
			if res.report.ErrorReason != string(tc.reason) || !strings.Contains(res.report.Error, "zenfs mkfs failed") ||
				!strings.Contains(res.report.Error, tc.mention) {
				t.Errorf("error %q (reason %q), want reason %s mentioning %q", res.report.Error, res.report.ErrorReason, tc.reason, tc.mention)
			}
			if strings.Contains(r.argv(), "df --zbd") {
				t.Errorf("df ran after a failed mkfs:\n%s", r.argv())
			}
			if z := res.report.Filesystem; z == nil || z.Action != fsformat.ActionFormat {
				t.Errorf("zenfs state %+v", z)
			}
		})
	}
}

// A device held open elsewhere is found busy before anything changes: no
// zenfs command runs, no zone is reset, the aux directory is untouched.
func TestFormatBusyDevice(t *testing.T) {
	aux, want := auxWithOldFS(t)
	devs := nullb0().write(0, realSuperblock(t))
	devs.openErr = errors.Join(zbd.ErrBusy, errors.New("open /dev/nullb0: device or resource busy"))
	r := zenfsFake(t, true, usedDf(t))
	res := runZnsdb(t, r, devs, map[string]string{tokenEnv: "t2"}, formatArgs(aux)...)
	if res.code != exitRefused {
		t.Fatalf("exit %d", res.code)
	}
	if len(res.report.Problems) != 1 || res.report.Problems[0].Code != zbd.CodeDeviceBusy ||
		!strings.Contains(res.report.Problems[0].Message, "/dev/nullb0 is busy") {
		t.Errorf("problems %+v, want one DeviceBusy", res.report.Problems)
	}
	if len(r.zenfsCalls()) != 0 || devs.resets != 0 {
		t.Errorf("commands %q, resets %d; want none", r.argv(), devs.resets)
	}
	if got := dirFiles(t, aux); !cmp.Equal(got, want) {
		t.Errorf("aux dir changed: %v", got)
	}
	if !strings.Contains(res.stderr, "DeviceBusy: /dev/nullb0 is busy") {
		t.Errorf("stderr %q", res.stderr)
	}
}

// The device becomes busy between the check and the reset: still nothing
// changes.
func TestFormatBusyAtReset(t *testing.T) {
	aux, want := auxWithOldFS(t)
	devs := nullb0().write(0, realSuperblock(t))
	devs.resetErr = errors.Join(zbd.ErrBusy, errors.New("device or resource busy"))
	r := zenfsFake(t, true, usedDf(t))
	res := runZnsdb(t, r, devs, map[string]string{tokenEnv: "t2"}, formatArgs(aux)...)
	if res.code != exitRefused || len(res.report.Problems) != 1 || res.report.Problems[0].Code != zbd.CodeDeviceBusy {
		t.Fatalf("exit %d, problems %+v", res.code, res.report.Problems)
	}
	if strings.Contains(r.argv(), "mkfs") || !cmp.Equal(dirFiles(t, aux), want) {
		t.Errorf("commands:\n%s\naux %v", r.argv(), dirFiles(t, aux))
	}
}

// A format interrupted after the aux directory was moved aside is finished
// at the next start: the previous directory (and its recorded token) is back
// before the token is compared.
func TestFormatRecoversInterruptedSwap(t *testing.T) {
	aux, want := auxWithOldFS(t)
	if _, err := dbinit.BeginAuxSwap(aux); err != nil {
		t.Fatal(err)
	}
	// The crash: mkfs never ran. The same token again must not format.
	r := zenfsFake(t, true, usedDf(t))
	res := runZnsdb(t, r, nullb0().write(0, realSuperblock(t)), map[string]string{tokenEnv: "t1"}, formatArgs(aux)...)
	if res.code != exitOK || res.report.Filesystem.Action != fsformat.ActionKeep {
		t.Fatalf("exit %d, zenfs %+v, stderr %s", res.code, res.report.Filesystem, res.stderr)
	}
	if got := dirFiles(t, aux); !cmp.Equal(got, want) {
		t.Errorf("aux dir %v, want %v", got, want)
	}
	if !strings.Contains(res.stderr, "put back the aux directory") {
		t.Errorf("stderr %q", res.stderr)
	}
}

// A kernel that refuses zone management to an unprivileged process: the
// reformat stops before mkfs and says what is needed.
func TestResetPermissionDenied(t *testing.T) {
	aux, want := auxWithOldFS(t)
	devs := nullb0().write(0, realSuperblock(t))
	devs.resetErr = &os.PathError{Op: "ioctl", Path: "/dev/nullb0", Err: os.ErrPermission}
	r := zenfsFake(t, true, usedDf(t))
	res := runZnsdb(t, r, devs, map[string]string{tokenEnv: "t2"}, formatArgs(aux)...)
	if res.code != exitRefused || !strings.Contains(res.report.Error, "kernel 5.14") || strings.Contains(r.argv(), "mkfs") {
		t.Errorf("exit %d, error %q, commands:\n%s", res.code, res.report.Error, r.argv())
	}
	if !cmp.Equal(dirFiles(t, aux), want) {
		t.Errorf("aux dir changed: %v", dirFiles(t, aux))
	}
}
