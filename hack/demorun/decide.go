package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// The demo's decisions, as functions of what it found: which parts run and why, what each part applies and
// waits for, and what it prints of what it read.

// zonedHereWhy is why the zoned part cannot run on this machine's own kernel, "" when it can (as far as the
// devices go: the Percona image is tried next): checkRC and checkOut are hack/nullblk-zoned.sh check's status
// and output, stdout and stderr together.
func zonedHereWhy(mode zonedMode, checkRC int, checkOut string) string {
	switch {
	case mode == zonedOff:
		return "DEMO_ZONED=0"
	case checkRC != 0:
		return "no zoned block devices can be made here: " + checkError(checkRC, checkOut)
	}
	return ""
}

// checkError is what hack/nullblk-zoned.sh check said was wrong: its first ERROR line, without its prefix.
func checkError(rc int, out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "ERROR") {
			return strings.TrimPrefix(l, "nullblk-zoned: ERROR: ")
		}
	}
	// demo.sh stopped here with no reason (grep found no ERROR line): say at least how the check ended
	return fmt.Sprintf("hack/nullblk-zoned.sh check exited %d (above)", rc)
}

// perconaWhy is why the zoned part does not run here when the Percona image did not build.
const perconaWhy = "the Percona + ZenFS image could not be built (it needs https://repo.percona.com; see above)"

// nodeWhy is why the zoned part cannot run on the QEMU node (step 5), "" when it runs there: only when it
// cannot run here, and only with QEMU.
func nodeWhy(mode zonedMode, zonedWhy string, qemuFound bool) string {
	switch {
	case mode == zonedOff:
		return "DEMO_ZONED=0"
	case zonedWhy == "":
		return "zoned devices are made here"
	case !qemuFound:
		return "no qemu-system-x86_64 (Debian package qemu-system-x86)"
	}
	return ""
}

// announceParts is what the demo says of its parts when the zoned part does not run here: a banner and notes;
// with DEMO_ZONED=1 and no QEMU node either, the error that stops it. Nothing when the zoned part runs here.
func announceParts(mode zonedMode, zonedWhy, nodeWhy string) (banner string, notes []string, err error) {
	if zonedWhy == "" {
		return "", nil, nil
	}
	if mode == zonedRequired && nodeWhy != "" {
		return "", nil, fmt.Errorf("DEMO_ZONED=1, but %s, and no QEMU node either: %s", zonedWhy, nodeWhy)
	}
	when := "only"
	if nodeWhy == "" {
		when = "first"
	}
	notes = []string{"MyRocks and InnoDB on conventional volumes, with the MariaDB + MyRocks stand-in image, on kind"}
	if nodeWhy == "" {
		notes = append(notes, "then the zoned part on a Kubernetes node whose kernel has zoned devices, in a QEMU guest (step 5)")
	}
	return fmt.Sprintf("conventional part %s: %s", when, zonedWhy), notes, nil
}

// devicesFile is where the demo keeps the paths of the null_blk devices it made, for the next run and clean.
func devicesFile(cacheRoot string) string { return filepath.Join(cacheRoot, "demo-devices") }

// fileDevices is the devices file's paths, as bash's `read -r -a` took them: its first line, split on blanks.
func fileDevices(content string) []string {
	first, _, _ := strings.Cut(content, "\n")
	return strings.Fields(first)
}

// reusableDevices are the devices file's when every one is still a block device; none otherwise (the demo then
// makes new ones).
func reusableDevices(content string, isBlock func(string) bool) []string {
	devices := fileDevices(content)
	for _, d := range devices {
		if !isBlock(d) {
			return nil
		}
	}
	return devices
}

// createdDevices are the paths hack/nullblk-zoned.sh create printed, one a line; the demo needs two.
func createdDevices(out string) ([]string, error) {
	var devices []string
	if out != "" {
		devices = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	}
	if len(devices) != 2 {
		return nil, fmt.Errorf("hack/nullblk-zoned.sh create made %d devices, want 2", len(devices))
	}
	return devices, nil
}

// cleanDevices are the kernel names of the devices file's devices that still exist: what clean destroys.
func cleanDevices(content string, isBlock func(string) bool) []string {
	var names []string
	for _, d := range fileDevices(content) {
		if isBlock(d) {
			names = append(names, filepath.Base(d))
		}
	}
	return names
}

// sysbenchRun is the size of a part's Benchmark.
type sysbenchRun struct {
	workload                            string
	tables, tableSize, threads, seconds int
}

// part is one cluster's share of the demo: where kubectl goes, the scenario's objects placed there, the
// Benchmark's size, and how long the waits may take.
type part struct {
	kubectl          string // the script whose kubectl subcommand reaches the cluster
	ns               string
	targets          []string
	place            []string // hack/scenario's placement, for the databases and the Benchmark alike
	benchName        string   // the scenario's Benchmark
	flavor           string   // the kind part's images
	notes            []string // one line per database
	availableMinutes int
	benchSlack       int // seconds the Benchmark may take beyond twice its run
	run              sysbenchRun
}

