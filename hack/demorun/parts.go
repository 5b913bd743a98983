package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// The parts of the demo on a cluster: the kind cluster's (step 4) and the QEMU node's (step 5), and the
// commands both run there.

// toStderr is c with its stdout on the demo's stderr: what kubectl and helm say is progress, not the result.
func (d *demo) toStderr(c *exec.Cmd) *exec.Cmd {
	c.Stdout = d.Out.Stderr()
	return c
}

// ok runs c: errFailed when it fails (its own output said why).
func (d *demo) ok(c *exec.Cmd) error {
	if d.Run(c) != 0 {
		return errFailed
	}
	return nil
}

// --- 4. databases, Benchmark, table -----------------------------------------------------------------------------

func (d *demo) kindPart() error {
	p := kindPart(d.cfg, d.devices)
	d.say("databases in namespace %s", p.ns)
	if err := d.createNamespace(p); err != nil {
		return err
	}
	// The databases and the Benchmark are config/samples' (the lab's scenario; the zoned node's in step 5), placed
	// on this cluster and sized for the demo by hack/scenario: the demo runs what the samples and the e2e flows
	// describe. The table comes from the kubectl plugin, the same one users run.
	build := d.Cmd([]string{"CGO_ENABLED=0"}, "go", "build", "-o", "bin/", "./hack/scenario", "./operator/cmd/kubectl-zns")
	if d.Heartbeat("go build", "hack/scenario and kubectl-zns; the first build compiles the operator's packages", "", func() int { return d.Run(build) }) != 0 {
		return fmt.Errorf("building hack/scenario and kubectl-zns failed (above)")
	}
	bench, err := d.databasesAndBenchmark(p, "")
	if err != nil {
		return err
	}
	d.say("result (kubectl zns report %s; kubectl -n %s get benchmark %s -o yaml has it all, the series in ConfigMaps)", bench, p.ns, bench)
	if err := d.report(d.kubeconfig, p.ns, bench); err != nil {
		return err
	}
	d.print("\n(%s images; ratios are against innodb-baseline; %ds of %s on %d cores with every\n", p.flavor, p.run.seconds, p.run.workload, d.cpus)
	d.print(" database in one kind node: this shows the stack works end to end, not how a ZNS drive compares)\n")
	d.kindNS, d.kindBench = p.ns, bench
	return nil
}

// kubectl is kubectl on the part's cluster, through its script.
func (d *demo) kubectl(p part, args ...string) *exec.Cmd {
	return d.Cmd(nil, p.kubectl, append([]string{"kubectl"}, args...)...)
}

// apply is `kubectl apply -f -` of manifest on the part's cluster.
func (d *demo) apply(p part, manifest string) int {
	c := d.toStderr(d.kubectl(p, "apply", "-f", "-"))
	c.Stdin = strings.NewReader(manifest + "\n")
	return d.Run(c)
}

func (d *demo) createNamespace(p part) error {
	manifest, rc := d.Output(d.kubectl(p, "create", "namespace", p.ns, "--dry-run=client", "-o", "yaml"))
	if rc != 0 || d.apply(p, manifest) != 0 {
		return fmt.Errorf("creating the namespace %s failed (above); %s kubectl get namespaces shows the cluster's", p.ns, p.kubectl)
	}
	return nil
}

// applyScenario applies hack/scenario's manifest for args in the part's namespace.
func (d *demo) applyScenario(p part, args []string) error {
	manifest, rc := d.Output(d.Cmd(nil, "bin/scenario", append([]string{"-namespace", p.ns}, args...)...))
	if rc != 0 {
		return fmt.Errorf("hack/scenario %s failed (above)", strings.Join(args, " "))
	}
	if d.apply(p, manifest) != 0 {
		return fmt.Errorf("applying hack/scenario %s failed (above)", strings.Join(args, " "))
	}
	return nil
}

// databasesAndBenchmark applies the part's databases, waits until they are Available, then applies a new
// Benchmark of them all and waits until it completes; it returns the Benchmark's name. suffix tells the
// part's timings apart.
func (d *demo) databasesAndBenchmark(p part, suffix string) (string, error) {
	for _, n := range p.notes {
		d.Logf("%s", n)
	}
	if err := d.applyScenario(p, p.databasesArgs()); err != nil {
		return "", err
	}
	if err := d.timed("databases Available"+suffix, func() error { return d.waitAvailable(p) }); err != nil {
		return "", err
	}
	if d.Run(d.toStderr(d.kubectl(p, "-n", p.ns, "get", "znsdatabases", "-o", "wide"))) != 0 {
		return "", fmt.Errorf("listing the databases failed (above); %s kubectl -n %s get znsdatabases tries again", p.kubectl, p.ns)
	}
	d.say("%s", p.benchmarkBanner())
	bench := "demo-" + d.Now().Format("20060102-150405")
	if err := d.applyScenario(p, p.benchmarkArgs(bench)); err != nil {
		return "", err
	}
	return bench, d.timed("Benchmark"+suffix, func() error { return d.waitBenchmark(p, bench) })
}

