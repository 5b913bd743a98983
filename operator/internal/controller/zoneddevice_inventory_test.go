package controller_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/controller"
	"github.com/zns-mysql/zns-mysql/operator/internal/inventory"
	"github.com/zns-mysql/zns-mysql/operator/internal/inventoryagent"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// guestSysfs is the QEMU guest's real /sys/block, recorded (operator/internal/qemuguest/testdata/README.md).
const guestSysfs = "../qemuguest/testdata/sys"

// inventoryNode creates a Node (envtest has none) and a copy of the guest's sysfs that the test may change.
func inventoryNode(t *testing.T, candidates string) (node, sys string) {
	t.Helper()
	node = fmt.Sprintf("inv-%d-%d", time.Now().Unix()%100000, nsCounter.Add(1))
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{corev1.LabelHostname: node},
		Annotations: map[string]string{v1alpha1.AnnotationConventionalCandidates: candidates}}}
	if err := k8s.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, n) })
	sys = filepath.Join(t.TempDir(), "sys")
	if err := os.CopyFS(sys, os.DirFS(guestSysfs)); err != nil {
		t.Fatal(err)
	}
	return node, sys
}

func nodeDevices(t *testing.T, node string) map[string]v1alpha1.ZonedDevice {
	t.Helper()
	list := &v1alpha1.ZonedDeviceList{}
	if err := k8s.List(ctx, list, client.MatchingLabels{v1alpha1.LabelZonedDeviceNode: node}); err != nil {
		t.Fatal(err)
	}
	out := map[string]v1alpha1.ZonedDevice{}
	for _, d := range list.Items {
		out[d.Status.KernelName] = d
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestInventoryAgentPublishesAndMarksGone(t *testing.T) {
	requireEnv(t)
	node, sys := inventoryNode(t, "nullb1, nosuch0")
	agent := &inventoryagent.Agent{Client: k8s, NodeName: node, SysRoot: sys, Log: logr.Discard()}
	if err := agent.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	devs := nodeDevices(t, node)
	if d := cmp.Diff([]string{"nullb0", "nullb1", "nullb2", "nullb3", "nvme0n1"}, sortedKeys(devs)); d != "" {
		t.Fatalf("published devices (-want +got):\n%s", d)
	}
	for name, d := range devs {
		geo, err := zbd.Inspect(filepath.Join(sys, "block"), name)
		if err != nil {
			t.Fatal(err)
		}
		s := d.Status
		if d.Name != inventory.ObjectName(node, name) || s.NodeName != node || s.Hostname != node || s.State != v1alpha1.ZonedDevicePresent ||
			s.ZoneModel != geo.Model || s.ZoneCount != geo.NrZones || s.ZoneSizeBytes != geo.ZoneSizeBytes || s.MaxOpenZones != geo.MaxOpenZones ||
			s.MaxActiveZones != geo.MaxActiveZones || s.CapacityBytes != geo.CapacityBytes || s.Scheduler != geo.Scheduler ||
			s.LogicalBlockSize != geo.LogicalBlockSize || s.ZoneCapacityBytes != 0 || s.ObservedAt == nil || s.LastSeenTime == nil {
			t.Errorf("%s: status %+v does not say what sysfs says (%+v)", d.Name, s, geo)
		}
		want := v1alpha1.CandidateZoned
		if name == "nullb1" {
			want = v1alpha1.CandidateConventional
		}
		if s.Candidate != want {
			t.Errorf("%s: candidate %s, want %s", name, s.Candidate, want)
		}
		if !managedBy(&d, inventoryagent.FieldManager) {
			t.Errorf("%s: no fields of manager %s: %+v", name, inventoryagent.FieldManager, d.ManagedFields)
		}
	}

	// Nothing changed: nothing is written.
	if err := agent.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for name, d := range nodeDevices(t, node) {
		if d.ResourceVersion != devs[name].ResourceVersion {
			t.Errorf("%s was written by a scan that found nothing new", name)
		}
	}

	// A device removed turns Gone, keeps what it was and is not deleted; a later scan leaves it alone.
	if err := os.RemoveAll(filepath.Join(sys, "block/nullb2")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := agent.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	after := nodeDevices(t, node)
	gone, ok := after["nullb2"]
	if !ok {
		t.Fatal("the removed device's ZonedDevice was deleted")
	}
	if s := gone.Status; s.State != v1alpha1.ZonedDeviceGone || s.LastSeenTime == nil || s.ZoneCount != devs["nullb2"].Status.ZoneCount {
		t.Errorf("removed device: %+v", s)
	}
	if after["nullb0"].Status.State != v1alpha1.ZonedDevicePresent {
		t.Errorf("nullb0 changed with nullb2's removal: %+v", after["nullb0"].Status)
	}
}

func TestInventoryHolderAndGoneWhileHeld(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	node, sys := inventoryNode(t, "")
	agent := &inventoryagent.Agent{Client: k8s, NodeName: node, SysRoot: sys, Log: logr.Discard()}
	if err := agent.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	first := zonedDB(ns, "first", node, "nullb0")
	if err := k8s.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	// A second database naming the same device is refused by the one-device-one-database rule; the holder stays.
	time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of a second
	second := zonedDB(ns, "second", node, "nullb0")
	if err := k8s.Create(ctx, second); err != nil {
		t.Fatal(err)
	}
	name := inventory.ObjectName(node, "nullb0")
	held := func(status metav1.ConditionStatus, reason string) func() error {
		return func() error {
			d := &v1alpha1.ZonedDevice{}
			if err := k8s.Get(ctx, client.ObjectKey{Name: name}, d); err != nil {
				return err
			}
			c := meta.FindStatusCondition(d.Status.Conditions, v1alpha1.ConditionHeldDeviceGone)
			if d.Status.Holder != ns+"/first" || c == nil || c.Status != status || c.Reason != reason {
				return fmt.Errorf("holder %q, condition %+v", d.Status.Holder, c)
			}
			if !managedBy(d, controller.HolderFieldManager) {
				return errors.New("the holder is not applied by its own field manager")
			}
			return nil
		}
	}
	eventually(t, "holder set from the first ZNSDatabase", held(metav1.ConditionFalse, v1alpha1.ReasonPresent))
	consistently(t, "the first ZNSDatabase keeps the device", 2*time.Second, held(metav1.ConditionFalse, v1alpha1.ReasonPresent))
	other := &v1alpha1.ZonedDevice{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: inventory.ObjectName(node, "nullb2")}, other); err != nil {
		t.Fatal(err)
	}
	if other.Status.Holder != "" || len(other.Status.Conditions) != 0 {
		t.Errorf("a device nobody names has holder %q, conditions %+v", other.Status.Holder, other.Status.Conditions)
	}

	// The held device disappears: Gone, the holder kept, a condition, and one Warning on the database.
	if err := os.RemoveAll(filepath.Join(sys, "block/nullb0")); err != nil {
		t.Fatal(err)
	}
	if err := agent.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "HeldDeviceGone", held(metav1.ConditionTrue, v1alpha1.ReasonGoneWhileHeld))
	msg := waitEvent(t, first, "HeldDeviceGone")
	if want := "/dev/nullb0 on node " + node; !strings.Contains(msg, want) {
		t.Errorf("event %q does not name %q", msg, want)
	}
	// More scans and more reconciles of the database do not repeat it.
	for range 2 {
		if err := agent.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	patch := client.MergeFrom(first.DeepCopy())
	first.Annotations = map[string]string{"example.test/poke": "1"}
	if err := k8s.Patch(ctx, first, patch); err != nil {
		t.Fatal(err)
	}
	consistently(t, "one HeldDeviceGone event", 3*time.Second, func() error {
		if n := eventCount(t, first, "HeldDeviceGone"); n != 1 {
			return fmt.Errorf("%d HeldDeviceGone events", n)
		}
		return nil
	})
	if n := eventCount(t, second, "HeldDeviceGone"); n != 0 {
		t.Errorf("the database that does not hold the device got %d HeldDeviceGone events", n)
	}
}

func managedBy(obj client.Object, manager string) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == manager {
			return true
		}
	}
	return false
}
