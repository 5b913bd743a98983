//go:build linux

package blocktrace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTree makes a sysfs block directory with nvme0n1 and a directory that
// looks like tracefs as far as the checks before the instance go.
func fakeTree(t *testing.T, blockEvents bool) (sysBlock, tracefs string) {
	t.Helper()
	sysBlock, tracefs = t.TempDir(), t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(sysBlock, "nvme0n1"))
	if err := os.WriteFile(filepath.Join(sysBlock, "nvme0n1", "dev"), []byte("259:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mk(filepath.Join(tracefs, "instances"))
	if blockEvents {
		ev := filepath.Join(tracefs, "events/block/block_rq_complete")
		mk(ev)
		if err := os.WriteFile(filepath.Join(ev, "enable"), []byte("0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return sysBlock, tracefs
}

func TestStartRefusals(t *testing.T) {
	sysBlock, noEvents := fakeTree(t, false)
	_, tracefs := fakeTree(t, true)
	for _, tc := range []struct {
		opts Options
		is   error
		says string
	}{
		{Options{Device: "nvme9n1", SysBlock: sysBlock, Tracefs: tracefs}, ErrNoDevice, "nvme9n1 has no"},
		{Options{Device: "nvme0n1", SysBlock: sysBlock, Tracefs: t.TempDir()}, ErrNoTracefs, "hostPath"},
		{Options{Device: "nvme0n1", SysBlock: sysBlock, Tracefs: noEvents}, ErrNoBlockEvents, "events/block/block_rq_complete): the kernel needs CONFIG_EVENT_TRACING"},
		{Options{Device: "nvme0n1", SysBlock: sysBlock, Tracefs: tracefs, BufferSizeKB: -1}, nil, "buffer size -1 KiB"},
		// a plain directory made where an instance would be has no files:
		// the first write fails and the instance is removed again
		{Options{Device: "nvme0n1", SysBlock: sysBlock, Tracefs: tracefs}, nil, "/buffer_size_kb: no such file or directory"},
	} {
		tr, err := Start(tc.opts, nil)
		if tr != nil || err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Start(%+v) = %v, %v; want %v saying %q", tc.opts, tr, err, tc.is, tc.says)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(tracefs, "instances")); len(left) != 0 {
		t.Errorf("Start left %v in instances/", left)
	}
}
