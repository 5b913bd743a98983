//go:build scale

package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/inventory"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// The simulated fleet of TestInventoryScale: each node a sysfs tree under a temporary directory, laid out as
// Linux's sysfs ABI and the recorded trees of operator/internal/inventory/testdata are, read by the real scan.
// Devices come in four kinds (device index mod 4) so that requirements select a subset:
//
//	0 nvme<d>n1  ~256 zones of 64 MiB (16 GiB), 14 open/active: the smallest fit, taken first by "any"
//	1 nvme<d>n1  ~1024 zones of 128 MiB (128 GiB), 14 open/active
//	2 nvme<d>n1  4096 zones of 2 GiB (8 TiB), 14 open/active
//	3 nullb<d>   null_blk, no identity: 32 zones and 5 open zones (even nodes), 16 zones (odd): ZenFS refuses both
//
// The zone counts of kinds 0 and 1 vary with the node, the drive model with the node's parity.
const (
	modelA = "WZS4C8T4TDSP303"
	modelB = "ZNS-SIM-B"
	// racks and the fast tier are node labels that requirements' nodeSelectors ask for.
	labelRack = "example.test/rack"
	labelTier = "example.test/tier"
	racks     = 10
)

func fleetNodeName(n int) string { return fmt.Sprintf("zns-node-%03d", n) }

func fleetNodeLabels(n int) map[string]string {
	l := map[string]string{corev1.LabelHostname: fleetNodeName(n), labelRack: fmt.Sprintf("rack-%d", n%racks)}
	if n%4 == 0 {
		l[labelTier] = "fast"
	}
	return l
}

type simDevice struct {
	name                     string
	zones, zoneBytes         int64
	maxOpen, maxActive       int64
	model, wwid, serial, fw  string
	scheduler                string
	nsid                     int64
	noIdentity, noOpenLimits bool
}

func fleetDevice(n, d int) simDevice {
	const mi = int64(1) << 20
	model := modelA
	if n%2 == 1 {
		model = modelB
	}
	dev := simDevice{name: fmt.Sprintf("nvme%dn1", d), maxOpen: 14, maxActive: 14, model: model,
		wwid: fmt.Sprintf("eui.%016x", n*1000+d), serial: fmt.Sprintf("SIM%05d-%d", n, d), fw: "1.0", nsid: 1,
		scheduler: "[mq-deadline] none"}
	switch d % 4 {
	case 0:
		dev.zones, dev.zoneBytes = 256+8*int64(n%5), 64*mi
	case 1:
		dev.zones, dev.zoneBytes = 1024+16*int64(n%5), 128*mi
	case 2:
		dev.zones, dev.zoneBytes = 4096, 2048*mi
	case 3:
		dev = simDevice{name: fmt.Sprintf("nullb%d", d), zones: 32, zoneBytes: 64 * mi, maxOpen: 5, maxActive: 5,
			noIdentity: true, scheduler: "[mq-deadline] none"}
		if n%2 == 1 {
			dev.zones, dev.noOpenLimits = 16, true
		}
	}
	return dev
}

