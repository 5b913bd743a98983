package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// TestPreconditionRealFio runs the real fio on a directory on disk (tmpfs would refuse O_DIRECT), capped to a
// few MiB so that the test writes little, and checks the summary and the clean-up.
func TestPreconditionRealFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("needs fio (apt-get install fio)")
	}
	dir := t.TempDir()
	term := filepath.Join(t.TempDir(), "termination-log")
	var out, errb bytes.Buffer
	code := preconditionCmd(context.Background(), []string{"--dir", dir, "--max-bytes", "8388608", "--passes", "2",
		"--target", "t1", "--termination-log", term}, &out, &errb)
	if strings.Contains(out.String(), "nothing to precondition") {
		t.Skip("the test directory's filesystem has too little free space")
	}
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	raw, err := os.ReadFile(term)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := benchresult.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.OK || sum.Phase != "precondition" || sum.Target != "t1" {
		t.Fatalf("summary %+v", sum)
	}
	// fio wrote the capped 8 MiB file twice.
	if sum.DeviceWrittenBytes != 2*8<<20 {
		t.Errorf("written %d bytes, want two passes of 8 MiB = %d", sum.DeviceWrittenBytes, 2*8<<20)
	}
	if _, err := os.Stat(filepath.Join(dir, preconditionFile)); !os.IsNotExist(err) {
		t.Errorf("the fio file was left behind: %v", err)
	}
}

func TestPreconditionUsage(t *testing.T) {
	var out, errb bytes.Buffer
	for _, args := range [][]string{{}, {"--dir", "/x", "--fill-percent", "100"}, {"--dir", "/x", "--passes", "0"}} {
		if code := preconditionCmd(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
