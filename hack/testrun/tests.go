package main

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
	"github.com/zns-mysql/zns-mysql/test/e2e"
)

// Stages 6 to 8: the tests, their summary, and what the e2e tiers set up and take down.

// tests runs stages 6 to 8 through testsummary, then prints the stage timings, the failed tests' last words
// and the total, and returns the run's status: non-zero when a stage or a test failed.
func (r *runner) tests() int {
	recap := filepath.Join(r.logs, "recap.txt")
	p, err := r.openSummary(filepath.Join(r.cfg.CacheRoot, "last-test.json"), recap)
	if err != nil {
		return r.stages.Report(6, err)
	}
	status := p.close(r, r.testStages())
	r.Procs.Gate()
	c := r.Cmd(nil, r.summary, "stages", r.stages.Log, strconv.Itoa(r.stages.Elapsed()))
	c.Stdout = r.Stderr
	if r.Run(c) != 0 {
		r.Logf("no stage timings (above)")
	}
	// the failed tests' last words once more, last: a long log is often read by its tail alone
	if b, err := os.ReadFile(recap); err == nil && len(b) > 0 {
		r.Stderr.Write(b)
	}
	r.Logf("total %s", stagerun.Mmss(r.stages.Elapsed()))
	return status
}

// testStages is what bash ran in the pipeline's subshell: its status is the last failed go test's, or 1 when a
// stage failed.
func (r *runner) testStages() int {
	status := 0
	note := func(rc int) {
		if rc != 0 {
			status = rc
		}
	}
	if rc := r.stages.Run(6, "tests: pure Go, real MariaDB on loopback, envtest, chart, QEMU guest, images", func() error {
		// the QEMU package boots guests that run MariaDB under emulation: more than go test's default 10 minutes
		note(r.Run(r.goTest([]string{"KUBEBUILDER_ASSETS=" + r.assets, "ZNS_HELM=" + r.helm},
			append([]string{"-timeout", r.cfg.TestTimeout}, r.packages...)...)))
		return nil
	}); rc != 0 {
		return rc
	}
	if rc := r.stages.Run(7, "end to end on kind", func() error { return r.e2eOnKind(note) }); rc != 0 {
		return rc
	}
	if rc := r.stages.Run(8, "zoned end to end: a Kubernetes node with zoned devices under QEMU", func() error {
		rc, err := r.zonedE2E()
		note(rc)
		return err
	}); rc != 0 {
		return rc
	}
	return status
}

// goTest is `go test -json GO_TEST_FLAGS ARGS...` with extra in its environment.
func (r *runner) goTest(extra []string, args ...string) *exec.Cmd {
	return r.Cmd(extra, "go", append(append([]string{"test", "-json"}, r.cfg.GoTestFlags...), args...)...)
}

// e2eOnKind is stage 7: the e2e suite but the zoned node's tests, on the tier's cluster, which is deleted
// afterwards when it is the run's own.
func (r *runner) e2eOnKind(note func(int)) error {
	switch r.mode {
	case e2eOwn:
		if !r.ownCluster() {
			return fail(7, "the test cluster did not come up (above); hack/kind/cluster.sh status shows it, ZNS_E2E=0 make test skips this tier")
		}
	case e2eGiven:
		r.Env.Set("ZNS_E2E", "1")
	case e2eNone:
		r.Logf("no e2e cluster: %s; the suite reports itself skipped", r.why)
		r.Env.Unset("ZNS_E2E")
	}
	r.bootNodeBeside()
	note(r.Run(r.goTest([]string{"ZNS_HELM=" + r.helm}, "-timeout", r.cfg.E2ETimeout, "-skip", e2e.ZonedNodePattern(), "./test/e2e/")))
	// the kind cluster's node would take CPU from the emulated one
	if r.cluster != nil {
		r.cluster.RunOne()
	}
	return nil
}