// writeSysfs writes one block device under sys/block as the kernel lays it out (sizes in 512-byte sectors).
func writeSysfs(sys string, dev simDevice) error {
	dir := filepath.Join(sys, "block", dev.name)
	files := map[string]string{
		"size":                     fmt.Sprint(dev.zones * dev.zoneBytes / 512),
		"queue/zoned":              "host-managed",
		"queue/scheduler":          dev.scheduler,
		"queue/logical_block_size": "4096",
		"queue/nr_zones":           fmt.Sprint(dev.zones),
		"queue/chunk_sectors":      fmt.Sprint(dev.zoneBytes / 512),
	}
	if !dev.noOpenLimits {
		files["queue/max_open_zones"] = fmt.Sprint(dev.maxOpen)
		files["queue/max_active_zones"] = fmt.Sprint(dev.maxActive)
	}
	if !dev.noIdentity {
		files["wwid"] = dev.wwid
		files["nsid"] = fmt.Sprint(dev.nsid)
		files["device/model"] = dev.model
		files["device/serial"] = dev.serial
		files["device/firmware_rev"] = dev.fw
	}
	for rel, content := range files {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// changeOneDevice is the change of one device on node n before a rescan: even nodes lose their first device
// (pulled: it turns Gone), odd nodes have another switched to the scheduler none (ZenFS then refuses it).
func changeOneDevice(sys string, n, devices int) error {
	if n%2 == 0 {
		return os.RemoveAll(filepath.Join(sys, "block", fleetDevice(n, 0).name))
	}
	name := fleetDevice(n, min(1, devices-1)).name
	return os.WriteFile(filepath.Join(sys, "block", name, "queue/scheduler"), []byte("mq-deadline [none]\n"), 0o644)
}

// placedRequirements is the i-th database's ask. Most fit many devices, some a few; every tenth fits none: it
// asks for more zones than any device has, or for a node label no node carries.
func placedRequirements(i int) (req v1alpha1.DeviceRequirements, fitsNone bool) {
	switch i % 10 {
	case 0, 1, 2: // any device: the smallest that fits
	case 3, 4:
		req.MinZones, req.MinZoneSize = 1024, ptrQuantity("128Mi")
	case 5, 6:
		req.MinZones = 256
		req.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{labelRack: fmt.Sprintf("rack-%d", i/10%racks)}}
	case 7:
		req.Model, req.MinOpenZones, req.MinActiveZones = modelB, 14, 14
	case 8:
		req.MinCapacity = ptrQuantity("1Ti")
		req.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: labelTier, Operator: metav1.LabelSelectorOpIn, Values: []string{"fast"}}}}
	case 9:
		if i/10%2 == 0 {
			req.MinZones = 1 << 20
		} else {
			req.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{labelRack: "rack-nowhere"}}
		}
		fitsNone = true
	}
	return req, fitsNone
}

func ptrQuantity(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func placedDatabase(ns, name string, req v1alpha1.DeviceRequirements) *v1alpha1.ZNSDatabase {
	return &v1alpha1.ZNSDatabase{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ZNSDatabaseSpec{
			Storage:   v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{Requirements: &req}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}},
		},
	}
}

// whyUnfit checks a device against a database's requirements and ZenFS's floors, written out here rather than
// through package placement, so that the test does not grade the placement with its own rules. "" is a fit.
func whyUnfit(req v1alpha1.DeviceRequirements, dev *v1alpha1.ZonedDevice, nodeLabels map[string]string) string {
	st := &dev.Status
	if req.NodeSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(req.NodeSelector)
		if err != nil || !sel.Matches(labels.Set(nodeLabels)) {
			return "node not selected"
		}
	}
	limitBelow := func(limit, floor int64) bool { return limit != 0 && limit < floor }
	switch {
	case st.State != v1alpha1.ZonedDevicePresent || st.Candidate != v1alpha1.CandidateZoned || st.ZoneModel != zbd.ModelHostManaged:
		return fmt.Sprintf("state %s, candidate %s, zone model %s", st.State, st.Candidate, st.ZoneModel)
	case st.Scheduler != zbd.Scheduler:
		return "scheduler " + st.Scheduler
	case st.ZoneCount < max(req.MinZones, zbd.MinZones):
		return fmt.Sprintf("%d zones", st.ZoneCount)
	case req.MinZoneSize != nil && st.ZoneSizeBytes < req.MinZoneSize.Value():
		return fmt.Sprintf("zone size %d", st.ZoneSizeBytes)
	case req.MinCapacity != nil && st.CapacityBytes < req.MinCapacity.Value():
		return fmt.Sprintf("capacity %d", st.CapacityBytes)
	case limitBelow(st.MaxOpenZones, max(req.MinOpenZones, zbd.MinOpenZones)):
		return fmt.Sprintf("%d open zones", st.MaxOpenZones)
	case limitBelow(st.MaxActiveZones, max(req.MinActiveZones, zbd.MinActiveZones)):
		return fmt.Sprintf("%d active zones", st.MaxActiveZones)
	case req.Model != "" && st.Model != req.Model:
		return "model " + st.Model
	}
	return ""
}

