package failreason

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// captured reads a real sysbench output (operator/internal/sysbench/testdata; how each was produced is in the
// README.md there) and builds the text the runner reports for it: its own statement, then sysbench's last 15
// non-blank lines.
func captured(t *testing.T, file string) Failure {
	t.Helper()
	dir := filepath.Join("..", "sysbench", "testdata")
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	f := Failure{Text: "sysbench run failed: exit status 1\n" + strings.Join(lines, "\n")}
	// The exit or signal as recorded when the capture was made.
	for _, idx := range []string{"captures.json", "failures/captures.json"} {
		raw, err := os.ReadFile(filepath.Join(dir, idx))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Captures []struct {
				File   string `json:"file"`
				Signal int    `json:"signal"`
			} `json:"captures"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		for _, c := range doc.Captures {
			if filepath.Join(filepath.Dir(idx), c.File) == filepath.Clean(file) && c.Signal != 0 {
				f.Signal = c.Signal
				f.Text = "sysbench run failed: signal: segmentation fault\n" + strings.Join(lines, "\n")
			}
		}
	}
	return f
}

func TestClassifyRealSysbenchFailures(t *testing.T) {
	for _, tc := range []struct {
		file   string
		reason Reason
		cause  string
	}{
		{"failures/access-denied.txt", AccessDenied, "error 1045: Access denied for user 'bench'@'localhost' (using password: YES)"},
		{"failures/no-privilege.txt", AccessDenied, "MySQL error: 1142 \"UPDATE command denied"},
		{"failures/database-not-granted.txt", AccessDenied, "error 1044: Access denied for user 'bench'@'%' to database 'sbempty'"},
		{"failures/missing-tables.txt", MissingTables, "MySQL error: 1146 \"Table 'sbempty.sbtest1' doesn't exist\""},
		{"failures/server-gone.txt", ConnectionLost, "returned error 2013 (Lost connection to server during query)"},
		{"failures/server-gone-reconnect.txt", Crashed, "killed by signal 11 (segmentation fault); Debian's sysbench 1.0.20"},
		{"fatal-server-down.txt", ConnectionFailed, "error 2002: Can't connect to server on '127.0.0.1' (115)"},
		{"fatal-wrong-db.txt", MissingTables, "error 1049: Unknown database 'nosuchdb'"},
		{"fatal-midrun.txt", MissingTables, "returned error 1146 (Table 'sbdrop.sbtest2' doesn't exist)"},
		{"fatal-prepare-exists.txt", SQLError, "errno = 1050, state = '42S01': Table 'sbtest2' already exists"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			reason, cause := Classify(captured(t, tc.file))
			if reason != tc.reason || !strings.Contains(cause, tc.cause) {
				t.Errorf("got %s: %q\nwant %s: ...%q...", reason, cause, tc.reason, tc.cause)
			}
			if strings.HasPrefix(cause, "FATAL") {
				t.Errorf("cause keeps sysbench's prefix: %q", cause)
			}
		})
	}
}

// TestClassifyRunnerErrors covers what the runner says itself (the Go MySQL driver's and the network's errors
// as the verify step wraps them, the start barrier); the real-server tests of cmd/znsbench produce the same.
func TestClassifyRunnerErrors(t *testing.T) {
	for _, tc := range []struct {
		f      Failure
		reason Reason
	}{
		{Failure{Text: "verify: cannot connect to 127.0.0.1:1 as root: dial tcp 127.0.0.1:1: connect: connection refused"}, ConnectionFailed},
		{Failure{Text: "verify: cannot connect to db.ns.svc:3306 as root: dial tcp: lookup db.ns.svc: no such host"}, ConnectionFailed},
		{Failure{Text: "verify: cannot connect to 127.0.0.1:3306 as root: Error 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)"}, AccessDenied},
		{Failure{Text: "row count mismatch: found 0 rows, expected 2000 (2 tables x 1000): sbtest1: Error 1146 (42S02): Table 'sbtest.sbtest1' doesn't exist; sbtest2: Error 1146 (42S02): Table 'sbtest.sbtest2' doesn't exist"}, MissingTables},
		{Failure{Text: "row count mismatch: found 1763 rows, expected 2000 (2 tables x 1000): sbtest1 has 763 rows"}, RowCountMismatch},
		{Failure{Text: "start barrier 2026-11-21T10:00:00Z missed by 7s (tolerance 5s): refusing to run unsynchronised with the other targets"}, StartMissed},
		{Failure{Text: "sysbench run output unusable: sysbench output has no complete final summary"}, InvalidOutput},
		{Failure{Text: "sysbench run interrupted (context canceled): signal: terminated", Signal: 15, Interrupted: true}, Interrupted},
		{Failure{Text: "cannot run sysbench --version: exec: \"sysbench\": executable file not found in $PATH"}, Other},
	} {
		if reason, cause := Classify(tc.f); reason != tc.reason || cause == "" {
			t.Errorf("%q: got %s (%q), want %s", tc.f.Text, reason, cause, tc.reason)
		}
	}
}

func TestAllIsComplete(t *testing.T) {
	seen := map[Reason]bool{}
	for _, r := range All {
		if seen[r] {
			t.Errorf("%s twice", r)
		}
		seen[r] = true
	}
	for _, r := range byNumber {
		if !seen[r] {
			t.Errorf("%s is not in All", r)
		}
	}
	for _, p := range patterns {
		if !seen[p.reason] {
			t.Errorf("%s is not in All", p.reason)
		}
	}
}
