package controller_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/controller"
	"github.com/zns-mysql/zns-mysql/operator/internal/inventory"
	"github.com/zns-mysql/zns-mysql/operator/internal/inventoryagent"
)

// Placement by requirements, against devices published by the real inventory agent from the QEMU guest's
// recorded sysfs. Of its devices only nullb0 (64 zones, no open limit, mq-deadline) is fit for ZenFS: nullb2 has
// 16 zones, nullb3 3 open zones, nvme0n1 the scheduler none, nullb1 is conventional. Every test selects nodes by a
// label of its own, since the suite's other tests publish devices too.

// placementNode is a node with the guest's devices, published by its agent, and the label rack=<rack>.
func placementNode(t *testing.T, rack string) string {
	t.Helper()
	node, sys := inventoryNode(t, "nullb1")
	n := &corev1.Node{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	n.Labels["example.test/rack"] = rack
	if err := k8s.Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
	agent := &inventoryagent.Agent{Client: k8s, NodeName: node, SysRoot: sys, Log: logr.Discard()}
	if err := agent.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return node
}

func rackLabel() string { return fmt.Sprintf("rack-%d-%d", time.Now().Unix()%100000, nsCounter.Add(1)) }

func placedDB(ns, name, rack string, req v1alpha1.DeviceRequirements) *v1alpha1.ZNSDatabase {
	db := zonedDB(ns, name, "", "")
	req.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"example.test/rack": rack}}
	db.Spec.Storage.ZonedDevice = &v1alpha1.ZonedDeviceSource{Requirements: &req}
	return db
}

func waitBinding(t *testing.T, db *v1alpha1.ZNSDatabase) *v1alpha1.DeviceBinding {
	t.Helper()
	var b *v1alpha1.DeviceBinding
	eventually(t, db.Name+" bound to a device", func() error {
		b = get(t, db).Status.DeviceBinding
		if b == nil {
			return fmt.Errorf("no binding; conditions %+v", get(t, db).Status.Conditions)
		}
		return nil
	})
	return b
}

func zonedDevice(t *testing.T, name string) *v1alpha1.ZonedDevice {
	t.Helper()
	d := &v1alpha1.ZonedDevice{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: name}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPlacementBindsTheDeviceThatFitsAndNeverTwice(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	rack := rackLabel()
	placementNode(t, "elsewhere-"+rack)
	node := placementNode(t, rack)

	first := placedDB(ns, "first", rack, v1alpha1.DeviceRequirements{MinZones: 32, MinOpenZones: 14})
	create(t, first)
	b := waitBinding(t, first)
	if b.NodeName != node || b.DeviceName != "nullb0" || b.ZonedDevice != inventory.ObjectName(node, "nullb0") || b.BoundAt.IsZero() {
		t.Fatalf("binding %+v, want nullb0 on %s (the one device of the selected node that ZenFS accepts)", b, node)
	}
	dev := zonedDevice(t, b.ZonedDevice)
	if ref := dev.Spec.ClaimRef; ref == nil || ref.Namespace != ns || ref.Name != "first" || ref.UID != get(t, first).UID {
		t.Errorf("ZonedDevice claimRef %+v, want %s/first with its UID", ref, ns)
	}
	if msg := waitEvent(t, first, "DeviceBound"); !strings.Contains(msg, "/dev/nullb0 on node "+node) || !strings.Contains(msg, "64 zones of 64Mi") {
		t.Errorf("DeviceBound says %q", msg)
	}
	// From here on the database goes as one that names the device: a preflight pinned to the chosen node.
	pj := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: first.PreflightJobName()}, pj)
	assertPinnedTo(t, pj.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, node)
	if got := strings.Join(pj.Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(got, "--device nullb0") {
		t.Errorf("preflight command %q does not read the chosen device", got)
	}
	eventually(t, "holder recorded", func() error {
		if h := zonedDevice(t, b.ZonedDevice).Status.Holder; h != ns+"/first" {
			return fmt.Errorf("holder %q", h)
		}
		return nil
	})

	// The same requirements again: the node's one fit device is taken, and the condition says what each lacks.
	second := placedDB(ns, "second", rack, v1alpha1.DeviceRequirements{MinZones: 32})
	create(t, second)
	cond := waitCondition(t, second, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonNoDeviceFits)
	for _, want := range []string{"given to ZNSDatabase " + ns + "/first", "16 zones, fewer than the 32 asked",
		`WrongScheduler (nvme0n1 uses I/O scheduler "none")`, "TooFewOpenZones (nullb3 allows only 3 open zones)", "a conventional candidate (zone model none)",
		"are on nodes the nodeSelector does not select"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("NoDeviceFits lacks %q: %s", want, cond.Message)
		}
	}
	if msg := waitEvent(t, second, "NoDeviceFits"); msg != cond.Message {
		t.Errorf("the event says %q, the condition %q", msg, cond.Message)
	}
	waitCondition(t, second, v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonNoDeviceFits)
	if err := absent(client.ObjectKey{Namespace: ns, Name: second.PreflightJobName()}, &batchv1.Job{}); err != nil {
		t.Errorf("a database without a device: %v", err)
	}

	// A database that names the claimed device is refused it.
	named := zonedDB(ns, "named", node, "nullb0")
	create(t, named)
	if c := waitCondition(t, named, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonDeviceConflict); !strings.Contains(c.Message, ns+"/first") {
		t.Errorf("DeviceConflict says %q", c.Message)
	}

	// Deleted, the database leaves its claim (the device keeps its data for it), and created again, it gets it
	// back. The database that names the device goes first: the claim binds requirements, not a user's own choice
	// of device, so with first gone it would have the device.
	for _, db := range []*v1alpha1.ZNSDatabase{named, first} {
		if err := k8s.Delete(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "named deleted", func() error { return absent(client.ObjectKeyFromObject(named), &v1alpha1.ZNSDatabase{}) })
	eventually(t, "first deleted", func() error { return absent(client.ObjectKeyFromObject(first), &v1alpha1.ZNSDatabase{}) })
	if ref := zonedDevice(t, b.ZonedDevice).Spec.ClaimRef; ref == nil || ref.Name != "first" {
		t.Fatalf("the claim went with the database: %+v", ref)
	}
	consistently(t, "the released device goes to no other database", 2*time.Second, func() error {
		if get(t, second).Status.DeviceBinding != nil {
			return fmt.Errorf("second took the device released by first: %+v", get(t, second).Status.DeviceBinding)
		}
		return nil
	})
	again := placedDB(ns, "first", rack, v1alpha1.DeviceRequirements{MinZones: 32})
	create(t, again)
	if b2 := waitBinding(t, again); b2.ZonedDevice != b.ZonedDevice {
		t.Errorf("created again, first got %s, want its device %s back", b2.ZonedDevice, b.ZonedDevice)
	}
	if ref := zonedDevice(t, b.ZonedDevice).Spec.ClaimRef; ref.UID != get(t, again).UID {
		t.Errorf("claimRef %+v does not carry the new database's UID", ref)
	}
}

