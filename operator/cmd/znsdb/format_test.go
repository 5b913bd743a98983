package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs/zenfscapture"
)

// The zenfs the fakes stand for is the real one: its replies are the
// captures of operator/internal/zenfs/testdata/real.
const uuid = "c59e1291-cd99-49cb-bbf6-f3555b283912" // nullb0 in capture/, and in realSuperblock

func capture(t *testing.T, rel string) string { return zenfscapture.Read(t, rel) }

// replay returns one captured zenfs run: what it printed and how it ended.
func replay(t *testing.T, stem string) reply {
	t.Helper()
	r := reply{stdout: capture(t, stem+".stdout"), stderr: capture(t, stem+".stderr")}
	switch rc := strings.TrimSpace(capture(t, stem+".rc")); rc {
	case "0":
	case "134":
		r.err = errors.New("signal: aborted")
	default:
		r.err = errors.New("exit status " + rc)
	}
	return r
}

func freshDf(t *testing.T) reply { return replay(t, "capture/nullb0/09-df-empty") }
func usedDf(t *testing.T) reply  { return replay(t, "wa/nullb0-df") } // 124 MiB used, 35 reclaimable, 28%

// zenfsFake answers like the real zenfs on a host whose nullb0 holds ZenFS
// when listed is true.
func zenfsFake(t *testing.T, listed bool, df reply) *fakeRunner {
	t.Helper()
	lsuuid := replay(t, "capture/nullb0/03b-ls-uuid-unformatted") // empty listing
	if listed {
		lsuuid = replay(t, "capture/nullb0/10-ls-uuid")
	}
	return &fakeRunner{replies: map[string]reply{
		"ls-uuid": lsuuid,
		"mkfs":    replay(t, "capture/nullb0/04-mkfs-fresh"),
		"df":      df,
	}}
}

func formatArgs(aux string, extra ...string) []string {
	return append([]string{"format", "--device", "nullb0", "--sys-block", sysBlock, "--aux-path", aux,
		"--zenfs", "/opt/zenfs"}, extra...)
}