func (d *demo) waitAvailable(p part) error {
	c := d.toStderr(d.kubectl(p, p.waitArgs()...))
	if d.Heartbeat("databases Available", "kubectl -n "+p.ns+" get znsdatabases shows them", "", func() int { return d.Run(c) }) != 0 {
		d.showTrouble(p)
		return fmt.Errorf("the databases did not become Available within %d minutes (above: their state and events)", p.availableMinutes)
	}
	return nil
}

// waitBenchmark looks at the Benchmark every few seconds until it completes, fails or runs out of time.
func (d *demo) waitBenchmark(p part, bench string) error {
	w := newBenchWait(d.elapsed(), p.benchSlack, p.run.seconds)
	for !w.expired(d.elapsed()) {
		c := d.kubectl(p, "-n", p.ns, "get", "benchmark", bench, "-o", phaseJSONPath)
		c.Stderr = nil
		printed, _ := d.Output(c)
		note, outcome := w.observe(printed, d.elapsed())
		if note != "" {
			d.Logf("%s", note)
		}
		switch outcome {
		case benchCompleted:
			return nil
		case benchFailed:
			d.showTrouble(p)
			return fmt.Errorf("the Benchmark failed: %s", w.last)
		}
		d.sleep(d.poll)
	}
	d.showTrouble(p)
	return fmt.Errorf("the Benchmark did not complete in time (last: %s)", w.last)
}

// showTrouble shows what the part's namespace holds and its last events, for a wait that failed.
func (d *demo) showTrouble(p part) {
	d.Run(d.toStderr(d.kubectl(p, "-n", p.ns, "get", "znsdatabases,benchmarks,pods,jobs", "-o", "wide")))
	events, _ := d.Output(d.kubectl(p, "-n", p.ns, "get", "events", "--sort-by=.lastTimestamp"))
	if events != "" {
		io.WriteString(d.Out.Stderr(), stagerun.Tail(events+"\n", 30))
	}
}

// report prints the Benchmark's table (kubectl zns report).
func (d *demo) report(kubeconfig, ns, bench string) error {
	if d.Run(d.Cmd(nil, "bin/kubectl-zns", "--kubeconfig", kubeconfig, "-n", ns, "report", bench)) != 0 {
		return fmt.Errorf("kubectl zns report %s failed (above); bin/kubectl-zns --kubeconfig %s -n %s report %s tries again", bench, kubeconfig, ns, bench)
	}
	return nil
}

// --- 5. the zoned part on a Kubernetes node under QEMU ------------------------------------------------------------

func (d *demo) zonedNodePart() error {
	if d.zonedWhy == "" || d.nodeWhy != "" {
		return nil
	}
	d.say("zoned part: %s, and a kind node shares this kernel. It runs on a Kubernetes node whose kernel has zoned devices, in a QEMU guest (hack/qemu/zoned-node.sh)", d.zonedWhy)
	scale, err := d.zonedNodeUp()
	if err != nil {
		return err
	}
	p := nodePart(d.cfg, scale)
	kubeconfig := d.Env.Get("ZNS_E2E_KUBECONFIG")
	if err := d.timed("helm upgrade --install (node)", func() error {
		return d.installChart(kubeconfig, d.Env.Get("ZNS_E2E_TAG"), fmt.Sprintf("%dm", 5*scale), d.Env.Get("ZNS_E2E_PROBE_PERIOD"), p.kubectl)
	}); err != nil {
		return err
	}
	d.say("databases in namespace %s on the zoned node (config/samples/zoned-node)", p.ns)
	if err := d.createNamespace(p); err != nil {
		return err
	}
	// the drives' own counters and the FTL model at 7% and 28% over-provisioning, and the write-only phase on
	// the conventional baseline before the run (docs/write-amplification.md, docs/benchmark.md): the scenario's
	bench, err := d.databasesAndBenchmark(p, " (node)")
	if err != nil {
		return err
	}
	if err := d.nodeResults(p, kubeconfig, bench); err != nil {
		return err
	}
	return d.zonedNodeDown(p)
}

