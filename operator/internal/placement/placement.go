// Package placement chooses a zoned device of the inventory for a database's requirements
// (storage.zonedDevice.requirements). It decides only: the reconciler gathers the offers (the ZonedDevices, their
// nodes' labels, who else has each device), then makes the claim this package chose. It is pure.
package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// Offer is one device of the inventory with what the reconciler knows of it beyond its own object.
type Offer struct {
	Device *v1alpha1.ZonedDevice
	// NodeLabels are the labels of the device's Node; NodeMissing is true when the cluster has no such Node.
	NodeLabels  map[string]string
	NodeMissing bool
	// TakenBy says who else has the device (a database that holds or names it, a fio Benchmark measuring it);
	// "" when nobody does.
	TakenBy string
}

// Claimant is the database a device is chosen for.
type Claimant struct {
	Namespace, Name string
	// Filesystem is what the database makes on the device (zenfs or btrfs), whose own rules a device must pass.
	Filesystem v1alpha1.ZonedFilesystem
}

func (c Claimant) String() string { return c.Namespace + "/" + c.Name }

// Kind sorts the reasons a device is passed over, in the order Explain reports them.
type Kind int

const (
	// Unmet: the device misses one or more of the requirements.
	Unmet Kind = iota
	// Unfit: the file system's own rules (the preflight's) refuse the device.
	Unfit
	// Claimed: the operator gave the device to another database's requirements (its claimRef).
	Claimed
	// Taken: another database holds or names the device, or a fio Benchmark measures it.
	Taken
	// Gone: the device's node no longer lists it.
	Gone
	// NotZoned: a conventional candidate, published for storage.device.
	NotZoned
	// NodeNotSelected: the device's node does not match the nodeSelector, or is not in the cluster. Judged
	// first and reported last: of a fleet, most devices are on nodes the database did not ask for.
	NodeNotSelected
)

// kindPhrases are each reason's words for one device and for several.
var kindPhrases = map[Kind][2]string{
	Unmet:           {"misses the requirements", "miss the requirements"},
	Unfit:           {"is refused by the %s rules of the preflight", "are refused by the %s rules of the preflight"},
	NodeNotSelected: {"is on a node the nodeSelector does not select", "are on nodes the nodeSelector does not select"},
	Claimed:         {"was given to another database", "were given to other databases"},
	Taken:           {"is used by another database or a fio Benchmark", "are used by other databases or a fio Benchmark"},
	NotZoned:        {"is conventional", "are conventional"},
	Gone:            {"is gone from its node", "are gone from their nodes"},
}

// Refusal is why one device was passed over.
type Refusal struct {
	Device string
	Kind   Kind
	// Detail says it of this device: "nvme0n2 on node-a: 64 zones, fewer than the 100 asked".
	Detail string
}

// Decision is the device chosen, or why none was.
type Decision struct {
	// Chosen is nil when no device fits.
	Chosen *v1alpha1.ZonedDevice
	// Refusals are the devices passed over, in name order.
	Refusals []Refusal
	// Offered is how many devices were considered.
	Offered int
}

// Choose picks the device for c: among the devices that are free and fit, the one that c's namespace and name
// were given before (a database created again gets its device back), else the smallest that meets the
// requirements, so that larger drives stay free for larger asks; ties go by fewest zones, then name. The error
// is an invalid nodeSelector.
func Choose(req v1alpha1.DeviceRequirements, c Claimant, offers []Offer) (Decision, error) {
	selector := labels.Everything()
	if req.NodeSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(req.NodeSelector)
		if err != nil {
			return Decision{}, fmt.Errorf("requirements.nodeSelector is not a valid label selector: %w", err)
		}
		selector = s
	}
	d := Decision{Offered: len(offers)}
	var fits []*v1alpha1.ZonedDevice
	for _, o := range offers {
		if r, refused := judge(req, selector, c, o); refused {
			d.Refusals = append(d.Refusals, r)
			continue
		}
		fits = append(fits, o.Device)
	}
	slices.SortFunc(d.Refusals, func(a, b Refusal) int { return cmp.Compare(a.Device, b.Device) })
	if len(fits) == 0 {
		return d, nil
	}
	slices.SortFunc(fits, func(a, b *v1alpha1.ZonedDevice) int {
		return cmp.Or(
			-cmp.Compare(boolInt(givenTo(a, c)), boolInt(givenTo(b, c))),
			cmp.Compare(a.Status.CapacityBytes, b.Status.CapacityBytes),
			cmp.Compare(a.Status.ZoneCount, b.Status.ZoneCount),
			cmp.Compare(a.Name, b.Name))
	})
	d.Chosen = fits[0]
	return d, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// givenTo: the device's claim names c (by namespace and name: a database created again has a new UID).
