// Package inventoryagent is the node agent of the device inventory (`manager inventory`, a DaemonSet of the
// chart): it scans its node's sysfs and server-side applies one ZonedDevice per published device. It reads
// sysfs only, so it runs unprivileged: an ordinary container's /sys is the host's, read-only, and no device node
// is opened. It never deletes: a device that disappears is marked Gone.
package inventoryagent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/inventory"
)

// FieldManager owns every field of a ZonedDevice but the operator's (holder, conditions).
const FieldManager = "zns-mysql-inventory"

// Agent publishes one node's devices.
type Agent struct {
	Client client.Client
	// NodeName is the Node the agent runs on (the downward API's spec.nodeName).
	NodeName string
	// SysRoot is the sysfs mount, "/sys" in a pod.
	SysRoot string
	Log     logr.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	// lastSeen is when each of this node's objects' device was last scanned, so that a device that disappears
	// says when it was last there, not when it last changed.
	lastSeen map[string]time.Time
	// lastProblems and lastError are logged when they change, not on every scan.
	lastProblems, lastError string
}

// Run syncs at once and then every interval until ctx ends. A failed sync is logged and retried at the next tick:
// the agent has nothing better to do than look again.
func (a *Agent) Run(ctx context.Context, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		err := a.Sync(ctx)
		if msg := fmt.Sprint(err); err != nil && msg != a.lastError {
			a.Log.Error(err, "inventory sync failed; retrying every interval", "interval", interval.String())
			a.lastError = msg
		} else if err == nil && a.lastError != "" {
			a.Log.Info("inventory sync works again")
			a.lastError = ""
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Sync scans once and applies what changed since the objects the cluster holds for this node.
func (a *Agent) Sync(ctx context.Context) error {
	if a.NodeName == "" {
		return fmt.Errorf("no node name: set NODE_NAME from the downward API (fieldRef spec.nodeName)")
	}
	node := &corev1.Node{}
	if err := a.Client.Get(ctx, client.ObjectKey{Name: a.NodeName}, node); err != nil {
		return fmt.Errorf("reading node %s (for its %s annotation): %w", a.NodeName, v1alpha1.AnnotationConventionalCandidates, err)
	}
	res, err := inventory.Scan(a.SysRoot, inventory.ParseCandidates(node.Annotations[v1alpha1.AnnotationConventionalCandidates]))
	if err != nil {
		return fmt.Errorf("scanning %s: %w", a.SysRoot, err)
	}
	if p := strings.Join(res.Problems, "; "); p != a.lastProblems {
		if p != "" {
			a.Log.Info("some devices are not published", "problems", res.Problems)
		}
		a.lastProblems = p
	}

	list := &v1alpha1.ZonedDeviceList{}
	if err := a.Client.List(ctx, list, client.MatchingLabels{v1alpha1.LabelZonedDeviceNode: inventory.NodeLabelValue(a.NodeName)}); err != nil {
		return err
	}
	var mine []v1alpha1.ZonedDevice
	for _, d := range list.Items {
		// The label of a long node name is a hash; the status says whose it really is.
		if d.Status.NodeName == a.NodeName || d.Status.NodeName == "" {
			mine = append(mine, d)
		}
	}
	scanned := make([]v1alpha1.ZonedDeviceStatus, 0, len(res.Devices))
	for _, d := range res.Devices {
		scanned = append(scanned, d.Status(a.NodeName, node.Labels[corev1.LabelHostname]))
	}
	now := time.Now()
	if a.Now != nil {
		now = a.Now()
	}
	if a.lastSeen == nil {
		a.lastSeen = map[string]time.Time{}
	}
	for _, c := range inventory.Diff(mine, scanned, now, a.lastSeen) {
		if err := a.apply(ctx, c); err != nil {
			return fmt.Errorf("applying ZonedDevice %s: %w", c.Name, err)
		}
		a.Log.Info(c.Summary(), "zonedDevice", c.Name)
	}
	for _, s := range scanned {
		a.lastSeen[inventory.ObjectName(s.NodeName, s.KernelName)] = now
	}
	return nil
}

// apply writes a change: the object itself first when it is new (or was deleted by hand meanwhile), since the
// status subresource cannot create one, then its status.
func (a *Agent) apply(ctx context.Context, c inventory.Change) error {
	if c.Kind == inventory.Appeared {
		if err := a.applyObject(ctx, c.Name); err != nil {
			return err
		}
	}
	err := a.applyStatus(ctx, c)
	if apierrors.IsNotFound(err) {
		if err := a.applyObject(ctx, c.Name); err != nil {
			return err
		}
		err = a.applyStatus(ctx, c)
	}
	return err
}

func (a *Agent) applyObject(ctx context.Context, name string) error {
	u := skeleton(name)
	u.SetLabels(map[string]string{v1alpha1.LabelZonedDeviceNode: inventory.NodeLabelValue(a.NodeName)})
	return a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
}

func (a *Agent) applyStatus(ctx context.Context, c inventory.Change) error {
	status, err := toMap(inventory.AgentFields(c.Status))
	if err != nil {
		return err
	}
	u := skeleton(c.Name)
	u.Object["status"] = status
	return a.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
}

func skeleton(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("ZonedDevice")
	u.SetName(name)
	return u
}

// toMap goes through JSON so that omitempty leaves out what the agent does not know: an apply names only the
// fields its manager owns, and a field it owned and now omits is removed.
func toMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(raw, &m)
}
