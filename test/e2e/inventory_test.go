package e2e

import (
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// checkInventory: on a real zoned kernel, the chart's inventory agent has published each Available zoned
// database's device from the node's sysfs, with the geometry the operator's own zone report found (two readings
// of one device by two paths), and the operator has recorded the database as its holder. The node's conventional
// nullb2, which no annotation names as a candidate, is not published.
func checkInventory(t *testing.T, node string, dbs []*v1alpha1.ZNSDatabase) {
	t.Helper()
	start := time.Now()
	for _, db := range dbs {
		cur := &v1alpha1.ZNSDatabase{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
			t.Fatal(err)
		}
		if cur.Spec.Storage.ZonedDevice == nil || cur.Status.Device == nil {
			continue
		}
		device := cur.Spec.Storage.ZonedDevice.DeviceName
		holder := cur.Namespace + "/" + cur.Name
		// the agent scans every minute and the holder follows from a watch: a few scans under emulation
		waitFor(t, "the ZonedDevice of "+device+" held by "+holder, 5*time.Minute, func() error {
			zd, err := publishedDevice(node, device)
			if err != nil {
				return err
			}
			s := zd.Status
			switch {
			case s.State != v1alpha1.ZonedDevicePresent:
				return fmt.Errorf("state %q, want %q", s.State, v1alpha1.ZonedDevicePresent)
			case s.ZoneModel != cur.Status.Device.Model:
				return fmt.Errorf("zone model %q, the operator's report says %q", s.ZoneModel, cur.Status.Device.Model)
			case s.ZoneCount != cur.Status.Device.Zones:
				return fmt.Errorf("%d zones, the operator's report says %d", s.ZoneCount, cur.Status.Device.Zones)
			case s.Holder != holder:
				return fmt.Errorf("holder %q, want %q", s.Holder, holder)
			}
			return nil
		})
	}
	if zd, err := publishedDevice(node, "nullb2"); err == nil {
		t.Errorf("the conventional nullb2, named by no annotation, is published as %s", zd.Name)
	} else if !apierrors.IsNotFound(err) {
		t.Error(err)
	}
	t.Logf("ZONED-NODE inventory: every zoned database's device published and held, %s after they were Available",
		time.Since(start).Round(time.Second))
}

// publishedDevice is the ZonedDevice of a node's device, found by what its status says rather than by the
// object's name (which the agent derives, and shortens with a hash for long names); NotFound when there is none.
func publishedDevice(node, kernelName string) (*v1alpha1.ZonedDevice, error) {
	list := &v1alpha1.ZonedDeviceList{}
	if err := k8s.List(ctx, list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if s := list.Items[i].Status; s.NodeName == node && s.KernelName == kernelName {
			return &list.Items[i], nil
		}
	}
	return nil, apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("zoneddevices").GroupResource(), node+"/"+kernelName)
}