func TestFormatEmptyDevice(t *testing.T) {
	aux := filepath.Join(t.TempDir(), "aux")
	r := zenfsFake(t, false, freshDf(t))
	// After mkfs, ls-uuid finds the new file system.
	r.before = map[string]func(){"mkfs": func() { r.replies["ls-uuid"] = replay(t, "capture/nullb0/10-ls-uuid") }}
	devs := nullb0()
	res := runZnsdb(t, r, devs, nil, formatArgs(aux)...)
	if res.code != exitOK {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	want := strings.Join([]string{
		"/opt/zenfs ls-uuid",
		"/opt/zenfs mkfs --zbd=nullb0 --aux_path=" + aux + " --finish_threshold=10",
		"/opt/zenfs ls-uuid",
		"/opt/zenfs df --zbd=nullb0",
	}, "\n")
	if got := r.argv(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
	z := res.report.Filesystem
	if z == nil || !z.Present() || z.UUID != uuid || z.Action != fsformat.ActionFormat || z.Space == nil || z.Space.FreeBytes != 3904<<20 || z.Space.UsedBytes != 0 {
		t.Errorf("zenfs state %+v", z)
	}
	if devs.opened != 1 || devs.closed != 1 {
		t.Errorf("device opened %d, closed %d times", devs.opened, devs.closed)
	}
	if devs.resets != 0 {
		t.Errorf("an empty device formatted without a token had its zones reset %d times", devs.resets)
	}
	if tok, _ := dbinit.ReadToken(aux); tok != "" {
		t.Errorf("a token %q was recorded though none was given", tok)
	}
	if fi, err := os.Stat(aux); err != nil || !fi.IsDir() {
		t.Errorf("aux dir after the format: %v", err)
	}
}

func TestExistingZenFSKeptWithoutNewToken(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"no token":      nil,
		"applied token": {tokenEnv: "t1"},
	} {
		t.Run(name, func(t *testing.T) {
			aux := t.TempDir()
			if err := dbinit.WriteToken(aux, "t1"); err != nil {
				t.Fatal(err)
			}
			r := zenfsFake(t, true, usedDf(t))
			res := runZnsdb(t, r, nullb0().write(0, realSuperblock(t)), env, formatArgs(aux)...)
			if res.code != exitOK {
				t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
			}
			if got, want := r.argv(), "/opt/zenfs ls-uuid\n/opt/zenfs df --zbd=nullb0"; got != want {
				t.Errorf("commands:\n%s\nwant:\n%s", got, want)
			}
			z := res.report.Filesystem
			if z.Action != fsformat.ActionKeep || !z.Present() || z.UUID != uuid || z.Space == nil || z.Space.UsedBytes != 124<<20 ||
				z.Space.ReclaimableBytes != 35<<20 || z.Space.SpaceAmplificationPercent != 28 {
				t.Errorf("zenfs state %+v", z)
			}
		})
	}
}

// Either detector alone keeps the file system safe.
func TestZenFSFoundByEitherDetector(t *testing.T) {
	populated := zenfscapture.Hexdump(t, "capture/nullb0/populated-metazone1.first4k.hex.txt")
	tests := map[string]struct {
		devs   *fakeDevices
		runner *fakeRunner
	}{
		"superblock only, ls-uuid fails": {nullb0().write(0, realSuperblock(t)), &fakeRunner{replies: map[string]reply{
			"ls-uuid": {stderr: "Failed to enumerate file systems", err: errors.New("exit status 1")},
			"df":      usedDf(t)}}},
		"superblock rolled to zone 1": {nullb0().write(1, populated), zenfsFake(t, false, usedDf(t))},
		// The reader sees no superblock (its meta zones empty, data further on); ls-uuid lists the device.
		// (Bytes other than a superblock in a meta zone are a refusal before zenfs runs: format_garbage_test.go.)
		"ls-uuid only": {nullb0().write(5, []byte("an SST")), zenfsFake(t, true, usedDf(t))},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res := runZnsdb(t, tt.runner, tt.devs, nil, formatArgs(t.TempDir())...)
			if res.code != exitOK || res.report.Filesystem.Action != fsformat.ActionKeep || !res.report.Filesystem.Present() {
				t.Fatalf("exit %d, report %+v, stderr %s", res.code, res.report.Filesystem, res.stderr)
			}
			if res.report.Filesystem.UUID != uuid {
				t.Errorf("UUID %q, want %s", res.report.Filesystem.UUID, uuid)
			}
			if strings.Contains(tt.runner.argv(), "mkfs") || tt.devs.resets != 0 {
				t.Error("mkfs ran or zones were reset")
			}
		})
	}
}

