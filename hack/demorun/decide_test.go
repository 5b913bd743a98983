package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestWhichPartsRun: the zoned part here, on the QEMU node, or the conventional part only, with the reasons
// demo.sh printed.
func TestWhichPartsRun(t *testing.T) {
	const noZoned = "nullblk-zoned: creating\nnullblk-zoned: ERROR: this kernel has no zoned block device support (CONFIG_BLK_DEV_ZONED)\nnullblk-zoned: ERROR: second\n"
	const noZonedWhy = "no zoned block devices can be made here: this kernel has no zoned block device support (CONFIG_BLK_DEV_ZONED)"
	for _, tc := range []struct {
		name              string
		mode              zonedMode
		checkRC           int
		checkOut          string
		perconaFailed     bool
		qemu              bool
		zonedWhy, nodeWhy string
		banner            string
		notes             int
		err               string
	}{
		{name: "zoned here", mode: zonedAuto, qemu: true, nodeWhy: "zoned devices are made here"},
		{name: "zoned here, required", mode: zonedRequired, nodeWhy: "zoned devices are made here"},
		{name: "QEMU node", mode: zonedAuto, checkRC: 1, checkOut: noZoned, qemu: true, zonedWhy: noZonedWhy,
			banner: "conventional part first: " + noZonedWhy, notes: 2},
		{name: "QEMU node, required", mode: zonedRequired, checkRC: 1, checkOut: noZoned, qemu: true, zonedWhy: noZonedWhy,
			banner: "conventional part first: " + noZonedWhy, notes: 2},
		{name: "conventional only", mode: zonedAuto, checkRC: 1, checkOut: noZoned, zonedWhy: noZonedWhy,
			nodeWhy: "no qemu-system-x86_64 (Debian package qemu-system-x86)", banner: "conventional part only: " + noZonedWhy, notes: 1},
		{name: "required, neither", mode: zonedRequired, checkRC: 1, checkOut: noZoned, zonedWhy: noZonedWhy,
			nodeWhy: "no qemu-system-x86_64 (Debian package qemu-system-x86)",
			err:     "DEMO_ZONED=1, but " + noZonedWhy + ", and no QEMU node either: no qemu-system-x86_64 (Debian package qemu-system-x86)"},
		{name: "off", mode: zonedOff, qemu: true, zonedWhy: "DEMO_ZONED=0", nodeWhy: "DEMO_ZONED=0",
			banner: "conventional part only: DEMO_ZONED=0", notes: 1},
		{name: "no Percona image", mode: zonedAuto, perconaFailed: true, qemu: true, zonedWhy: perconaWhy,
			banner: "conventional part first: " + perconaWhy, notes: 2},
		{name: "a check that says no ERROR", mode: zonedAuto, checkRC: 2, checkOut: "bash: configfs: oops\n",
			zonedWhy: "no zoned block devices can be made here: hack/nullblk-zoned.sh check exited 2 (above)",
			nodeWhy:  "no qemu-system-x86_64 (Debian package qemu-system-x86)", notes: 1,
			banner: "conventional part only: no zoned block devices can be made here: hack/nullblk-zoned.sh check exited 2 (above)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zw := zonedHereWhy(tc.mode, tc.checkRC, tc.checkOut)
			if zw == "" && tc.perconaFailed {
				zw = perconaWhy
			}
			nw := nodeWhy(tc.mode, zw, tc.qemu)
			if zw != tc.zonedWhy || nw != tc.nodeWhy {
				t.Errorf("why not here %q, on the node %q; want %q, %q", zw, nw, tc.zonedWhy, tc.nodeWhy)
			}
			banner, notes, err := announceParts(tc.mode, zw, nw)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if banner != tc.banner || len(notes) != tc.notes || got != tc.err {
				t.Errorf("got %q, %q, %q; want %q, %d notes, %q", banner, notes, got, tc.banner, tc.notes, tc.err)
			}
		})
	}
}

func TestDevicesFile(t *testing.T) {
	block := func(paths ...string) func(string) bool {
		return func(p string) bool {
			for _, b := range paths {
				if p == b {
					return true
				}
			}
			return false
		}
	}
	const file = "/dev/nullb0 /dev/nullb1\nignored second line\n"
	if got := reusableDevices(file, block("/dev/nullb0", "/dev/nullb1")); !reflect.DeepEqual(got, []string{"/dev/nullb0", "/dev/nullb1"}) {
		t.Errorf("both there: %v", got)
	}
	// one gone: new ones are made (and the cluster's node must see them: demo.sh said so)
	if got := reusableDevices(file, block("/dev/nullb0")); got != nil {
		t.Errorf("one gone: %v", got)
	}
	if got := reusableDevices("\n", block()); len(got) != 0 {
		t.Errorf("an empty file: %v", got)
	}
	if got := cleanDevices(file, block("/dev/nullb1")); !reflect.DeepEqual(got, []string{"nullb1"}) {
		t.Errorf("clean destroys what is left, by kernel name: %v", got)
	}
	if got, err := createdDevices("/dev/nullb2\n/dev/nullb3\n"); err != nil || !reflect.DeepEqual(got, []string{"/dev/nullb2", "/dev/nullb3"}) {
		t.Errorf("created: %v %v", got, err)
	}
	for out, n := range map[string]string{"": "0", "/dev/nullb2\n": "1", "a\n\nb\n": "3"} {
		if _, err := createdDevices(out); err == nil || err.Error() != "hack/nullblk-zoned.sh create made "+n+" devices, want 2" {
			t.Errorf("%q: %v", out, err)
		}
	}
	if devicesFile("/c") != "/c/demo-devices" {
		t.Error(devicesFile("/c"))
	}
}

