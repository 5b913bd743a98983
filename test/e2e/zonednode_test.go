package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
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
// (zoned with conventional zones, for f2fs), nvme0n1 (emulated NVMe ZNS), and nullb2 (conventional, offered as
// a local PersistentVolume of StorageClass zns-guest-local).
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

func zonedFSDB(ns, name, node, device string, fs v1alpha1.ZonedFilesystem, engine v1alpha1.Engine) *v1alpha1.ZNSDatabase {
	return &v1alpha1.ZNSDatabase{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ZNSDatabaseSpec{
			Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: node, DeviceName: device, Filesystem: fs}},
			Engine:  engine,
			Flavor:  v1alpha1.FlavorMariaDB,
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceMemory: resource.MustParse("1Gi"),
			}},
		},
	}
}

// TestZonedFilesystemFlow is the zoned path on a real kubelet whose kernel has zoned devices (the QEMU node):
// databases on btrfs and f2fs in zoned mode on null_blk and on emulated NVMe ZNS become Available beside one on
// a conventional device; a second database asking for a taken device is refused; deleting a database keeps its
// data and a re-created one finds it; a Benchmark of zoned and conventional targets completes with device
// bytes per transaction for each.
func TestZonedFilesystemFlow(t *testing.T) {
	node := zonedNode(t)
	ns := newNamespace(t, "e2e-zonedfs")
	// the node's conventional device, a local PersistentVolume of this class (hack/qemu/guest-node/node.sh)
	class := env("ZNS_E2E_CONVENTIONAL_CLASS", "zns-guest-local")

	btrfs := zonedFSDB(ns, "zbtrfs", node, "nullb0", v1alpha1.FilesystemBtrfs, v1alpha1.EngineInnoDB)
	f2fs := zonedFSDB(ns, "zf2fs", node, "nullb1", v1alpha1.FilesystemF2FS, v1alpha1.EngineInnoDB)
	nvme := zonedFSDB(ns, "nvme", node, "nvme0n1", v1alpha1.FilesystemBtrfs, v1alpha1.EngineInnoDB)
	conv := conventionalDB(ns, "conv", v1alpha1.EngineInnoDB)
	conv.Spec.Storage.Volume.StorageClassName = ptr.To(class)
	dbs := []*v1alpha1.ZNSDatabase{btrfs, f2fs, nvme, conv}
	start := time.Now()
	for _, db := range dbs {
		if err := k8s.Create(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	for _, db := range dbs {
		waitAvailableWithin(t, db, zonedAvailableTimeout)
	}
	t.Logf("ZONED-NODE four databases Available %s after the apply", time.Since(start).Round(time.Second))
	for _, db := range []*v1alpha1.ZNSDatabase{btrfs, f2fs, nvme} {
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

	// Rows through the Service, on the zoned btrfs.
	sqlStart := time.Now()
	out := sqlJob(t, btrfs, "CREATE DATABASE IF NOT EXISTS e2e; CREATE TABLE e2e.t (id INT PRIMARY KEY, v VARCHAR(16)); "+
		"INSERT INTO e2e.t VALUES (1,'kept'),(2,'across'),(3,'deletion'); SELECT COUNT(*) FROM e2e.t;")
	if strings.TrimSpace(out) != "3" {
		t.Errorf("rows on zoned btrfs: %q, want 3", out)
	}
	t.Logf("ZONED-NODE rows written in %s", time.Since(sqlStart).Round(time.Second))

	// A second database asking for a taken device is refused, and nothing of it touches the device.
	thief := zonedFSDB(ns, "thief", node, "nullb0", v1alpha1.FilesystemBtrfs, v1alpha1.EngineInnoDB)
	if err := k8s.Create(ctx, thief); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "thief refused", 2*time.Minute*timeScale, func() error {
		cur := &v1alpha1.ZNSDatabase{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(thief), cur); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cur.Status.Conditions, "DeviceReady")
		if c == nil || c.Reason != "DeviceConflict" || !strings.Contains(c.Message, ns+"/zbtrfs") {
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
	waitFor(t, "zbtrfs's PersistentVolumes released", 5*time.Minute*timeScale/2, func() error {
		for _, name := range []string{v1alpha1.DevicePVName(node, "nullb0"), v1alpha1.FilesystemPVName(node, "nullb0")} {
			if err := k8s.Get(ctx, client.ObjectKey{Name: name}, &corev1.PersistentVolume{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("PersistentVolume %s still there (%v)", name, err)
			}
		}
		return nil
	})
	again := zonedFSDB(ns, "zbtrfs", node, "nullb0", v1alpha1.FilesystemBtrfs, v1alpha1.EngineInnoDB)
	if err := k8s.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	waitAvailableWithin(t, again, zonedAvailableTimeout)
	cur := &v1alpha1.ZNSDatabase{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(again), cur); err != nil {
		t.Fatal(err)
	}
	if f := cur.Status.Filesystem; f == nil || f.Action != "keep" {
		t.Errorf("re-created zbtrfs: status.filesystem %+v, want the existing btrfs kept", f)
	}
	if out := sqlJob(t, again, "SELECT GROUP_CONCAT(v ORDER BY id) FROM e2e.t;"); strings.TrimSpace(out) != "kept,across,deletion" {
		t.Errorf("rows after deleting and re-creating the database: %q, want the three written before", out)
	}

	// A multitenant Benchmark: zoned btrfs on null_blk and on NVMe ZNS beside the conventional device.
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "zoned-vs-conv"}, Spec: v1alpha1.BenchmarkSpec{
		Targets:  []v1alpha1.BenchmarkTarget{{Name: "zbtrfs"}, {Name: "nvme"}, {Name: "conv"}},
		Baseline: "conv", Workload: "oltp_update_index", Tables: 1, TableSize: 2000, Threads: 2,
		DurationSeconds: 20, ReportIntervalSeconds: 2, Iterations: 1,
		StartDelaySeconds:    int32(30 * timeScale),
		TargetTimeoutSeconds: int32(600 * timeScale),
	}}
	bStart := time.Now()
	if err := k8s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitCompletedWithin(t, b, 12*time.Minute*timeScale)
	t.Logf("ZONED-NODE Benchmark Completed %s after the apply", time.Since(bStart).Round(time.Second))
	for _, ts := range b.Status.Targets {
		if ts.State != v1alpha1.TargetDone || len(ts.Iterations) != 1 {
			t.Errorf("target %s: %+v", ts.Name, ts)
			continue
		}
		r := ts.Iterations[0]
		tps, _ := strconv.ParseFloat(r.TPS, 64)
		bpt, _ := strconv.ParseFloat(r.BytesPerTransaction, 64)
		if tps <= 0 || bpt <= 0 {
			t.Errorf("target %s: tps %q, device bytes per transaction %q: want both positive", ts.Name, r.TPS, r.BytesPerTransaction)
		}
		if want := map[string]string{"zbtrfs": "btrfs", "nvme": "btrfs"}[ts.Name]; ts.Filesystem != want {
			t.Errorf("target %s: status filesystem %q, want %q (the table names the stack by it)", ts.Name, ts.Filesystem, want)
		}
		t.Logf("ZONED-NODE target %s (%s, %s %s): %s tps, %.1f KiB written to the device per transaction", ts.Name, ts.Engine, ts.Storage, ts.Filesystem, r.TPS, bpt/1024)
	}
	printComparison(t, b)
}
