package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

const (
	uuid    = "1b0f5c4e-2a6d-4c1e-9a3b-5f7d2e8c9a10"
	freshDf = "Free: 3904 MB\nUsed: 0 MB\nReclaimable: 0 MB\nSpace amplification: 0%\n"
	usedDf  = "Free: 1024 MB\nUsed: 2500 MB\nReclaimable: 412 MB\nSpace amplification: 16%\n"
)

// zenfsFake answers like the zenfs utility on a host whose nullb0 holds
// ZenFS when listed is true.
func zenfsFake(listed bool, df string) *fakeRunner {
	lsuuid := ""
	if listed {
		lsuuid = uuid + "\tnullb0\n"
	}
	return &fakeRunner{replies: map[string]reply{
		"ls-uuid": {stdout: lsuuid},
		"mkfs":    {stdout: "ZenFS file system created. Free space: 3904 MB\n"},
		"df":      {stdout: df},
	}}
}

func formatArgs(aux string, extra ...string) []string {
	return append([]string{"format", "--device", "nullb0", "--sys-block", sysBlock, "--aux-path", aux,
		"--zenfs", "/opt/zenfs"}, extra...)
}

func TestFormatEmptyDevice(t *testing.T) {
	aux := filepath.Join(t.TempDir(), "aux")
	r := zenfsFake(false, freshDf)
	// After mkfs, ls-uuid finds the new file system.
	r.before = map[string]func(){"mkfs": func() { r.replies["ls-uuid"] = reply{stdout: uuid + "\tnullb0\n"} }}
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
	z := res.report.ZenFS
	if z == nil || !z.Present || z.UUID != uuid || z.Action != dbinit.ActionFormat || *z.FreeBytes != 3904<<20 || *z.UsedBytes != 0 {
		t.Errorf("zenfs state %+v", z)
	}
	if devs.opened != 1 || devs.closed != 1 {
		t.Errorf("device opened %d, closed %d times", devs.opened, devs.closed)
	}
	if tok, _ := dbinit.ReadToken(aux); tok != "" {
		t.Errorf("a token %q was recorded though none was given", tok)
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
			r := zenfsFake(true, usedDf)
			res := runZnsdb(t, r, nullb0().write(0, superblockRecord()), env, formatArgs(aux)...)
			if res.code != exitOK {
				t.Fatalf("exit %d, stderr %s", res.code, res.stderr)
			}
			if got, want := r.argv(), "/opt/zenfs ls-uuid\n/opt/zenfs df --zbd=nullb0"; got != want {
				t.Errorf("commands:\n%s\nwant:\n%s", got, want)
			}
			z := res.report.ZenFS
			if z.Action != dbinit.ActionKeep || !z.Present || *z.UsedBytes != 2500<<20 || *z.ReclaimableBytes != 412<<20 || *z.SpaceAmplificationPercent != 16 {
				t.Errorf("zenfs state %+v", z)
			}
		})
	}
}

// Either detector alone keeps the file system safe.
func TestZenFSFoundByEitherDetector(t *testing.T) {
	tests := map[string]struct {
		devs   *fakeDevices
		runner *fakeRunner
	}{
		"superblock only, ls-uuid fails": {nullb0().write(0, superblockRecord()), &fakeRunner{replies: map[string]reply{
			"ls-uuid": {stderr: "Failed to enumerate file systems", err: errors.New("exit status 1")},
			"df":      {stdout: usedDf}}}},
		"superblock rolled to zone 2": {nullb0().write(2, superblockRecord()), zenfsFake(false, usedDf)},
		"ls-uuid only":                {nullb0().write(0, []byte("not a superblock")), zenfsFake(true, usedDf)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res := runZnsdb(t, tt.runner, tt.devs, nil, formatArgs(t.TempDir())...)
			if res.code != exitOK || res.report.ZenFS.Action != dbinit.ActionKeep || !res.report.ZenFS.Present {
				t.Fatalf("exit %d, report %+v, stderr %s", res.code, res.report.ZenFS, res.stderr)
			}
			if strings.Contains(tt.runner.argv(), "mkfs") {
				t.Error("mkfs ran")
			}
		})
	}
}