// One device whose data makes zenfs abort stops ls-uuid for the whole host
// (followup/B-garbage/02-ls-uuid: exit 134, nothing listed). The database
// on a healthy device still finds its UUID, from its own superblock.
func TestLsUUIDAbortFallsBackToSuperblock(t *testing.T) {
	r := zenfsFake(t, true, usedDf(t))
	r.replies["ls-uuid"] = replay(t, "followup/B-garbage/02-ls-uuid")
	res := runZnsdb(t, r, nullb0().write(0, realSuperblock(t)), nil, formatArgs(t.TempDir())...)
	if res.code != exitOK {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	if z := res.report.Filesystem; z.UUID != uuid || z.Action != fsformat.ActionKeep || !z.Present() {
		t.Errorf("zenfs state %+v, want the superblock's UUID %s", z, uuid)
	}
	if !strings.Contains(res.stderr, "zenfs ls-uuid failed") || !strings.Contains(res.stderr, "std::bad_alloc") {
		t.Errorf("stderr does not say ls-uuid aborted: %q", res.stderr)
	}
}

// After a format whose ls-uuid aborts (another device's data), the UUID is
// read from the superblock mkfs just wrote.
func TestFormatUUIDFromNewSuperblock(t *testing.T) {
	r := zenfsFake(t, false, freshDf(t))
	r.replies["ls-uuid"] = replay(t, "followup/B-garbage/02-ls-uuid")
	devs := nullb0()
	r.before = map[string]func(){"mkfs": func() { devs.write(0, realSuperblock(t)) }}
	res := runZnsdb(t, r, devs, nil, formatArgs(t.TempDir())...)
	if res.code != exitOK || res.report.Filesystem.UUID != uuid || res.report.Filesystem.Action != fsformat.ActionFormat {
		t.Errorf("exit %d, zenfs %+v, stderr %s", res.code, res.report.Filesystem, res.stderr)
	}
}

func TestReformatWithNewToken(t *testing.T) {
	aux, _ := auxWithOldFS(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("t2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := zenfsFake(t, true, freshDf(t))
	devs := nullb0().write(0, realSuperblock(t)).write(5, []byte("an SST"))
	var auxAtMkfs []os.DirEntry
	var emptyAtMkfs bool
	r.before = map[string]func(){"mkfs": func() {
		auxAtMkfs, _ = os.ReadDir(aux)
		emptyAtMkfs = zbd.IsEmpty(devs.zones)
	}}
	// The token file wins over the environment.
	res := runZnsdb(t, r, devs, map[string]string{tokenEnv: "ignored"},
		formatArgs(aux, "--reformat-token-file", tokenFile, "--finish-threshold", "0")...)
	if res.code != exitOK {
		t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
	}
	if !strings.Contains(r.argv(), "/opt/zenfs mkfs --zbd=nullb0 --aux_path="+aux+" --finish_threshold=0 --force\n") {
		t.Errorf("commands:\n%s", r.argv())
	}
	if len(auxAtMkfs) != 0 {
		t.Errorf("aux dir held %v when mkfs ran; zenfs mkfs needs it empty", auxAtMkfs)
	}
	// The confirmed reformat reset the written zones first.
	if devs.resets != 1 || devs.zonesReset != 2 || !emptyAtMkfs {
		t.Errorf("resets %d (%d zones), device empty at mkfs %v; want 1 reset of 2 zones before mkfs", devs.resets, devs.zonesReset, emptyAtMkfs)
	}
	if got := dirFiles(t, aux); !cmp.Equal(got, map[string]string{TokenFile: "t2\n"}) {
		t.Errorf("aux dir after the reformat: %v; want only the new token", got)
	}
	if _, err := os.Stat(dbinit.StashPath(aux)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the previous aux dir was not removed: %v", err)
	}
	if z := res.report.Filesystem; z.Action != fsformat.ActionFormat || !strings.Contains(z.Reason, "a ZenFS file system was made with; formatting replaces it") || z.ZonesReset != 2 {
		t.Errorf("zenfs state %+v", z)
	}
}

// Non-ZenFS data: refused and untouched without a token (zenfs mkfs itself
// would format over it); with a token the zones are reset first, then mkfs
// --force runs, which the abort-prone data no longer reaches.
func TestForeignDataRefused(t *testing.T) {
	garbage := bytes.Repeat([]byte{0x3e, 0xad, 0x15, 0x9a, 0xdd, 0x5b, 0x35, 0x80}, 512) // random1's first bytes
	devs := nullb0().write(0, garbage)
	r := zenfsFake(t, false, freshDf(t))
	r.replies["ls-uuid"] = replay(t, "followup/B-garbage/10-random1-ls-uuid") // zenfs aborts on it
	res := runZnsdb(t, r, devs, nil, formatArgs(t.TempDir())...)
	if res.code != exitRefused {
		t.Fatalf("exit %d", res.code)
	}
	if z := res.report.Filesystem; z.Action != fsformat.ActionRefuse || z.Found == "zenfs" || !strings.Contains(z.Reason, "reformatToken") {
		t.Errorf("zenfs state %+v", z)
	}
	// zenfs is not run on it at all (see format_garbage_test.go).
	if r.argv() != "" || devs.resets != 0 || !bytes.Equal(devs.data[0], garbage) {
		t.Errorf("commands:\n%s\nresets %d", r.argv(), devs.resets)
	}
	if !strings.Contains(res.stderr, "format refused: device holds data that is not ZenFS") {
		t.Errorf("stderr %q", res.stderr)
	}
	// With a token the user confirms: zones reset, then mkfs --force.
	r = zenfsFake(t, false, freshDf(t))
	r.replies["mkfs"] = replay(t, "capture/nullb0/07-mkfs-force-same-aux")
	r.before = map[string]func(){"mkfs": func() {
		if devs.resets != 1 || !zbd.IsEmpty(devs.zones) {
			t.Errorf("mkfs ran before the zones were reset (resets %d)", devs.resets)
		}
	}}
	res = runZnsdb(t, r, devs, map[string]string{tokenEnv: "wipe-it"}, formatArgs(t.TempDir())...)
	if res.code != exitOK || !strings.Contains(r.argv(), " --force") || res.report.Filesystem.ZonesReset != 1 {
		t.Errorf("exit %d, zenfs %+v, commands:\n%s", res.code, res.report.Filesystem, r.argv())
	}
}

func TestNeverPolicy(t *testing.T) {
	r := zenfsFake(t, false, freshDf(t))
	res := runZnsdb(t, r, nullb0(), nil, formatArgs(t.TempDir(), "--policy", "Never")...)
	if res.code != exitRefused || res.report.Filesystem.Action != fsformat.ActionRefuse ||
		!strings.Contains(res.report.Filesystem.Reason, "format.policy is Never") {
		t.Errorf("empty device: exit %d, %+v", res.code, res.report.Filesystem)
	}
	r = zenfsFake(t, true, usedDf(t))
	devs := nullb0().write(0, realSuperblock(t))
	res = runZnsdb(t, r, devs, map[string]string{tokenEnv: "new"}, formatArgs(t.TempDir(), "--policy", "Never")...)
	if res.code != exitOK || res.report.Filesystem.Action != fsformat.ActionKeep || strings.Contains(r.argv(), "mkfs") || devs.resets != 0 {
		t.Errorf("ZenFS with a token: exit %d, %+v, commands:\n%s", res.code, res.report.Filesystem, r.argv())
	}
}

func TestDfFailure(t *testing.T) {
	r := zenfsFake(t, true, replay(t, "followup/B-garbage/03-df"))
	res := runZnsdb(t, r, nullb0().write(0, realSuperblock(t)), nil, formatArgs(t.TempDir())...)
	if res.code != exitRefused || !strings.Contains(res.report.Error, "zenfs df failed") || res.report.Filesystem.Space != nil ||
		res.report.ErrorReason != string(zenfs.ReasonAborted) {
		t.Errorf("exit %d, report %+v", res.code, res.report)
	}
}

func TestFormatStopsAtPreflight(t *testing.T) {
	r := zenfsFake(t, false, freshDf(t))
	devs := zonedDevice("nvme0n2", 32, 128<<20)
	res := runZnsdb(t, r, devs, nil, "format", "--device", "nvme0n2", "--sys-block", sysBlock, "--aux-path", "/aux/nvme0n2")
	if res.code != exitRefused || res.report.Problems[0].Code != zbd.CodeWrongScheduler || res.report.Filesystem != nil {
		t.Errorf("exit %d, report %+v", res.code, res.report)
	}
	if len(r.zenfsCalls()) != 0 || devs.opened != 0 {
		t.Errorf("commands ran or device opened: %q, %d", r.calls, devs.opened)
	}
}

func TestFormatProbeReadError(t *testing.T) {
	devs := nullb0()
	devs.readErr = errors.New("input/output error")
	r := zenfsFake(t, false, freshDf(t))
	res := runZnsdb(t, r, devs.write(0, []byte("x")), nil, formatArgs(t.TempDir())...)
	if res.code != exitRefused || !strings.Contains(res.report.Error, "input/output error") || strings.Contains(r.argv(), "mkfs") {
		t.Errorf("exit %d, report %+v, commands %s", res.code, res.report, r.argv())
	}
}

func TestFormatSettings(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"relative aux", formatArgs("aux"), nil, "not absolute"},
		{"unknown policy", formatArgs("/aux", "--policy", "Always"), nil, `format policy "Always"`},
		{"threshold", formatArgs("/aux", "--finish-threshold", "101"), nil, "not a percentage"},
		{"bad token", formatArgs("/aux"), map[string]string{tokenEnv: "two\nlines"}, "control character"},
		{"no aux", []string{"format", "--device", "nullb0"}, nil, "needs --device and --aux-path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := zenfsFake(t, false, freshDf(t))
			res := runZnsdb(t, r, nullb0(), tt.env, tt.args...)
			if res.code != exitRefused || !strings.Contains(res.report.Error, tt.want) {
				t.Errorf("exit %d, error %q, want it to mention %q", res.code, res.report.Error, tt.want)
			}
			if len(r.zenfsCalls()) != 0 {
				t.Errorf("commands ran: %q", r.calls)
			}
		})
	}
}

