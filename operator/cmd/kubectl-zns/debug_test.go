package main

import (
	"bytes"
	"strings"
	"testing"
)

// Arguments are checked before anything connects: one selection at most, in the forms the help names.
func TestDebugArguments(t *testing.T) {
	for _, args := range [][]string{
		{"debug", "tenant1", "--benchmark", "compare"},
		{"debug", "benchmark/compare", "--benchmark", "other"},
		{"debug", "statefulset/tenant1-mysql"},
		{"debug", "a", "b"},
	} {
		var out, errb bytes.Buffer
		root := newRoot(testStreams(&out, &errb), nil)
		root.SetArgs(args)
		if err := root.Execute(); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// README.txt records the command as run, without a token given on the command line.
func TestDebugCommandLineHidesCredentials(t *testing.T) {
	var out, errb bytes.Buffer
	root := newRoot(testStreams(&out, &errb), nil)
	cmd, _, err := root.Find([]string{"debug"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags([]string{"--token=abc123", "-n", "lab", "--tail", "10", "tenant1"}); err != nil {
		t.Fatal(err)
	}
	got := commandLine(cmd)
	if strings.Contains(got, "abc123") || !strings.Contains(got, "--token=<redacted>") ||
		!strings.Contains(got, "--namespace=lab") || !strings.Contains(got, "--tail=10") || !strings.HasSuffix(got, " tenant1") {
		t.Errorf("command line %q", got)
	}
}
