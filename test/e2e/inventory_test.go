package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// checkPlacement: on a real zoned kernel, with the flow's databases holding their devices, a database that asks
// for more zones than any device has is told, device by device, what the node's real devices lack and which are
// taken; one that asks for nothing gets a free fit device (claimed on its ZonedDevice, held by no other
// database) or is told why there is none. Both are deleted before they could format anything.
func checkPlacement(t *testing.T, ns, node string, like *v1alpha1.ZNSDatabase) {
	t.Helper()
	start := time.Now()
	probe := func(name string, req v1alpha1.DeviceRequirements) (*v1alpha1.ZNSDatabase, string) {
		db := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: *like.Spec.DeepCopy()}
		req.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelHostname: node}}
		// like's file system: the zoned node's MariaDB has no ZenFS, and admission says so
		db.Spec.Storage = v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{Filesystem: like.ZonedFilesystem(), Requirements: &req}}
		if err := k8s.Create(ctx, db); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, db) })
		var why string
		waitFor(t, name+" bound to a device or told why not", 2*time.Minute, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
				return err
			}
			if db.Status.DeviceBinding != nil {
				return nil
			}
			if c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionDeviceReady); c != nil && c.Reason == v1alpha1.ReasonNoDeviceFits {
				why = c.Message
				return nil
			}
			return fmt.Errorf("conditions %+v", db.Status.Conditions)
		})
		return db, why
	}

	huge, why := probe("placed-huge", v1alpha1.DeviceRequirements{MinZones: 1 << 30})
	if huge.Status.DeviceBinding != nil {
		t.Fatalf("placed-huge got %+v, though no device has 2^30 zones", huge.Status.DeviceBinding)
	}
	if !strings.Contains(why, "are used by other databases") || !strings.Contains(why, "fewer than the 1073741824 asked") {
		t.Errorf("placed-huge: the flow's devices should read as used, the free ones as too small: %s", why)
	}
	if err := k8s.Delete(ctx, huge); err != nil {
		t.Error(err)
	}

	anyDev, why := probe("placed-any", v1alpha1.DeviceRequirements{})
	if b := anyDev.Status.DeviceBinding; b != nil {
		zd, err := publishedDevice(node, b.DeviceName)
		if err != nil {
			t.Fatal(err)
		}
		if ref := zd.Spec.ClaimRef; ref == nil || ref.Name != anyDev.Name || zd.Status.Holder != "" && zd.Status.Holder != ns+"/"+anyDev.Name {
			t.Errorf("placed-any bound to %s, whose claim is %+v and holder %q", zd.Name, ref, zd.Status.Holder)
		}
		why = "bound to /dev/" + b.DeviceName
		// the flow's node is not a fleet: give the device back once the probe is gone
		t.Cleanup(func() {
			patch := client.MergeFrom(zd.DeepCopy())
			zd.Spec.ClaimRef = nil
			_ = k8s.Patch(ctx, zd, patch)
		})
	}
	if err := k8s.Delete(ctx, anyDev); err != nil {
		t.Error(err)
	}
	t.Logf("ZONED-NODE placement: a too-large ask told what each device lacks; an empty ask %s (%s)", why, time.Since(start).Round(time.Second))
}
