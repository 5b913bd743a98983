package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// zonedMode is DEMO_ZONED: whether the zoned part runs.
type zonedMode string

const (
	zonedAuto     zonedMode = "auto" // where it can: here, else on the QEMU node, else it says why not
	zonedRequired zonedMode = "1"    // fail unless it can run, here or on the QEMU node
	zonedOff      zonedMode = "0"    // conventional only
)

// Config is every knob of the demo, read once from the environment at the start (parseConfig). Each field's env
// tag names its variable; usage, which --help prints, describes every one of them (a test checks it).
type Config struct {
	Zoned     zonedMode `env:"DEMO_ZONED"`
	Namespace string    `env:"DEMO_NAMESPACE"`
	// Seconds, Threads, Tables, TableSize, Workload: the kind part's sysbench run.
	Seconds   int    `env:"DEMO_SECONDS"`
	Threads   int    `env:"DEMO_THREADS"`
	Tables    int    `env:"DEMO_TABLES"`
	TableSize int    `env:"DEMO_TABLE_SIZE"`
	Workload  string `env:"DEMO_WORKLOAD"`
	// Memory: every database's memory limit, as Kubernetes writes a quantity.
	Memory    string `env:"DEMO_MEMORY"`
	DeviceMiB int    `env:"DEMO_DEVICE_MIB"`
	// NodeSeconds, NodeTableSize: the QEMU node's run, smaller (one table, 2 threads): emulation is slow.
	NodeSeconds   int  `env:"DEMO_NODE_SECONDS"`
	NodeTableSize int  `env:"DEMO_NODE_TABLE_SIZE"`
	KeepZonedNode bool `env:"DEMO_KEEP_ZONED_NODE"`
	// KindCluster: its node is KindCluster-control-plane. KindNode is hack/kind/cluster.sh's, which reads it
	// from the environment itself: it is here for --help.
	KindCluster string `env:"ZNS_KIND_CLUSTER"`
	KindNode    string `env:"ZNS_KIND_NODE"`
	// CacheRoot: ZNS_CACHE_DIR, else $XDG_CACHE_HOME/zns-mysql, else $HOME/.cache/zns-mysql.
	CacheRoot     string        `env:"ZNS_CACHE_DIR"`
	ProgressEvery time.Duration `env:"ZNS_PROGRESS_EVERY"`
}

// usage is what --help prints: what the demo does and every knob, in one place.
const usage = `hack/demo.sh: the README's main command (make demo): a kind cluster, zoned devices, the images, the chart,
databases, a short Benchmark across all of them, and the comparison printed as a table.

  hack/demo.sh [clean | --help]

  1. what this machine can do: zoned block devices (hack/nullblk-zoned.sh check) and the Percona + ZenFS image
     (it needs repo.percona.com). With both: two null_blk zoned devices (RAM-backed) for two MyRocks on ZenFS
     tenants, and InnoDB on a conventional volume as the baseline, all Percona Server. Without either, it says
     which is missing and runs the conventional part only: MyRocks and InnoDB on volumes, with the MariaDB +
     MyRocks stand-in image.
  2. the kind cluster (hack/kind/cluster.sh up), with the images and helm building beside it in the background
     (logs: $ZNS_CACHE_DIR/demo-images.log, demo-helm.log); the zoned devices are mounted into the node at the
     same paths.
  3. the images loaded into the node (hack/kind/load-images.sh), and the chart installed with them.
  4. the databases in namespace $DEMO_NAMESPACE, waited for until Available; then a Benchmark across all of them
     (a fresh one each run), waited for until it completes; then the table (kubectl zns report).
  5. where this kernel has no zoned devices (a kind node shares it): the zoned part on a Kubernetes node in a
     QEMU guest whose kernel has them (hack/qemu/zoned-node.sh; KVM when usable, else TCG, which is slow):
     MyRocks and InnoDB on btrfs in zoned mode (null_blk zoned, emulated NVMe ZNS) and on zoned XFS against
     InnoDB on the node's conventional device, a short Benchmark and its table (with the device bytes per
     transaction); then the node is stopped. ZenFS needs the Percona image: without it this part uses btrfs.
Each step is announced with the time since the start; no step is silent for more than a minute; a step that
fails says which and what to do; the end is a table of the timings.

The cluster and the devices stay up afterwards for a look around (it prints how). hack/demo.sh clean (make
demo-clean) deletes the cluster and the demo's own null_blk devices ($ZNS_CACHE_DIR/demo-devices), never another
device. Running it again reuses them: ZenFS already on a device is kept (format.policy IfNeeded).

Environment:
  DEMO_ZONED            auto (default), 1 (fail unless the zoned part can run, here or on the QEMU node),
                        0 (conventional only)
  DEMO_NAMESPACE        namespace of the databases and the Benchmark (default zns-demo; the QEMU node's is
                        NAME-zoned)
  DEMO_SECONDS          sysbench run time per target, in seconds (default 60)
  DEMO_THREADS          sysbench threads (default 4)
  DEMO_TABLES           tables (default 4)
  DEMO_TABLE_SIZE       rows per table (default 20000)
  DEMO_WORKLOAD         sysbench workload (default oltp_update_index, the seed's)
  DEMO_MEMORY           memory limit of each database (default 1Gi; the caches are sized from it)
  DEMO_DEVICE_MIB       size of each null_blk zoned device in MiB (default 4096, 64 zones of 64 MiB; RAM is used
                        only for what is written)
  DEMO_NODE_SECONDS     sysbench run time per target on the QEMU node (default 30; one table, 2 threads)
  DEMO_NODE_TABLE_SIZE  rows of that table (default 2000)
  DEMO_KEEP_ZONED_NODE  1: keep the QEMU node up after its part (default: stopped; its devices live in its
                        memory)
  ZNS_KIND_CLUSTER      the kind cluster (default zns-mysql)
  ZNS_KIND_NODE         where its node image comes from: auto (default), offline or upstream
                        (hack/kind/cluster.sh)
  ZNS_PROGRESS_EVERY    seconds between two "still running" lines of a long step (default 30)
  ZNS_CACHE_DIR         cache root (default $XDG_CACHE_HOME/zns-mysql, else ~/.cache/zns-mysql)

What the demo sets for the commands it runs:
  ZNS_KIND_DEVICES                     the null_blk devices, for hack/kind/cluster.sh up
  ZNS_NODE_OWNER, ZNS_NODE_OWNER_WHAT  this run's PID and "make demo in DIR": the QEMU node is this run's
  ZNS_E2E_KUBECONFIG, ZNS_E2E_TAG,     what hack/qemu/zoned-node.sh env exports, for step 5
  ZNS_E2E_TIME_SCALE, ZNS_E2E_PROBE_PERIOD, ...
`

