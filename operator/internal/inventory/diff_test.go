package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func TestObjectName(t *testing.T) {
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 60)
	cases := []struct {
		node, dev, want string
		hashed          bool
	}{
		{node: "worker-1", dev: "nvme0n2", want: "worker-1.nvme0n2"},
		{node: "worker-1.example.test", dev: "nullb0", want: "worker-1.example.test.nullb0"},
		{node: "worker-1", dev: "sd_b", hashed: true},
		{node: "Worker-1", dev: "nvme0n2", hashed: true},
		{node: long, dev: "nvme0n2", hashed: true},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		got := ObjectName(c.node, c.dev)
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("ObjectName(%q, %q) = %q, not a DNS subdomain: %v", c.node, c.dev, got, errs)
		}
		if c.want != "" && got != c.want {
			t.Errorf("ObjectName(%q, %q) = %q, want %q", c.node, c.dev, got, c.want)
		}
		if c.hashed && got == strings.ToLower(c.node+"."+c.dev) {
			t.Errorf("ObjectName(%q, %q) = %q has no hash", c.node, c.dev, got)
		}
		if got != ObjectName(c.node, c.dev) {
			t.Errorf("ObjectName(%q, %q) is not deterministic", c.node, c.dev)
		}
		if seen[got] {
			t.Errorf("%q given twice", got)
		}
		seen[got] = true
	}
	// Names that clean up to the same text stay apart.
	if ObjectName("worker-1", "sd_b") == ObjectName("worker-1", "sd-b") {
		t.Error("sd_b and sd-b share a name")
	}
	if v := NodeLabelValue(long); len(validation.IsValidLabelValue(v)) > 0 {
		t.Errorf("NodeLabelValue of a long name is %q, not a label value", v)
	}
	if v := NodeLabelValue("worker-1"); v != "worker-1" {
		t.Errorf("NodeLabelValue(worker-1) = %q", v)
	}
}

// scanStatuses scans a tree as node and returns the statuses the agent would publish.
func scanStatuses(t *testing.T, sys, node string, candidates ...string) []v1alpha1.ZonedDeviceStatus {
	t.Helper()
	res, err := Scan(sys, candidates)
	if err != nil {
		t.Fatal(err)
	}
	var out []v1alpha1.ZonedDeviceStatus
	for _, d := range res.Devices {
		out = append(out, d.Status(node, node))
	}
	return out
}

// apply plays the API server: the objects after the changes.
func apply(objs []v1alpha1.ZonedDevice, changes []Change) []v1alpha1.ZonedDevice {
	byName := map[string]int{}
	for i, o := range objs {
		byName[o.Name] = i
	}
	for _, c := range changes {
		if i, ok := byName[c.Name]; ok {
			holder, conds := objs[i].Status.Holder, objs[i].Status.Conditions
			objs[i].Status = c.Status
			objs[i].Status.Holder, objs[i].Status.Conditions = holder, conds
			continue
		}
		byName[c.Name] = len(objs)
		objs = append(objs, v1alpha1.ZonedDevice{ObjectMeta: metav1.ObjectMeta{Name: c.Name}, Status: c.Status})
	}
	return objs
}

func kinds(changes []Change) map[string]ChangeKind {
	out := map[string]ChangeKind{}
	for _, c := range changes {
		out[c.Status.KernelName] = c.Kind
	}
	return out
}

