package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/zns-mysql/zns-mysql/config/samples"
	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/test/benchtiming"
)

// timeScale stretches the suite's waits on a slow cluster: hack/qemu/zoned-node.sh sets it for a node under
// QEMU's emulation (TCG), where a process takes about a second to start.
var timeScale = func() time.Duration {
	n, err := strconv.Atoi(os.Getenv("ZNS_E2E_TIME_SCALE"))
	if err != nil || n < 1 {
		return 1
	}
	return time.Duration(n)
}()

// zonedNode is the node with the devices hack/qemu/zoned-node.sh makes: nullb0 (zoned, 64 MiB zones), nullb1
// (zoned with conventional zones, for f2fs), nullb3 and nullb4 (zoned, 512 MiB of conventional zones each, for
// zoned XFS), nvme0n1 (emulated NVMe ZNS), nvme1n1 (emulated conventional NVMe
// with the OCP SMART log), and nullb2 (conventional, offered as a local PersistentVolume of StorageClass
// zns-guest-local).
func zonedNode(t *testing.T) string {
	t.Helper()
	node := os.Getenv("ZNS_E2E_ZONED_NODE")
	if node == "" {
		t.Skip("needs a Kubernetes node with zoned devices: hack/qemu/zoned-node.sh up boots one under QEMU (make test's stage 8 does), then eval \"$(hack/qemu/zoned-node.sh env)\"")
	}
	requireCluster(t)
	return node
}

// zonedAvailableTimeout: a zoned database's first start (the format Job, then mysqld's system tables) took
// 12 minutes under emulation.
var zonedAvailableTimeout = 15*time.Minute*timeScale/4 + 8*time.Minute

// onZonedNode places the zoned node's scenario (config/samples/zoned-node) in ns on node, with the time scale of
// its emulation and a reformat token of its own for the baseline's preconditioning.
func onZonedNode(ns, node string) samples.Placement {
	return samples.Placement{Namespace: ns, Node: node, ReformatToken: "e2e-" + ns, TimeScale: int32(timeScale)}
}

