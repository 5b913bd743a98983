package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// Config is every knob of a run, read once from the environment at the start (parseConfig). Each field's env
// tag names its variable; usage, which --help prints, describes every one of them (a test checks it).
type Config struct {
	// CacheRoot: ZNS_CACHE_DIR, else $XDG_CACHE_HOME/zns-mysql, else $HOME/.cache/zns-mysql (hack/lib/tool-common.sh).
	CacheRoot string `env:"ZNS_CACHE_DIR"`
	// E2EOff: ZNS_E2E=0, no cluster and no e2e suite. Any other value is left to the suite.
	E2EOff bool `env:"ZNS_E2E"`
	// E2EKubeconfig: run the e2e suite on this cluster instead of creating one.
	E2EKubeconfig string `env:"ZNS_E2E_KUBECONFIG"`
	// KeepCluster: ZNS_TEST_KEEP_CLUSTER=1 keeps the cluster (and its loop device) this run created.
	KeepCluster bool `env:"ZNS_TEST_KEEP_CLUSTER"`
	// RequireQEMU, RequireImages, RequireE2E: =1, a tier that would skip for want of its setup fails instead.
	// The runner reads the first and the last itself; all three reach the tiers through the environment.
	RequireQEMU   bool `env:"ZNS_REQUIRE_QEMU"`
	RequireImages bool `env:"ZNS_REQUIRE_IMAGES"`
	RequireE2E    bool `env:"ZNS_REQUIRE_E2E"`
	// GoTestFlags: every go test's extra flags, split on blanks as bash's `read -r -a` does.
	GoTestFlags []string `env:"GO_TEST_FLAGS"`
	// TestTimeout, E2ETimeout, ZonedE2ETimeout: go test -timeout of stages 6, 7 and 8, as given.
	TestTimeout     string `env:"TEST_TIMEOUT"`
	E2ETimeout      string `env:"E2E_TIMEOUT"`
	ZonedE2ETimeout string `env:"ZONED_E2E_TIMEOUT"`
	// BudgetMin: the whole run's limit in minutes; -1 when there is none.
	BudgetMin int `env:"ZNS_TEST_BUDGET_MIN"`
	// ZloopModule: a zloop.ko for the guest's kernel, used instead of building one.
	ZloopModule string `env:"ZLOOP_MODULE"`
	// KindCluster, KindNode: the cluster this run creates (defaults zns-test, offline).
	KindCluster string `env:"ZNS_KIND_CLUSTER"`
	KindNode    string `env:"ZNS_KIND_NODE"`
	// KindWorkers: the worker nodes of that cluster besides its control plane (default 2: the e2e suite's
	// databases on two nodes and its clients on a third).
	KindWorkers int `env:"ZNS_KIND_WORKERS"`
	// GoYCSB: a go-ycsb binary for TestYCSBRealServer; unset, the bench image's is used when there is one.
	GoYCSB string `env:"GO_YCSB"`
	// ProgressEvery: the interval of the "still running" lines.
	ProgressEvery time.Duration `env:"ZNS_PROGRESS_EVERY"`
	// NodeLate: ZNS_TEST_NODE_BESIDE=0, the zoned node boots in stage 8 instead of beside stage 7.
	NodeLate bool `env:"ZNS_TEST_NODE_BESIDE"`
}

