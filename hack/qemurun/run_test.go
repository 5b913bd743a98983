package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeQEMU puts a qemu-system-x86_64 on PATH that answers the feature probes and, when booted, does what body
// says with $ctl the run's control directory (what the guest's script would leave there): the runner's own
// behaviour (timeout, statuses, report) without a guest, which the QEMU tier boots for real.
func fakeQEMU(t *testing.T, body string) (guestDir string) {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/bash
case "$*" in
  "-device nvme,help") echo "  ocp=<bool>"; exit 0 ;;
  "-device nvme-subsys,help") echo "  fdp=<bool>"; exit 0 ;;
  "--version") echo "QEMU emulator version 0-fake"; exit 0 ;;
esac
ctl=$(printf '%s\n' "$@" | sed -n 's/^local,path=\(.*\),mount_tag=znsctl,.*/\1/p')
echo "console: booting"
` + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, "qemu-system-x86_64"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	guestDir = filepath.Join(dir, "guest")
	for _, p := range []string{"sysroot/x", "vmlinuz", "initramfs.cpio"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(guestDir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(guestDir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, _ := filepath.Abs("../..")
	t.Setenv("ZNS_REPO_ROOT", root)
	t.Setenv("ZNS_QEMU_DATADIR", "")
	t.Setenv("ZNS_QEMU_VERBOSE", "")
	return guestDir
}

func runFake(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := run(args, &out, &errs)
	return code, out.String(), errs.String()
}

func TestTheCommandsStatusAndOutput(t *testing.T) {
	g := fakeQEMU(t, `echo 1.5 >"$ctl/boot-seconds"; echo 2 >"$ctl/cmd-start"; echo 4.5 >"$ctl/cmd-end"
echo "made nullb0" >"$ctl/setup.log"; echo "the command's output" >"$ctl/output"; echo 7 >"$ctl/status"
test -x "$ctl/bin/nullblk-zoned.sh" && test -x "$ctl/bin/zloop-zoned.sh" || echo 99 >"$ctl/status"`)
	console := filepath.Join(t.TempDir(), "console.log")
	code, out, errs := runFake(t, "--guest-dir", g, "--console", console, "--zns", "default", "--", "true")
	if code != 7 || out != "the command's output\n" {
		t.Errorf("exit %d, stdout %q; want 7 and the command's output", code, out)
	}
	for _, want := range []string{"qemu-run: setup: made nullb0\n", "qemu-run: guest up at 1.5s, command 2.5s, exit 7; wall "} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr %q lacks %q", errs, want)
		}
	}
	if data, _ := os.ReadFile(console); string(data) != "console: booting\n" {
		t.Errorf("--console file: %q", data)
	}
}

func TestWhyTheGuestDidNotRunTheCommand(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"a set-up that failed", `echo "nullblk-zoned.sh create --count 2 failed" >"$ctl/setup-error"; echo "dmesg line" >"$ctl/dmesg"`,
			"qemu-run: the guest did not run the command: nullblk-zoned.sh create --count 2 failed"},
		{"a guest that stopped early", `exit 1`, "qemu-run: the guest exited (QEMU status 1) without running the command to its end"},
	} {
		g := fakeQEMU(t, c.body)
		code, _, errs := runFake(t, "--guest-dir", g, "--", "true")
		if code != exitNoRun || !strings.Contains(errs, c.want) || !strings.Contains(errs, "  | console: booting") {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q and the console's last lines", c.name, code, errs, exitNoRun, c.want)
		}
	}
}

func TestTimeoutStopsQEMU(t *testing.T) {
	g := fakeQEMU(t, `exec sleep 60`)
	start := time.Now()
	code, _, errs := runFake(t, "--guest-dir", g, "--timeout", "1", "--", "true")
	if code != exitTimeout || !strings.Contains(errs, "timed out after 1s (--timeout); the guest was stopped") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if el := time.Since(start); el > killAfter {
		t.Errorf("the run took %s: QEMU did not stop at its TERM", el)
	}
}

func TestRefusedBeforeBooting(t *testing.T) {
	g := fakeQEMU(t, `echo booted >"$ctl/status"`)
	for want, args := range map[string][]string{
		"--disk '/nonexistent.img': /nonexistent.img is not a readable file": {"--guest-dir", g, "--disk", "/nonexistent.img", "--", "true"},
		"--share /nonexistent: not a directory":                              {"--guest-dir", g, "--share", "/nonexistent", "--", "true"},
		"--share /: share a directory, not the host's root":                  {"--guest-dir", g, "--share", "/", "--", "true"},
		"holds no vmlinuz, initramfs.cpio and sysroot/":                      {"--guest-dir", t.TempDir(), "--", "true"},
		"--zns 'size=lots': cannot create a lots image":                      {"--guest-dir", g, "--zns", "size=lots", "--", "true"},
	} {
		code, out, errs := runFake(t, args...)
		if code != exitNoRun || !strings.Contains(errs, want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", args, code, errs, exitNoRun, want)
		}
	}
	// a QEMU without the OCP log: the run says which QEMU and what to do
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "qemu-system-x86_64"), []byte("#!/bin/sh\necho 'QEMU emulator version 7.2.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	code, _, errs := runFake(t, "--guest-dir", g, "--nvme", "default", "--", "true")
	if want := "--nvme with ocp=on: QEMU emulator version 7.2.0 does not emulate the OCP SMART extended log"; code != exitNoRun || !strings.Contains(errs, want) {
		t.Errorf("old QEMU: exit %d, stderr %q, want %q", code, errs, want)
	}
}