func TestDiffLifecycle(t *testing.T) {
	const node = "worker-1"
	sys := filepath.Join(t.TempDir(), "sys")
	if err := os.CopyFS(sys, os.DirFS(guestSys)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	lastSeen := map[string]time.Time{}
	scan := func(at time.Time, objs []v1alpha1.ZonedDevice) ([]Change, []v1alpha1.ZonedDevice) {
		scanned := scanStatuses(t, sys, node)
		changes := Diff(objs, scanned, at, lastSeen)
		for _, s := range scanned {
			lastSeen[ObjectName(s.NodeName, s.KernelName)] = at
		}
		return changes, apply(objs, changes)
	}

	changes, objs := scan(t0, nil)
	want := map[string]ChangeKind{"nullb0": Appeared, "nullb2": Appeared, "nullb3": Appeared, "nvme0n1": Appeared}
	if d := cmp.Diff(want, kinds(changes)); d != "" {
		t.Fatalf("first scan (-want +got):\n%s", d)
	}
	for _, c := range changes {
		if c.Status.State != v1alpha1.ZonedDevicePresent || !c.Status.ObservedAt.Time.Equal(t0) || !c.Status.LastSeenTime.Time.Equal(t0) {
			t.Errorf("%s: %+v", c.Name, c.Status)
		}
	}
	// The operator marks a holder; the agent's statuses never carry it.
	objs[0].Status.Holder = "tenants/db1"

	if changes, _ = scan(t0.Add(time.Minute), objs); len(changes) != 0 {
		t.Fatalf("a scan of an unchanged node changes %v", kinds(changes))
	}

	// A scheduler switched, a device removed.
	if err := os.WriteFile(filepath.Join(sys, "block/nvme0n1/queue/scheduler"), []byte("[mq-deadline] none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(sys, "block/nullb0")); err != nil {
		t.Fatal(err)
	}
	t2 := t0.Add(2 * time.Minute)
	changes, objs = scan(t2, objs)
	if d := cmp.Diff(map[string]ChangeKind{"nullb0": Disappeared, "nvme0n1": Changed}, kinds(changes)); d != "" {
		t.Fatalf("after a removal and a scheduler change (-want +got):\n%s", d)
	}
	for _, c := range changes {
		if c.Status.Holder != "" || c.Status.Conditions != nil {
			t.Errorf("%s: the agent's change carries the operator's fields: %+v", c.Name, c.Status)
		}
		switch c.Kind {
		case Disappeared:
			if c.Status.State != v1alpha1.ZonedDeviceGone || !c.Status.LastSeenTime.Time.Equal(t0.Add(time.Minute)) || !c.Status.ObservedAt.Time.Equal(t2) {
				t.Errorf("gone: %+v", c.Status)
			}
			if c.Status.ZoneCount == 0 || c.Status.KernelName != "nullb0" {
				t.Errorf("a Gone device lost what it was: %+v", c.Status)
			}
			if !strings.Contains(c.Summary(), "marked Gone") {
				t.Errorf("summary %q", c.Summary())
			}
		case Changed:
			if d := cmp.Diff([]string{"scheduler: none -> mq-deadline"}, c.Fields); d != "" {
				t.Errorf("changed fields: %s", d)
			}
		}
	}
	if objs[0].Status.Holder != "tenants/db1" {
		t.Errorf("holder lost: %+v", objs[0].Status)
	}

	// Gone stays Gone without a write; an agent that restarted (no memory) keeps the object's last-seen time.
	if changes, _ = scan(t0.Add(3*time.Minute), objs); len(changes) != 0 {
		t.Fatalf("a Gone device is written again: %v", kinds(changes))
	}
	clear(lastSeen)
	if err := os.RemoveAll(filepath.Join(sys, "block/nullb2")); err != nil {
		t.Fatal(err)
	}
	changes, objs = scan(t0.Add(4*time.Minute), objs)
	if len(changes) != 1 || changes[0].Kind != Disappeared || !changes[0].Status.LastSeenTime.Time.Equal(t0) {
		t.Fatalf("after a restart: %+v", changes)
	}

	// The device comes back.
	if err := os.CopyFS(filepath.Join(sys, "block/nullb0"), os.DirFS(filepath.Join(guestSys, "block/nullb0"))); err != nil {
		t.Fatal(err)
	}
	changes, _ = scan(t0.Add(5*time.Minute), objs)
	if len(changes) != 1 || changes[0].Kind != Returned || changes[0].Status.State != v1alpha1.ZonedDevicePresent {
		t.Fatalf("a returning device: %+v", changes)
	}
}

// The sizes kubectl shows are the byte counts as binary quantities, and a size sysfs does not give stays empty.
func TestStatusSizesAsQuantities(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		want  string
	}{{64 << 20, "64Mi"}, {2 << 30, "2Gi"}, {1536 << 10, "1536Ki"}, {512, "512"}, {0, ""}} {
		d := Device{}
		d.CapacityBytes, d.ZoneSizeBytes = c.bytes, c.bytes
		s := d.Status("worker-1", "worker-1")
		if s.Size != c.want || s.ZoneSize != c.want {
			t.Errorf("%d bytes: size %q, zone size %q, want %q", c.bytes, s.Size, s.ZoneSize, c.want)
		}
	}
}