// TestZonedFilesystemFlow is the zoned path on a real kubelet whose kernel has zoned devices (the QEMU node):
// databases on btrfs and f2fs in zoned mode on null_blk and on emulated NVMe ZNS, and InnoDB and MyRocks on zoned
// XFS, become Available beside one on a volume and one on a whole conventional device; a second database asking
// for a taken device is refused; deleting a database keeps its data and a re-created one finds it; a new reformat
// token re-formats; a Benchmark of one zoned and conventional target per stack completes with device bytes per
// transaction for each.
func TestZonedFilesystemFlow(t *testing.T) {
	node := zonedNode(t)
	t.Cleanup(func() {
		if t.Failed() {
			dumpNode(t, node)
		}
	})
	ns := newNamespace(t, "e2e-zonedfs")
	// the zoned node's scenario (config/samples/zoned-node), as make demo runs it, with the databases only this
	// flow has (innodb-f2fs, innodb-volume, a local PersistentVolume of the node's class) and without the demo's
	// second geometry (nvme0n2: TestZonedFioBenchmark's raw device)
	names := []string{"myrocks-zoned", "innodb-f2fs", "innodb-zoned", "innodb-volume", "innodb-baseline", "innodb-zxfs", "myrocks-zxfs"}
	p := onZonedNode(ns, node)
	p.StorageClass = env("ZNS_E2E_CONVENTIONAL_CLASS", "")
	sc := scenario(t, samples.ZonedNode, p, append(names, "zoned-vs-conv")...)
	dbs := sc.Databases
	btrfs, f2fs, nvme, convdev, xfs, xfsRocks := dbs[0], dbs[1], dbs[2], dbs[4], dbs[5], dbs[6]
	start := time.Now()
	for _, db := range dbs {
		if err := k8s.Create(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	for _, db := range dbs {
		waitAvailableWithin(t, db, zonedAvailableTimeout)
	}
	t.Logf("ZONED-NODE %d databases Available %s after the apply", len(dbs), time.Since(start).Round(time.Second))
	checkInventory(t, node, dbs)
	checkPlacement(t, ns, node, dbs[0])
	checkPreconditioned(t, convdev, node)
	for _, db := range []*v1alpha1.ZNSDatabase{btrfs, f2fs, nvme, xfs, xfsRocks} {
		cur := &v1alpha1.ZNSDatabase{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
			t.Fatal(err)
		}
		fs := string(db.Spec.Storage.ZonedDevice.Filesystem)
		if f := cur.Status.Filesystem; f == nil || f.Type != fs || f.Action != "format" {
			t.Errorf("%s: status.filesystem %+v, want %s made by the format Job", db.Name, f, fs)
		}
		if d := cur.Status.Device; d == nil || d.Model != "host-managed" || d.Zones < 32 || d.Node != node {
			t.Errorf("%s: status.device %+v, want a host-managed device of at least 32 zones on %s", db.Name, d, node)
		}
	}

	// zf2fs has shown that f2fs formats and serves; it is no Benchmark target: its mysqld would only compete with
	// the others for the emulated node's two vCPUs.
	if err := k8s.Delete(ctx, f2fs); err != nil {
		t.Fatal(err)
	}

	// Rows through the Service, on the zoned btrfs.
	sqlStart := time.Now()
	out := sqlJob(t, btrfs, "CREATE DATABASE IF NOT EXISTS e2e; CREATE TABLE e2e.t (id INT PRIMARY KEY, v VARCHAR(16)); "+
		"INSERT INTO e2e.t VALUES (1,'kept'),(2,'across'),(3,'deletion'); SELECT COUNT(*) FROM e2e.t;")
	if strings.TrimSpace(out) != "3" {
		t.Errorf("rows on zoned btrfs: %q, want 3", out)
	}
	t.Logf("ZONED-NODE rows written in %s", time.Since(sqlStart).Round(time.Second))

	// A second database asking for a taken device is refused, and nothing of it touches the device.
	// (a fresh copy of the sample: btrfs itself carries the server's metadata since its create)
	thief := scenario(t, samples.ZonedNode, onZonedNode(ns, node), btrfs.Name).Databases[0]
	thief.Name = "thief"
	if err := k8s.Create(ctx, thief); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "thief refused", 2*time.Minute*timeScale, func() error {
		cur := &v1alpha1.ZNSDatabase{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(thief), cur); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionDeviceReady)
		if c == nil || c.Reason != "DeviceConflict" || !strings.Contains(c.Message, ns+"/"+btrfs.Name) {
			return fmt.Errorf("DeviceReady %+v", c)
		}
		return nil
	})
	for name, obj := range map[string]client.Object{thief.FormatJobName(): &batchv1.Job{},
		thief.StatefulSetName(): &appsv1.StatefulSet{}, thief.DeviceClaimName(): &corev1.PersistentVolumeClaim{}} {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); !apierrors.IsNotFound(err) {
			t.Errorf("the refused database has a %T %s (%v)", obj, name, err)
		}
	}
	if err := k8s.Delete(ctx, thief); err != nil {
		t.Fatal(err)
	}

	// Deleting a database releases the device's volumes and keeps its data: the re-created one finds the rows.
	if err := k8s.Delete(ctx, btrfs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, btrfs.Name+"'s PersistentVolumes released", 5*time.Minute*timeScale/2, func() error {
		for _, name := range []string{v1alpha1.DevicePVName(node, "nullb0"), v1alpha1.FilesystemPVName(node, "nullb0")} {
			if err := k8s.Get(ctx, client.ObjectKey{Name: name}, &corev1.PersistentVolume{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("PersistentVolume %s still there (%v)", name, err)
			}
		}
		return nil
	})
	again := scenario(t, samples.ZonedNode, onZonedNode(ns, node), btrfs.Name).Databases[0]
	if err := k8s.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	waitAvailableWithin(t, again, zonedAvailableTimeout)
	cur := &v1alpha1.ZNSDatabase{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(again), cur); err != nil {
		t.Fatal(err)
	}
	if f := cur.Status.Filesystem; f == nil || f.Action != "keep" {
		t.Errorf("re-created %s: status.filesystem %+v, want the existing btrfs kept", again.Name, f)
	}
	if out := sqlJob(t, again, "SELECT GROUP_CONCAT(v ORDER BY id) FROM e2e.t;"); strings.TrimSpace(out) != "kept,across,deletion" {
		t.Errorf("rows after deleting and re-creating the database: %q, want the three written before", out)
	}
	reformat(t, again, cur.Status.Filesystem.UUID)

	// A multitenant Benchmark of one target per stack: btrfs on NVMe ZNS (SMART's host bytes), MyRocks on zoned
	// XFS over two null_blk devices, InnoDB on a volume and on a whole conventional NVMe device (OCP's media bytes,
	// the baseline), with the FTL model and the write-only phase on the conventional targets first. The re-created
	// btrfs database on null_blk and InnoDB on zoned XFS have served and are deleted first: a stack the Benchmark
	// already has adds two restarts and a prepare on the emulated node's two vCPUs, not coverage (the CI run of
	// a026ea5: six targets still preparing after 12 minutes, and one runner's sysbench --version starved past 30 s).
	for _, db := range []*v1alpha1.ZNSDatabase{again, xfs} {
		if err := k8s.Delete(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	b := sc.Benchmarks[0]
	b.Spec.Targets = slices.DeleteFunc(b.Spec.Targets, func(tg v1alpha1.BenchmarkTarget) bool {
		return tg.Name == again.Name || tg.Name == xfs.Name
	})
	// The scenario's Benchmark, its start delay and timeout stretched by the time scale: under QEMU's emulation
	// four run pods, each with the drive sidecar, started up to 144 s after their Jobs were created (a cold
	// .ci/run of 2026-11-27, the node also running five mysqld).
	steady := *b.Spec.SteadyState
	var targets []string
	for _, tg := range b.Spec.Targets {
		targets = append(targets, tg.Name)
	}
	rec := benchtiming.RecordAvailability(ctx, k8s, ns, targets, time.Second)
	bStart := time.Now()
	if err := k8s.Create(ctx, b); err != nil {
		rec.Stop()
		t.Fatal(err)
	}
	waitCompletedWithin(t, b, 12*time.Minute*timeScale)
	t.Logf("ZONED-NODE Benchmark Completed %s after the apply", time.Since(bStart).Round(time.Second))
	// where the emulated node's Benchmark spends its time, phase by phase (make test's longest stage); the
	// conventional flow holds the timeline itself to account
	if err := logTiming(t, b, bStart, rec.Stop()); err != nil {
		t.Logf("ZONED-NODE no timeline: %v", err)
	}
	// The figures first and the checks after them: a failure is then among the test's last lines, where a CI
	// log's tail and make test's recap show it, not between the targets' lines.
	for _, ts := range b.Status.Targets {
		if len(ts.Iterations) != 1 {
			continue
		}
		zones := "none"
		if g := ts.Zones; g != nil && g.Size != nil && g.Capacity != nil {
			zones = fmt.Sprintf("%d of %s, capacity %s", g.Count, g.Size, g.Capacity)
		}
		bpt, _ := strconv.ParseFloat(ts.Iterations[0].BytesPerTransaction, 64)
		t.Logf("ZONED-NODE target %s (%s, %s %s, zones %s): %s tps, %.1f KiB written to the device per transaction", ts.Name, ts.Engine,
			ts.Storage, ts.Filesystem, zones, ts.Iterations[0].TPS, bpt/1024)
	}
	printComparison(t, b)
	for _, ts := range b.Status.Targets {
		if ts.State != v1alpha1.TargetDone || len(ts.Iterations) != 1 {
			t.Errorf("target %s: state %s, reason %s: %s; %d iterations, want 1 (the namespace's dump has the rest)",
				ts.Name, ts.State, ts.Reason, ts.Message, len(ts.Iterations))
			continue
		}
		r := ts.Iterations[0]
		tps, _ := strconv.ParseFloat(r.TPS, 64)
		bpt, _ := strconv.ParseFloat(r.BytesPerTransaction, 64)
		if tps <= 0 || bpt <= 0 {
			t.Errorf("target %s: tps %q, device bytes per transaction %q: want both positive", ts.Name, r.TPS, r.BytesPerTransaction)
		}
		if want := map[string]string{"myrocks-zoned": "btrfs", "innodb-zoned": "btrfs", "innodb-baseline": "ext4", "innodb-zxfs": "xfs", "myrocks-zxfs": "xfs"}[ts.Name]; ts.Filesystem != want {
			t.Errorf("target %s: status filesystem %q, want %q (the table names the stack by it)", ts.Name, ts.Filesystem, want)
		}
		conventional := ts.Name == "innodb-volume" || ts.Name == "innodb-baseline"
		zoned := !conventional
		if g := ts.Zones; zoned != (g != nil) || g != nil && (g.Count == 0 || g.Size == nil || g.Capacity == nil) {
			t.Errorf("target %s: zone geometry %+v (want one from the device for a zoned target, none otherwise)", ts.Name, g)
		}
		// Each device here is a drive of its own (nvme0n1 and nvme1n1 are two emulated controllers); the volume's
		// drive is known when its PersistentVolume is a local device (nullb2).
		if want := map[string]string{"myrocks-zoned": node + "/nullb0", "innodb-zoned": node + "/nvme0", "innodb-baseline": node + "/nvme1",
			"innodb-zxfs": node + "/nullb3", "myrocks-zxfs": node + "/nullb4"}[ts.Name]; want != "" &&
			(ts.Drive != want || len(ts.SharesDriveWith) != 0) {
			t.Errorf("target %s: drive %q shared with %v, want %q alone", ts.Name, ts.Drive, ts.SharesDriveWith, want)
		}
		checkDriveFigures(t, ts)
		if conventional {
			checkSteadyState(t, ts, steady)
		} else if st := ts.SteadyState; st == nil || st.Required || len(st.Rounds) > 0 {
			t.Errorf("target %s: steady state %+v: a zoned target runs no write-only rounds", ts.Name, st)
		}
	}
}

// reformat sets a new reformatToken on a running database: on the real kubelet the operator stops mysqld (the
// kubelet unmounts the file system), the format Job makes a new one over the old, and mysqld starts on it, empty.
func reformat(t *testing.T, db *v1alpha1.ZNSDatabase, oldUUID string) {
	t.Helper()
	start := time.Now()
	cur := &v1alpha1.ZNSDatabase{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
		t.Fatal(err)
	}
	token := "e2e-reformat-" + db.Namespace
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Format.ReformatToken = token
	if err := k8s.Patch(ctx, cur, patch); err != nil {
		t.Fatal(err)
	}
	waitFor(t, db.Name+" re-formatted with the new token", zonedAvailableTimeout, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
			return err
		}
		f := cur.Status.Filesystem
		if f == nil || f.ReformatToken != token || f.Action != "format" {
			return fmt.Errorf("status.filesystem %+v", f)
		}
		return nil
	})
	waitAvailableWithin(t, db, zonedAvailableTimeout)
	if f := cur.Status.Filesystem; f.UUID == oldUUID || f.ZonesReset == 0 {
		t.Errorf("re-formatted %s: status.filesystem %+v, want a new file system (UUID was %s) over reset zones", db.Name, f, oldUUID)
	}
	if out := sqlJob(t, db, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'e2e';"); strings.TrimSpace(out) != "0" {
		t.Errorf("tables of schema e2e after the re-format: %q, want none", out)
	}
	t.Logf("ZONED-NODE %s re-formatted by a new reformatToken and Available again %s after the patch", db.Name,
		time.Since(start).Round(time.Second))
}

