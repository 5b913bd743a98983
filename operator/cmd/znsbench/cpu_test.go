package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestCPULineRoundTrip(t *testing.T) {
	u := cpuUsage{SelfUser: 12*time.Millisecond + 500*time.Microsecond, SelfSys: 3 * time.Millisecond,
		ChildUser: 41 * time.Second, ChildSys: 7 * time.Second}
	line := cpuLine(u, 60*time.Second)
	if !strings.Contains(line, "self_pct_of_core=0.0258") {
		t.Errorf("share of a core: %s", line)
	}
	rep, err := parseCPULine("sysbench noise\nznsbench: " + line + "\nmore\n")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Usage != u || rep.Wall != 60*time.Second {
		t.Errorf("parsed %+v from %q", rep, line)
	}
	for _, bad := range []string{"", "znsbench: cpu self_user_ms=1", "znsbench: cpu self_user_ms=x self_sys_ms=1 wall_ms=1 children_user_ms=1 children_sys_ms=1"} {
		if _, err := parseCPULine(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestReadCPUCountsOwnWork(t *testing.T) {
	before, err := readCPU()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		x++ // busy: the process's own time must grow
	}
	after, err := readCPU()
	if err != nil {
		t.Fatal(err)
	}
	if after.Self() <= before.Self() || x == 0 {
		t.Errorf("self CPU %v then %v after a busy loop", before.Self(), after.Self())
	}
	if after.Children() < before.Children() {
		t.Errorf("children CPU went down: %v then %v", before.Children(), after.Children())
	}
}

// Every phase ends with the runner's cost on stderr, before the summary (stdout keeps the series last).
func TestRunLogsItsCPU(t *testing.T) {
	r := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-rocksdb-ri1.txt")}, runArgs...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	rep, err := parseCPULine(r.stderr)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Wall <= 0 || rep.Usage.Self() <= 0 {
		t.Errorf("cpu report %+v", rep)
	}
	failed := runFake(t, context.Background(), map[string]string{"FAKE_STDOUT": capture("run-rocksdb-ri1.txt"), "FAKE_EXIT": "1"}, runArgs...)
	if _, err := parseCPULine(failed.stderr); failed.code != 1 || err != nil {
		t.Errorf("failed run: exit %d, cpu line: %v", failed.code, err)
	}
}
