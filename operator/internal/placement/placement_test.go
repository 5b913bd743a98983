package placement

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// device is a Present, host-managed, ZenFS-fit device as the inventory agent publishes one (the figures of the
// QEMU guest's emulated ZNS namespace: 64 MiB zones, 14 open zones, mq-deadline).
func device(node, kernel string, zones int64) *v1alpha1.ZonedDevice {
	const zone = 64 << 20
	return &v1alpha1.ZonedDevice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "." + kernel},
		Status: v1alpha1.ZonedDeviceStatus{
			NodeName: node, Hostname: node, KernelName: kernel, Model: "QEMU NVMe Ctrl",
			ZoneModel: "host-managed", Candidate: v1alpha1.CandidateZoned, State: v1alpha1.ZonedDevicePresent,
			ZoneCount: zones, ZoneSizeBytes: zone, ZoneSize: "64Mi", CapacityBytes: zones * zone,
			Size: resource.NewQuantity(zones*zone, resource.BinarySI).String(), LogicalBlockSize: 4096,
			MaxOpenZones: 14, MaxActiveZones: 14, Scheduler: "mq-deadline", AvailableSchedulers: []string{"mq-deadline", "none"},
		},
	}
}

func offer(dev *v1alpha1.ZonedDevice, nodeLabels map[string]string) Offer {
	return Offer{Device: dev, NodeLabels: nodeLabels}
}

var me = Claimant{Namespace: "lab", Name: "db", Filesystem: v1alpha1.FilesystemZenFS}

func TestChooseTakesTheSmallestDeviceThatFits(t *testing.T) {
	offers := []Offer{
		offer(device("node-b", "nvme0n2", 512), nil),
		offer(device("node-a", "nvme0n2", 256), nil),
		offer(device("node-a", "nullb0", 64), nil),
	}
	d, err := Choose(v1alpha1.DeviceRequirements{MinZones: 100}, me, offers)
	if err != nil {
		t.Fatal(err)
	}
	if d.Chosen == nil || d.Chosen.Name != "node-a.nvme0n2" {
		t.Fatalf("chose %v, want node-a.nvme0n2 (the smallest with at least 100 zones); refusals %+v", d.Chosen, d.Refusals)
	}
	if len(d.Refusals) != 1 || d.Refusals[0].Kind != Unmet || !strings.Contains(d.Refusals[0].Detail, "64 zones, fewer than the 100 asked") {
		t.Errorf("refusals %+v, want nullb0 refused for its 64 zones", d.Refusals)
	}
}

func TestChooseGivesADatabaseCreatedAgainItsDeviceBack(t *testing.T) {
	mine := device("node-b", "nvme0n2", 512)
	mine.Spec.ClaimRef = &v1alpha1.ZonedDeviceClaimRef{Namespace: "lab", Name: "db", UID: "old-uid"}
	d, err := Choose(v1alpha1.DeviceRequirements{}, me, []Offer{offer(device("node-a", "nvme0n2", 256), nil), offer(mine, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Chosen != mine {
		t.Fatalf("chose %v, want the device claimed before under lab/db, though a smaller one is free", d.Chosen)
	}
}

func TestChoosePassesOverWhatIsNotFree(t *testing.T) {
	claimed := device("node-a", "nvme0n2", 256)
	claimed.Spec.ClaimRef = &v1alpha1.ZonedDeviceClaimRef{Namespace: "lab", Name: "other"}
	gone := device("node-a", "nvme0n3", 256)
	gone.Status.State = v1alpha1.ZonedDeviceGone
	conventional := device("node-a", "nvme1n1", 256)
	conventional.Status.Candidate, conventional.Status.ZoneModel = v1alpha1.CandidateConventional, "none"
	held := device("node-a", "nullb0", 256)
	offers := []Offer{offer(claimed, nil), offer(gone, nil), offer(conventional, nil),
		{Device: held, TakenBy: "held by ZNSDatabase lab/named"}}
	d, err := Choose(v1alpha1.DeviceRequirements{}, me, offers)
	if err != nil {
		t.Fatal(err)
	}
	if d.Chosen != nil {
		t.Fatalf("chose %s, want none: every device is claimed, gone, conventional or held", d.Chosen.Name)
	}
	want := map[string]Kind{claimed.Name: Claimed, gone.Name: Gone, conventional.Name: NotZoned, held.Name: Taken}
	for _, r := range d.Refusals {
		if want[r.Device] != r.Kind {
			t.Errorf("%s refused as %d, want %d (%s)", r.Device, r.Kind, want[r.Device], r.Detail)
		}
		delete(want, r.Device)
	}
	if len(want) > 0 {
		t.Errorf("not refused: %v", want)
	}
	msg := d.Explain(v1alpha1.FilesystemZenFS)
	for _, s := range []string{"none of the 4 devices", "given to ZNSDatabase lab/other", "held by ZNSDatabase lab/named", "state Gone", "1 is conventional"} {
		if !strings.Contains(msg, s) {
			t.Errorf("explanation lacks %q: %s", s, msg)
		}
	}
}

func TestChooseByNodeSelector(t *testing.T) {
	offers := []Offer{
		offer(device("node-a", "nvme0n2", 256), map[string]string{"rack": "a"}),
		offer(device("node-b", "nvme0n2", 512), map[string]string{"rack": "b"}),
		{Device: device("node-c", "nvme0n2", 128), NodeMissing: true},
	}
	req := v1alpha1.DeviceRequirements{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "b"}}}
	d, err := Choose(req, me, offers)
	if err != nil {
		t.Fatal(err)
	}
	if d.Chosen == nil || d.Chosen.Name != "node-b.nvme0n2" {
		t.Fatalf("chose %v, want node-b's device, the only one on a node labelled rack=b", d.Chosen)
	}
	req.NodeSelector.MatchLabels["rack"] = "z"
	d, _ = Choose(req, me, offers)
	if d.Chosen != nil {
		t.Fatalf("chose %s with a selector that matches no node", d.Chosen.Name)
	}
	msg := d.Explain(v1alpha1.FilesystemZenFS)
	if !strings.Contains(msg, "3 are on nodes the nodeSelector does not select") || !strings.Contains(msg, "its node is not in the cluster") {
		t.Errorf("explanation: %s", msg)
	}
	bad := v1alpha1.DeviceRequirements{NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "rack", Operator: "Near"}}}}
	if _, err := Choose(bad, me, offers); err == nil || !strings.Contains(err.Error(), "nodeSelector") {
		t.Errorf("an invalid selector gave %v, want an error that names nodeSelector", err)
	}
}