// kindPart is the kind part: two MyRocks on ZenFS tenants on the devices when there are devices (the zoned
// part runs here), else MyRocks on a volume; InnoDB on a volume as the baseline either way.
func kindPart(c Config, devices []string) part {
	p := part{kubectl: "hack/kind/cluster.sh", ns: c.Namespace, benchName: "compare", availableMinutes: 10, benchSlack: 900,
		place: []string{"-scenario", "lab", "-volume-size", "5Gi"},
		run:   sysbenchRun{c.Workload, c.Tables, c.TableSize, c.Threads, c.Seconds}}
	if len(devices) > 0 {
		d0, d1 := filepath.Base(devices[0]), filepath.Base(devices[1])
		p.flavor = "percona"
		p.targets = []string{"tenant1", "tenant2", "innodb-baseline"}
		p.place = append(p.place, "-node", c.kindNode(), "-device", "tenant1="+d0, "-device", "tenant2="+d1)
		p.notes = []string{fmt.Sprintf("tenant1, tenant2: MyRocks on ZenFS, zoned %s and %s", d0, d1)}
	} else {
		p.flavor = "mariadb"
		p.targets = []string{"myrocks-xfs", "innodb-baseline"}
		p.notes = []string{"myrocks-xfs: MyRocks on a volume"}
	}
	p.notes = append(p.notes, "innodb-baseline: InnoDB on a volume (the baseline)")
	p.place = append(p.place, "-flavor", p.flavor, "-memory", c.Memory)
	return p
}

// nodePart is the QEMU node's part (config/samples/zoned-node): zoned btrfs and XFS against InnoDB on the
// node's conventional device, in its own namespace. scale stretches the waits under emulation, where a
// process start takes about a second, and the run is smaller.
func nodePart(c Config, scale int) part {
	ns := c.Namespace + "-zoned"
	return part{kubectl: "hack/qemu/zoned-node.sh", ns: ns, benchName: "zoned-vs-conv",
		targets: []string{"myrocks-zoned", "innodb-zoned", "innodb-small-zones", "innodb-zxfs", "myrocks-zxfs", "innodb-baseline"},
		// the baseline's reformat token, new for each namespace, confirms that its preconditioning destroys what
		// is on nvme1n1; the time scale stretches the Benchmark's common start and timeout
		place: []string{"-scenario", "zoned-node", "-memory", c.Memory, "-reformat-token", "demo-" + ns, "-time-scale", strconv.Itoa(scale)},
		notes: []string{
			"myrocks-zoned: MyRocks on btrfs in zoned mode, null_blk zoned nullb0",
			"innodb-zoned: InnoDB on btrfs in zoned mode, emulated NVMe ZNS nvme0n1 (64 MiB zones)",
			"innodb-small-zones: the same on nvme0n2, 16 MiB zones on nvme0n1's drive (zone size is a variable of the comparison)",
			"innodb-zxfs, myrocks-zxfs: InnoDB and MyRocks on zoned XFS, null_blk zoned nullb3 and nullb4 (their first 8 zones conventional)",
			"innodb-baseline: InnoDB on ext4 on the node's conventional NVMe namespace nvme1n1, preconditioned whole (baseline)",
		},
		availableMinutes: 10 * scale, benchSlack: 900 * scale,
		run: sysbenchRun{c.Workload, 1, c.NodeTableSize, 2, c.NodeSeconds}}
}

// databasesArgs is hack/scenario's command line for the part's databases.
func (p part) databasesArgs() []string {
	return append(append([]string{}, p.place...), "-only", strings.Join(p.targets, ","), "-print", "databases")
}

// benchmarkArgs is hack/scenario's command line for the part's Benchmark of all its targets, named bench.
func (p part) benchmarkArgs(bench string) []string {
	r := p.run
	return append(append([]string{}, p.place...), "-only", strings.Join(append(append([]string{}, p.targets...), p.benchName), ","),
		"-print", "benchmarks", "-benchmark-name", bench, "-workload", r.workload, "-tables", strconv.Itoa(r.tables),
		"-table-size", strconv.Itoa(r.tableSize), "-threads", strconv.Itoa(r.threads), "-seconds", strconv.Itoa(r.seconds),
		"-iterations", "1", "-report-interval", "1")
}

// benchmarkBanner announces the part's Benchmark.
func (p part) benchmarkBanner() string {
	r := p.run
	return fmt.Sprintf("Benchmark: %s, %d tables of %d rows, %d threads, %ds, all targets at once", r.workload, r.tables, r.tableSize, r.threads, r.seconds)
}

// waitArgs is the kubectl wait for the part's databases.
func (p part) waitArgs() []string {
	args := []string{"-n", p.ns, "wait", "--for=condition=Available", fmt.Sprintf("--timeout=%dm", p.availableMinutes)}
	for _, t := range p.targets {
		args = append(args, "znsdatabase/"+t)
	}
	return args
}