// checkPlacement asserts what placement promises: one database per device, each binding meets its requirements
// (whyUnfit), the device's claimRef names its database, and a database without a device says NoDeviceFits while
// no unclaimed device would fit it. A database refused while others were still claiming may be waiting for its
// next look (BlockedRetry), so that last check is given a minute.
func checkPlacement(t *testing.T, ctx context.Context, k8s client.Client, dbs []*v1alpha1.ZNSDatabase, fitsNone []bool, nNodes int) {
	t.Helper()
	nodeLabels := map[string]map[string]string{}
	for n := range nNodes {
		nodeLabels[fleetNodeName(n)] = fleetNodeLabels(n)
	}
	var problems []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		devs := &v1alpha1.ZonedDeviceList{}
		if err := k8s.List(ctx, devs); err != nil {
			t.Fatal(err)
		}
		byName := map[string]*v1alpha1.ZonedDevice{}
		for i := range devs.Items {
			byName[devs.Items[i].Name] = &devs.Items[i]
		}
		problems = nil
		givenTo := map[string]string{}
		for i, db := range dbs {
			cur := &v1alpha1.ZNSDatabase{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
				t.Fatal(err)
			}
			req := *cur.Spec.Storage.ZonedDevice.Requirements
			if b := cur.Status.DeviceBinding; b != nil {
				dev := byName[b.ZonedDevice]
				switch {
				case fitsNone[i]:
					problems = append(problems, fmt.Sprintf("%s, which no device fits, is bound to %s", key(cur), b.ZonedDevice))
				case givenTo[b.ZonedDevice] != "":
					problems = append(problems, fmt.Sprintf("%s given to both %s and %s", b.ZonedDevice, givenTo[b.ZonedDevice], key(cur)))
				case dev == nil:
					problems = append(problems, fmt.Sprintf("%s is bound to %s, which does not exist", key(cur), b.ZonedDevice))
				case dev.Spec.ClaimRef == nil || dev.Spec.ClaimRef.UID != cur.UID:
					problems = append(problems, fmt.Sprintf("%s is bound to %s, whose claimRef is %v", key(cur), dev.Name, dev.Spec.ClaimRef))
				case b.NodeName != dev.Status.NodeName || b.DeviceName != dev.Status.KernelName || b.ZonedDevice != inventory.ObjectName(b.NodeName, b.DeviceName):
					problems = append(problems, fmt.Sprintf("%s's binding %+v does not match %s", key(cur), *b, dev.Name))
				default:
					if why := whyUnfit(req, dev, nodeLabels[dev.Status.NodeName]); why != "" {
						problems = append(problems, fmt.Sprintf("%s is bound to %s, which does not fit it: %s", key(cur), dev.Name, why))
					}
				}
				givenTo[b.ZonedDevice] = key(cur)
				continue
			}
			if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionDeviceReady); c == nil || c.Reason != v1alpha1.ReasonNoDeviceFits {
				problems = append(problems, fmt.Sprintf("%s has no binding and DeviceReady %+v, not %s", key(cur), c, v1alpha1.ReasonNoDeviceFits))
				continue
			}
			for _, dev := range byName {
				if dev.Spec.ClaimRef == nil && whyUnfit(req, dev, nodeLabels[dev.Status.NodeName]) == "" {
					problems = append(problems, fmt.Sprintf("%s says %s, but the unclaimed %s fits it", key(cur), v1alpha1.ReasonNoDeviceFits, dev.Name))
					break
				}
			}
		}
		for _, dev := range byName {
			if ref := dev.Spec.ClaimRef; ref != nil && givenTo[dev.Name] != ref.Namespace+"/"+ref.Name {
				problems = append(problems, fmt.Sprintf("%s is claimed by %s/%s, which is not bound to it", dev.Name, ref.Namespace, ref.Name))
			}
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(problems) > 0 {
		t.Errorf("placement broke its promises (%d):\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
}