func TestChooseListsEveryUnmetRequirement(t *testing.T) {
	dev := device("node-a", "nullb0", 64)
	req := v1alpha1.DeviceRequirements{
		MinZones: 100, MinZoneSize: resource.NewQuantity(256<<20, resource.BinarySI), MinCapacity: resource.NewQuantity(8<<30, resource.BinarySI),
		MinOpenZones: 32, MinActiveZones: 32, Model: "WZS4C8T4TDSP303",
	}
	d, err := Choose(req, me, []Offer{offer(dev, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Chosen != nil || len(d.Refusals) != 1 {
		t.Fatalf("decision %+v, want nullb0 refused", d)
	}
	for _, s := range []string{`model "QEMU NVMe Ctrl", not "WZS4C8T4TDSP303"`, "64 zones, fewer than the 100 asked", "zone size 64Mi, smaller than the 256Mi asked",
		"size 4Gi, smaller than the 8Gi asked", "14 open zones at most, fewer than the 32 asked", "14 active zones at most, fewer than the 32 asked"} {
		if !strings.Contains(d.Refusals[0].Detail, s) {
			t.Errorf("refusal lacks %q: %s", s, d.Refusals[0].Detail)
		}
	}
	unlimited := device("node-a", "nullb1", 64)
	unlimited.Status.MaxOpenZones, unlimited.Status.MaxActiveZones = 0, 0
	if d, _ := Choose(v1alpha1.DeviceRequirements{MinOpenZones: 32, MinActiveZones: 32}, me, []Offer{offer(unlimited, nil)}); d.Chosen == nil {
		t.Errorf("a device without open or active limits was refused: %+v", d.Refusals)
	}
}

func TestChooseAppliesThePreflightRulesOfTheFilesystem(t *testing.T) {
	wrongScheduler := device("node-a", "nullb0", 64)
	wrongScheduler.Status.Scheduler = "none"
	tooFewOpen := device("node-a", "nullb1", 64)
	tooFewOpen.Status.MaxOpenZones = 6
	d, err := Choose(v1alpha1.DeviceRequirements{}, me, []Offer{offer(wrongScheduler, nil), offer(tooFewOpen, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Chosen != nil {
		t.Fatalf("chose %s, which the ZenFS preflight refuses", d.Chosen.Name)
	}
	msg := d.Explain(v1alpha1.FilesystemZenFS)
	for _, s := range []string{"refused by the zenfs rules of the preflight", `WrongScheduler (nullb0 uses I/O scheduler "none")`, "TooFewOpenZones (nullb1 allows only 6 open zones)", "TooFewOpenZones"} {
		if !strings.Contains(msg, s) {
			t.Errorf("explanation lacks %q: %s", s, msg)
		}
	}
	// 6 open zones stall ZenFS but btrfs mounts with 5 or more: the same device fits btrfs.
	btrfs := me
	btrfs.Filesystem = v1alpha1.FilesystemBtrfs
	if d, _ := Choose(v1alpha1.DeviceRequirements{}, btrfs, []Offer{offer(tooFewOpen, nil)}); d.Chosen == nil {
		t.Errorf("btrfs refused a device with 6 open zones: %+v", d.Refusals)
	}
}

func TestExplainBoundsAFleet(t *testing.T) {
	var offers []Offer
	for i := range 800 {
		dev := device("node-"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), "nvme"+string(rune('0'+i%10))+"n1", 16)
		dev.Name = dev.Name + "-" + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
		offers = append(offers, offer(dev, nil))
	}
	d, _ := Choose(v1alpha1.DeviceRequirements{MinZones: 100}, me, offers)
	msg := d.Explain(v1alpha1.FilesystemZenFS)
	if !strings.Contains(msg, "none of the 800 devices") || !strings.Contains(msg, "800 miss the requirements") || !strings.Contains(msg, "797 more") {
		t.Errorf("explanation: %s", msg)
	}
	if len(msg) > 1024 {
		t.Errorf("explanation of 800 devices is %d bytes, want it bounded", len(msg))
	}
	if got := (Decision{}).Explain(v1alpha1.FilesystemZenFS); !strings.Contains(got, "inventory.enabled") {
		t.Errorf("an empty inventory's explanation does not point at the agent: %s", got)
	}
}
