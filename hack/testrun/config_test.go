package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

func getenv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseConfigDefaults(t *testing.T) {
	c, err := parseConfig(getenv(map[string]string{"HOME": "/home/u"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{CacheRoot: "/home/u/.cache/zns-mysql", GoTestFlags: []string{"-count=1"}, TestTimeout: "45m",
		E2ETimeout: "40m", ZonedE2ETimeout: "75m", BudgetMin: -1, KindCluster: "zns-test", KindNode: "offline",
		KindWorkers: 2, ProgressEvery: 30 * time.Second}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
}

func TestParseConfigReadsEveryKnob(t *testing.T) {
	c, err := parseConfig(getenv(map[string]string{
		"ZNS_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x", "HOME": "/h", "ZNS_E2E": "0", "ZNS_E2E_KUBECONFIG": "/k",
		"ZNS_TEST_KEEP_CLUSTER": "1", "ZNS_REQUIRE_QEMU": "1", "ZNS_REQUIRE_IMAGES": "1", "ZNS_REQUIRE_E2E": "1",
		"GO_TEST_FLAGS": "-count=1  -v\t-race\n-ignored -on -the -second -line", "TEST_TIMEOUT": "1h",
		"E2E_TIMEOUT": "90s", "ZONED_E2E_TIMEOUT": "1h30m", "ZNS_TEST_BUDGET_MIN": "88", "ZLOOP_MODULE": "/z.ko",
		"ZNS_KIND_CLUSTER": "zns-ci", "ZNS_KIND_NODE": "upstream", "ZNS_KIND_WORKERS": "0", "GO_YCSB": "/y", "ZNS_PROGRESS_EVERY": "0.5",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{CacheRoot: "/c", E2EOff: true, E2EKubeconfig: "/k", KeepCluster: true, RequireQEMU: true,
		RequireImages: true, RequireE2E: true, GoTestFlags: []string{"-count=1", "-v", "-race"}, TestTimeout: "1h",
		E2ETimeout: "90s", ZonedE2ETimeout: "1h30m", BudgetMin: 88, ZloopModule: "/z.ko", KindCluster: "zns-ci",
		KindNode: "upstream", KindWorkers: 0, GoYCSB: "/y", ProgressEvery: 500 * time.Millisecond}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	// what is not exactly 0 or 1 is neither, as in bash's [[ ${X:-} == 1 ]]
	c, err = parseConfig(getenv(map[string]string{"HOME": "/h", "ZNS_E2E": "1", "ZNS_REQUIRE_QEMU": "yes",
		"ZNS_TEST_KEEP_CLUSTER": "true", "GO_TEST_FLAGS": "   ", "ZNS_TEST_BUDGET_MIN": "0"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.E2EOff || c.RequireQEMU || c.KeepCluster || len(c.GoTestFlags) != 0 || c.BudgetMin != 0 {
		t.Errorf("got %+v", c)
	}
}

func TestParseConfigWithoutACacheDirectory(t *testing.T) {
	if _, err := parseConfig(getenv(nil)); err == nil || !strings.Contains(err.Error(), "set ZNS_CACHE_DIR, XDG_CACHE_HOME or HOME") {
		t.Errorf("no cache directory: got %v", err)
	}
}

func TestParseConfigRefusesNamingTheKnob(t *testing.T) {
	for _, kv := range [][2]string{
		{"ZONED_E2E_TIMEOUT", "abc"}, {"ZONED_E2E_TIMEOUT", "75"}, {"TEST_TIMEOUT", "45 m"}, {"E2E_TIMEOUT", "-1m"},
		{"ZNS_TEST_BUDGET_MIN", "1.5"}, {"ZNS_TEST_BUDGET_MIN", "-3"}, {"ZNS_TEST_BUDGET_MIN", "88m"},
		{"ZNS_PROGRESS_EVERY", "0"}, {"ZNS_PROGRESS_EVERY", "soon"}, {"ZNS_KIND_WORKERS", "9"}, {"ZNS_KIND_WORKERS", "two"},
	} {
		_, err := parseConfig(getenv(map[string]string{"HOME": "/h", kv[0]: kv[1]}))
		if err == nil || !strings.HasPrefix(err.Error(), kv[0]+"="+kv[1]+": ") {
			t.Errorf("%s=%s: got %v, want a refusal that starts with the knob", kv[0], kv[1], err)
		}
	}
}

func TestParseArgs(t *testing.T) {
	for _, a := range [][]string{{"--help"}, {"-h"}} {
		if err := parseArgs(a); !errors.Is(err, errHelp) {
			t.Errorf("%v: got %v", a, err)
		}
	}
	if err := parseArgs(nil); err != nil {
		t.Errorf("no arguments: %v", err)
	}
	if err := parseArgs([]string{"unit"}); err == nil || !strings.Contains(err.Error(), `"unit"`) {
		t.Errorf("an argument: got %v", err)
	}
}

func TestUsageListsEveryKnob(t *testing.T) {
	for _, wrong := range stagerun.UndescribedKnobs(Config{}, usage) {
		t.Error(wrong)
	}
	// and what the run exports for the tiers
	for _, name := range []string{"ZNS_ZLOOP_MODULE_ERROR", "ZNS_NODE_OWNER", "ZNS_NODE_OWNER_WHAT", "KUBEBUILDER_ASSETS",
		"ZNS_HELM", "ZNS_E2E_TAG", "ZNS_KIND_DEVICES", "ZNS_E2E_CONVENTIONAL_DEVICE"} {
		if !strings.Contains(usage, name) {
			t.Errorf("--help does not name %s", name)
		}
	}
}

func TestStage8Timeout(t *testing.T) {
	c := Config{ZonedE2ETimeout: "75m", BudgetMin: -1}
	if got, note := stage8Timeout(c, 3000); got != "75m" || note != "" {
		t.Errorf("no budget: got %q, %q; want ZONED_E2E_TIMEOUT as given", got, note)
	}
	for _, tc := range []struct {
		zoned   string
		budget  int
		elapsed int
		want    string
	}{
		{"75m", 88, 3000, "2040s"},  // 88*60 - 3000 - 240: what is left less 4 minutes
		{"10m", 88, 3000, "600s"},   // ZONED_E2E_TIMEOUT when it is less
		{"1h30m", 200, 60, "5400s"}, // any duration go test takes
		{"75m", 88, 5200, "60s"},    // at least a minute
		{"75m", 0, 0, "60s"},        // a budget of 0 min too
		{"0s", 88, 3000, "2040s"},   // go test's "no timeout": the budget's
		{"4500s", 88, 4980, "60s"},  // 5280 - 4980 - 240 = 60
		{"2h", 120, 600, "6360s"},   // 7200 - 600 - 240 = 6360, less than 2h
		{"1500ms", 88, 3000, "1s"},  // whole seconds
	} {
		got, note := stage8Timeout(Config{ZonedE2ETimeout: tc.zoned, BudgetMin: tc.budget}, tc.elapsed)
		if got != tc.want {
			t.Errorf("ZONED_E2E_TIMEOUT=%s, budget %d min, %d s gone: got %s, want %s", tc.zoned, tc.budget, tc.elapsed, got, tc.want)
		}
		wantNote := "stage 8's tests get " + tc.want + " (ZONED_E2E_TIMEOUT " + tc.zoned + "; "
		if !strings.HasPrefix(note, wantNote) || !strings.HasSuffix(note, " gone)") {
			t.Errorf("note %q, want it to start with %q", note, wantNote)
		}
	}
	if _, note := stage8Timeout(Config{ZonedE2ETimeout: "75m", BudgetMin: 88}, 3000); note != "stage 8's tests get 2040s (ZONED_E2E_TIMEOUT 75m; 88 min budget, 50m00s gone)" {
		t.Errorf("note: %q", note)
	}
}
