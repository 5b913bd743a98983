package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// asHelperEnv makes the test binary act as znsdb: the bounded runner
// re-executes its own binary (os.Executable), which in a test is this one.
const asHelperEnv = "ZNSDB_TEST_AS_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(asHelperEnv) == "1" {
		os.Exit(run(context.Background(), os.Args[1:], hostDeps()))
	}
	os.Exit(m.Run())
}

// The helper's own wiring runs zenfs (any program in its place) with
// RLIMIT_DATA at zenfs.MemoryLimitBytes, as the child itself sees it.
func TestZenFSRunsUnderMemoryBound(t *testing.T) {
	t.Setenv(asHelperEnv, "1")
	out, stderr, err := hostDeps().zenfsRunner().Run(context.Background(), "cat", "/proc/self/limits")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Max data size") {
			line = l
		}
	}
	want := strconv.Itoa(zenfs.MemoryLimitBytes)
	if f := strings.Fields(line); len(f) < 5 || f[3] != want || f[4] != want {
		t.Errorf("the child's data limit: %q, want soft and hard %s bytes", line, want)
	}
	// The general runner (blkid, mkfs.btrfs, fio) stays unbounded.
	out, _, err = hostDeps().runner.Run(context.Background(), "cat", "/proc/self/limits")
	if err != nil || strings.Contains(out, want) {
		t.Errorf("the general runner is bounded too (%v):\n%s", err, out)
	}
}

// allocCC allocates and zero-fills argv[1] bytes in one std::string, as
// ZenFS's metadata log reader does with the record length it reads.
const allocCC = `#include <cstdlib>
#include <string>
int main(int argc, char** argv) {
	std::string s;
	s.append(std::strtoull(argv[1], nullptr, 10), '\0');
	return s.empty();
}
`

// A program that allocates past the bound, run through the bounded runner,
// fails inside: std::bad_alloc, SIGABRT, classified as zenfs aborted. The
// same program without the bound succeeds, so the bound is what stopped it.
func TestAllocationPastBoundAbortsClassified(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("needs g++ to build the allocating program (apt-get install g++)")
	}
	dir := t.TempDir()
	src, prog := filepath.Join(dir, "alloc.cc"), filepath.Join(dir, "alloc")
	if err := os.WriteFile(src, []byte(allocCC), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gxx, "-O1", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	t.Setenv(asHelperEnv, "1")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const bound, size = 64 << 20, 256 << 20
	ctx := context.Background()
	if _, stderr, err := (execRunner{}).Run(ctx, prog, strconv.Itoa(size)); err != nil {
		t.Fatalf("without a bound, %d bytes should fit: %v %s", size, err, stderr)
	}
	bounded := boundedRunner{inner: execRunner{}, self: self, dataBytes: bound}
	_, stderr, err := bounded.Run(ctx, prog, strconv.Itoa(size))
	if err == nil {
		t.Fatalf("allocating %d bytes under a %d-byte bound succeeded", size, bound)
	}
	f := zenfs.Classify("nullb1", stderr, err)
	if f.Reason != zenfs.ReasonAborted || !strings.Contains(f.Message, "std::bad_alloc") || !strings.Contains(err.Error(), "signal: aborted") {
		t.Errorf("%v: classified %s: %s", err, f.Reason, f.Message)
	}
	// Under the bound, an allocation that fits still works.
	if _, stderr, err := bounded.Run(ctx, prog, strconv.Itoa(bound/4)); err != nil {
		t.Errorf("%d bytes under a %d-byte bound: %v %s", bound/4, bound, err, stderr)
	}
}

// A zenfs that is not there is reported as missing, as when no bound was set.
func TestBoundedRunnerMissingBinary(t *testing.T) {
	r := boundedRunner{inner: execRunner{}, self: "/nonexistent/znsdb", dataBytes: zenfs.MemoryLimitBytes}
	_, stderr, err := r.Run(context.Background(), "/nonexistent/zenfs", "ls-uuid")
	if f := zenfs.Classify("", stderr, err); f.Reason != zenfs.ReasonNoBinary {
		t.Errorf("%v: %+v", err, f)
	}
}
