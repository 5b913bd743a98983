package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shellQuote's words reach bash as they were, whatever they hold.
func TestShellQuoteRoundTrip(t *testing.T) {
	words := []string{"", "plain", "a b", "it's", `"$HOME"`, "$(id)", "`id`", "back\\slash", "tab\there", "new\nline", "*", "~", "a=b c", "!x", "#c"}
	script := "printf '%s\\0' " + shellWords(words)
	out, err := exec.Command("bash", "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(words, "|") {
		t.Errorf("bash read %q, want %q (script %s)", got, words, script)
	}
}

// The guest's script is valid bash, sets what its embedded parts read, and runs the command as given.
func TestGuestScript(t *testing.T) {
	c, err := parseArgs([]string{"--share", "/s", "--userland", "--hostfwd", "1:2", "--env", "A=b c", "--nullblk", "--count 2 --zone-size 64",
		"--zns", "default", "--nvme", "default", "--disk", "d", "--", "bash", "-c", `echo "$1 it's"`, "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, lay := qemuArgs(c, Boot{Images: []string{"a", "b"}})
	for _, verbose := range []bool{false, true} {
		script := guestScript(c, lay, "/s/sub dir", verbose)
		f := filepath.Join(t.TempDir(), "guest.sh")
		if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("bash", "-n", f).CombinedOutput(); err != nil {
			t.Fatalf("bash -n: %v\n%s\n%s", err, out, script)
		}
		for _, want := range []string{
			"share=/s n_nvme=2 n_disks=1 workdir='/s/sub dir' userland=1 network=1\n",
			"nvme_names='nvme0n1 nvme1n1' nvme_serials='zns0 conv1'\n",
			"export 'A=b c'\n",
			`nullblk-zoned.sh create --count 2 --zone-size 64 >>"$ctl/setup.log" 2>&1 || fail 'nullblk-zoned.sh create --count 2 --zone-size 64 failed'` + "\n",
			"cd '/s/sub dir' || fail 'cannot cd to /s/sub dir'\n",
			`in_userland bash -c 'echo "$1 it'\''s"' x </dev/null`,
			`echo "$rc" >"$ctl/status"`,
			"modprobe nvme_core multipath=N", // the set-up's part
			"mount --move . /",               // the userland's part
		} {
			if !strings.Contains(script, want) {
				t.Errorf("verbose %v: the script lacks %q", verbose, want)
			}
		}
		if tee := strings.Contains(script, `| tee -a "$ctl/output" >/dev/console`); tee != verbose {
			t.Errorf("verbose %v: the command's output to the console too: %v", verbose, tee)
		}
	}
}

func TestWorkdir(t *testing.T) {
	for _, c := range []struct{ share, cwd, want string }{
		{"", "/x", "/root"}, {"/s", "/s", "/s"}, {"/s", "/s/a/b", "/s/a/b"}, {"/s", "/sx", "/s"}, {"/s", "/", "/s"},
	} {
		if got := workdir(c.share, c.cwd); got != c.want {
			t.Errorf("workdir(%q, %q) = %q, want %q", c.share, c.cwd, got, c.want)
		}
	}
}
