package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// ObjectName is the ZonedDevice name of a node's device: <node>.<kernel name>, lowercased. When that is not a
// valid DNS subdomain as it stands (a kernel name with an underscore or capitals, a name past 253 characters),
// the cleaned and shortened name gets a hash of the original, so that two devices never share a name.
func ObjectName(node, kernelName string) string {
	raw := node + "." + kernelName
	if raw == strings.ToLower(raw) && len(validation.IsDNS1123Subdomain(raw)) == 0 {
		return raw
	}
	var labels []string
	for _, l := range strings.Split(strings.ToLower(raw), ".") {
		l = strings.Trim(strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
				return r
			}
			return '-'
		}, l), "-")
		if l != "" {
			labels = append(labels, l)
		}
	}
	suffix := "-" + shortHash(raw)
	name := strings.Join(labels, ".")
	if max := validation.DNS1123SubdomainMaxLength - len(suffix); len(name) > max {
		name = strings.TrimRight(name[:max], "-.")
	}
	if name == "" {
		return "zdev" + suffix
	}
	return name + suffix
}

// NodeLabelValue is the value of v1alpha1.LabelZonedDeviceNode for a node: its name, or a hash of it when the
// name is too long for a label value.
func NodeLabelValue(node string) string {
	if len(validation.IsValidLabelValue(node)) == 0 {
		return node
	}
	return "node-" + shortHash(node)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:10]
}

// Status is the agent's part of the ZonedDevice status of a scanned device; State and the times are set by Diff.
func (d Device) Status(node, hostname string) v1alpha1.ZonedDeviceStatus {
	return v1alpha1.ZonedDeviceStatus{
		NodeName:         node,
		Hostname:         hostname,
		KernelName:       d.Name,
		StableID:         d.StableID(),
		Model:            d.Identity.Model,
		Firmware:         d.Firmware,
		Serial:           d.Serial,
		NamespaceID:      d.NamespaceID,
		ZoneModel:        d.Device.Model,
		Candidate:        d.Candidate,
		CapacityBytes:    d.CapacityBytes,
		LogicalBlockSize: d.LogicalBlockSize,
		ZoneCount:        d.NrZones,
		// zbd leaves it 0 from sysfs; it is copied so that a reader that learns it one day fills it here too.
		ZoneCapacityBytes:   d.Device.ZoneCapacityBytes,
		ZoneSizeBytes:       d.ZoneSizeBytes,
		Size:                quantity(d.CapacityBytes),
		ZoneSize:            quantity(d.ZoneSizeBytes),
		MaxOpenZones:        d.MaxOpenZones,
		MaxActiveZones:      d.MaxActiveZones,
		Scheduler:           d.Scheduler,
		AvailableSchedulers: sortedSchedulers(d.AvailableSchedulers),
	}
}

// sortedSchedulers is the list in a fixed order (zbd lists the active one first, so a change of scheduler
// would change the order too), and nil for none, as the API server returns an omitted list.
func sortedSchedulers(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return slices.Sorted(slices.Values(list))
}

// quantity is bytes as Kubernetes writes a binary quantity (64Mi, 2Gi, 1536Ki); "" for 0 (unknown or none).
func quantity(bytes int64) string {
	if bytes <= 0 {
		return ""
	}
	return resource.NewQuantity(bytes, resource.BinarySI).String()
}

// ChangeKind says what happened to a device between two scans.
type ChangeKind string

const (
	// Appeared: the node lists a device the cluster has no object for.
	Appeared ChangeKind = "appeared"
	// Changed: what sysfs says about a present device changed (its scheduler, say).
	Changed ChangeKind = "changed"
	// Returned: a device marked Gone is listed again.
	Returned ChangeKind = "returned"
	// Disappeared: a device the cluster has as Present is no longer listed; it is marked Gone, never deleted.
	Disappeared ChangeKind = "disappeared"
)

