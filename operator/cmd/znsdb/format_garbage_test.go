package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs/zenfscapture"
)

// recordedGarbage is what was written over nullb1's first meta zone in
// followup/B-garbage: six random blocks (their first 8 bytes recorded, the
// rest zero here; the reader looks at no more than the record header to
// tell) and the crafted block (CRC word 0, length word 0xfffffff0), each
// with how zenfs ls-uuid ended on it.
func recordedGarbage(t *testing.T) map[string][]byte {
	t.Helper()
	blocks := map[string][]byte{}
	for i := 1; i <= 6; i++ {
		b := make([]byte, 4096)
		copy(b, zenfscapture.Od(t, fmt.Sprintf("followup/B-garbage/10-random%d-first8.txt", i)))
		blocks[fmt.Sprintf("followup/B-garbage/10-random%d", i)] = b
	}
	crafted := make([]byte, 4096)
	binary.LittleEndian.PutUint32(crafted[4:8], 0xfffffff0)
	blocks["followup/B-garbage/02"] = crafted
	return blocks
}

// A device whose first meta zone holds bytes that are not a ZenFS
// superblock is not handed to zenfs at all (ls-uuid, df and a mkfs without
// a prior reset all read it, and the real zenfs aborted or ran out of
// memory on such bytes): it is refused as holding unknown data, and the
// refusal says which zone and how to clear it.
func TestGarbageMetaZoneNotHandedToZenFS(t *testing.T) {
	for stem, block := range recordedGarbage(t) {
		t.Run(stem, func(t *testing.T) {
			devs := nullb0().write(0, block)
			r := zenfsFake(t, false, replay(t, "followup/B-garbage/03-df"))
			r.replies["ls-uuid"] = replay(t, stem+"-ls-uuid")
			res := runZnsdb(t, r, devs, nil, formatArgs(t.TempDir())...)
			if res.code != exitRefused || len(r.zenfsCalls()) != 0 || devs.resets != 0 {
				t.Fatalf("exit %d, resets %d, zenfs ran:\n%s", res.code, devs.resets, r.argv())
			}
			z := res.report.Filesystem
			for _, want := range []string{"not ZenFS", "reformatToken", "sector 0", "blkzone reset -o 0 -c 1 /dev/nullb0",
				fmt.Sprintf("%#08x", binary.LittleEndian.Uint32(block[4:8]))} {
				if z == nil || z.Action != fsformat.ActionRefuse || z.Found == "zenfs" || !strings.Contains(z.Reason, want) {
					t.Errorf("zenfs state %+v lacks %q", z, want)
				}
			}
			if !strings.Contains(res.stderr, "zenfs ls-uuid not run on nullb0") {
				t.Errorf("stderr %q", res.stderr)
			}
		})
	}
}

// A live ZenFS whose other meta zone was overwritten is neither kept (its
// mount, zenfs's or MyRocks's, reads the foreign zone too) nor handed to
// zenfs df; with a new token it is reset and formatted, and only then does
// zenfs run.
func TestGarbageBesideLiveZenFSRefused(t *testing.T) {
	devs := nullb0().write(1, zenfscapture.Hexdump(t, "capture/nullb0/populated-metazone1.first4k.hex.txt")).
		write(0, recordedGarbage(t)["followup/B-garbage/10-random1"])
	r := zenfsFake(t, true, usedDf(t))
	res := runZnsdb(t, r, devs, nil, formatArgs(t.TempDir())...)
	z := res.report.Filesystem
	if res.code != exitRefused || len(r.zenfsCalls()) != 0 || z.Action != fsformat.ActionRefuse || z.Found != "zenfs" || z.UUID != uuid ||
		!strings.Contains(z.Reason, "device holds ZenFS, but") || !strings.Contains(z.Reason, "0x80355bdd") {
		t.Fatalf("exit %d, zenfs %+v, commands:\n%s", res.code, z, r.argv())
	}
	r = zenfsFake(t, false, freshDf(t))
	r.before = map[string]func(){"mkfs": func() {
		if !zbd.IsEmpty(devs.zones) {
			t.Error("zenfs mkfs ran before the foreign zone was reset")
		}
	}}
	res = runZnsdb(t, r, devs, map[string]string{tokenEnv: "clear-it"}, formatArgs(t.TempDir())...)
	if res.code != exitOK || res.report.Filesystem.ZonesReset != 2 || !strings.Contains(r.argv(), "mkfs --zbd=nullb0") {
		t.Errorf("exit %d, zenfs %+v, commands:\n%s", res.code, res.report.Filesystem, r.argv())
	}
}