// usage is what --help prints: what a run does and every knob, in one place.
const usage = `hack/test.sh: the README's test command (make test). On a fresh Debian machine with Go and a Docker
Engine it sets up everything the test tiers need, then runs every tier CI runs, the end-to-end suite included.

  hack/test.sh [--help]

Stages (each announced with the time since the start; their timings are in $ZNS_CACHE_DIR/last-test-stages.tsv):
  1 Debian packages          hack/install-deps.sh (MariaDB + MyRocks, sysbench, fio, QEMU, debootstrap, ...)
  2 Go modules               go mod download
  3 generated files, gofmt, go vet, make lint (shellcheck, staticcheck)
  4 builds, side by side     hack/kubernetes.sh, the kind node image, helm, the QEMU guest, the bench/MariaDB/
                             operator images; cached under $ZNS_CACHE_DIR; each background build logs to
                             $ZNS_CACHE_DIR/last-test-logs/NAME.log
  5 waiting for them         with their progress; meanwhile zloop.ko for the guest's kernel when it needs one
  6 tests                    pure Go, real MariaDB on loopback, envtest, chart, QEMU guest, images
  7 end to end               a kind cluster of its own, three nodes (when root, loop devices: one for the
                             refusal test, one on each worker for the databases across nodes), the images
                             loaded, test/e2e but the zoned node's tests, then the cluster deleted
  8 zoned end to end         a Kubernetes node with zoned devices in the QEMU guest (hack/qemu/zoned-node.sh),
                             the e2e tests that need it (test/e2e's ZonedNodeTests); the node boots beside
                             stage 7 at nice 10, on the CPU the kind tier leaves (log: last-test-logs/
                             zoned-node.log), and again in stage 8 if that boot failed
Tests 6 to 8 end in one summary (hack/testsummary): "N passed, N failed, N skipped", every skip with what it
needs; the go test -json stream is kept in $ZNS_CACHE_DIR/last-test.json. The exit status is non-zero when a
stage failed or a test did.

Environment:
  ZNS_E2E_KUBECONFIG       run the e2e suite on this cluster instead of creating one (load the images first:
                           make e2e-cluster prints the settings; ZNS_E2E_TAG is their tag)
  ZNS_E2E=0                no cluster, no e2e suite and no zoned node (the suite reports itself skipped, with
                           the reason)
  ZNS_TEST_KEEP_CLUSTER=1  keep the cluster this run created, and its loop device (hack/kind/cluster.sh down
                           removes it)
  ZNS_REQUIRE_QEMU=1       the zoned node's stage fails instead of skipping when it cannot run; the QEMU tier
                           fails instead of skipping without a guest
  ZNS_REQUIRE_IMAGES=1     the image tests fail instead of skipping without the images
  ZNS_REQUIRE_E2E=1        stop at once when there is no cluster for the e2e suite (no usable Docker Engine);
                           the suite fails instead of skipping without one
                           (CI sets all three: a tier that would skip for want of its setup fails instead)
  GO_TEST_FLAGS            every go test's extra flags (default -count=1)
  TEST_TIMEOUT             go test -timeout of stage 6, per package (default 45m)
  E2E_TIMEOUT              go test -timeout of stage 7 (default 40m)
  ZONED_E2E_TIMEOUT        go test -timeout of stage 8 (default 75m: the zoned flow under emulation)
  ZNS_TEST_BUDGET_MIN      the whole run's time limit in whole minutes (.ci/run: CI's limit less 2): stage 8's
                           go test gets at most what is left of it less 4 minutes (at least 1 minute), so that
                           a stall ends in go test's report of what was running, not in CI killing the run
                           without a summary
  ZLOOP_MODULE             a zloop.ko for the QEMU guest's kernel, used instead of building one
  ZNS_KIND_CLUSTER         the kind cluster this run creates (default zns-test)
  ZNS_KIND_NODE            where its node image comes from (default offline: the one stage 4 builds)
  ZNS_KIND_WORKERS         its worker nodes besides the control plane (default 2; 0 to 8); with fewer than 2
                           the e2e test across nodes skips and says so
  GO_YCSB                  the go-ycsb of TestYCSBRealServer (default: the bench image's, when it was built)
  ZNS_PROGRESS_EVERY       seconds between two "still running" lines of a long step (default 30)
  ZNS_TEST_NODE_BESIDE=0   boot the zoned node in stage 8, after the kind tier, instead of beside it
  ZNS_CACHE_DIR            cache root (default $XDG_CACHE_HOME/zns-mysql, else ~/.cache/zns-mysql)

What the run sets for the commands it runs:
  ZNS_E2E=1, ZNS_E2E_KUBECONFIG, ZNS_E2E_TAG          the cluster of stage 7 (hack/qemu/zoned-node.sh env:
                                                      the zoned node's in stage 8)
  ZNS_KIND_CLUSTER, ZNS_KIND_NODE, ZNS_KIND_WORKERS, ZNS_KIND_DEVICES,  its own cluster's
  ZNS_E2E_CONVENTIONAL_DEVICE, ZNS_E2E_NODE_DEVICES
  KUBEBUILDER_ASSETS, ZNS_HELM                        the Kubernetes binaries and helm stage 4 built
  ZLOOP_MODULE, or ZNS_ZLOOP_MODULE_ERROR             the zloop.ko stage 5 built, or why it could not
  GO_YCSB                                             the bench image's go-ycsb
  ZNS_NODE_OWNER, ZNS_NODE_OWNER_WHAT                 this run's PID and "make test in DIR": the zoned node
                                                      is this run's while it uses it
`

