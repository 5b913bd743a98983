//go:build !zns_guest

package qemuguest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/test/qemu"
)

// TestConventionalGuest runs conventional_test.go's in-guest tests: storage.device's preflight and format Job,
// with a precondition, on a conventional null_blk device. They need mkfs.ext4, blkid and fio beside znsdb, which
// the default guest of TestGuestSuite lacks (busybox has neither the real blkid nor mkfs.ext4), so the guest
// boots with the host's own userland (hack/qemu/run.sh --userland: the host's programs on the guest's kernel),
// and the tests build only with the zns_userland tag. TestConventionalXFS runs when the host has mkfs.xfs.
// ZNS_QEMU_GUEST_RUN passes a -test.run pattern to the guest binary, as for TestGuestSuite.
func TestConventionalGuest(t *testing.T) {
	guestDir := qemu.Require(t)
	for _, tool := range []string{"mkfs.ext4", "blkid", "fio"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, "the conventional device's format in the QEMU guest runs the host's "+tool+" (Debian packages e2fsprogs, util-linux, fio)")
		}
	}
	root, err := qemu.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	goBin := goTool(t)
	share := t.TempDir()
	start := time.Now()
	buildStatic(t, goBin, root, "test", "-c", "-tags", "zns_guest,zns_userland", "-o", share+"/qemuguest-userland.test", "./operator/internal/qemuguest")
	buildStatic(t, goBin, root, "build", "-o", share+"/znsdb", "./operator/cmd/znsdb")
	t.Logf("built the guest's binaries in %.1fs", time.Since(start).Seconds())

	run := "^TestConventional"
	if r := os.Getenv("ZNS_QEMU_GUEST_RUN"); r != "" {
		run = strings.ReplaceAll(r, "'", "")
	}
	guestArgs := "-test.v=test2json -test.timeout=15m -test.run '" + run + "'"
	_, xfsErr := exec.LookPath("mkfs.xfs")
	if xfsErr != nil {
		guestArgs += " -test.skip '^TestConventionalXFS$'"
	}
	captureDir := filepath.Join(share, "capture")
	argv, err := qemu.Args(guestDir, qemu.Options{
		Share:   share,
		NullBlk: conventionalNullBlk,
		Env:     []string{envCapture + "=" + captureDir, envZnsdb + "=" + share + "/znsdb"},
		// the memory-backed device keeps what is written to it in the guest's RAM
		MemoryMiB: 2048,
		Timeout:   20 * time.Minute,
		Userland:  true,
	}, "sh", "-c", "./qemuguest-userland.test "+guestArgs+"; echo guest-suite-exit=$?")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Dir = share
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	start = time.Now()
	runErr := c.Run()
	t.Logf("hack/qemu/run.sh --userland took %s:\n%s", time.Since(start).Round(time.Second), strings.TrimSpace(stderr.String()))
	out := stdout.String()
	m := regexp.MustCompile(`\nguest-suite-exit=(\d+)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the guest test binary did not finish (%v):\n%s", runErr, out)
	}
	failed := mirror(t, goBin, out)
	if m[1] != "0" && !failed {
		t.Errorf("the guest test binary exited %s without a failed test:\n%s", m[1], out)
	}
	if xfsErr != nil {
		t.Run("TestConventionalXFS", func(t *testing.T) {
			skipOrFail(t, "mkfs.xfs is not installed on the host, whose userland the guest runs (Debian package xfsprogs)")
		})
	}
	if os.Getenv(updateEnv) == "1" && !failed && os.Getenv("ZNS_QEMU_GUEST_RUN") == "" {
		files, _ := filepath.Glob(filepath.Join(captureDir, "fio", "precondition-*.json"))
		if len(files) != 2 {
			t.Fatalf("fio captures %v, want the pass and the round", files)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "operator/internal/fio/testdata", filepath.Base(f)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s=1: fio testdata updated with %v", updateEnv, files)
	}
}

// skipOrFail skips with why, or fails when the QEMU tier is required (ZNS_REQUIRE_QEMU=1).
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv(qemu.RequireEnv) == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// buildStatic runs go with args in root for the guest: static binaries, whatever the guest's libc; -race needs
// cgo, so it cannot come along from GOFLAGS.
func buildStatic(t *testing.T, goBin, root string, args ...string) {
	t.Helper()
	c := exec.Command(goBin, args...)
	c.Dir = root
	var flags []string
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if f != "-race" {
			flags = append(flags, f)
		}
	}
	c.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS="+strings.Join(flags, " "))
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