// staleDevices plays an informer that lags: once frozen, its client lists the ZonedDevices as they were then.
type staleDevices struct {
	client.Client
	mu     sync.Mutex
	frozen *v1alpha1.ZonedDeviceList
}

func (s *staleDevices) freeze(t *testing.T) {
	t.Helper()
	list := &v1alpha1.ZonedDeviceList{}
	if err := k8s.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frozen = list
}

func (s *staleDevices) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	s.mu.Lock()
	frozen := s.frozen
	s.mu.Unlock()
	if devs, ok := list.(*v1alpha1.ZonedDeviceList); ok && frozen != nil {
		frozen.DeepCopyInto(devs)
		return nil
	}
	return s.Client.List(ctx, list, opts...)
}

// TestPlacementRaceForTheLastDevice races databases for one fit device under two operators, one of which reads
// the devices from a cache that never sees a claim: it always chooses the device, and only the claim's
// precondition on the ZonedDevice's resourceVersion stops it from taking the device a second time.
func TestPlacementRaceForTheLastDevice(t *testing.T) {
	requireEnv(t)
	stale := &staleDevices{}
	stopReplica, err := launchManager(func(c client.Client) client.Client { stale.Client = c; return stale })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopReplica)
	ns := newNamespace(t)
	rack := rackLabel()
	node := placementNode(t, rack)
	stale.freeze(t)
	dbs := make([]*v1alpha1.ZNSDatabase, 4)
	var wg sync.WaitGroup
	for i := range dbs {
		dbs[i] = placedDB(ns, fmt.Sprintf("racer%d", i), rack, v1alpha1.DeviceRequirements{})
		wg.Go(func() {
			if err := k8s.Create(ctx, dbs[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var winner string
	eventually(t, "one winner, the others told why", func() error {
		bound, waiting := []string{}, 0
		for _, db := range dbs {
			cur := get(t, db)
			if cur.Status.DeviceBinding != nil {
				bound = append(bound, cur.Name+"="+cur.Status.DeviceBinding.ZonedDevice)
				continue
			}
			if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionDeviceReady); c != nil && c.Reason == v1alpha1.ReasonNoDeviceFits {
				waiting++
			}
		}
		if len(bound) > 1 {
			t.Fatalf("one device given to several databases: %v", bound)
		}
		if len(bound) != 1 || waiting != len(dbs)-1 {
			return fmt.Errorf("bound %v, %d waiting with NoDeviceFits", bound, waiting)
		}
		winner = strings.SplitN(bound[0], "=", 2)[0]
		return nil
	})
	if ref := zonedDevice(t, inventory.ObjectName(node, "nullb0")).Spec.ClaimRef; ref == nil || ref.Name != winner {
		t.Errorf("claimRef %+v, want the winner %s", ref, winner)
	}
	for _, db := range dbs {
		if db.Name != winner {
			// "given to" once the claim is seen, "named by" when the winner's binding was seen first
			if msg := waitEvent(t, db, "NoDeviceFits"); !strings.Contains(msg, "ZNSDatabase "+ns+"/"+winner) {
				t.Errorf("%s: %s", db.Name, msg)
			}
		}
	}
}

// TestClaimDeviceIsConditional: a claim made from a copy read before another claim landed loses, and leaves
// the first claim in place.
func TestClaimDeviceIsConditional(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	rack := rackLabel()
	node := placementNode(t, rack)
	before := zonedDevice(t, inventory.ObjectName(node, "nullb0"))
	first := placedDB(ns, "first", rack, v1alpha1.DeviceRequirements{})
	create(t, first)
	waitBinding(t, first)
	late := placedDB(ns, "late", rack, v1alpha1.DeviceRequirements{})
	create(t, late)
	won, err := controller.ClaimDevice(ctx, k8s, before.DeepCopy(), get(t, late))
	if err != nil {
		t.Fatal(err)
	}
	if won {
		t.Fatal("a claim from a stale copy of the device won over the claim that landed first")
	}
	if ref := zonedDevice(t, before.Name).Spec.ClaimRef; ref == nil || ref.Name != "first" {
		t.Errorf("claimRef %+v, want first's", ref)
	}
	waitCondition(t, late, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonNoDeviceFits)
}

func TestPlacementWaitsForADeviceThatFits(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	rack := rackLabel()
	db := placedDB(ns, "waiter", rack, v1alpha1.DeviceRequirements{MinZoneSize: resource.NewQuantity(64<<20, resource.BinarySI)})
	create(t, db)
	// No node carries the label yet: the selector matches nothing.
	cond := waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonNoDeviceFits)
	if !strings.Contains(cond.Message, "are on nodes the nodeSelector does not select") && !strings.Contains(cond.Message, "the inventory has no zoned device") {
		t.Errorf("NoDeviceFits says %q", cond.Message)
	}
	waitEvent(t, db, "NoDeviceFits")
	// A node with a fit device joins: the database takes it without being touched.
	node := placementNode(t, rack)
	if b := waitBinding(t, db); b.NodeName != node || b.DeviceName != "nullb0" {
		t.Errorf("binding %+v", b)
	}

	// Requirements the node's devices cannot meet: each device says what it lacks.
	tooBig := placedDB(ns, "too-big", rack, v1alpha1.DeviceRequirements{MinZones: 1000, MinCapacity: resource.NewQuantity(1<<40, resource.BinarySI)})
	create(t, tooBig)
	cond = waitCondition(t, tooBig, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, v1alpha1.ReasonNoDeviceFits)
	for _, want := range []string{"64 zones, fewer than the 1000 asked", "size 4Gi, smaller than the 1Ti asked", "given to ZNSDatabase " + ns + "/waiter"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("NoDeviceFits lacks %q: %s", want, cond.Message)
		}
	}
}

func TestPlacementRequirementsAdmission(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	both := placedDB(ns, "both", "r", v1alpha1.DeviceRequirements{})
	both.Spec.Storage.ZonedDevice.NodeName, both.Spec.Storage.ZonedDevice.DeviceName = "node-a", "nullb0"
	refusedAt(t, both, "give either nodeName and deviceName")
	neither := zonedDB(ns, "neither", "node-a", "")
	refusedAt(t, neither, "give either nodeName and deviceName")
	xfs := placedDB(ns, "xfs", "r", v1alpha1.DeviceRequirements{})
	xfs.Spec.Storage.ZonedDevice.Filesystem = v1alpha1.FilesystemZonedXFS
	refusedAt(t, xfs, "requirements choose a device for zenfs or btrfs only")
	negative := placedDB(ns, "negative", "r", v1alpha1.DeviceRequirements{MinZones: -1})
	refusedAt(t, negative, "minZones")
}