// helmArgs installs the operator's chart with the images of tag; probePeriod, when set, is the databases'
// readiness probe period (the QEMU node's: a probe costs about a second of CPU under emulation).
func helmArgs(kubeconfig, tag, timeout, probePeriod string) []string {
	args := []string{"--kubeconfig", kubeconfig, "upgrade", "--install", "zns-mysql", "charts/zns-mysql",
		"--namespace", "zns-mysql-system", "--create-namespace", "--wait", "--timeout", timeout}
	for _, image := range []string{"image", "benchImage", "mariadbImage", "perconaImage", "percona84Image"} {
		args = append(args, "--set", image+".tag="+tag)
	}
	if probePeriod != "" {
		args = append(args, "--set", "databaseProbePeriodSeconds="+probePeriod)
	}
	return args
}

// benchOutcome is where a Benchmark is, for the wait.
type benchOutcome int

const (
	benchRunning benchOutcome = iota
	benchCompleted
	benchFailed
)

// phaseJSONPath is what the wait reads of the Benchmark: its phase and progress, "Running 2/3 targets done".
const phaseJSONPath = `jsonpath={.status.phase}{" "}{.status.progress}`

// benchWait is the wait for a Benchmark: it ends when the Benchmark completes or fails, or at the deadline,
// twice the run plus a slack for the start, the prepare and the report; it says where the Benchmark is when
// that changes, and every 30 s otherwise. Times are seconds on the run's clock.
type benchWait struct {
	start, deadline, said int
	last                  string // the phase read last ("" before any)
}

func newBenchWait(now, slack, seconds int) *benchWait {
	return &benchWait{start: now, deadline: now + slack + 2*seconds, said: now}
}

// expired: the deadline has come.
func (w *benchWait) expired(now int) bool { return now >= w.deadline }

// observe takes what kubectl printed of the Benchmark at now: the line to print ("" for none) and the outcome.
func (w *benchWait) observe(printed string, now int) (note string, outcome benchOutcome) {
	phase := printed
	if strings.TrimSpace(phase) == "" { // kubectl failed, or no status yet
		phase = ""
	}
	if phase != w.last || now-w.said >= 30 {
		shown := phase
		if shown == "" {
			shown = "(no status yet)"
		}
		note = fmt.Sprintf("%s %s", stagerun.Mmss(now-w.start), shown)
		w.said = now
	}
	w.last = phase
	switch {
	case strings.HasPrefix(phase, "Completed"):
		return note, benchCompleted
	case strings.HasPrefix(phase, "Failed"):
		return note, benchFailed
	}
	return note, benchRunning
}

// steadyJSONPath is what the demo reads of the QEMU node's Benchmark after its report: per target, whether its
// write-only phase reached steady state, or was skipped (a zoned target needs none).
const steadyJSONPath = `jsonpath={range .status.targets[*]}{.name}{": "}{.steadyState.reached}{" "}{.steadyState.skipped}{"\n"}{end}`

// steadyStateLines are what the demo prints of that output, one line per target.
func steadyStateLines(printed string) []string {
	var lines []string
	// as bash read a here-string: at least one line, the last newline not ending another
	for _, l := range strings.Split(strings.TrimRight(printed, "\n"), "\n") {
		name, _, _ := strings.Cut(l, " ") // "NAME:" with its colon
		switch {
		case strings.Contains(l, ": true"):
			lines = append(lines, "  "+name+" reached steady state")
		case strings.HasSuffix(l, ": false "):
			lines = append(lines, "  "+name+` did not settle in its rounds: its results are marked "not in steady state"`)
		default:
			lines = append(lines, "  "+name+" needs none (zoned)")
		}
	}
	return lines
}

// geometryRows picks, of kubectl zns compare's table, the header and the rows of the two targets that differ
// only in their zone size.
var geometryRows = regexp.MustCompile(`^(BENCHMARK|[^ ]+ +innodb-(zoned|small-zones) )`)

// zoneGeometryLines is what the demo prints of kubectl zns compare's output: the rows geometryRows picks.
func zoneGeometryLines(compare string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(compare, "\n"), "\n") {
		if geometryRows.MatchString(l) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// timingLine is one line of the timings table: "NAME (padded)  SECONDSs".
func timingLine(name string, seconds int) string { return fmt.Sprintf("%-34s %5ds", name, seconds) }

// stayUpHint is the end of the demo: how to look at what it left running, and how to remove it.
func stayUpHint(kubeconfig, ns, bench string, devices []string) string {
	devs := ""
	if len(devices) > 0 {
		devs = " and the null_blk devices " + strings.Join(devices, " ")
	}
	return fmt.Sprintf(`
The cluster stays up:
  export KUBECONFIG=%s
  hack/kind/cluster.sh kubectl -n %s get znsdatabases,benchmarks
  bin/kubectl-zns -n %s report %s          # also: compare, export, plot, watch
  make demo-clean      # delete the cluster%s
`, kubeconfig, ns, ns, bench, devs)
}
