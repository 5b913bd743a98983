package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

// The tests run the demo against a fake repository: the scripts it calls (hack/install-deps.sh,
// hack/nullblk-zoned.sh, hack/kind/cluster.sh, hack/qemu/zoned-node.sh, ...), bin/scenario and bin/kubectl-zns,
// and the tools on PATH (docker, go, helm, kubectl) are small shell scripts that log how they were called to
// $CALLS and do what the test's FAKE_* variables say. The whole demo runs in well under a second, without
// Docker, kind or QEMU.

var fakeScripts = map[string]string{
	"hack/install-deps.sh": `echo "install-deps $*" >>"$CALLS"; exit "${FAKE_DEPS_EXIT:-0}"`,
	"hack/nullblk-zoned.sh": `echo "nullblk-zoned $*" >>"$CALLS"
case "$1" in
check) [ "${FAKE_ZONED:-}" = ok ] && exit 0
  echo "nullblk-zoned: ERROR: this kernel has no zoned block device support (CONFIG_BLK_DEV_ZONED)" >&2; exit 1 ;;
create) echo "nullblk-zoned: creating" >&2; printf '/dev/nullb7\n/dev/nullb8\n' ;;
status) echo "nullb7 nullb8: zoned, 64 zones" ;;
esac`,
	"hack/images/build.sh": `echo "images $*" >>"$CALLS"
if [ "$*" = percona ]; then exit "${FAKE_PERCONA_EXIT:-0}"; fi
echo "image bench: step 3/9"; sleep "${FAKE_IMAGES_SLEEP:-0}"; exit "${FAKE_IMAGES_EXIT:-0}"`,
	"hack/helm.sh": `echo "helm.sh" >>"$CALLS"; echo "helm: cached" >&2; echo "$PWD/tools/helm"`,
	"hack/kind/cluster.sh": `case "$1" in
kubectl) shift; exec "$PWD/tools/kubectl" kind "$@" ;;
up) echo "cluster up devices=$ZNS_KIND_DEVICES" >>"$CALLS"; [ "${FAKE_CLUSTER_UP:-0}" = 0 ] || exit 1; echo /fake/kind.kubeconfig ;;
*) echo "cluster $*" >>"$CALLS" ;;
esac`,
	"hack/kind/load-images.sh": `echo "load-images $*" >>"$CALLS"; echo c-kindtag`,
	"hack/qemu/zoned-node.sh": `case "$1" in
kubectl) shift; exec "$PWD/tools/kubectl" node "$@" ;;
esac
echo "zoned-node $1 owner=$ZNS_NODE_OWNER what=$ZNS_NODE_OWNER_WHAT" >>"$CALLS"
case "$1" in
up) [ "${FAKE_NODE_UP:-0}" = 0 ] || exit 1; echo /fake/node.kubeconfig ;;
env) echo "export ZNS_E2E=1 ZNS_E2E_KUBECONFIG=/fake/node.kubeconfig ZNS_E2E_TAG=c-nodetag ZNS_E2E_ZONED_NODE=zns-guest ZNS_E2E_TIME_SCALE=4 ZNS_E2E_PROBE_PERIOD=20" ;;
esac`,
	"bin/scenario":    `echo "scenario $*" >>"$CALLS"; echo "kind: Fake"`,
	"bin/kubectl-zns": `echo "kubectl-zns $* tag=${ZNS_E2E_TAG-unset}" >>"$CALLS"; case "$*" in *compare*) printf 'BENCHMARK TARGET\nb  innodb-zoned 1\nb  myrocks-zoned 2\nb  innodb-small-zones 3\n' ;; *) echo "TABLE $6" ;; esac`,
	"tools/docker":    `case "$1" in info) exit 0 ;; esac; echo "docker $*" >>"$CALLS"`,
	"tools/go":        `echo "go $* CGO_ENABLED=$CGO_ENABLED" >>"$CALLS"`,
	"tools/helm":      `echo "helm $*" >>"$CALLS"`,
	"tools/kubectl": `on=$1; shift
case "$*" in
"apply -f -") echo "kubectl@$on apply: $(tr '\n' ' ')" >>"$CALLS"; exit 0 ;;
esac
printf 'kubectl@%s %s\n' "$on" "$*" >>"$CALLS" # echo would read the jsonpath's \n
case "$*" in
*"create namespace"*) echo "kind: Namespace" ;;
*" wait "*) exit "${FAKE_WAIT_EXIT:-0}" ;;
*"jsonpath={.status.phase}"*) printf '%s' "${FAKE_PHASE:-Completed 3/3 targets done}" ;;
*"jsonpath={range"*) printf 'myrocks-zoned: false true\ninnodb-baseline: true false\n' ;;
*"get events"*) i=1; while [ $i -le 40 ]; do echo "event $i"; i=$((i+1)); done ;;
esac`,
}

