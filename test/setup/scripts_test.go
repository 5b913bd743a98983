package setup

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every script the Makefile, CI or another script runs by its path must be executable, or the README's
// commands fail with "Permission denied" on a fresh clone. Sourced libraries (hack/**/lib*.sh) need not be.
func TestScriptsAreExecutable(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-s", "--", "hack", ".ci").Output()
	if err != nil {
		t.Skipf("needs a git checkout: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	checked := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text()) // mode object stage path
		if len(f) != 4 {
			continue
		}
		mode, path := f[0], f[3]
		if strings.Contains(path, "/lib/") || strings.HasSuffix(path, "/lib.sh") || strings.Contains(path, "/testdata/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil || !strings.HasPrefix(string(b), "#!") {
			continue
		}
		checked++
		if mode != "100755" {
			t.Errorf("%s starts with #! but is committed with mode %s: git update-index --chmod=+x %s", path, mode, path)
		}
	}
	if checked < 10 {
		t.Errorf("only %d scripts found under hack/ and .ci/: is this the repository?", checked)
	}
}