// checkPreconditioned: the device database's format Job wrote the whole device twice before it made ext4, and
// judged its random rounds.
func checkPreconditioned(t *testing.T, db *v1alpha1.ZNSDatabase, node string) {
	t.Helper()
	cur := &v1alpha1.ZNSDatabase{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
		t.Fatal(err)
	}
	p := cur.Status.Precondition
	if p == nil || !p.Preconditioned || len(p.Passes) != 2 || len(p.Rounds) < 2 {
		t.Fatalf("%s: status.precondition %+v, want two passes and the rounds", db.Name, p)
	}
	size := cur.Status.Device.Capacity.Value()
	for i, pass := range p.Passes {
		if pass.Bytes != size {
			t.Errorf("%s: pass %d wrote %d bytes of a %d-byte device", db.Name, i+1, pass.Bytes, size)
		}
	}
	// the drive's own count of the format's writes: at least the two passes, media bytes as host bytes (no FTL)
	if d := p.Drive; d == nil || d.Counters == nil || d.Counters.MediaSource != "smart+ocp" {
		t.Errorf("%s: status.precondition.drive %+v", db.Name, d)
	} else if host, _ := strconv.ParseInt(d.Counters.HostWrittenBytes, 10, 64); host < 2*size || d.Counters.MediaWrittenBytes == "" {
		t.Errorf("%s: the drive counted %d bytes received for two passes over %d: %+v", db.Name, host, size, d.Counters)
	}
	if f := cur.Status.Filesystem; f == nil || f.Type != "ext4" || f.Action != "format" || cur.Status.Device.Node != node {
		t.Errorf("%s: filesystem %+v, device %+v", db.Name, f, cur.Status.Device)
	}
	t.Logf("ZONED-NODE %s preconditioned: %s", db.Name, p.Message)
}

