package images

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runScript runs a script of images/ and returns its exit status and output.
func runScript(t *testing.T, script string, args ...string) (int, string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot(t), "images", script), args...).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestPerconaSeries: the Percona image's series argument picks the release and repository (ps-80 with ZenFS,
// ps-84-lts without), and a wrong series or a release of another series fails with the reason, before the build
// reaches the network step that fails on a machine without repo.percona.com.
func TestPerconaSeries(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"8.0", "8.0.44-35", "8.4.11-11"}, 0, "8.0.44-35 ps-80\n"},
		{[]string{"8.4", "8.0.44-35", "8.4.11-11"}, 0, "8.4.11-11 ps-84-lts\n"},
		{[]string{"8.4", "8.0.44-35", "8.4.11-11", ""}, 0, "8.4.11-11 ps-84-lts\n"},
		{[]string{"8.0", "8.0.44-35", "8.4.11-11", "8.0.43-34"}, 0, "8.0.43-34 ps-80\n"},
		{[]string{"8.4", "8.0.44-35", "8.4.11-11", "8.0.43-34"}, 1, "not a Percona Server 8.4 release"},
		{[]string{"8.0", "8.4.11-11", "8.4.11-11"}, 1, "not a Percona Server 8.0 release"},
		{[]string{"8.1", "8.0.44-35", "8.4.11-11"}, 1, "want 8.0 (with ZenFS) or 8.4 (no ZenFS)"},
		{[]string{"8.4", "8.0.44-35", "8.4"}, 1, "not a Percona Server 8.4 release"},
		{[]string{"8.4"}, 2, "usage"},
	} {
		code, out := runScript(t, "percona-series.sh", tc.args...)
		if code != tc.code || (code == 0 && out != tc.out) || (code != 0 && !strings.Contains(out, tc.out)) {
			t.Errorf("percona-series.sh %q: exit %d, output %q; want exit %d with %q", tc.args, code, out, tc.code, tc.out)
		}
	}
}

// TestVerifyMyRocks: the check that fails the 8.4 image's build accepts an installed plugin and a server of the
// series, and refuses a missing plugin or a server of another series.
func TestVerifyMyRocks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plugin := write("ha_rocksdb.so", "x\x00RocksDB\x00", 0o644)
	mysqld84 := write("mysqld84", "#!/bin/sh\necho 'mysqld  Ver 8.4.11-11 for Linux on x86_64 (Percona Server (GPL), Release 11)'\n", 0o755)
	mysqld80 := write("mysqld80", "#!/bin/sh\necho 'mysqld  Ver 8.0.44-35 for Linux on x86_64 (Percona Server (GPL))'\n", 0o755)
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{plugin, mysqld84, "8.4"}, 0, "verify-myrocks: ok: mysqld  Ver 8.4.11-11"},
		{[]string{plugin, mysqld80, "8.4"}, 1, "does not report series 8.4"},
		{[]string{filepath.Join(dir, "none.so"), mysqld84, "8.4"}, 1, "MyRocks is not installed"},
		{[]string{plugin, filepath.Join(dir, "no-mysqld"), "8.4"}, 1, "not found"},
		{[]string{plugin, mysqld84}, 2, "usage"},
	} {
		code, out := runScript(t, "verify-myrocks.sh", tc.args...)
		if code != tc.code || !strings.Contains(out, tc.says) {
			t.Errorf("verify-myrocks.sh %q: exit %d, output %q; want exit %d saying %q", tc.args, code, out, tc.code, tc.says)
		}
	}
}
