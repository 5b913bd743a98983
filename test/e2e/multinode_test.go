package e2e

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// TestAcrossNodes is a comparison across three nodes: MyRocks and InnoDB each on a whole block device of its
// own worker (a loop device that make test attaches and mounts into the node), and the clients of both on the
// third node. Neither client can read its database's device, so an observer on each database's node counts
// the device's writes for it: the bytes per transaction come from there, and the status records where the
// clients ran and that they shared no node with their databases.
func TestAcrossNodes(t *testing.T) {
	beside(t)
	onNodes := strings.Fields(os.Getenv("ZNS_E2E_NODE_DEVICES")) // node:device ...
	if len(onNodes) < 2 {
		t.Skip("needs a cluster of three nodes with a block device on two of them: ZNS_E2E_NODE_DEVICES=\"node1:loop1 node2:loop2\" (make test sets it up as root, ZNS_KIND_WORKERS=2)")
	}
	dbNodes := map[string]string{} // database name: its node
	ns := newNamespace(t, "e2e-nodes")
	var dbs []*v1alpha1.ZNSDatabase
	for i, sample := range []string{"myrocks-xfs", "innodb-baseline"} {
		node, dev, ok := strings.Cut(onNodes[i], ":")
		if !ok {
			t.Fatalf("ZNS_E2E_NODE_DEVICES: %q is not node:device", onNodes[i])
		}
		db := labVolumeDB(t, ns, sample, []string{"rocks", "inno"}[i])
		db.Spec.Storage = v1alpha1.StorageSpec{Device: &v1alpha1.DeviceSource{NodeName: node, DeviceName: dev, Filesystem: v1alpha1.FilesystemExt4}}
		// the devices are the test's: an earlier run's datadir (another root password) is formatted over, as the
		// zoned flow does with its devices, by a token new to them
		db.Spec.Format.ReformatToken = ns
		dbs, dbNodes[db.Name] = append(dbs, db), node
	}
	clientNode := otherNode(t, dbNodes)
	for _, db := range dbs {
		if err := k8s.Create(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	for _, db := range dbs {
		waitAvailable(t, db)
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db.PodName()}, pod); err != nil {
			t.Fatal(err)
		}
		if pod.Spec.NodeName != dbNodes[db.Name] {
			t.Fatalf("%s runs on %s, want %s, its device's node", db.Name, pod.Spec.NodeName, dbNodes[db.Name])
		}
	}

	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "across"}, Spec: v1alpha1.BenchmarkSpec{
		Targets:   []v1alpha1.BenchmarkTarget{{Name: dbs[0].Name}, {Name: dbs[1].Name}},
		Baseline:  dbs[1].Name,
		Workloads: []string{"oltp_update_index"}, Tables: 1, TableSize: 2000, Threads: 2,
		DurationSeconds: 10, ReportIntervalSeconds: 1, Iterations: 1, StartDelaySeconds: 10,
		Clients: &v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsBySelector,
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelHostname: clientNode}}},
	}}
	if err := k8s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitCompleted(t, b)
	printComparison(t, b)
	for _, ts := range b.Status.Targets {
		if ts.State != v1alpha1.TargetDone || len(ts.Iterations) != 1 {
			t.Errorf("target %s: state %s, reason %s: %s; %d iterations, want 1", ts.Name, ts.State, ts.Reason, ts.Message, len(ts.Iterations))
			continue
		}
		want := v1alpha1.ClientNodes{Placement: v1alpha1.ClientsBySelector, Nodes: []string{clientNode}, DatabaseNode: dbNodes[ts.Name]}
		if c := ts.Client; c == nil || c.Placement != want.Placement || !slices.Equal(c.Nodes, want.Nodes) || c.DatabaseNode != want.DatabaseNode || c.SharedNode {
			t.Errorf("target %s: client record %+v, want %+v", ts.Name, c, want)
		}
		bpt, _ := strconv.ParseFloat(ts.Iterations[0].BytesPerTransaction, 64)
		if bpt <= 0 {
			t.Errorf("target %s: device bytes per transaction %q: want the observer's count, positive", ts.Name, ts.Iterations[0].BytesPerTransaction)
		}
		t.Logf("target %s: database on %s, clients on %s, %s tps, %.1f KiB written to %s per transaction (the observer's count)",
			ts.Name, dbNodes[ts.Name], clientNode, ts.Iterations[0].TPS, bpt/1024, ts.Storage)
	}
	observersOn(t, ns, dbNodes)
}

// otherNode is a node of the cluster that holds none of the databases, for their clients.
func otherNode(t *testing.T, dbNodes map[string]string) string {
	t.Helper()
	nodes := &corev1.NodeList{}
	if err := k8s.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	taken := map[string]bool{}
	for _, n := range dbNodes {
		taken[n] = true
	}
	for _, n := range nodes.Items {
		if !taken[n.Name] {
			return n.Name
		}
	}
	t.Skipf("needs a third node for the clients: the cluster has %d, and the databases take %d", len(nodes.Items), len(taken))
	return ""
}

// observerStarting is the Event a target's observer announces itself with (the operator's event catalog,
// operator/internal/event, which this module's tests outside the operator cannot import).
const observerStarting = "ObserverStarting"

// observersOn checks that an observer started on each database's node for its target.
func observersOn(t *testing.T, ns string, dbNodes map[string]string) {
	t.Helper()
	events := &corev1.EventList{}
	if err := k8s.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for db, node := range dbNodes {
		found := false
		for _, e := range events.Items {
			if e.Reason == observerStarting && strings.Contains(e.Message, "target "+db+" ") &&
				strings.Contains(e.Message, "on node "+node+":") {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s Event for target %s on node %s: %s", observerStarting, db, node, eventTimeline(events.Items))
		}
	}
}