// action is what the command line asks for.
type action int

const (
	runDemo action = iota
	cleanDemo
	showHelp
)

// errUsage: the command line is neither nothing, clean nor --help.
var errUsage = errors.New("usage: hack/demo.sh [clean | --help]")

func parseArgs(args []string) (action, error) {
	switch {
	case len(args) == 0:
		return runDemo, nil
	case len(args) > 1:
		return 0, errUsage
	}
	switch args[0] {
	case "clean":
		return cleanDemo, nil
	case "-h", "-help", "--help":
		return showHelp, nil
	}
	return 0, errUsage
}

var (
	positiveNumber = regexp.MustCompile(`^[1-9][0-9]*$`)
	// a namespace is a DNS label; the QEMU node's gets "-zoned" (6 characters more, at most 63)
	namespaceName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,55}[a-z0-9])?$`)
	// Kubernetes' quantity: a number and a suffix (binary, decimal, or an exponent)
	quantity = regexp.MustCompile(`^([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][0-9]+)?$`)
)

// parseConfig reads the knobs from getenv (os.Getenv) with their defaults, and refuses a value that would
// only fail later in the demo, naming the knob.
func parseConfig(getenv func(string) string) (Config, error) {
	c := Config{
		Zoned:         zonedMode(stagerun.OrDefault(getenv("DEMO_ZONED"), "auto")),
		Namespace:     stagerun.OrDefault(getenv("DEMO_NAMESPACE"), "zns-demo"),
		Workload:      stagerun.OrDefault(getenv("DEMO_WORKLOAD"), "oltp_update_index"),
		Memory:        stagerun.OrDefault(getenv("DEMO_MEMORY"), "1Gi"),
		KeepZonedNode: getenv("DEMO_KEEP_ZONED_NODE") == "1",
		KindCluster:   stagerun.OrDefault(getenv("ZNS_KIND_CLUSTER"), "zns-mysql"),
		KindNode:      stagerun.OrDefault(getenv("ZNS_KIND_NODE"), "auto"),
	}
	switch c.Zoned {
	case zonedAuto, zonedRequired, zonedOff:
	default:
		return c, errors.New("DEMO_ZONED must be auto, 0 or 1")
	}
	for _, n := range []struct {
		dst  *int
		name string
		def  int
	}{
		{&c.Seconds, "DEMO_SECONDS", 60}, {&c.Threads, "DEMO_THREADS", 4}, {&c.Tables, "DEMO_TABLES", 4},
		{&c.TableSize, "DEMO_TABLE_SIZE", 20000}, {&c.DeviceMiB, "DEMO_DEVICE_MIB", 4096},
		{&c.NodeSeconds, "DEMO_NODE_SECONDS", 30}, {&c.NodeTableSize, "DEMO_NODE_TABLE_SIZE", 2000},
	} {
		v := stagerun.OrDefault(getenv(n.name), strconv.Itoa(n.def))
		i, err := strconv.Atoi(v)
		if !positiveNumber.MatchString(v) || err != nil {
			return c, fmt.Errorf("%s must be a positive number, not %q", n.name, v)
		}
		*n.dst = i
	}
	if !namespaceName.MatchString(c.Namespace) {
		return c, fmt.Errorf("DEMO_NAMESPACE must be a namespace name (lower-case letters, digits and '-', at most 57 characters: the QEMU node's is NAME-zoned), not %q", c.Namespace)
	}
	if !quantity.MatchString(c.Memory) {
		return c, fmt.Errorf("DEMO_MEMORY must be a quantity as Kubernetes writes it (1Gi, 512Mi), not %q", c.Memory)
	}
	var err error
	if c.ProgressEvery, err = stagerun.ProgressEvery(getenv); err != nil {
		return c, err
	}
	c.CacheRoot, err = stagerun.CacheRoot(getenv)
	return c, err
}

// kindNode is the node of the kind cluster, where the devices are mounted.
func (c Config) kindNode() string { return c.KindCluster + "-control-plane" }