// errHelp: --help or -h was given.
var errHelp = errors.New("help")

// parseArgs takes hack/test.sh's command line: nothing, or --help.
func parseArgs(args []string) error {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			return errHelp
		default:
			return fmt.Errorf("unknown argument %q: hack/test.sh takes no arguments but --help; its knobs are environment variables", a)
		}
	}
	return nil
}

// parseConfig reads the knobs from getenv (os.Getenv) with their defaults, and refuses a value that would
// only fail later in the run, naming the knob.
func parseConfig(getenv func(string) string) (Config, error) {
	c := Config{
		E2EOff:        getenv("ZNS_E2E") == "0",
		E2EKubeconfig: getenv("ZNS_E2E_KUBECONFIG"),
		KeepCluster:   getenv("ZNS_TEST_KEEP_CLUSTER") == "1",
		RequireQEMU:   getenv("ZNS_REQUIRE_QEMU") == "1",
		RequireImages: getenv("ZNS_REQUIRE_IMAGES") == "1",
		RequireE2E:    getenv("ZNS_REQUIRE_E2E") == "1",
		GoTestFlags:   splitFlags(stagerun.OrDefault(getenv("GO_TEST_FLAGS"), "-count=1")),
		ZloopModule:   getenv("ZLOOP_MODULE"),
		KindCluster:   stagerun.OrDefault(getenv("ZNS_KIND_CLUSTER"), "zns-test"),
		KindNode:      stagerun.OrDefault(getenv("ZNS_KIND_NODE"), "offline"),
		GoYCSB:        getenv("GO_YCSB"),
		BudgetMin:     -1,
		NodeLate:      getenv("ZNS_TEST_NODE_BESIDE") == "0",
	}
	var err error
	if c.CacheRoot, err = stagerun.CacheRoot(getenv); err != nil {
		return c, err
	}
	for _, t := range []struct {
		dst       *string
		name, def string
	}{{&c.TestTimeout, "TEST_TIMEOUT", "45m"}, {&c.E2ETimeout, "E2E_TIMEOUT", "40m"}, {&c.ZonedE2ETimeout, "ZONED_E2E_TIMEOUT", "75m"}} {
		*t.dst = stagerun.OrDefault(getenv(t.name), t.def)
		if d, err := time.ParseDuration(*t.dst); err != nil || d < 0 {
			return c, fmt.Errorf("%s=%s: give a duration as go test -timeout takes it (4500s, 75m, 2h, 1h30m)", t.name, *t.dst)
		}
	}
	if v := getenv("ZNS_TEST_BUDGET_MIN"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c, fmt.Errorf("ZNS_TEST_BUDGET_MIN=%s: give the run's limit in whole minutes (88)", v)
		}
		c.BudgetMin = n
	}
	c.KindWorkers = 2
	if v := getenv("ZNS_KIND_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 8 {
			return c, fmt.Errorf("ZNS_KIND_WORKERS=%s: give the test cluster's worker nodes, 0 to 8 (2)", v)
		}
		c.KindWorkers = n
	}
	if c.ProgressEvery, err = stagerun.ProgressEvery(getenv); err != nil {
		return c, err
	}
	return c, nil
}

// splitFlags splits GO_TEST_FLAGS as `read -r -a` did: its first line, on spaces, tabs and newlines, no quoting.
func splitFlags(v string) []string {
	v, _, _ = strings.Cut(v, "\n")
	return strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' })
}

// stage8Timeout is the -timeout of stage 8's go test: ZONED_E2E_TIMEOUT, or with a budget what is left of it
// after elapsed, less 4 minutes for the summary, and at least 60 s; with the log line that says so.
func stage8Timeout(c Config, elapsed int) (timeout, note string) {
	if c.BudgetMin < 0 {
		return c.ZonedE2ETimeout, ""
	}
	left := c.BudgetMin*60 - elapsed - 240
	if left <= 60 {
		left = 60
	}
	want, _ := time.ParseDuration(c.ZonedE2ETimeout) // parseConfig checked it
	secs := left
	if w := int(want / time.Second); w > 0 && w < left { // 0: go test's "no timeout"
		secs = w
	}
	timeout = fmt.Sprintf("%ds", secs)
	return timeout, fmt.Sprintf("stage 8's tests get %s (ZONED_E2E_TIMEOUT %s; %d min budget, %s gone)",
		timeout, c.ZonedE2ETimeout, c.BudgetMin, stagerun.Mmss(elapsed))
}