// fake is a fake repository, the demo's environment, and what the demo finds on this machine.
type fake struct {
	*stageruntest.Repo
	env   stageruntest.Knobs
	qemu  bool            // qemu-system-x86_64 is installed
	block map[string]bool // the block devices there are
}

func newFake(t *testing.T) *fake {
	t.Helper()
	repo := stageruntest.NewRepo(t, fakeScripts, "tools")
	return &fake{Repo: repo, env: repo.Knobs(), block: map[string]bool{}}
}

// demo is a demo on the fake repository, on a clock that stands still (the Benchmark is named by it).
func (f *fake) demo(t *testing.T) (*demo, *stageruntest.SyncBuffer, *stageruntest.SyncBuffer) {
	t.Helper()
	out, errs := stageruntest.Outputs()
	d := newDemo(stageruntest.Config(t, parseConfig, f.env), f.Root, f.env.List(), nil, out, errs)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	d.Now = func() time.Time { return clock }
	d.start = clock
	d.KillGrace = 200 * time.Millisecond
	d.poll, d.sleep, d.cpus = 0, func(time.Duration) {}, 2
	d.LookPath = func(name string) (string, error) {
		if name == "qemu-system-x86_64" && !f.qemu {
			return "", errors.New("not found")
		}
		return filepath.Join(f.Root, "tools", name), nil
	}
	d.isBlock = func(p string) bool { return f.block[p] }
	return d, out, errs
}

// run is a whole demo (or with "clean", clean): its status, stdout and stderr.
func (f *fake) run(t *testing.T, clean bool) (int, string, string) {
	t.Helper()
	d, out, errs := f.demo(t)
	body := d.main
	if clean {
		body = d.clean
	}
	return d.end(body), out.String(), errs.String()
}

// foreground are the calls but those of the background builds (images, helm), whose place among the others is
// the scheduler's.
func (f *fake) foreground(t *testing.T) []string {
	var got []string
	for _, l := range f.CallLines(t, "") {
		if l != "helm.sh" && l != "images bench mariadb operator" && l != "images bench mariadb operator percona" {
			got = append(got, l)
		}
	}
	return got
}

// banners are the demo's "==> " lines, without the time since the start.
func banners(errs string) []string {
	var got []string
	for _, l := range strings.Split(errs, "\n") {
		if b, ok := strings.CutPrefix(l, "==> "); ok {
			got = append(got, b[:strings.LastIndex(b, " (")])
		}
	}
	return got
}

func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const (
	bench    = "demo-20260102-030405"
	phase    = "-o jsonpath={.status.phase}{\" \"}{.status.progress}"
	noZoned  = "no zoned block devices can be made here: this kernel has no zoned block device support (CONFIG_BLK_DEV_ZONED)"
	helmKind = "helm --kubeconfig /fake/kind.kubeconfig upgrade --install zns-mysql charts/zns-mysql --namespace zns-mysql-system --create-namespace --wait --timeout 5m --set image.tag=c-kindtag --set benchImage.tag=c-kindtag --set mariadbImage.tag=c-kindtag --set perconaImage.tag=c-kindtag --set percona84Image.tag=c-kindtag"
)