func givenTo(dev *v1alpha1.ZonedDevice, c Claimant) bool {
	ref := dev.Spec.ClaimRef
	return ref != nil && ref.Namespace == c.Namespace && ref.Name == c.Name
}

// Where names a device for people: "nvme0n2 on node-a".
func Where(dev *v1alpha1.ZonedDevice) string {
	return fmt.Sprintf("%s on %s", dev.Status.KernelName, dev.Status.NodeName)
}

func judge(req v1alpha1.DeviceRequirements, selector labels.Selector, c Claimant, o Offer) (Refusal, bool) {
	dev := o.Device
	st := &dev.Status
	refuse := func(k Kind, format string, args ...any) (Refusal, bool) {
		return Refusal{Device: dev.Name, Kind: k, Detail: Where(dev) + ": " + fmt.Sprintf(format, args...)}, true
	}
	switch {
	case o.NodeMissing:
		return refuse(NodeNotSelected, "its node is not in the cluster")
	case !selector.Matches(labels.Set(o.NodeLabels)):
		return refuse(NodeNotSelected, "node labels do not match")
	case st.State != v1alpha1.ZonedDevicePresent:
		return refuse(Gone, "state %s", cmp.Or(string(st.State), "not reported yet"))
	case st.Candidate != v1alpha1.CandidateZoned:
		return refuse(NotZoned, "a conventional candidate (zone model %s)", cmp.Or(st.ZoneModel, "none"))
	case dev.Spec.ClaimRef != nil && !givenTo(dev, c):
		return refuse(Claimed, "given to ZNSDatabase %s", dev.Spec.ClaimRef)
	case o.TakenBy != "":
		return refuse(Taken, "%s", o.TakenBy)
	}
	if unmet := unmetRequirements(req, st); len(unmet) > 0 {
		return refuse(Unmet, "%s", strings.Join(unmet, ", "))
	}
	if problems := fsProblems(c.Filesystem, st); len(problems) > 0 {
		var codes []string
		for _, p := range problems {
			codes = append(codes, p.Code+" ("+firstClause(p.Message)+")")
		}
		return refuse(Unfit, "%s", strings.Join(codes, ", "))
	}
	return Refusal{}, false
}

func unmetRequirements(req v1alpha1.DeviceRequirements, st *v1alpha1.ZonedDeviceStatus) []string {
	var unmet []string
	if req.Model != "" && st.Model != req.Model {
		unmet = append(unmet, fmt.Sprintf("model %q, not %q", st.Model, req.Model))
	}
	if req.MinZones > 0 && st.ZoneCount < req.MinZones {
		unmet = append(unmet, fmt.Sprintf("%d zones, fewer than the %d asked", st.ZoneCount, req.MinZones))
	}
	if req.MinZoneSize != nil && st.ZoneSizeBytes < req.MinZoneSize.Value() {
		unmet = append(unmet, fmt.Sprintf("zone size %s, smaller than the %s asked", cmp.Or(st.ZoneSize, "unknown"), req.MinZoneSize))
	}
	if req.MinCapacity != nil && st.CapacityBytes < req.MinCapacity.Value() {
		unmet = append(unmet, fmt.Sprintf("size %s, smaller than the %s asked", cmp.Or(st.Size, "unknown"), req.MinCapacity))
	}
	if req.MinOpenZones > 0 && st.MaxOpenZones != 0 && st.MaxOpenZones < req.MinOpenZones {
		unmet = append(unmet, fmt.Sprintf("%d open zones at most, fewer than the %d asked", st.MaxOpenZones, req.MinOpenZones))
	}
	if req.MinActiveZones > 0 && st.MaxActiveZones != 0 && st.MaxActiveZones < req.MinActiveZones {
		unmet = append(unmet, fmt.Sprintf("%d active zones at most, fewer than the %d asked", st.MaxActiveZones, req.MinActiveZones))
	}
	return unmet
}