func TestReformatWithNewToken(t *testing.T) {
	aux := t.TempDir()
	if err := dbinit.WriteToken(aux, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(aux, ".rocksdb"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(aux, ".rocksdb", "LOG"), []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("t2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := zenfsFake(true, freshDf)
	var auxAtMkfs []os.DirEntry
	r.before = map[string]func(){"mkfs": func() { auxAtMkfs, _ = os.ReadDir(aux) }}
	// The token file wins over the environment.
	res := runZnsdb(t, r, nullb0().write(0, superblockRecord()), map[string]string{tokenEnv: "ignored"},
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
	if tok, _ := dbinit.ReadToken(aux); tok != "t2" {
		t.Errorf("recorded token %q, want t2", tok)
	}
	if z := res.report.ZenFS; z.Action != dbinit.ActionFormat || !strings.Contains(z.Reason, "existing ZenFS") {
		t.Errorf("zenfs state %+v", z)
	}
}

func TestForeignDataRefused(t *testing.T) {
	devs := nullb0().write(5, []byte("XFSB some other file system"))
	r := zenfsFake(false, freshDf)
	res := runZnsdb(t, r, devs, nil, formatArgs(t.TempDir())...)
	if res.code != exitRefused {
		t.Fatalf("exit %d", res.code)
	}
	if z := res.report.ZenFS; z.Action != dbinit.ActionRefuse || z.Present || !strings.Contains(z.Reason, "reformatToken") {
		t.Errorf("zenfs state %+v", z)
	}
	if r.argv() != "/opt/zenfs ls-uuid" {
		t.Errorf("commands:\n%s", r.argv())
	}
	if !strings.Contains(res.stderr, "format refused: device holds data that is not ZenFS") {
		t.Errorf("stderr %q", res.stderr)
	}
	// With a token the user confirms, and the device is formatted.
	r = zenfsFake(false, freshDf)
	res = runZnsdb(t, r, devs, map[string]string{tokenEnv: "wipe-it"}, formatArgs(t.TempDir())...)
	if res.code != exitOK || !strings.Contains(r.argv(), " --force") {
		t.Errorf("exit %d, commands:\n%s", res.code, r.argv())
	}
}

func TestNeverPolicy(t *testing.T) {
	r := zenfsFake(false, freshDf)
	res := runZnsdb(t, r, nullb0(), nil, formatArgs(t.TempDir(), "--policy", "Never")...)
	if res.code != exitRefused || res.report.ZenFS.Action != dbinit.ActionRefuse ||
		!strings.Contains(res.report.ZenFS.Reason, "formatPolicy is Never") {
		t.Errorf("empty device: exit %d, %+v", res.code, res.report.ZenFS)
	}
	r = zenfsFake(true, usedDf)
	res = runZnsdb(t, r, nullb0().write(0, superblockRecord()), map[string]string{tokenEnv: "new"},
		formatArgs(t.TempDir(), "--policy", "Never")...)
	if res.code != exitOK || res.report.ZenFS.Action != dbinit.ActionKeep || strings.Contains(r.argv(), "mkfs") {
		t.Errorf("ZenFS with a token: exit %d, %+v, commands:\n%s", res.code, res.report.ZenFS, r.argv())
	}
}

func TestMkfsFailure(t *testing.T) {
	aux := t.TempDir()
	r := zenfsFake(false, freshDf)
	r.replies["mkfs"] = reply{stderr: "Failed to open zoned block device: nullb0, error: Invalid argument: " +
		"Current ZBD scheduler is not mq-deadline, set it to mq-deadline.\n", err: errors.New("exit status 1")}
	res := runZnsdb(t, r, nullb0(), map[string]string{tokenEnv: "t1"}, formatArgs(aux)...)
	if res.code != exitRefused {
		t.Fatalf("exit %d", res.code)
	}
	if !strings.Contains(res.report.Error, "zenfs mkfs failed (exit status 1): Failed to open zoned block device") {
		t.Errorf("error %q", res.report.Error)
	}
	if tok, _ := dbinit.ReadToken(aux); tok != "" {
		t.Errorf("token %q recorded after a failed mkfs", tok)
	}
	if strings.Contains(r.argv(), " df ") || strings.HasSuffix(r.argv(), "df --zbd=nullb0") {
		t.Errorf("df ran after a failed mkfs:\n%s", r.argv())
	}
	if z := res.report.ZenFS; z == nil || z.Action != dbinit.ActionFormat || z.Present {
		t.Errorf("zenfs state %+v", z)
	}
}

func TestDfFailure(t *testing.T) {
	r := zenfsFake(true, "")
	r.replies["df"] = reply{stderr: "Failed to mount filesystem, error: Corruption: ZenFS Superblock: Error: Magic missmatch",
		err: errors.New("exit status 1")}
	res := runZnsdb(t, r, nullb0().write(0, superblockRecord()), nil, formatArgs(t.TempDir())...)
	if res.code != exitRefused || !strings.Contains(res.report.Error, "zenfs df failed") || res.report.ZenFS.FreeBytes != nil {
		t.Errorf("exit %d, report %+v", res.code, res.report)
	}
}

func TestFormatStopsAtPreflight(t *testing.T) {
	r := zenfsFake(false, freshDf)
	devs := zonedDevice("nvme0n2", 32, 128<<20)
	res := runZnsdb(t, r, devs, nil, "format", "--device", "nvme0n2", "--sys-block", sysBlock, "--aux-path", "/aux/nvme0n2")
	if res.code != exitRefused || res.report.Problems[0].Code != zbd.CodeWrongScheduler || res.report.ZenFS != nil {
		t.Errorf("exit %d, report %+v", res.code, res.report)
	}
	if len(r.calls) != 0 || devs.opened != 0 {
		t.Errorf("commands ran or device opened: %q, %d", r.calls, devs.opened)
	}
}

func TestFormatProbeReadError(t *testing.T) {
	devs := nullb0()
	devs.readErr = errors.New("input/output error")
	r := zenfsFake(false, freshDf)
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
			r := zenfsFake(false, freshDf)
			res := runZnsdb(t, r, nullb0(), tt.env, tt.args...)
			if res.code != exitRefused || !strings.Contains(res.report.Error, tt.want) {
				t.Errorf("exit %d, error %q, want it to mention %q", res.code, res.report.Error, tt.want)
			}
			if len(r.calls) != 0 {
				t.Errorf("commands ran: %q", r.calls)
			}
		})
	}
}

// A token file that does not exist (an optional key left unset) is no token.
func TestMissingTokenFile(t *testing.T) {
	r := zenfsFake(true, usedDf)
	res := runZnsdb(t, r, nullb0().write(0, superblockRecord()), nil,
		formatArgs(t.TempDir(), "--reformat-token-file", filepath.Join(t.TempDir(), "absent"))...)
	if res.code != exitOK || res.report.ZenFS.Action != dbinit.ActionKeep {
		t.Errorf("exit %d, %+v", res.code, res.report.ZenFS)
	}
}
