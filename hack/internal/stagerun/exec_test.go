package stagerun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunGivesBashsStatus: what a command's end looks like to the runner is what bash's $? was.
func TestRunGivesBashsStatus(t *testing.T) {
	r, _, errs := testRunner(t)
	notExecutable := filepath.Join(r.Root, "hack", "plain.sh")
	if err := os.MkdirAll(filepath.Dir(notExecutable), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"sh", []string{"-c", "exit 0"}, 0},
		{"sh", []string{"-c", "exit 3"}, 3},
		{"sh", []string{"-c", "kill -TERM $$"}, 143},
		{"hack/no-such-script.sh", nil, 127}, // a relative name with a slash is the repository's
		{"hack/plain.sh", nil, 126},
	} {
		if got := r.Run(r.Cmd(nil, tc.name, tc.args...)); got != tc.want {
			t.Errorf("%s %v: status %d, want %d", tc.name, tc.args, got, tc.want)
		}
	}
	if !strings.Contains(errs.String(), "test: "+filepath.Join(r.Root, "hack/no-such-script.sh")+": ") {
		t.Errorf("a command that does not start says why: %q", errs.String())
	}
}

// TestCmdAndOutput: the command runs in the repository with the run's environment and extra over it; Output
// is $(...), its trailing newlines taken off.
func TestCmdAndOutput(t *testing.T) {
	r, _, _ := testRunner(t)
	r.Env = NewEnv([]string{"PATH=" + os.Getenv("PATH"), "A=from the run"})
	r.Env.Set("B", "exported")
	out, rc := r.Output(r.Cmd([]string{"C=extra"}, "sh", "-c", `printf '%s|%s|%s|%s\n\n' "$A" "$B" "$C" "$PWD"`))
	if want := "from the run|exported|extra|" + r.Root; rc != 0 || out != want {
		t.Errorf("got %q, %d; want %q", out, rc, want)
	}
}

// TestDockerUsable: docker must be there and answer `docker info`.
func TestDockerUsable(t *testing.T) {
	r, _, _ := testRunner(t)
	docker := filepath.Join(r.Root, "docker")
	if err := os.WriteFile(docker, []byte("#!/bin/sh\n[ \"$1\" = info ] && exit \"$DOCKER_INFO\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Env.Set("PATH", r.Root+":/usr/bin:/bin")
	t.Setenv("PATH", r.Root+":/usr/bin:/bin") // exec finds the command by the test process's PATH
	for rc, want := range map[string]bool{"0": true, "1": false} {
		r.Env.Set("DOCKER_INFO", rc)
		if got := r.DockerUsable(); got != want {
			t.Errorf("docker info exits %s: usable %v", rc, got)
		}
	}
	r.LookPath = func(string) (string, error) { return "", os.ErrNotExist }
	r.Env.Set("DOCKER_INFO", "0")
	if r.DockerUsable() {
		t.Error("usable without a docker command")
	}
}