// ownCluster brings up the run's own cluster with the images and sets the ZNS_E2E_* settings; false when it
// did not come up (what failed said why).
func (r *runner) ownCluster() bool {
	cluster := r.cfg.KindCluster
	r.Env.Set("ZNS_KIND_CLUSTER", cluster, "ZNS_KIND_NODE", r.cfg.KindNode, "ZNS_KIND_WORKERS", strconv.Itoa(r.cfg.KindWorkers))
	// Block devices, which must exist before the cluster (a kind node keeps a static copy of /dev): one for the
	// refusal test, whose first MiB is random so that any write to it shows, and an empty one on each of two
	// workers for the databases across nodes. Loop devices: root only; the tests say what they need and skip
	// otherwise.
	if _, err := exec.LookPath("losetup"); err == nil && os.Geteuid() == 0 {
		var devs, onNodes []string
		workers := workerNames(cluster, min(r.cfg.KindWorkers, 2))
		if dev := r.loopDevice(128<<20, true); dev != "" {
			devs = append(devs, dev)
			r.Env.Set("ZNS_E2E_CONVENTIONAL_DEVICE", cluster+"-control-plane:"+strings.TrimPrefix(dev, "/dev/"))
		} else {
			workers = nil // the next would fail alike
		}
		for _, worker := range workers {
			// a database on ext4 needs 512 MiB of device (the preflight's floor); sparse, it takes what is written
			if dev := r.loopDevice(1<<30, false); dev != "" {
				devs = append(devs, dev)
				onNodes = append(onNodes, worker+":"+strings.TrimPrefix(dev, "/dev/"))
			}
		}
		r.Env.Set("ZNS_KIND_DEVICES", strings.Join(devs, " "), "ZNS_E2E_NODE_DEVICES", strings.Join(onNodes, " "))
	}
	r.cluster = r.Cleanups.Add("the kind cluster", func() { r.deleteCluster(cluster) })
	kubeconfig, rc := r.Output(r.Cmd(nil, "hack/kind/cluster.sh", "up"))
	if rc != 0 {
		return false
	}
	tag, rc := r.Output(r.Cmd(nil, "hack/kind/load-images.sh", "bench", "mariadb", "operator"))
	if rc != 0 {
		return false
	}
	r.Env.Set("ZNS_E2E", "1", "ZNS_E2E_KUBECONFIG", kubeconfig, "ZNS_E2E_TAG", tag)
	return true
}

// workerNames are kind's names for the first n workers of cluster: c-worker, c-worker2, ...
func workerNames(cluster string, n int) []string {
	var names []string
	for i := 1; i <= n; i++ {
		suffix := ""
		if i > 1 {
			suffix = strconv.Itoa(i)
		}
		names = append(names, cluster+"-worker"+suffix)
	}
	return names
}

// deleteCluster deletes the kind cluster the run created, unless ZNS_TEST_KEEP_CLUSTER=1.
func (r *runner) deleteCluster(cluster string) {
	if r.cfg.KeepCluster {
		r.Logf("kept the test cluster %s (ZNS_TEST_KEEP_CLUSTER=1): ZNS_KIND_CLUSTER=%s hack/kind/cluster.sh down removes it", cluster, cluster)
		return
	}
	r.Logf("deleting the test cluster %s", cluster)
	c := r.Cmd([]string{"ZNS_KIND_CLUSTER=" + cluster}, "hack/kind/cluster.sh", "down")
	c.Stdout = nil
	if r.RunCleanup(c) != 0 {
		r.Logf("could not delete it: ZNS_KIND_CLUSTER=%s hack/kind/cluster.sh down", cluster)
	}
}

// loopDevice attaches a loop device of size bytes over a new sparse file, its first MiB random when marked (any
// write to it then shows), and registers their cleanups; "" when it could not, having said why.
func (r *runner) loopDevice(size int64, marked bool) string {
	f, err := os.CreateTemp(r.loopDir, "zns-test-loop.")
	if err != nil {
		r.Logf("no loop device (%v): the e2e tests that need one will skip and say so", err)
		return ""
	}
	file := f.Name()
	r.Cleanups.Add("the loop device's file", func() {
		if !r.cfg.KeepCluster {
			os.Remove(file)
		}
	})
	err = f.Truncate(size)
	if marked && err == nil {
		random := make([]byte, 1<<20)
		if _, err = rand.Read(random); err == nil {
			_, err = f.WriteAt(random, 0)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Logf("no loop device (%s: %v): the e2e tests that need one will skip and say so", file, err)
		return ""
	}
	var out bytes.Buffer
	c := r.Cmd(nil, "losetup", "-f", "--show", file)
	c.Stdout, c.Stderr = &out, &out
	rc := r.Run(c)
	dev := stagerun.TrimNewlines(out.String())
	if rc != 0 || !stagerun.BlockDevice(dev) {
		r.Logf("no loop device (%s): the e2e tests that need one will skip and say so", dev)
		return ""
	}
	r.Cleanups.Add("the loop device", func() {
		if !r.cfg.KeepCluster {
			c := r.Cmd(nil, "losetup", "-d", dev)
			c.Stdout, c.Stderr = nil, nil
			r.RunCleanup(c)
		}
	})
	r.Logf("test device: %s over %s", dev, file)
	return dev
}