// expectedPart is what a part's calls after the chart depend on.
type expectedPart struct {
	on, ns, kubeconfig, tag   string
	place, targets, benchName string
	waitTimeout, run          string // kubectl wait's --timeout, the Benchmark's size
}

// calls are the part's calls after the chart: its namespace, databases, Benchmark and report.
func (e expectedPart) calls() []string {
	kubectl := "kubectl@" + e.on + " "
	scenario := "scenario -namespace " + e.ns + " " + e.place + " -only " + e.targets
	return []string{
		kubectl + "create namespace " + e.ns + " --dry-run=client -o yaml",
		kubectl + "apply: kind: Namespace ",
		scenario + " -print databases",
		kubectl + "apply: kind: Fake ",
		kubectl + "-n " + e.ns + " wait --for=condition=Available --timeout=" + e.waitTimeout + waitTargets(e.targets),
		kubectl + "-n " + e.ns + " get znsdatabases -o wide",
		scenario + "," + e.benchName + " -print benchmarks -benchmark-name " + bench + " -workload oltp_update_index " + e.run +
			" -iterations 1 -report-interval 1",
		kubectl + "apply: kind: Fake ",
		kubectl + "-n " + e.ns + " get benchmark " + bench + " " + phase,
		"kubectl-zns --kubeconfig " + e.kubeconfig + " -n " + e.ns + " report " + bench + " tag=" + e.tag,
	}
}

// kindCalls are the kind part's calls after the chart, with hack/scenario and kubectl-zns built once the
// namespace is there.
func kindCalls(place, targets string) []string {
	calls := expectedPart{on: "kind", ns: "zns-demo", kubeconfig: "/fake/kind.kubeconfig", tag: "unset", place: place,
		targets: targets, benchName: "compare", waitTimeout: "10m", run: "-tables 4 -table-size 20000 -threads 4 -seconds 60"}.calls()
	return append(calls[:2], append([]string{"go build -o bin/ ./hack/scenario ./operator/cmd/kubectl-zns CGO_ENABLED=0"}, calls[2:]...)...)
}

func waitTargets(targets string) string {
	s := ""
	for _, t := range strings.Split(targets, ",") {
		s += " znsdatabase/" + t
	}
	return s
}

