//go:build zns_guest

package qemuguest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// The format step against a real zoned device: refusal, busy check, zone reset.

// fakeZenfs is a stand-in for the zenfs utility, which the guest does not
// have: it logs its argv, aborts on ls-uuid as the real zenfs did on the
// host whose device held such data (followup/B-garbage of the captures),
// and succeeds at mkfs and df without touching the device. What is asserted
// for real here is the helper's refusal, busy check and zone reset.
const fakeZenfs = `#!/bin/sh
echo "$*" >> "$0.log"
case "$1" in
ls-uuid) echo "terminate called after throwing an instance of 'std::bad_alloc'" >&2; kill -ABRT $$ ;;
mkfs) echo "ZenFS file system created. Free space: 1000 MB" ;;
df) printf 'Free: 1000 MB\nUsed: 0 MB\nReclaimable: 0 MB\nSpace amplification: 0%%\n' ;;
*) exit 1 ;;
esac
`

// writeDirect writes b at off with O_DIRECT, as dd oflag=direct did in the
// captures: a zoned device takes writes only at its write pointers, which
// page-cache writeback would not respect.
func writeDirect(t *testing.T, dev string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := alignedBuffer(len(b))
	copy(buf, b)
	if _, err := f.WriteAt(buf, off); err != nil {
		t.Fatalf("writing %d bytes at %d of %s: %v", len(b), off, dev, err)
	}
}

func readDirect(t *testing.T, dev string, off int64, n int) []byte {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := alignedBuffer(n)
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf)
}

// alignedBuffer is n bytes aligned to 4 KiB, which O_DIRECT needs.
func alignedBuffer(n int) []byte {
	const align = 4096
	raw := make([]byte, n+align)
	skip := (align - int(uintptr(unsafe.Pointer(&raw[0]))%align)) % align
	return raw[skip : skip+n]
}

func znsdbEnv(t *testing.T, env []string, args ...string) (dbinit.Report, string, int) {
	t.Helper()
	bin := os.Getenv(envZnsdb)
	var o, e bytes.Buffer
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), env...)
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	var r dbinit.Report
	if err := json.Unmarshal(o.Bytes(), &r); err != nil {
		t.Fatalf("znsdb %s: stdout is not a JSON report: %v\n%s", strings.Join(args, " "), err, o.String())
	}
	return r, e.String(), code
}

