package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

func TestParseConfigDefaults(t *testing.T) {
	c, err := parseConfig(stageruntest.Knobs{"HOME": "/home/u"}.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Zoned: zonedAuto, Namespace: "zns-demo", Seconds: 60, Threads: 4, Tables: 4, TableSize: 20000,
		Workload: "oltp_update_index", Memory: "1Gi", DeviceMiB: 4096, NodeSeconds: 30, NodeTableSize: 2000,
		KindCluster: "zns-mysql", KindNode: "auto", CacheRoot: "/home/u/.cache/zns-mysql", ProgressEvery: 30 * time.Second}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	if c.kindNode() != "zns-mysql-control-plane" {
		t.Errorf("kind node %q", c.kindNode())
	}
}

func TestParseConfigReadsEveryKnob(t *testing.T) {
	c, err := parseConfig(stageruntest.Knobs{
		"DEMO_ZONED": "1", "DEMO_NAMESPACE": "lab-7", "DEMO_SECONDS": "5", "DEMO_THREADS": "16", "DEMO_TABLES": "1",
		"DEMO_TABLE_SIZE": "100", "DEMO_WORKLOAD": "oltp_read_write", "DEMO_MEMORY": "512Mi", "DEMO_DEVICE_MIB": "2048",
		"DEMO_NODE_SECONDS": "10", "DEMO_NODE_TABLE_SIZE": "500", "DEMO_KEEP_ZONED_NODE": "1", "ZNS_KIND_CLUSTER": "k",
		"ZNS_KIND_NODE": "offline", "ZNS_CACHE_DIR": "/c", "HOME": "/h", "ZNS_PROGRESS_EVERY": "0.5",
	}.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Zoned: zonedRequired, Namespace: "lab-7", Seconds: 5, Threads: 16, Tables: 1, TableSize: 100,
		Workload: "oltp_read_write", Memory: "512Mi", DeviceMiB: 2048, NodeSeconds: 10, NodeTableSize: 500,
		KeepZonedNode: true, KindCluster: "k", KindNode: "offline", CacheRoot: "/c", ProgressEvery: 500 * time.Millisecond}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	// as demo.sh's [[ ${DEMO_KEEP_ZONED_NODE:-0} == 1 ]]: anything else is no
	if c, _ := parseConfig(stageruntest.Knobs{"HOME": "/h", "DEMO_KEEP_ZONED_NODE": "yes"}.Getenv); c.KeepZonedNode {
		t.Error("DEMO_KEEP_ZONED_NODE=yes keeps the node")
	}
}

// TestParseConfigRefusesNamingTheKnob: demo.sh's refusals, word for word where it had them, and the knobs it
// left to fail later.
func TestParseConfigRefusesNamingTheKnob(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"DEMO_ZONED", "yes", "DEMO_ZONED must be auto, 0 or 1"},
		{"DEMO_SECONDS", "x", `DEMO_SECONDS must be a positive number, not "x"`},
		{"DEMO_THREADS", "0", `DEMO_THREADS must be a positive number, not "0"`},
		{"DEMO_TABLES", "04", `DEMO_TABLES must be a positive number, not "04"`},
		{"DEMO_TABLE_SIZE", "-1", `DEMO_TABLE_SIZE must be a positive number, not "-1"`},
		{"DEMO_DEVICE_MIB", "4G", `DEMO_DEVICE_MIB must be a positive number, not "4G"`},
		{"DEMO_NODE_SECONDS", "1.5", `DEMO_NODE_SECONDS must be a positive number, not "1.5"`},
		{"DEMO_NODE_TABLE_SIZE", "99999999999999999999", `DEMO_NODE_TABLE_SIZE must be a positive number, not "99999999999999999999"`},
		{"DEMO_NAMESPACE", "Demo", `DEMO_NAMESPACE must be a namespace name (lower-case letters, digits and '-', at most 57 characters: the QEMU node's is NAME-zoned), not "Demo"`},
		{"DEMO_NAMESPACE", strings.Repeat("n", 58), "DEMO_NAMESPACE must be a namespace name"},
		{"DEMO_MEMORY", "1 GiB", `DEMO_MEMORY must be a quantity as Kubernetes writes it (1Gi, 512Mi), not "1 GiB"`},
		{"ZNS_PROGRESS_EVERY", "soon", "ZNS_PROGRESS_EVERY=soon: give the seconds between two progress lines (30)"},
	} {
		_, err := parseConfig(stageruntest.Knobs{"HOME": "/h", tc.name: tc.value}.Getenv)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s=%s: got %v, want %q", tc.name, tc.value, err, tc.want)
		}
	}
	for _, ok := range []string{"1Gi", "1.5Gi", "512M", "1e9", "2048Mi"} {
		if _, err := parseConfig(stageruntest.Knobs{"HOME": "/h", "DEMO_MEMORY": ok}.Getenv); err != nil {
			t.Errorf("DEMO_MEMORY=%s: %v", ok, err)
		}
	}
	if _, err := parseConfig(stageruntest.Knobs{}.Getenv); err == nil || !strings.Contains(err.Error(), "set ZNS_CACHE_DIR, XDG_CACHE_HOME or HOME") {
		t.Errorf("no cache directory: %v", err)
	}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want action
	}{{nil, runDemo}, {[]string{"clean"}, cleanDemo}, {[]string{"--help"}, showHelp}, {[]string{"-h"}, showHelp}} {
		if got, err := parseArgs(tc.args); got != tc.want || err != nil {
			t.Errorf("%v: %v, %v", tc.args, got, err)
		}
	}
	for _, args := range [][]string{{"run"}, {"clean", "now"}} {
		if _, err := parseArgs(args); err != errUsage {
			t.Errorf("%v: %v, want the usage", args, err)
		}
	}
}

func TestUsageListsEveryKnob(t *testing.T) {
	for _, wrong := range stagerun.UndescribedKnobs(Config{}, usage) {
		t.Error(wrong)
	}
	// every default, as --help says it
	for _, d := range []string{"(default zns-demo", "(default 60)", "(default 4)", "(default 20000)", "(default oltp_update_index",
		"(default 1Gi", "(default 4096", "(default 30;", "(default 2000)", "(default zns-mysql)", "auto (default)", "(default 30)",
		"ZNS_KIND_DEVICES", "ZNS_NODE_OWNER", "ZNS_E2E_TIME_SCALE"} {
		if !strings.Contains(usage, d) {
			t.Errorf("--help lacks %q", d)
		}
	}
}