// fsProblems judges the device by the preflight's own rules for the file system, from the inventory's copy of
// sysfs: the preflight reads the same files, so a device chosen here is not refused by it for these reasons.
func fsProblems(fs v1alpha1.ZonedFilesystem, st *v1alpha1.ZonedDeviceStatus) []zbd.Problem {
	d := zbd.Device{
		Name:                st.KernelName,
		Model:               st.ZoneModel,
		NrZones:             st.ZoneCount,
		ZoneSizeBytes:       st.ZoneSizeBytes,
		MaxOpenZones:        st.MaxOpenZones,
		MaxActiveZones:      st.MaxActiveZones,
		Scheduler:           st.Scheduler,
		AvailableSchedulers: st.AvailableSchedulers,
		CapacityBytes:       st.CapacityBytes,
		LogicalBlockSize:    st.LogicalBlockSize,
	}
	if fs == v1alpha1.FilesystemBtrfs {
		// -1: no zone report was read, as in the preflight; btrfs needs no conventional zone anyway.
		return zonedfs.Judge(zonedfs.Btrfs, d, -1)
	}
	return zbd.Judge(d)
}

// firstClause is a problem's statement without its explanation and remedy, which the preflight's own refusal
// gives in full: "nullb3 allows only 3 open zones".
func firstClause(s string) string {
	if i := strings.IndexAny(s, ";."); i >= 0 {
		return s[:i]
	}
	return s
}

// examplesPerKind bounds the devices Explain names for each reason, so that a fleet's condition stays readable
// (and within a condition message's size).
const examplesPerKind = 3

// Explain says why no device fits, grouped by reason, most actionable first: "none of the 4 devices of the
// inventory fits: 2 miss the requirements (nvme0n2 on node-a: 64 zones, fewer than the 100 asked; ...); 1 was
// given to other databases (...)".
func (d Decision) Explain(fs v1alpha1.ZonedFilesystem) string {
	if d.Offered == 0 {
		return "the inventory has no zoned device: no ZonedDevice exists, so the inventory agent (chart value inventory.enabled) " +
			"is not running on the nodes with zoned drives, or they have none (kubectl get zoneddevices)"
	}
	byKind := map[Kind][]Refusal{}
	for _, r := range d.Refusals {
		byKind[r.Kind] = append(byKind[r.Kind], r)
	}
	var parts []string
	for k := Unmet; k <= NodeNotSelected; k++ {
		rs := byKind[k]
		if len(rs) == 0 {
			continue
		}
		phrase := kindPhrases[k][min(len(rs)-1, 1)]
		if k == Unfit {
			phrase = fmt.Sprintf(phrase, cmp.Or(string(fs), string(v1alpha1.FilesystemZenFS)))
		}
		var details []string
		for _, r := range rs[:min(len(rs), examplesPerKind)] {
			details = append(details, r.Detail)
		}
		if more := len(rs) - examplesPerKind; more > 0 {
			details = append(details, fmt.Sprintf("%d more", more))
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", len(rs), phrase, strings.Join(details, "; ")))
	}
	return fmt.Sprintf("none of the %d devices of the inventory fits: %s", d.Offered, strings.Join(parts, "; "))
}