// TestScenarioArguments: bin/scenario's command lines, as demo.sh built them, for each part.
func TestScenarioArguments(t *testing.T) {
	cfg, err := parseConfig(func(k string) string { return map[string]string{"HOME": "/h"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		p                part
		databases, bench string
		banner           string
	}{
		{"local zoned", kindPart(cfg, []string{"/dev/nullb0", "/dev/nullb1"}),
			"-scenario lab -volume-size 5Gi -node zns-mysql-control-plane -device tenant1=nullb0 -device tenant2=nullb1 -flavor percona -memory 1Gi -only tenant1,tenant2,innodb-baseline -print databases",
			"-scenario lab -volume-size 5Gi -node zns-mysql-control-plane -device tenant1=nullb0 -device tenant2=nullb1 -flavor percona -memory 1Gi -only tenant1,tenant2,innodb-baseline,compare -print benchmarks -benchmark-name demo-1 -workload oltp_update_index -tables 4 -table-size 20000 -threads 4 -seconds 60 -iterations 1 -report-interval 1",
			"Benchmark: oltp_update_index, 4 tables of 20000 rows, 4 threads, 60s, all targets at once"},
		{"conventional", kindPart(cfg, nil),
			"-scenario lab -volume-size 5Gi -flavor mariadb -memory 1Gi -only myrocks-xfs,innodb-baseline -print databases",
			"-scenario lab -volume-size 5Gi -flavor mariadb -memory 1Gi -only myrocks-xfs,innodb-baseline,compare -print benchmarks -benchmark-name demo-1 -workload oltp_update_index -tables 4 -table-size 20000 -threads 4 -seconds 60 -iterations 1 -report-interval 1",
			"Benchmark: oltp_update_index, 4 tables of 20000 rows, 4 threads, 60s, all targets at once"},
		{"QEMU node", nodePart(cfg, 4),
			"-scenario zoned-node -memory 1Gi -reformat-token demo-zns-demo-zoned -time-scale 4 -only myrocks-zoned,innodb-zoned,innodb-small-zones,innodb-zxfs,myrocks-zxfs,innodb-baseline -print databases",
			"-scenario zoned-node -memory 1Gi -reformat-token demo-zns-demo-zoned -time-scale 4 -only myrocks-zoned,innodb-zoned,innodb-small-zones,innodb-zxfs,myrocks-zxfs,innodb-baseline,zoned-vs-conv -print benchmarks -benchmark-name demo-1 -workload oltp_update_index -tables 1 -table-size 2000 -threads 2 -seconds 30 -iterations 1 -report-interval 1",
			"Benchmark: oltp_update_index, 1 tables of 2000 rows, 2 threads, 30s, all targets at once"},
	} {
		if got := strings.Join(tc.p.databasesArgs(), " "); got != tc.databases {
			t.Errorf("%s databases:\n%s\nwant\n%s", tc.name, got, tc.databases)
		}
		if got := strings.Join(tc.p.benchmarkArgs("demo-1"), " "); got != tc.bench {
			t.Errorf("%s Benchmark:\n%s\nwant\n%s", tc.name, got, tc.bench)
		}
		if got := tc.p.benchmarkBanner(); got != tc.banner {
			t.Errorf("%s banner %q", tc.name, got)
		}
	}
	node := nodePart(cfg, 4)
	if node.availableMinutes != 40 || node.benchSlack != 3600 || node.ns != "zns-demo-zoned" || len(node.notes) != 5 {
		t.Errorf("the node's waits and namespace: %+v", node)
	}
	if got := strings.Join(node.waitArgs(), " "); got != "-n zns-demo-zoned wait --for=condition=Available --timeout=40m znsdatabase/myrocks-zoned znsdatabase/innodb-zoned znsdatabase/innodb-small-zones znsdatabase/innodb-zxfs znsdatabase/myrocks-zxfs znsdatabase/innodb-baseline" {
		t.Errorf("wait: %s", got)
	}
	kind := kindPart(cfg, []string{"/dev/nullb0", "/dev/nullb1"})
	if want := []string{"tenant1, tenant2: MyRocks on ZenFS, zoned nullb0 and nullb1", "innodb-baseline: InnoDB on a volume (the baseline)"}; !reflect.DeepEqual(kind.notes, want) {
		t.Errorf("notes %q", kind.notes)
	}
}

func TestHelmArgs(t *testing.T) {
	const sets = " --set image.tag=c-1 --set benchImage.tag=c-1 --set mariadbImage.tag=c-1 --set perconaImage.tag=c-1 --set percona84Image.tag=c-1"
	if got := strings.Join(helmArgs("/k", "c-1", "5m", ""), " "); got != "--kubeconfig /k upgrade --install zns-mysql charts/zns-mysql --namespace zns-mysql-system --create-namespace --wait --timeout 5m"+sets {
		t.Errorf("kind: %s", got)
	}
	if got := strings.Join(helmArgs("/n", "c-1", "20m", "20"), " "); !strings.HasSuffix(got, "--timeout 20m"+sets+" --set databaseProbePeriodSeconds=20") {
		t.Errorf("node: %s", got)
	}
}

// TestBenchmarkWait: what the wait says and decides at each look; the deadline is twice the run plus the slack.
func TestBenchmarkWait(t *testing.T) {
	w := newBenchWait(100, 900, 60)
	if w.expired(1119) || !w.expired(1120) {
		t.Errorf("deadline %d, want 100 + 900 + 2 x 60", w.deadline)
	}
	for _, step := range []struct {
		printed string
		now     int
		note    string
		outcome benchOutcome
	}{
		{"", 103, "", benchRunning},                      // nothing yet, nothing new: quiet
		{" ", 106, "", benchRunning},                     // blanks are no status
		{"", 130, "0m30s (no status yet)", benchRunning}, // but every 30 s it says so
		{"Pending ", 133, "0m33s Pending ", benchRunning},
		{"Running 0/3 targets done", 136, "0m36s Running 0/3 targets done", benchRunning},
		{"Running 0/3 targets done", 139, "", benchRunning},
		{"Running 0/3 targets done", 166, "1m06s Running 0/3 targets done", benchRunning},
		{"Completed 3/3 targets done", 169, "1m09s Completed 3/3 targets done", benchCompleted},
	} {
		note, outcome := w.observe(step.printed, step.now)
		if note != step.note || outcome != step.outcome {
			t.Errorf("%q at %d: %q %v, want %q %v", step.printed, step.now, note, outcome, step.note, step.outcome)
		}
	}
	w = newBenchWait(0, 900, 60)
	if note, outcome := w.observe("Failed target tenant1: PodLost", 3); outcome != benchFailed || note != "0m03s Failed target tenant1: PodLost" || w.last != "Failed target tenant1: PodLost" {
		t.Errorf("failed: %q %v", note, outcome)
	}
}

func TestSteadyStateLines(t *testing.T) {
	printed := "myrocks-zoned: false true\ninnodb-baseline: true false\ninnodb-other: false \n"
	want := []string{
		"  myrocks-zoned: needs none (zoned)",
		"  innodb-baseline: reached steady state",
		`  innodb-other: did not settle in its rounds: its results are marked "not in steady state"`,
	}
	if got := steadyStateLines(printed); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// no targets: demo.sh's here-string still gave one empty line
	if got := steadyStateLines(""); !reflect.DeepEqual(got, []string{"   needs none (zoned)"}) {
		t.Errorf("empty: %q", got)
	}
}

func TestZoneGeometryLines(t *testing.T) {
	compare := "BENCHMARK   TARGET   TPS\ndemo-1  innodb-zoned  10\ndemo-1  myrocks-zoned  20\ndemo-1  innodb-small-zones  30\ndemo-1  innodb-zonedX 40\n"
	if got := zoneGeometryLines(compare); got != "BENCHMARK   TARGET   TPS\ndemo-1  innodb-zoned  10\ndemo-1  innodb-small-zones  30\n" {
		t.Errorf("got %q", got)
	}
	if got := zoneGeometryLines(""); got != "" {
		t.Errorf("nothing: %q", got)
	}
}

func TestTimingsAndHint(t *testing.T) {
	if got := timingLine("kind cluster", 65); got != "kind cluster                          65s" {
		t.Errorf("%q", got)
	}
	want := "\nThe cluster stays up:\n  export KUBECONFIG=/k\n  hack/kind/cluster.sh kubectl -n ns get znsdatabases,benchmarks\n" +
		"  bin/kubectl-zns -n ns report demo-1          # also: compare, export, plot, watch\n" +
		"  make demo-clean      # delete the cluster and the null_blk devices /dev/nullb0 /dev/nullb1\n"
	if got := stayUpHint("/k", "ns", "demo-1", []string{"/dev/nullb0", "/dev/nullb1"}); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := stayUpHint("/k", "ns", "demo-1", nil); !strings.HasSuffix(got, "  make demo-clean      # delete the cluster\n") {
		t.Errorf("no devices: %q", got)
	}
}