// TestZnsdbFormatGarbage: a null_blk device whose zone 0 holds random data
// (whose record-length word made the real zenfs abort). Without a reformat
// token znsdb refuses it and its bytes stay; while another process holds
// it exclusively it is reported busy and nothing changes; with a token its
// written zones are reset (BLKRESETZONE) before mkfs --force.
func TestZnsdbFormatGarbage(t *testing.T) {
	// Only its own device: the shared fixture must not exist yet when TestNullblkScript (later in the run)
	// ends with `destroy --all`.
	inGuest(t)
	const name = "nullb10"
	dev := "/dev/" + name
	mustScript(t, "create", "--first", "10", "--size", "1024", "--zone-size", "8", "--memory-backed")
	t.Cleanup(func() { script("destroy", name) })

	garbage := make([]byte, 16*4096)
	if _, err := rand.Read(garbage); err != nil {
		t.Fatal(err)
	}
	garbage[7] |= 0x80 // a length word of 2 GiB or more: what made zenfs abort
	writeDirect(t, dev, 0, garbage)
	zones, err := zbd.ReportZones(dev, 2)
	if err != nil || zones[0].WritePointer != int64(len(garbage)) || zones[1].Cond != zbd.ZoneCondEmpty {
		t.Fatalf("after writing: zones %+v, %v", zones, err)
	}

	dir := t.TempDir()
	zenfsBin := filepath.Join(dir, "zenfs")
	if err := os.WriteFile(zenfsBin, []byte(fakeZenfs), 0o755); err != nil {
		t.Fatal(err)
	}
	aux := filepath.Join(dir, "aux")
	args := []string{"format", "--device", name, "--aux-path", aux, "--zenfs", zenfsBin, "--termination-log", ""}
	calls := func() string {
		b, _ := os.ReadFile(zenfsBin + ".log")
		os.Remove(zenfsBin + ".log")
		return strings.TrimSpace(string(b))
	}
	unchanged := func(when string) {
		t.Helper()
		if got := readDirect(t, dev, 0, len(garbage)); !bytes.Equal(got, garbage) {
			t.Errorf("%s: the device's first %d bytes changed", when, len(garbage))
		}
		if z, err := zbd.ReportZones(dev, 1); err != nil || z[0].WritePointer != int64(len(garbage)) {
			t.Errorf("%s: zone 0 = %+v, %v", when, z, err)
		}
	}

	t.Run("refused without a token", func(t *testing.T) {
		r, stderr, code := znsdbEnv(t, nil, args...)
		if code != 1 || r.Filesystem == nil || r.Filesystem.Action != fsformat.ActionRefuse || r.Filesystem.Found == "zenfs" {
			t.Fatalf("exit %d, report %+v\nstderr: %s", code, r, stderr)
		}
		// Its metadata zone does not start with a ZenFS superblock: zenfs, which would take the length word
		// for a size to allocate, is not run on it at all.
		if got := calls(); got != "" {
			t.Errorf("zenfs ran %q; want nothing on a device with a foreign metadata zone", got)
		}
		if !strings.Contains(r.Filesystem.Reason, "blkzone reset -o 0 -c 1 "+dev) {
			t.Errorf("the refusal does not say which zone to clear: %q", r.Filesystem.Reason)
		}
		unchanged("after the refusal")
	})

	t.Run("busy", func(t *testing.T) {
		holder, err := zbd.OpenExclusive(dev, false)
		if err != nil {
			t.Fatal(err)
		}
		r, stderr, code := znsdbEnv(t, []string{"ZNS_REFORMAT_TOKEN=t1"}, args...)
		holder.Close()
		if code != 1 || codes(r.Problems) != zbd.CodeDeviceBusy {
			t.Fatalf("exit %d, problems %+v\nstderr: %s", code, r.Problems, stderr)
		}
		if got := calls(); got != "" {
			t.Errorf("zenfs ran %q on a busy device", got)
		}
		if tok, _ := dbinit.ReadToken(aux); tok != "" {
			t.Errorf("token %q recorded", tok)
		}
		unchanged("after the busy refusal")
	})

	t.Run("reset with a token", func(t *testing.T) {
		r, stderr, code := znsdbEnv(t, []string{"ZNS_REFORMAT_TOKEN=t1"}, args...)
		if code != 0 || r.Filesystem == nil || r.Filesystem.Action != fsformat.ActionFormat || r.Filesystem.ZonesReset != 1 {
			t.Fatalf("exit %d, report %+v\nstderr: %s", code, r.Filesystem, stderr)
		}
		if got := calls(); !strings.Contains(got, "mkfs --zbd="+name+" --aux_path="+aux+" --finish_threshold=10 --force") {
			t.Errorf("zenfs ran %q", got)
		}
		zones, err := zbd.ReportZones(dev, 0)
		if err != nil || !zbd.IsEmpty(zones) {
			t.Errorf("after the reformat: IsEmpty %v, %v", zbd.IsEmpty(zones), err)
		}
		if got := readDirect(t, dev, 0, len(garbage)); bytes.Equal(got[:4096], garbage[:4096]) {
			t.Error("zone 0 still reads the random data after the reset")
		}
		if tok, _ := dbinit.ReadToken(aux); tok != "t1" {
			t.Errorf("recorded token %q, want t1", tok)
		}
		t.Logf("reset %d zone(s); stderr:\n%s", r.Filesystem.ZonesReset, stderr)
	})
}