// Change is one object to apply: its name and the agent's part of its status.
type Change struct {
	Name   string
	Kind   ChangeKind
	Status v1alpha1.ZonedDeviceStatus
	// Fields names what changed, "field: old -> new", for a Changed device.
	Fields []string
}

// Diff compares this node's objects (existing) with a scan (scanned, from Device.Status) at now, and returns
// the objects to apply, by name. lastSeen holds when the agent last saw each object's device, by name; a device
// it never saw (the agent restarted meanwhile) keeps the object's own lastSeenTime when it turns Gone. Nothing
// is ever deleted: an object of a device that is gone stays, Gone, until someone deletes it.
func Diff(existing []v1alpha1.ZonedDevice, scanned []v1alpha1.ZonedDeviceStatus, now time.Time, lastSeen map[string]time.Time) []Change {
	stamp := metav1.NewTime(now)
	have := map[string]*v1alpha1.ZonedDevice{}
	for i := range existing {
		have[existing[i].Name] = &existing[i]
	}
	var out []Change
	listed := map[string]bool{}
	for _, s := range scanned {
		name := ObjectName(s.NodeName, s.KernelName)
		listed[name] = true
		want := AgentFields(s)
		want.State = v1alpha1.ZonedDevicePresent
		want.ObservedAt, want.LastSeenTime = &stamp, &stamp
		old, ok := have[name]
		switch {
		case !ok:
			out = append(out, Change{Name: name, Kind: Appeared, Status: want})
		case old.Status.State == v1alpha1.ZonedDeviceGone:
			out = append(out, Change{Name: name, Kind: Returned, Status: want})
		default:
			if fields := changedFields(AgentFields(old.Status), want); len(fields) > 0 {
				out = append(out, Change{Name: name, Kind: Changed, Status: want, Fields: fields})
			}
		}
	}
	for _, old := range existing {
		if listed[old.Name] || old.Status.State == v1alpha1.ZonedDeviceGone {
			continue
		}
		gone := AgentFields(old.Status)
		gone.State = v1alpha1.ZonedDeviceGone
		gone.ObservedAt = &stamp
		if t, ok := lastSeen[old.Name]; ok {
			seen := metav1.NewTime(t)
			gone.LastSeenTime = &seen
		}
		out = append(out, Change{Name: old.Name, Kind: Disappeared, Status: gone})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AgentFields is a status without what the operator owns (holder, conditions): what the agent applies, so that
// its apply never takes those fields over or clears them.
func AgentFields(s v1alpha1.ZonedDeviceStatus) v1alpha1.ZonedDeviceStatus {
	s.Holder = ""
	s.Conditions = nil
	return s
}

// changedFields compares two statuses field by field, times aside (they change on every write).
func changedFields(old, want v1alpha1.ZonedDeviceStatus) []string {
	a, b := reflect.ValueOf(old), reflect.ValueOf(want)
	var out []string
	for i := 0; i < a.NumField(); i++ {
		f := a.Type().Field(i)
		if f.Type == reflect.TypeOf(&metav1.Time{}) {
			continue
		}
		if x, y := a.Field(i).Interface(), b.Field(i).Interface(); !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s: %v -> %v", strings.Split(f.Tag.Get("json"), ",")[0], x, y))
		}
	}
	return out
}

// Summary is the agent's log line for a change.
func (c Change) Summary() string {
	s := c.Status
	switch c.Kind {
	case Appeared, Returned:
		id := s.StableID
		if id == "" {
			id = "none"
		}
		return fmt.Sprintf("%s %s: %s, %s, %d zones of %d bytes, max open %d, scheduler %s, stable id %s",
			s.KernelName, c.Kind, s.Candidate, s.ZoneModel, s.ZoneCount, s.ZoneSizeBytes, s.MaxOpenZones, s.Scheduler, id)
	case Changed:
		return fmt.Sprintf("%s changed: %s", s.KernelName, strings.Join(c.Fields, "; "))
	}
	last := "unknown"
	if s.LastSeenTime != nil {
		last = s.LastSeenTime.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s disappeared (last seen %s): marked Gone", s.KernelName, last)
}