// checkDriveFigures holds a target's drive figures to what its device can say: the emulated conventional NVMe
// namespace (OCP log) measures media bytes equal to its host bytes (QEMU has no FTL), the emulated ZNS namespace
// has SMART only, null_blk has no NVMe logs; the model runs on conventional devices only, and writes at least
// as much to its flash at 7% over-provisioning as at 28%.
func checkDriveFigures(t *testing.T, ts v1alpha1.TargetStatus) {
	t.Helper()
	d := ts.Iterations[0].Drive
	if d == nil {
		t.Errorf("target %s: no drive figures", ts.Name)
		return
	}
	switch ts.Name {
	case "innodb-baseline":
		// The two are read a few milliseconds apart from a live mysqld, whose background flushes may fall between.
		c := d.Counters
		if c == nil {
			t.Errorf("innodb-baseline: no counters: %s", d.CountersUnavailable)
			break
		}
		media, errM := strconv.ParseFloat(c.MediaWrittenBytes, 64)
		block, errB := strconv.ParseFloat(d.BlockLayerWrittenBytes, 64)
		if c.MediaSource != "smart+ocp" || errM != nil || errB != nil || block <= 0 || math.Abs(media-block) > math.Max(1<<20, block/100) {
			t.Errorf("innodb-baseline counters %+v (block layer %s): want OCP media bytes equal to the block layer's", c, d.BlockLayerWrittenBytes)
		}
	case "innodb-zoned":
		if c := d.Counters; c == nil || c.HostWrittenBytes == "" || c.MediaWrittenBytes != "" || c.MediaUnavailable == "" {
			t.Errorf("innodb-zoned counters %+v: want SMART's host bytes and a reason for the missing media bytes", c)
		}
	case "myrocks-zoned", "innodb-zxfs", "myrocks-zxfs": // null_blk
		if d.Counters != nil || !strings.Contains(d.CountersUnavailable, "not an NVMe device") {
			t.Errorf("%s counters %+v, reason %q", ts.Name, d.Counters, d.CountersUnavailable)
		}
	case "innodb-volume":
		if d.Counters != nil || d.CountersUnavailable == "" {
			t.Errorf("innodb-volume counters %+v, reason %q: a volume is reachable only through its file system", d.Counters, d.CountersUnavailable)
		}
	}
	zoned := ts.Storage == "zoned"
	if zoned != (len(d.Modelled) == 0) || zoned && d.ModelUnavailable == "" {
		t.Errorf("target %s (%s): modelled %+v, reason %q", ts.Name, ts.Storage, d.Modelled, d.ModelUnavailable)
	}
	wa := map[int32]float64{}
	for _, m := range d.Modelled {
		wa[m.OverProvisioningPercent], _ = strconv.ParseFloat(m.WriteAmplification, 64)
		if !strings.HasPrefix(m.Label, "modelled") {
			t.Errorf("target %s: a modelled figure without its label: %+v", ts.Name, m)
		}
	}
	if len(d.Modelled) > 0 && !(wa[7] >= wa[28] && wa[28] >= 1) {
		t.Errorf("target %s: modelled WA %v at 7%% and %v at 28%%", ts.Name, wa[7], wa[28])
	}
	t.Logf("ZONED-NODE target %s drive: block layer %s bytes, counters %+v (%s), modelled %+v (%s)", ts.Name,
		d.BlockLayerWrittenBytes, d.Counters, d.CountersUnavailable, d.Modelled, d.ModelUnavailable)
}

