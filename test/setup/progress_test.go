package setup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bashWithProgress runs script after sourcing hack/lib/progress.sh, with a progress line every `every`.
func bashWithProgress(t *testing.T, every string, script string) (string, error) {
	t.Helper()
	lib := filepath.Join(repoRoot(t), "hack", "lib", "progress.sh")
	cmd := exec.Command("bash", "-c", "set -euo pipefail; TOOL_NAME=t; source "+lib+"\n"+script)
	cmd.Env = append(os.Environ(), "ZNS_PROGRESS_EVERY="+every)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestHeartbeatSaysALongStepStillRuns(t *testing.T) {
	out, err := bashWithProgress(t, "1", `heartbeat --log /dev/null "kubernetes binaries" "cold ~13 min" sleep 3.5; echo rc=$?`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := strings.Count(out, "t: kubernetes binaries: still running, 0m0"); n < 2 {
		t.Errorf("%d progress lines in 3.5 s at one a second, want at least 2:\n%s", n, out)
	}
	if !strings.Contains(out, "elapsed (cold ~13 min)") || !strings.Contains(out, "rc=0") {
		t.Errorf("output:\n%s", out)
	}
}

func TestHeartbeatShowsTheLogsLastLine(t *testing.T) {
	out, err := bashWithProgress(t, "1", `log=$(mktemp); (echo "Step 3/7 : RUN apt-install.sh mariadb-server" >"$log"; sleep 2.5) &
heartbeat --log "$log" "image mariadb" "" wait $!; rm -f "$log"`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "last: Step 3/7 : RUN apt-install.sh mariadb-server") {
		t.Errorf("the progress line should end with the log's last line:\n%s", out)
	}
}

func TestHeartbeatKeepsTheStatusAndDoesNotLinger(t *testing.T) {
	start := time.Now()
	out, err := bashWithProgress(t, "20", `rc=0; heartbeat failing "" sh -c 'exit 7' || rc=$?; echo rc=$rc`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "rc=7") {
		t.Errorf("the command's status is lost:\n%s", out)
	}
	if strings.Contains(out, "still running") {
		t.Errorf("a progress line for a command that ended at once:\n%s", out)
	}
	// The ticker sleeps 20 s between lines; heartbeat must not wait for that sleep to end.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("heartbeat returned after %v: it waited for its ticker", d)
	}
}

func TestGoBuildProgressCountsAndPassesErrorsOn(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module example.com/p\n\ngo 1.26\n",
		"good/a.go":   "package good\n\nfunc A() int { return 1 }\n",
		"cmd/ok/m.go": "package main\n\nimport \"example.com/p/good\"\n\nfunc main() { _ = good.A() }\n",
		"bad/b.go":    "package bad\n\nfunc B() int { return undefinedName }\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gocache := "GOCACHE=" + t.TempDir() // cold: every package is compiled and counted
	out, err := bashWithProgress(t, "30", gocache+` go_build_progress ok `+dir+` -o `+dir+`/ok.bin -- ./cmd/ok`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "t: ok: go build of 1 package(s), ") || !strings.Contains(out, "t: ok: compiled ") {
		t.Errorf("output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok.bin")); err != nil {
		t.Errorf("nothing built: %v", err)
	}
	out, err = bashWithProgress(t, "30", gocache+` go_build_progress bad `+dir+` -o /dev/null -- ./bad`)
	if err == nil {
		t.Fatalf("a failed build passed:\n%s", out)
	}
	if !strings.Contains(out, "undefined: undefinedName") {
		t.Errorf("the compiler's error must reach the user:\n%s", out)
	}
}

func TestUnexpectedFailuresAreExplained(t *testing.T) {
	out, err := bashWithProgress(t, "30", `explain_failures
false || echo handled
if ! false; then echo handled-too; fi
v=$(cat /nonexistent/zns-file)
echo unreachable`)
	if err == nil {
		t.Fatalf("the script went on after a failure:\n%s", out)
	}
	if strings.Contains(out, "unreachable") {
		t.Errorf("set -e did not stop the script:\n%s", out)
	}
	if !strings.Contains(out, "handled") || !strings.Contains(out, "handled-too") {
		t.Errorf("failures the script handles must not stop it:\n%s", out)
	}
	if n := strings.Count(out, "t: ERROR: `v=$(cat /nonexistent/zns-file)` failed (exit 1) at "); n != 1 {
		t.Errorf("want exactly one line naming the failed command, got %d:\n%s", n, out)
	}
	if !strings.Contains(out, "The lines above say why; fix that and run the same command again") {
		t.Errorf("no advice:\n%s", out)
	}
}
