// Package deviceid says which device a zoned database uses: the kernel's name for it on one node, however the
// database reaches it (a zonedDevice names both; a zonedClaim reaches them through its PersistentVolume). Two
// databases with the same ID would share one drive, which ZenFS cannot survive. It is pure.
package deviceid

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ID is a device on a node.
type ID struct {
	// Node is the node's kubernetes.io/hostname label value, as a zonedDevice's nodeName and the local
	// PersistentVolumes pinned to it use.
	Node string
	// Device is the kernel name, without /dev/.
	Device string
}

// String reads "nullb5 on node node-a".
func (id ID) String() string { return fmt.Sprintf("/dev/%s on node %s", id.Device, id.Node) }

// FromPV resolves the device behind a Block PersistentVolume that a zonedClaim is bound to. deviceName is the
// kernel name the database gives (spec.storage.zonedClaim.deviceName). The node comes from the volume's node
// affinity, which must name exactly one node by kubernetes.io/hostname: without it the device could be any
// node's. When the volume's path is /dev/<name> (a local or hostPath volume at the kernel's device node), that
// name must be deviceName: ZenFS opens /dev/<deviceName> and reads /sys/block/<deviceName>, so another name
// would inspect and format a different device than the one mounted. Other paths (/dev/disk/by-id/...) cannot
// be resolved here, and deviceName is taken as given.
func FromPV(pv *corev1.PersistentVolume, deviceName string) (ID, error) {
	node, err := pinnedNode(pv)
	if err != nil {
		return ID{}, err
	}
	if p := volumePath(pv); p != "" {
		dir, name := path.Split(path.Clean(p))
		if dir == "/dev/" && name != deviceName {
			return ID{}, fmt.Errorf("PersistentVolume %s is the device %s on node %s, but the database names it %q: give the kernel's name, %q",
				pv.Name, p, node, deviceName, name)
		}
	}
	return ID{Node: node, Device: deviceName}, nil
}

// OfLocalVolume is the device a local PersistentVolume is made of, when its path is the kernel's device node
// (/dev/<name>) and it is pinned to one node: the kubelet mounted that device as the volume. Other volumes (a
// directory, a provisioner's volume, /dev/disk/by-id/...) name no device whose counters could be read.
func OfLocalVolume(pv *corev1.PersistentVolume) (ID, bool) {
	if pv.Spec.Local == nil {
		return ID{}, false
	}
	dir, name := path.Split(path.Clean(pv.Spec.Local.Path))
	if dir != "/dev/" || name == "" {
		return ID{}, false
	}
	node, err := pinnedNode(pv)
	if err != nil {
		return ID{}, false
	}
	return ID{Node: node, Device: name}, true
}

func volumePath(pv *corev1.PersistentVolume) string {
	switch {
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path
	}
	return ""
}

// pinnedNode is the one node a volume's required node affinity allows, by kubernetes.io/hostname.
func pinnedNode(pv *corev1.PersistentVolume) (string, error) {
	var nodes []string
	if a := pv.Spec.NodeAffinity; a != nil && a.Required != nil {
		for _, term := range a.Required.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				if e.Key == corev1.LabelHostname && e.Operator == corev1.NodeSelectorOpIn {
					nodes = append(nodes, e.Values...)
				}
			}
		}
	}
	if len(nodes) != 1 {
		got := "none"
		if len(nodes) > 0 {
			got = strings.Join(nodes, ", ")
		}
		return "", fmt.Errorf("PersistentVolume %s must be pinned to one node by a required node affinity on %s (found: %s), so that the operator knows which node's device it is",
			pv.Name, corev1.LabelHostname, got)
	}
	return nodes[0], nil
}