// The recorded busy case: nullb0 held by a running RocksDB on its ZenFS
// (capture/errors/busy-*: zenfs mkfs said "Device or resource busy" while
// ls-uuid still listed c59e1291). The report keeps what a plain read of the
// meta zones finds (the ZenFS and its UUID, with its log rolled into the
// second meta zone as after that RocksDB session) and says the device is
// busy; nothing runs, nothing changes.
func TestBusyReportKeepsZenFS(t *testing.T) {
	zones := zenfscapture.BlkzoneReport(t, "capture/nullb0/25-blkzone-report-populated.stdout")
	devs := &fakeDevices{path: "/dev/nullb0", zones: zones, data: map[int64][]byte{
		zones[1].Start: zenfscapture.Hexdump(t, "capture/nullb0/populated-metazone1.first4k.hex.txt")}}
	devs.openErr = errors.Join(zbd.ErrBusy, errors.New("open /dev/nullb0: device or resource busy"))
	listed := replay(t, "capture/errors/busy-ls-uuid")
	if !strings.Contains(listed.stdout, uuid+"\tnullb0") {
		t.Fatalf("the recorded busy ls-uuid does not list nullb0's ZenFS: %q", listed.stdout)
	}
	r := zenfsFake(t, true, replay(t, "capture/errors/busy-df"))
	r.replies["ls-uuid"] = listed
	aux, want := auxWithOldFS(t)
	res := runZnsdb(t, r, devs, map[string]string{tokenEnv: "t2"}, formatArgs(aux)...)
	if res.code != exitRefused || len(r.zenfsCalls()) != 0 || devs.resets != 0 || devs.shared != 1 {
		t.Fatalf("exit %d, resets %d, shared reads %d, commands:\n%s", res.code, devs.resets, devs.shared, r.argv())
	}
	if len(res.report.Problems) != 1 || res.report.Problems[0].Code != zbd.CodeDeviceBusy {
		t.Errorf("problems %+v, want DeviceBusy", res.report.Problems)
	}
	z := res.report.Filesystem
	if z == nil || z.Found != "zenfs" || z.UUID != uuid || z.Action != "" || !strings.Contains(z.Reason, "busy") ||
		!strings.Contains(z.Reason, "holds ZenFS "+uuid) {
		t.Errorf("zenfs state %+v, want present with UUID %s and the device busy", z, uuid)
	}
	if got := dirFiles(t, aux); !cmp.Equal(got, want) {
		t.Errorf("aux dir changed: %v", got)
	}
	// When even the plain read fails, nothing is claimed either way.
	devs.sharedErr = errors.New("permission denied")
	res = runZnsdb(t, r, devs, nil, formatArgs(aux)...)
	if z := res.report.Filesystem; z == nil || z.Found == "zenfs" || !strings.Contains(z.Reason, "permission denied") {
		t.Errorf("zenfs state %+v", z)
	}
}

// A zenfs the OOM killer took (SIGKILL) is classified in the report, whose
// error says what to do; an ls-uuid killed the same way is named in the log.
func TestKilledZenFSClassifiedInReport(t *testing.T) {
	killErr := exec.Command("sh", "-c", "kill -KILL $$").Run() // a real SIGKILL, as the runner reports it
	if killErr == nil {
		t.Fatal("sh survived SIGKILL")
	}
	r := zenfsFake(t, true, reply{err: killErr})
	r.replies["ls-uuid"] = reply{err: killErr}
	res := runZnsdb(t, r, nullb0().write(0, realSuperblock(t)), nil, formatArgs(t.TempDir())...)
	if res.code != exitRefused || res.report.ErrorReason != string(zenfs.ReasonKilled) {
		t.Fatalf("exit %d, reason %q, error %q", res.code, res.report.ErrorReason, res.report.Error)
	}
	for _, want := range []string{"zenfs df failed", "SIGKILL", "OOM killer", "reformatToken"} {
		if !strings.Contains(res.report.Error, want) {
			t.Errorf("error lacks %q: %q", want, res.report.Error)
		}
	}
	if !strings.Contains(res.stderr, "zenfs ls-uuid failed") || !strings.Contains(res.stderr, "SIGKILL") {
		t.Errorf("stderr %q", res.stderr)
	}
}