// zonedNodeUp boots a fresh QEMU node, owned by this run, and takes its settings into the environment; it
// returns the time scale of its waits (4 under TCG's emulation, 1 under KVM).
func (d *demo) zonedNodeUp() (int, error) {
	t0 := d.Now()
	// a fresh node: its devices start empty (a database made earlier on them would keep its data and password)
	d.Env.Set("ZNS_NODE_OWNER", strconv.Itoa(d.pid), "ZNS_NODE_OWNER_WHAT", "make demo in "+d.Root)
	if d.Run(d.Cmd(nil, "hack/qemu/zoned-node.sh", "down")) != 0 {
		return 0, fmt.Errorf("the zoned node is another run's (above); DEMO_ZONED=0 skips this part")
	}
	up := d.Cmd(nil, "hack/qemu/zoned-node.sh", "up")
	up.Stdout = nil
	if d.Run(up) != 0 {
		return 0, fmt.Errorf("the zoned node did not come up (above); hack/qemu/zoned-node.sh up alone tries again, DEMO_ZONED=0 skips this part")
	}
	d.record("zoned node up (QEMU)", t0)
	env, rc := d.EvalExports("hack/qemu/zoned-node.sh", "env")
	if rc != 0 {
		return 0, fmt.Errorf("hack/qemu/zoned-node.sh env failed (above); hack/qemu/zoned-node.sh status shows the node")
	}
	d.Env.SetList(env)
	scale, err := strconv.Atoi(d.Env.Get("ZNS_E2E_TIME_SCALE"))
	if err != nil || scale < 1 {
		return 0, fmt.Errorf("hack/qemu/zoned-node.sh env gave no time scale (ZNS_E2E_TIME_SCALE=%q); hack/qemu/zoned-node.sh env shows what it gives", d.Env.Get("ZNS_E2E_TIME_SCALE"))
	}
	if scale != 1 {
		d.Logf("the guest runs under TCG (emulation; zoned-node said why above), where this part takes about half an hour here")
	}
	return scale, nil
}

// nodeResults prints the QEMU node's table, the two zone geometries side by side, the steady state of the
// conventional baseline, and what the figures mean.
func (d *demo) nodeResults(p part, kubeconfig, bench string) error {
	d.say("result on the zoned node (kubectl zns report %s)", bench)
	if err := d.report(kubeconfig, p.ns, bench); err != nil {
		return err
	}
	d.print("\n")
	d.say("one stack, two zone geometries on one drive: innodb-zoned (nvme0n1, 64 MiB zones) against innodb-small-zones (nvme0n2, 16 MiB zones)")
	compare, _ := d.Output(d.Cmd(nil, "bin/kubectl-zns", "--kubeconfig", kubeconfig, "-n", p.ns, "compare", bench))
	d.print("%s\n", zoneGeometryLines(compare))
	steady, rc := d.Output(d.kubectl(p, "-n", p.ns, "get", "benchmark", bench, "-o", steadyJSONPath))
	if rc != 0 {
		return fmt.Errorf("reading the Benchmark's steady state failed (above); %s kubectl -n %s get benchmark %s -o yaml shows it", p.kubectl, p.ns, bench)
	}
	d.say("steady state before the run (the write-only phase; zoned targets need none):")
	for _, l := range steadyStateLines(steady) {
		d.print("%s\n", l)
	}
	accel := "tcg"
	if b, err := os.ReadFile(filepath.Join(d.cfg.CacheRoot, "zoned-node", "accel")); err == nil {
		accel = stagerun.TrimNewlines(string(b))
	}
	d.print("\n(MariaDB images, no ZenFS: that needs the Percona image from repo.percona.com; %ds of %s\n", p.run.seconds, p.run.workload)
	d.print(" in a QEMU guest under %s): the device bytes per transaction are\n", accel)
	d.print(" the figure to read; TPS under emulation is not a drive's. The drives are emulated: no FTL behind them, so\n")
	d.print(" their measured media bytes equal host bytes; the MODELLED columns are what a conventional SSD's garbage\n")
	d.print(" collection would add at 7%% and 28%% over-provisioning, a model's figures, not a measurement)\n")
	return nil
}

// zonedNodeDown stops the QEMU node, unless DEMO_KEEP_ZONED_NODE=1.
func (d *demo) zonedNodeDown(p part) error {
	if d.cfg.KeepZonedNode {
		d.Logf("the zoned node stays up (DEMO_KEEP_ZONED_NODE=1): hack/qemu/zoned-node.sh kubectl -n %s get znsdatabases; hack/qemu/zoned-node.sh down stops it", p.ns)
		return nil
	}
	if d.Run(d.Cmd(nil, "hack/qemu/zoned-node.sh", "down")) != 0 {
		return fmt.Errorf("stopping the zoned node failed (above); hack/qemu/zoned-node.sh down tries again")
	}
	d.Logf("the zoned node is stopped (its devices lived in its memory); DEMO_KEEP_ZONED_NODE=1 make demo keeps it up")
	return nil
}
