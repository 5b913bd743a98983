package mysqltest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Help runs mariadbd's `--help --verbose` with args and no option files (as root with --user=root, which it
// otherwise refuses), and skips t unless the server is installed. It starts no server: stdout is the option
// list, then the value each variable would have, so it shows what options mariadbd would apply. err is the
// server's exit error; stderr says why (an unknown or ambiguous option).
func Help(t testing.TB, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	Require(t)
	full := append([]string{"--no-defaults"}, args...)
	return help(full)
}

// HelpWithFile is Help reading the option file cnf (a [mysqld] file such as mycnf.Generate writes), as the
// database's pod does with --defaults-file.
func HelpWithFile(t testing.TB, cnf string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	Require(t)
	path := filepath.Join(t.TempDir(), "my.cnf")
	if err := os.WriteFile(path, []byte(cnf), 0o644); err != nil { // mariadbd ignores world-writable files
		t.Fatal(err)
	}
	return help(append([]string{"--defaults-file=" + path}, args...))
}

func help(args []string) (string, string, error) {
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	args = append(args, "--help", "--verbose")
	var out, errOut bytes.Buffer
	cmd := exec.Command(findBinaries().mariadbd, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}
