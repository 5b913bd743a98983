package main

import (
	"strings"
	"testing"
)

// The stage log of the cold .ci/run of 2026-11-27 (stage starts as its banners printed them): the table says
// how long each stage took and its share, the last one lasting until the end.
func TestStageTable(t *testing.T) {
	log := "1\tDebian packages (hack/install-deps.sh)\t0\n2\tGo modules (go mod download)\t35\n" +
		"3\tgenerated files, gofmt, go vet, shellcheck, staticcheck\t35\n4\tbuilds\t107\n5\twaiting for the background builds\t591\n" +
		"6\ttests\t931\n7\tend to end on kind\t1500\n8\tzoned end to end\t1800\n"
	var out strings.Builder
	if err := stageTable(&out, strings.NewReader(log), 3600); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "stage timings (60m00s in all):\n") {
		t.Errorf("header:\n%s", out.String())
	}
	for _, w := range []struct{ number, name, took, share string }{
		{"1", "Debian packages (hack/install-deps.sh)", "0m35s", "1%"},
		{"2", "Go modules (go mod download)", "0m00s", "0%"},
		{"3", "generated files, gofmt, go vet, shellcheck, staticcheck", "1m12s", "2%"},
		{"5", "waiting for the background builds", "5m40s", "9%"},
		{"8", "zoned end to end", "30m00s", "50%"},
	} {
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Fields(line)
			if len(f) > 3 && f[0] == w.number && strings.Contains(line, w.name) && f[len(f)-2] == w.took && f[len(f)-1] == w.share {
				found = true
			}
		}
		if !found {
			t.Errorf("no line for stage %s taking %s (%s) in\n%s", w.number, w.took, w.share, out.String())
		}
	}
	if n := strings.Count(out.String(), "\n"); n != 9 {
		t.Errorf("%d lines, want a header and 8 stages:\n%s", n, out.String())
	}
}

// A log that cannot be a run's is refused with what is wrong, rather than printed as if it were one.
func TestStageTableRefusesABrokenLog(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{"", "empty"},
		{"1\tone\n", "tab-separated"},
		{"1\tone\tabc\n", "whole number"},
		{"1\tone\t9999\n", "from 0 to 100"},
		{"1\tone\t50\n2\ttwo\t10\n", "begins before"},
	} {
		err := stageTable(&strings.Builder{}, strings.NewReader(tc.log), 100)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("log %q: error %v, want one saying %q", tc.log, err, tc.want)
		}
	}
}