// nodeSummary is the part of the kubelet's stats summary (/stats/summary) a starved node shows itself in.
type nodeSummary struct {
	Node struct {
		CPU    struct{ UsageNanoCores uint64 }
		Memory struct{ AvailableBytes, WorkingSetBytes uint64 }
	}
	Pods []podStats
}

type podStats struct {
	PodRef struct{ Name, Namespace string }
	Memory struct{ WorkingSetBytes uint64 }
}

// dumpNode logs what a failed flow needs to tell a starved node from a bug: the node's conditions, its memory and
// CPU use now, and the pods holding the most memory, from the kubelet's own summary.
func dumpNode(t *testing.T, name string) {
	t.Helper()
	n := &corev1.Node{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		t.Logf("--- node %s: %v", name, err)
		return
	}
	var sb strings.Builder
	for _, c := range n.Status.Conditions {
		fmt.Fprintf(&sb, "condition %s=%s %s %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	fmt.Fprintf(&sb, "allocatable cpu %s memory %s\n", n.Status.Allocatable.Cpu(), n.Status.Allocatable.Memory())
	raw, err := clientset.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", name, "proxy", "stats", "summary").DoRaw(ctx)
	var sum nodeSummary
	if err == nil {
		err = json.Unmarshal(raw, &sum)
	}
	if err != nil {
		fmt.Fprintf(&sb, "stats summary: %v\n", err)
	} else {
		fmt.Fprintf(&sb, "now: cpu %.2f cores, memory available %d MiB, working set %d MiB\n", float64(sum.Node.CPU.UsageNanoCores)/1e9,
			sum.Node.Memory.AvailableBytes>>20, sum.Node.Memory.WorkingSetBytes>>20)
		slices.SortFunc(sum.Pods, func(a, b podStats) int { return cmp.Compare(b.Memory.WorkingSetBytes, a.Memory.WorkingSetBytes) })
		for _, p := range sum.Pods[:min(len(sum.Pods), 15)] {
			fmt.Fprintf(&sb, "pod %s/%s working set %d MiB\n", p.PodRef.Namespace, p.PodRef.Name, p.Memory.WorkingSetBytes>>20)
		}
	}
	t.Logf("--- node %s\n%s", name, sb.String())
}