// A token file that does not exist (an optional key left unset) is no token.
func TestMissingTokenFile(t *testing.T) {
	r := zenfsFake(t, true, usedDf(t))
	res := runZnsdb(t, r, nullb0().write(0, realSuperblock(t)), nil,
		formatArgs(t.TempDir(), "--reformat-token-file", filepath.Join(t.TempDir(), "absent"))...)
	if res.code != exitOK || res.report.Filesystem.Action != fsformat.ActionKeep {
		t.Errorf("exit %d, %+v", res.code, res.report.Filesystem)
	}
}

// ZenFS asks blkid too: a zoned btrfs where ZenFS is wanted is refused by name, and nothing runs zenfs mkfs.
func TestZenFSWantedOverBtrfsRefusedByName(t *testing.T) {
	devs := nullb0().write(0, []byte("btrfs superblock log"))
	r := zenfsFake(t, false, freshDf(t))
	r.replies["-p"] = blkidFound(t, "btrfs", "zns-mysql")
	res := runZnsdb(t, r, devs, nil, formatArgs(t.TempDir())...)
	fs := res.report.Filesystem
	if res.code != exitRefused || fs == nil || fs.Action != fsformat.ActionRefuse || fs.Found != "btrfs" ||
		!strings.Contains(fs.Reason, `device holds btrfs (label "zns-mysql")`) {
		t.Fatalf("exit %d, filesystem %+v", res.code, fs)
	}
	if strings.Contains(r.argv(), "mkfs") || devs.resets != 0 {
		t.Errorf("wrote to the device: resets %d, commands:\n%s", devs.resets, r.argv())
	}
	if !strings.Contains(r.allArgv(), "blkid -p -o export /dev/nullb0") {
		t.Errorf("blkid not asked:\n%s", r.allArgv())
	}
}