// TestDemoLocalZoned: this kernel makes zoned devices and the Percona image builds: two tenants on ZenFS on
// new null_blk devices, mounted into the kind node, beside the InnoDB baseline; no QEMU node.
func TestDemoLocalZoned(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_ZONED"] = "ok"
	f.qemu = true
	code, out, errs := f.run(t, false)
	if code != 0 {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	place := "-scenario lab -volume-size 5Gi -node zns-mysql-control-plane -device tenant1=nullb7 -device tenant2=nullb8 -flavor percona -memory 1Gi"
	want := append([]string{
		"install-deps demo",
		"nullblk-zoned check",
		"images percona",
		"nullblk-zoned create --count 2 --size 4096 --zone-size 64 --memory-backed",
		"nullblk-zoned status nullb7 nullb8",
		"cluster up devices=/dev/nullb7 /dev/nullb8",
		"docker exec zns-mysql-control-plane test -b /dev/nullb7",
		"docker exec zns-mysql-control-plane test -b /dev/nullb8",
		"load-images bench mariadb operator percona",
		helmKind,
	}, kindCalls(place, "tenant1,tenant2,innodb-baseline")...)
	sameLines(t, "calls", f.foreground(t), want)
	sameLines(t, "background builds", f.CallLines(t, "helm.sh"), []string{"helm.sh"})
	sameLines(t, "background builds", f.CallLines(t, "images bench"), []string{"images bench mariadb operator percona"})
	sameLines(t, "banners", banners(errs), []string{
		"checking this machine",
		"zoned block devices are supported: building the Percona + ZenFS image (needs repo.percona.com)",
		"null_blk zoned devices",
		"images (bench mariadb operator percona): building in the background (log: " + f.Cache + "/demo-images.log)",
		"kind cluster zns-mysql",
		"images (bench mariadb operator percona), loaded into the node",
		"the operator's chart",
		"databases in namespace zns-demo",
		"Benchmark: oltp_update_index, 4 tables of 20000 rows, 4 threads, 60s, all targets at once",
		"result (kubectl zns report " + bench + "; kubectl -n zns-demo get benchmark " + bench + " -o yaml has it all, the series in ConfigMaps)",
		"timings",
	})
	stageruntest.Contains(t, "stderr", errs,
		"\n==> checking this machine (0s since the start)\n",
		"nullb7 nullb8: zoned, 64 zones\n", // status's stdout, on stderr
		"demo: tenant1, tenant2: MyRocks on ZenFS, zoned nullb7 and nullb8\ndemo: innodb-baseline: InnoDB on a volume (the baseline)\n",
		"demo: 0m00s Completed 3/3 targets done\n")
	if b, _ := os.ReadFile(filepath.Join(f.Cache, "demo-devices")); string(b) != "/dev/nullb7 /dev/nullb8\n" {
		t.Errorf("devices file %q", b)
	}
	wantOut := "TABLE " + bench + "\n\n(percona images; ratios are against innodb-baseline; 60s of oltp_update_index on 2 cores with every\n" +
		" database in one kind node: this shows the stack works end to end, not how a ZNS drive compares)\n" +
		"  " + timingLine("Percona + ZenFS image", 0) + "\n  " + timingLine("kind cluster", 0) + "\n" +
		"  " + timingLine("images built and loaded", 0) + "\n  " + timingLine("helm (built once, cached)", 0) + "\n" +
		"  " + timingLine("helm upgrade --install", 0) + "\n  " + timingLine("databases Available", 0) + "\n" +
		"  " + timingLine("Benchmark", 0) + "\n  " + timingLine("total", 0) + "\n" +
		stayUpHint("/fake/kind.kubeconfig", "zns-demo", bench, []string{"/dev/nullb7", "/dev/nullb8"})
	if out != wantOut {
		t.Errorf("stdout:\n%s\nwant\n%s", out, wantOut)
	}
	if !strings.HasSuffix(out, "make demo-clean      # delete the cluster and the null_blk devices /dev/nullb7 /dev/nullb8\n") {
		t.Errorf("the hint does not name the devices")
	}
}

// TestDemoReusesItsDevices: a second run finds the devices of the first still there and keeps them (and ZenFS on
// them); clean then destroys those that are left, and only those.
func TestDemoReusesItsDevices(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_ZONED"] = "ok"
	if err := os.MkdirAll(f.Cache, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(f.Cache, "demo-devices")
	if err := os.WriteFile(file, []byte("/dev/nullb2 /dev/nullb3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.block["/dev/nullb2"], f.block["/dev/nullb3"] = true, true
	code, out, errs := f.run(t, false)
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, out, errs)
	}
	stageruntest.Contains(t, "stderr", errs, "demo: reusing the demo's devices /dev/nullb2 /dev/nullb3 (ZenFS on them is kept)\n")
	if got := f.CallLines(t, "nullblk-zoned create"); len(got) != 0 {
		t.Errorf("made devices: %v", got)
	}
	stageruntest.Contains(t, "calls", strings.Join(f.CallLines(t, ""), "\n"), "cluster up devices=/dev/nullb2 /dev/nullb3", "-device tenant1=nullb2 -device tenant2=nullb3")

	// clean: the cluster, then the devices that still exist
	delete(f.block, "/dev/nullb2")
	if err := os.Remove(f.Calls); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := f.run(t, true); code != 0 || out != "" || errs != "" {
		t.Errorf("clean: %d %q %q", code, out, errs)
	}
	sameLines(t, "clean's calls", f.CallLines(t, ""), []string{"cluster down", "nullblk-zoned destroy nullb3"})
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the devices file is left: %v", err)
	}
	// again: nothing left but the cluster's down
	if code, _, _ := f.run(t, true); code != 0 || len(f.CallLines(t, "nullblk-zoned")) != 1 {
		t.Errorf("a second clean: %d, %v", code, f.CallLines(t, ""))
	}
}

// TestDemoOnTheQEMUNode: no zoned devices here, QEMU installed: the conventional part on kind, then the zoned
// part on a fresh QEMU node this run owns, its results, and the node stopped.
func TestDemoOnTheQEMUNode(t *testing.T) {
	f := newFake(t)
	f.qemu = true
	if err := os.MkdirAll(filepath.Join(f.Cache, "zoned-node"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.Cache, "zoned-node", "accel"), []byte("tcg\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := f.run(t, false)
	if code != 0 {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	owner := "owner=" + strconv.Itoa(os.Getpid()) + " what=make demo in " + f.Root
	node := expectedPart{on: "node", ns: "zns-demo-zoned", kubeconfig: "/fake/node.kubeconfig", tag: "c-nodetag",
		place:   "-scenario zoned-node -memory 1Gi -reformat-token demo-zns-demo-zoned -time-scale 4",
		targets: "myrocks-zoned,innodb-zoned,innodb-small-zones,innodb-zxfs,myrocks-zxfs,innodb-baseline", benchName: "zoned-vs-conv",
		waitTimeout: "40m", run: "-tables 1 -table-size 2000 -threads 2 -seconds 30"}.calls()
	want := append(append(append(append([]string{
		"install-deps demo",
		"nullblk-zoned check",
		"cluster up devices=",
		"load-images bench mariadb operator",
		helmKind,
	}, kindCalls("-scenario lab -volume-size 5Gi -flavor mariadb -memory 1Gi", "myrocks-xfs,innodb-baseline")...),
		"zoned-node down "+owner,
		"zoned-node up "+owner,
		"zoned-node env "+owner,
		"helm --kubeconfig /fake/node.kubeconfig upgrade --install zns-mysql charts/zns-mysql --namespace zns-mysql-system --create-namespace --wait --timeout 20m --set image.tag=c-nodetag --set benchImage.tag=c-nodetag --set mariadbImage.tag=c-nodetag --set perconaImage.tag=c-nodetag --set percona84Image.tag=c-nodetag --set databaseProbePeriodSeconds=20",
	), node...),
		"kubectl-zns --kubeconfig /fake/node.kubeconfig -n zns-demo-zoned compare "+bench+" tag=c-nodetag",
		"kubectl@node -n zns-demo-zoned get benchmark "+bench+" -o "+steadyJSONPath,
		"zoned-node down "+owner,
	)
	sameLines(t, "calls", f.foreground(t), want)
	banner := banners(errs)
	sameLines(t, "banners", banner[:2], []string{"checking this machine", "conventional part first: " + noZoned})
	sameLines(t, "the zoned part's banners", banner[9:], []string{
		"zoned part: " + noZoned + ", and a kind node shares this kernel. It runs on a Kubernetes node whose kernel has zoned devices, in a QEMU guest (hack/qemu/zoned-node.sh)",
		"databases in namespace zns-demo-zoned on the zoned node (config/samples/zoned-node)",
		"Benchmark: oltp_update_index, 1 tables of 2000 rows, 2 threads, 30s, all targets at once",
		"result on the zoned node (kubectl zns report " + bench + ")",
		"one stack, two zone geometries on one drive: innodb-zoned (nvme0n1, 64 MiB zones) against innodb-small-zones (nvme0n2, 16 MiB zones)",
		"steady state before the run (the write-only phase; zoned targets need none):",
		"timings",
	})
	stageruntest.Contains(t, "stderr", errs,
		"demo: MyRocks and InnoDB on conventional volumes, with the MariaDB + MyRocks stand-in image, on kind\n"+
			"demo: then the zoned part on a Kubernetes node whose kernel has zoned devices, in a QEMU guest (step 5)\n",
		"demo: the guest runs under TCG (emulation; zoned-node said why above), where this part takes about half an hour here\n",
		"demo: myrocks-zoned: MyRocks on btrfs in zoned mode, null_blk zoned nullb0\n",
		"demo: the zoned node is stopped (its devices lived in its memory); DEMO_KEEP_ZONED_NODE=1 make demo keeps it up\n")
	stageruntest.Contains(t, "stdout", out,
		"(mariadb images; ratios are against innodb-baseline;",
		"TABLE "+bench+"\n\nBENCHMARK TARGET\nb  innodb-zoned 1\nb  innodb-small-zones 3\n\n",
		"  myrocks-zoned: needs none (zoned)\n  innodb-baseline: reached steady state\n\n(MariaDB images, no ZenFS",
		"; 30s of oltp_update_index\n in a QEMU guest under tcg): the device bytes",
		"  "+timingLine("zoned node up (QEMU)", 0)+"\n  "+timingLine("helm upgrade --install (node)", 0)+"\n  "+
			timingLine("databases Available (node)", 0)+"\n  "+timingLine("Benchmark (node)", 0)+"\n  "+timingLine("total", 0)+"\n",
		// the hint is the kind cluster's
		stayUpHint("/fake/kind.kubeconfig", "zns-demo", bench, nil))
}

// TestDemoConventionalOnly: no zoned devices and no QEMU: the conventional part only, and it says why.
func TestDemoConventionalOnly(t *testing.T) {
	f := newFake(t)
	code, out, errs := f.run(t, false)
	if code != 0 {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	stageruntest.Contains(t, "stderr", errs, "\n==> conventional part only: "+noZoned+" (0s since the start)\n"+
		"demo: MyRocks and InnoDB on conventional volumes, with the MariaDB + MyRocks stand-in image, on kind\n\n==> images (bench mariadb operator):")
	if strings.Contains(errs, "then the zoned part") || len(f.CallLines(t, "zoned-node")) != 0 || len(f.CallLines(t, "images percona")) != 0 {
		t.Errorf("a zoned part ran or was announced:\n%s\n%v", errs, f.CallLines(t, ""))
	}
	sameLines(t, "background builds", f.CallLines(t, "images"), []string{"images bench mariadb operator"})
	stageruntest.Contains(t, "stdout", out, "(mariadb images; ratios", "make demo-clean      # delete the cluster\n")

	// DEMO_ZONED=1 stops before anything is built
	f = newFake(t)
	f.env["DEMO_ZONED"] = "1"
	code, out, errs = f.run(t, false)
	want := "demo: ERROR: DEMO_ZONED=1, but " + noZoned + ", and no QEMU node either: no qemu-system-x86_64 (Debian package qemu-system-x86)\n"
	if code != 1 || out != "" || !strings.HasSuffix(errs, want) {
		t.Errorf("DEMO_ZONED=1: %d %q\n%s", code, out, errs)
	}
	sameLines(t, "calls", f.CallLines(t, ""), []string{"install-deps demo", "nullblk-zoned check"})
}

// TestDemoFailingSteps: a step that fails stops the demo with status 1 and a line naming it and what to do;
// the background builds still running are killed.
func TestDemoFailingSteps(t *testing.T) {
	for _, tc := range []struct {
		name, knob, value string
		message           string
		calls             map[string]int
	}{
		{"packages", "FAKE_DEPS_EXIT", "1", "demo: ERROR: the Debian packages the builds need are missing (above says which and how to install them)\n",
			map[string]int{"cluster": 0}},
		{"cluster", "FAKE_CLUSTER_UP", "1", "demo: ERROR: the cluster did not come up (see above)\n",
			map[string]int{"load-images": 0}},
		{"images", "FAKE_IMAGES_EXIT", "2", "image bench: step 3/9\ndemo: ERROR: building the images failed (above; the whole log: CACHE/demo-images.log)\n",
			map[string]int{"load-images": 0, "helm ": 0}},
		{"databases", "FAKE_WAIT_EXIT", "1", "\nevent 40\ndemo: ERROR: the databases did not become Available within 10 minutes (above: their state and events)\n",
			map[string]int{"kubectl@kind -n zns-demo get znsdatabases,benchmarks,pods,jobs -o wide": 1, "scenario": 1}},
		{"Benchmark", "FAKE_PHASE", "Failed target tenant1: PodLost", "demo: ERROR: the Benchmark failed: Failed target tenant1: PodLost\n",
			map[string]int{"kubectl-zns": 0, "kubectl@kind -n zns-demo get events": 1}},
		{"QEMU node", "FAKE_NODE_UP", "1", "demo: ERROR: the zoned node did not come up (above); hack/qemu/zoned-node.sh up alone tries again, DEMO_ZONED=0 skips this part\n",
			map[string]int{"zoned-node env": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.qemu = true
			f.env[tc.knob] = tc.value
			code, out, errs := f.run(t, false)
			message := strings.ReplaceAll(tc.message, "CACHE", f.Cache)
			if code != 1 || !strings.HasSuffix(errs, message) || strings.Contains(out, "The cluster stays up") {
				t.Errorf("status %d, stderr ends %q, want %q\nstdout:\n%s", code, stageruntest.LastLine(errs), message, out)
			}
			if strings.Contains(errs, "\nevent 10\n") {
				t.Errorf("more than the last 30 events:\n%s", errs)
			}
			for prefix, n := range tc.calls {
				if got := f.CallLines(t, prefix); len(got) != n {
					t.Errorf("%q: %d calls, want %d: %v", prefix, len(got), n, got)
				}
			}
		})
	}
}

// TestDemoKillsItsBuildsWhenItFails: the images still building when the cluster fails are killed with their
// process group, as demo.sh's EXIT trap killed them.
func TestDemoKillsItsBuildsWhenItFails(t *testing.T) {
	f := newFake(t)
	f.env["FAKE_CLUSTER_UP"], f.env["FAKE_IMAGES_SLEEP"] = "1", "300"
	d, _, errs := f.demo(t)
	if code := d.end(d.main); code != 1 {
		t.Fatalf("status %d\n%s", code, errs)
	}
	if d.imagesJob.Running() || d.imagesJob.Wait() != 143 {
		t.Errorf("the images' build: running %v, status %d, want TERM's", d.imagesJob.Running(), d.imagesJob.Wait())
	}
	if stagerun.LastLogLine(d.imagesJob.Log) != "image bench: step 3/9" {
		t.Errorf("its log: %q", stagerun.LastLogLine(d.imagesJob.Log))
	}
}

// TestRunRefusesBadInput: a knob or an argument demo.sh refused exits 2 before anything runs, saying which;
// clean needs only the cache; --help prints the usage.
func TestRunRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		env       stageruntest.Knobs
		code      int
		out, errs string
	}{
		{nil, stageruntest.Knobs{"HOME": "/h", "DEMO_SECONDS": "x"}, 2, "", "demo: DEMO_SECONDS must be a positive number, not \"x\"\n"},
		{nil, stageruntest.Knobs{"HOME": "/h", "DEMO_ZONED": "yes"}, 2, "", "demo: DEMO_ZONED must be auto, 0 or 1\n"},
		{[]string{"please"}, stageruntest.Knobs{"HOME": "/h"}, 2, "", "usage: hack/demo.sh [clean | --help]\n"},
		{[]string{"clean"}, stageruntest.Knobs{}, 2, "", "demo: no cache directory: set ZNS_CACHE_DIR, XDG_CACHE_HOME or HOME\n"},
		{[]string{"--help"}, stageruntest.Knobs{"DEMO_SECONDS": "x"}, 0, usage, ""},
	} {
		var out, errs strings.Builder
		if code := run(tc.args, tc.env.Getenv, &out, &errs); code != tc.code || out.String() != tc.out || errs.String() != tc.errs {
			t.Errorf("%v %v: %d, %q, %q; want %d, %q", tc.args, tc.env, code, out.String(), errs.String(), tc.code, tc.errs)
		}
	}
}