// An image without blkid still formats ZenFS, judged by its own readers as before blkid was asked; a file system
// blkid must recognise cannot be judged without it.
func TestZenFSWithoutBlkid(t *testing.T) {
	r := zenfsFake(t, false, freshDf(t))
	r.before = map[string]func(){"mkfs": func() { r.replies["ls-uuid"] = replay(t, "capture/nullb0/10-ls-uuid") }}
	noBlkid := &exec.Error{Name: "blkid", Err: exec.ErrNotFound}
	r.replies["-p"] = reply{err: noBlkid}
	res := runZnsdb(t, r, nullb0(), nil, formatArgs(filepath.Join(t.TempDir(), "aux"))...)
	if res.code != exitOK || res.report.Filesystem.Action != fsformat.ActionFormat || !strings.Contains(res.stderr, "no blkid") {
		t.Errorf("zenfs without blkid: exit %d, %+v, stderr %s", res.code, res.report.Filesystem, res.stderr)
	}
	b := &fakeRunner{replies: map[string]reply{"-p": {err: noBlkid}}}
	res = runZnsdb(t, b, nullb0(), nil, "format", "--device", "nullb0", "--filesystem", "btrfs", "--sys-block", sysBlock)
	if res.code != exitRefused || !strings.Contains(res.report.Error, "executable file not found") || strings.Contains(b.allArgv(), "mkfs") {
		t.Errorf("btrfs without blkid: exit %d, error %q, commands:\n%s", res.code, res.report.Error, b.allArgv())
	}
}
